//===- LeaveOut.h - A model run without some optional inputs ----*- C++ -*-===//
//
// ONNX Runtime, cuvil's reference, cannot leave an input of the graph out of
// its feeds, even an optional one. The run that leaves optional inputs out
// is the same model with each of them replaced by an empty optional (an
// `Optional` node without input), which ORT runs: `cuvilc run
// --compare-ort` computes the reference of `-i none` so.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_ONNX_LEAVEOUT_H
#define CUVIL_FRONTEND_ONNX_LEAVEOUT_H

#include <llvm/Support/Error.h>

#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

/// The .onnx bytes of the model in Bytes with the graph inputs Names left
/// out: each becomes the output of an `Optional` node that holds nothing.
/// Errors: a name that is not a graph input of optional type.
llvm::Expected<std::string>
leaveOutInputs(std::string_view Bytes, const std::vector<std::string> &Names);

} // namespace cuvil

#endif
