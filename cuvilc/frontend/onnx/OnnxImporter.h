//===- OnnxImporter.h - ONNX model -> cuvil IR ------------------*- C++ -*-===//
//
// Parses an ONNX file with the ONNX protobuf classes, runs the ONNX checker
// and shape inference, and builds the IR. No ONNX type leaks out of this
// library. Ops cuvil does not support still become nodes (with a null
// OpDef) so that `inspect` can show them and verification can list all of
// them at once.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_ONNX_ONNXIMPORTER_H
#define CUVIL_FRONTEND_ONNX_ONNXIMPORTER_H

#include "ir/Graph.h"

#include <llvm/Support/Error.h>
#include <map>
#include <memory>
#include <string>
#include <string_view>

namespace cuvil {

class RuntimeOps;

struct ImportOptions {
  /// Values for symbolic input dimensions (`--dim seq=128`).
  std::map<std::string, int64_t> DimValues;
  /// Ops of other domains the user declared (--custom-ops): their nodes get
  /// these records, and ONNX's checker and shape inference their schemas.
  const RuntimeOps *CustomOps = nullptr;
  /// Values of int64 and bool scalars known to be constant, by name: a
  /// Loop whose trip count (and condition) is among them is unrolled. The
  /// driver finds them by folding a first import (importUnrollingLoops).
  std::map<std::string, int64_t> KnownScalars;
  /// The most iterations each Loop may run, by node name (--loop-bound):
  /// a Loop without a bound of its own is unrolled to it, and run stops
  /// with CUVIL_ERR_LOOP_BOUND when it would run more.
  std::map<std::string, int64_t> LoopBounds;
};

/// Imports the model at Path. Errors name the node and op when one is at
/// fault; the caller adds the file name.
llvm::Expected<std::unique_ptr<Graph>> importOnnx(const std::string &Path,
                                                  const ImportOptions &Opts);
/// The same for a model already in memory (the contents of a .onnx file).
llvm::Expected<std::unique_ptr<Graph>>
importOnnxBytes(std::string_view Bytes, const ImportOptions &Opts);

} // namespace cuvil

#endif
