//===- HostTensor.h - Tensors evaluated at compile time ---------*- C++ -*-===//
//
// The operands and results of the ops' fold hooks (OpDef::Fold): dense
// tensors in host memory, with element accessors that convert between the
// ONNX element types, and the evaluators several ops share (strided copies,
// element-wise arithmetic with numpy broadcasting).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_HOSTTENSOR_H
#define CUVIL_OPS_HOSTTENSOR_H

#include "ir/CheckedMath.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <cstdint>
#include <vector>

namespace cuvil {

/// Folding stops at this many elements per output: larger results are
/// computed at run time (or rejected), not stored as weights.
constexpr int64_t MaxFoldElements = int64_t(1) << 20;

struct HostTensor {
  DType Ty = DType::F32;
  std::vector<int64_t> Shape;
  std::vector<uint8_t> Data;

  /// Saturates (INT64_MAX): folds compare it with MaxFoldElements first.
  int64_t count() const {
    return checkedElementCount(Shape).value_or(INT64_MAX);
  }
  void allocate() { Data.assign(count() * dtypeSize(Ty), 0); }
};

inline bool isFloat(DType T) { return T == DType::F32 || T == DType::F64; }
/// Whether the host evaluators handle T (not the 16-bit floats).
inline bool hostType(DType T) { return T != DType::F16 && T != DType::BF16; }

/// Element I as a double / an integer (converted from any host type).
double getF(const HostTensor &T, int64_t I);
int64_t getI(const HostTensor &T, int64_t I);
/// Stores element I, given as an integer (exact) or a float.
void putI(HostTensor &T, int64_t I, int64_t V);
void putF(HostTensor &T, int64_t I, double V);

/// Y = X read through access A, of the given shape; false (left to run
/// time) when the types differ or the result is too large to fold.
llvm::Expected<bool> foldAccess(const HostTensor &X, const StridedAccess &A,
                                std::vector<int64_t> Shape, HostTensor &Y);

/// The element-wise operations fold-constants evaluates.
enum class Arith {
  Add,
  Sub,
  Mul,
  Div,
  Mod, ///< ONNX Mod: fmod=0 the divisor's sign (integers), 1 C's fmod
  Neg,
  Equal,
  Less,
  Greater,
  LessOrEqual,
  GreaterOrEqual,
  And,
  Or,
  Xor,
  Where,
  Not
};

/// The fold hook of an element-wise op (numpy broadcasting; each operand
/// computed in its own type's domain). Instantiated for every Arith.
template <Arith Op>
llvm::Expected<bool> foldArith(const Node &N, const HostInputs &In,
                               std::vector<HostTensor> &Out);

} // namespace cuvil

#endif
