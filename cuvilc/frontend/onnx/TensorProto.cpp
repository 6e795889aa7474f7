//===- TensorProto.cpp - ONNX tensors to cuvil types and bytes ------------===//
#include "frontend/onnx/TensorProto.h"

#include "ir/CheckedMath.h"
#include "ir/Diagnostic.h"

#include <cstring>
#include <limits>

namespace cuvil {

std::optional<DType> mapType(int32_t T) {
  using TP = onnx::TensorProto;
  switch (T) {
  case TP::FLOAT: return DType::F32;
  case TP::FLOAT16: return DType::F16;
  case TP::BFLOAT16: return DType::BF16;
  case TP::INT8: return DType::I8;
  case TP::UINT8: return DType::U8;
  case TP::INT16: return DType::I16;
  case TP::UINT16: return DType::U16;
  case TP::INT32: return DType::I32;
  case TP::UINT32: return DType::U32;
  case TP::INT64: return DType::I64;
  case TP::UINT64: return DType::U64;
  case TP::BOOL: return DType::Bool;
  case TP::DOUBLE: return DType::F64;
  default: return std::nullopt;
  }
}

std::string typeName(int32_t T) {
  std::string Name = onnx::TensorProto::DataType_Name(
      static_cast<onnx::TensorProto::DataType>(T));
  if (!Name.empty())
    return Name;
  // Types of IR versions 9 and 10, which ONNX 1.12's enum lacks.
  static const char *const Newer[] = {"FLOAT8E4M3FN", "FLOAT8E4M3FNUZ",
                                      "FLOAT8E5M2",   "FLOAT8E5M2FNUZ",
                                      "UINT4",        "INT4"};
  if (T >= 17 && T < 17 + static_cast<int32_t>(std::size(Newer)))
    return Newer[T - 17];
  return "number " + std::to_string(T);
}

/// Dense little-endian bytes of a TensorProto (raw_data or typed fields).
llvm::Expected<std::vector<uint8_t>> tensorBytes(const onnx::TensorProto &T,
                                                 DType Ty, int64_t Count) {
  size_t ESize = dtypeSize(Ty);
  if (T.data_location() == onnx::TensorProto::EXTERNAL)
    return makeError("tensor '{}' uses external data, which is not "
                     "supported; save the model with weights inside",
                     T.name());
  // The dimensions are the file's word: compare them with the data the
  // file really holds before allocating anything.
  auto Bytes = checkedByteCount(Count, ESize);
  if (T.has_raw_data()) {
    if (!Bytes || *Bytes != static_cast<int64_t>(T.raw_data().size()))
      return makeError("tensor '{}' has {} bytes of data, expected {}",
                       T.name(), T.raw_data().size(),
                       Bytes ? std::to_string(*Bytes) : "more than 2^63");
  } else {
    int64_t Stored;
    switch (Ty) {
    case DType::F32: Stored = T.float_data_size(); break;
    case DType::F64: Stored = T.double_data_size(); break;
    case DType::I64: Stored = T.int64_data_size(); break;
    case DType::U32:
    case DType::U64: Stored = T.uint64_data_size(); break;
    default: Stored = T.int32_data_size(); break;
    }
    if (!Bytes || Stored != Count)
      return makeError("tensor '{}' has {} elements, expected {}", T.name(),
                       Stored, Count);
  }
  std::vector<uint8_t> Out(*Bytes);
  if (T.has_raw_data()) {
    if (!Out.empty()) // an empty tensor's data may be a null pointer
      std::memcpy(Out.data(), T.raw_data().data(), Out.size());
    return Out;
  }
  auto Fill = [&](const auto &Field) -> llvm::Error {
    if (static_cast<int64_t>(Field.size()) != Count)
      return makeError("tensor '{}' has {} elements, expected {}", T.name(),
                       Field.size(), Count);
    for (int64_t I = 0; I < Count; ++I) {
      // Narrow each element to the tensor's type (int32_data carries all
      // small integer types, bool and the bit patterns of f16/bf16).
      auto V = Field.Get(I);
      switch (Ty) {
      case DType::F32: {
        float F = static_cast<float>(V);
        std::memcpy(&Out[I * 4], &F, 4);
        break;
      }
      case DType::F64: {
        double D = static_cast<double>(V);
        std::memcpy(&Out[I * 8], &D, 8);
        break;
      }
      default: {
        uint64_t U = static_cast<uint64_t>(static_cast<int64_t>(V));
        std::memcpy(&Out[I * ESize], &U, ESize); // little-endian host
      }
      }
    }
    return llvm::Error::success();
  };
  llvm::Error E = llvm::Error::success();
  switch (Ty) {
  case DType::F32: E = Fill(T.float_data()); break;
  case DType::F64: E = Fill(T.double_data()); break;
  case DType::I64: E = Fill(T.int64_data()); break;
  case DType::U32:
  case DType::U64: E = Fill(T.uint64_data()); break;
  default: E = Fill(T.int32_data()); break;
  }
  if (E)
    return E;
  return Out;
}

} // namespace cuvil
