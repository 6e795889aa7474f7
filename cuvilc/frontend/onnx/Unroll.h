//===- Unroll.h - Scan and Loop as straight-line ONNX nodes -----*- C++ -*-===//
#ifndef CUVIL_FRONTEND_ONNX_UNROLL_H
#define CUVIL_FRONTEND_ONNX_UNROLL_H

#include <cstdint>
#include <map>
#include <onnx/onnx_pb.h>
#include <string>
#include <vector>

namespace cuvil {

/// A Loop unrolled to the bound the user gave it (`--loop-bound NODE=K`)
/// rather than to one its trip count or condition gives: a run in which it
/// would take iteration K + 1 must stop with CUVIL_ERR_LOOP_BOUND. The
/// importer puts a cuvil.LoopBound node (ops/sequence/LoopBound.h) on each
/// of its outputs.
struct LoopBoundCheck {
  std::string Loop; ///< The Loop node's name.
  int64_t Bound;    ///< The iterations unrolled (K).
  /// The bool scalar that is true when the loop would run once more.
  std::string Exceeded;
  /// The Loop's outputs (its final states), as the unrolled nodes name them.
  std::vector<std::string> Outputs;
};

/// Rewrites every Scan of M's main graph whose trip count shape inference
/// determined into unrolled plain nodes, and every Loop with a bound on its
/// iterations (its trip count, constant or in Known, or a counter in its
/// condition) into unrolled plain nodes, or If nodes per iteration when it
/// may stop earlier (see Unroll.cpp); returns whether anything changed
/// (then shape inference must run again).
/// Known holds the values of int64 and bool scalars found constant (by
/// their names; see ImportOptions::KnownScalars). Why each other Scan or
/// Loop stays goes to Declined, by its first output's name.
/// Bounds: the most iterations the user allows each Loop, by node name
/// (--loop-bound); a Loop unrolled to one of them gets an entry in Checks.
bool unrollLoops(onnx::ModelProto &M,
                 std::map<std::string, std::string> &Declined,
                 const std::map<std::string, int64_t> &Known,
                 const std::map<std::string, int64_t> &Bounds,
                 std::vector<LoopBoundCheck> &Checks);

} // namespace cuvil

#endif
