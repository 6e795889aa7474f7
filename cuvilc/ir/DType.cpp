//===- DType.cpp ----------------------------------------------------------===//
#include "ir/DType.h"

#include <cassert>

namespace cuvil {

namespace {
struct DTypeInfo {
  unsigned Size;
  std::string_view Name;
  std::string_view CType;
};

DTypeInfo info(DType T) {
  switch (T) {
  case DType::F32: return {4, "f32", "float"};
  case DType::F16: return {2, "f16", "uint16_t"};
  case DType::BF16: return {2, "bf16", "uint16_t"};
  case DType::I8: return {1, "i8", "int8_t"};
  case DType::U8: return {1, "u8", "uint8_t"};
  case DType::I16: return {2, "i16", "int16_t"};
  case DType::U16: return {2, "u16", "uint16_t"};
  case DType::I32: return {4, "i32", "int32_t"};
  case DType::U32: return {4, "u32", "uint32_t"};
  case DType::I64: return {8, "i64", "int64_t"};
  case DType::U64: return {8, "u64", "uint64_t"};
  case DType::Bool: return {1, "bool", "uint8_t"};
  case DType::F64: return {8, "f64", "double"};
  }
  assert(false && "unknown DType");
  return {0, "?", "?"};
}
} // namespace

unsigned dtypeSize(DType T) { return info(T).Size; }
std::string_view dtypeName(DType T) { return info(T).Name; }
std::string_view dtypeCType(DType T) { return info(T).CType; }

} // namespace cuvil
