//===- CheckedMath.h - Element and byte counts without overflow -*- C++ -*-===//
//
// Every element or byte count derived from a model's shapes goes through
// these helpers: a model file can declare any dimensions, and a product or
// sum that wraps around would plan, allocate or emit the wrong size.
// Counts are 64-bit signed (as in Value::numElements); a result that does
// not fit is reported, never wrapped.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_IR_CHECKEDMATH_H
#define CUVIL_IR_CHECKEDMATH_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {

/// X rounded up to a multiple of A (A > 0; the plans' sizes and offsets,
/// far from overflow).
inline int64_t alignUp(int64_t X, int64_t A) { return (X + A - 1) / A * A; }

/// A * B, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checkedMul(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_mul_overflow(A, B, &R))
    return std::nullopt;
  return R;
}

/// A + B, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checkedAdd(int64_t A, int64_t B) {
  int64_t R;
  if (__builtin_add_overflow(A, B, &R))
    return std::nullopt;
  return R;
}

/// The product of non-negative dimensions, or nullopt when it does not fit
/// in int64_t (or a dimension is negative: not known yet).
inline std::optional<int64_t>
checkedElementCount(const std::vector<int64_t> &Shape) {
  int64_t N = 1;
  for (int64_t D : Shape) {
    if (D < 0 || __builtin_mul_overflow(N, D, &N))
      return std::nullopt;
  }
  return N;
}

/// Count * ElementSize, or nullopt when it does not fit in int64_t.
inline std::optional<int64_t> checkedByteCount(int64_t Count,
                                               int64_t ElementSize) {
  return checkedMul(Count, ElementSize);
}

/// The exact product of the dimensions (saturated at 2^128 - 1), for
/// messages about counts that do not fit in 64 bits.
inline unsigned __int128 wideElementCount(const std::vector<int64_t> &Shape) {
  unsigned __int128 N = 1;
  for (int64_t D : Shape) {
    unsigned __int128 R;
    if (D < 0)
      return 0;
    if (__builtin_mul_overflow(N, static_cast<unsigned __int128>(D), &R))
      return ~static_cast<unsigned __int128>(0);
    N = R;
  }
  return N;
}

/// A count for a message: "2^63" for a power of two of at least 2^32,
/// decimal below 2^64, otherwise "about 2^K" ("more than 2^127" when
/// saturated).
inline std::string countText(unsigned __int128 N) {
  if (N == ~static_cast<unsigned __int128>(0))
    return "more than 2^127";
  int Log2 = 0;
  for (unsigned __int128 X = N; X > 1; X >>= 1)
    ++Log2;
  bool Pow2 = N && (N & (N - 1)) == 0;
  if (Pow2 && Log2 >= 32)
    return "2^" + std::to_string(Log2);
  if (N <= UINT64_MAX)
    return std::to_string(static_cast<uint64_t>(N));
  return "about 2^" + std::to_string(Log2);
}

} // namespace cuvil

#endif
