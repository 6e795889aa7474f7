//===- Unroll.h - Scan and Loop as straight-line ONNX nodes -----*- C++ -*-===//
#ifndef CUVIL_FRONTEND_ONNX_UNROLL_H
#define CUVIL_FRONTEND_ONNX_UNROLL_H

#include <map>
#include <onnx/onnx_pb.h>
#include <string>

namespace cuvil {

/// Rewrites every Scan of M's main graph whose trip count shape inference
/// determined into unrolled plain nodes, and every Loop with a bound on its
/// iterations (its trip count, constant or in Known, or a counter in its
/// condition) into unrolled plain nodes, or If nodes per iteration when it
/// may stop earlier (see Unroll.cpp); returns whether anything changed
/// (then shape inference must run again).
/// Known holds the values of int64 and bool scalars found constant (by
/// their names; see ImportOptions::KnownScalars). Why each other Scan or
/// Loop stays goes to Declined, by its first output's name.
bool unrollLoops(onnx::ModelProto &M,
                 std::map<std::string, std::string> &Declined,
                 const std::map<std::string, int64_t> &Known);

} // namespace cuvil

#endif
