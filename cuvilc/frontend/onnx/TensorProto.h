//===- TensorProto.h - ONNX tensors to cuvil types and bytes ----*- C++ -*-===//
#ifndef CUVIL_FRONTEND_ONNX_TENSORPROTO_H
#define CUVIL_FRONTEND_ONNX_TENSORPROTO_H

#include "ir/Graph.h"

#include <llvm/Support/Error.h>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// cuvil's element type of an ONNX TensorProto data type; none when cuvil
/// has no such type.
std::optional<DType> mapType(int32_t T);
/// The ONNX name of a TensorProto data type, for messages.
std::string typeName(int32_t T);
/// Dense little-endian bytes of a TensorProto (raw_data or typed fields).
llvm::Expected<std::vector<uint8_t>> tensorBytes(const onnx::TensorProto &T,
                                                 DType Ty, int64_t Count);

} // namespace cuvil

#endif
