//===- QIntOps.h - Shared parts of cuvil.QConv and cuvil.QGemm --*- C++ -*-===//
#ifndef CUVIL_OPS_QUANT_QINTOPS_H
#define CUVIL_OPS_QUANT_QINTOPS_H

#include "lowering/KernelAbiSupport.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"

#include <initializer_list>

namespace cuvil {

/// The integer attributes both ops carry (see ops/quant/QInt.h).
#define CUVIL_QINT_ATTRS(X)                                                    \
  X(XZp, "x_zero_point", Int, 0)                                               \
  X(YZp, "y_zero_point", Int, 0)                                               \
  X(YLo, "y_lo", Int, 0)                                                       \
  X(YHi, "y_hi", Int, 0)                                                       \
  X(Mr, "mr", Int, 1)                                                          \
  X(Kr, "kr", Int, 1)                                                          \
  X(Packed, "packed", Int, 0)
CUVIL_OP_ATTRS(QIntAttrs, CUVIL_QINT_ATTRS)

/// Checks the operands shared by both ops for M output channels and Kp
/// packed bytes per channel: x and y uint8/int8, wp int8 [M * Kp],
/// qparams int32 [3 M] or [4 M] (see QParams), the zero points and the clamp in
/// the ranges of x's and y's types, the packing positive.
llvm::Error verifyQIntOperands(const Node &N, int64_t M, int64_t Kp);

/// The per-channel parameters of both ops' M output channels, input 2: one
/// int32 constant (one blob entry per layer), the bias [M] (the zero-point
/// corrections folded in, and for the packed kernels their domain's:
/// cuvil_qpack_corr), then the requantization pairs rq [2 M], then for
/// the optimised depthwise kernel alone the weight sums wsum [M] (null
/// when absent: the other kernels read none); here as the kernels'
/// pointers into it.
struct QParams {
  kabi::PtrArg Bias, Rq, WSum;
};
QParams qparams(const Node &N, int64_t M);

/// Checks the fixed-point rescaling of cuvil.QAdd / cuvil.QGlobalAveragePool:
/// every multiplier in [0, 2^31), the shift in [1, 62], the clamp
/// [YLo, YHi] ordered and in the range of output 0's type.
llvm::Error verifyRescale(const Node &N, std::initializer_list<int64_t> Mults,
                          int64_t Shift, int64_t YLo, int64_t YHi);

/// The CUVIL_Q_* code of a uint8/int8 value's type.
int64_t qintType(const Value *V);

} // namespace cuvil

#endif
