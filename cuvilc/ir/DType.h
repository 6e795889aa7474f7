//===- DType.h - Element types of IR values ---------------------*- C++ -*-===//
#ifndef CUVIL_IR_DTYPE_H
#define CUVIL_IR_DTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace cuvil {

/// Element type of a tensor. The numbering matches schema/weights.fbs.
enum class DType : uint8_t {
  F32 = 0,
  F16 = 1,
  BF16 = 2,
  I8 = 3,
  U8 = 4,
  I16 = 5,
  U16 = 6,
  I32 = 7,
  U32 = 8,
  I64 = 9,
  U64 = 10,
  Bool = 11,
  F64 = 12,
};

/// Size of one element in bytes.
unsigned dtypeSize(DType T);
/// Lower-case name as printed in IR dumps and diagnostics ("f32", "i64").
std::string_view dtypeName(DType T);
/// Name of the C type of one element ("float", "int64_t").
std::string_view dtypeCType(DType T);

} // namespace cuvil

#endif
