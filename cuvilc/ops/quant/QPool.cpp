//===- QPool.cpp - cuvil.QGlobalAveragePool: the integer mean of planes ---===//
//
// Internal op (domain "cuvil"): the lower-qdq pass makes it of
// Q(GlobalAveragePool(DQ(x))) [with a Relu/Clip before the Q]. Input x
// (uint8/int8, [N, C, spatial...]); int attributes x_zero_point,
// y_zero_point, the fixed-point multiplier mult and its shift
// (mult / 2^shift = x_scale / (y_scale * plane size)), and the clamp
// y_lo, y_hi. See cuvil_k_qglobal_avgpool_s8.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/quant/QIntOps.h"
#include "ops/quant/Quant.h"

namespace cuvil {
namespace {

#define QGAP_ATTRS(X)                                                          \
  X(XZp, "x_zero_point", Int, 0)                                               \
  X(YZp, "y_zero_point", Int, 0)                                               \
  X(Mult, "mult", Int, 0)                                                      \
  X(Shift, "shift", Int, 1)                                                    \
  X(YLo, "y_lo", Int, 0)                                                       \
  X(YHi, "y_hi", Int, 0)
CUVIL_OP_ATTRS(QGapAttrs, QGAP_ATTRS)

llvm::Error verifyQPoolOp(const Node &N) {
  if (N.numInputs() != 1 || N.outputs().size() != 1)
    return nodeError(N, "internal error: the integer GlobalAveragePool "
                        "takes x and gives y");
  if (auto E = requireQuant8(N, N.input(0), "input x"))
    return E;
  if (auto E = requireQuant8(N, N.output(0), "output y"))
    return E;
  const Value *X = N.input(0), *Y = N.output(0);
  if (X->rank() < 3 || Y->rank() != X->rank() ||
      Y->shape()[0] != X->shape()[0] || Y->shape()[1] != X->shape()[1] ||
      Y->numElements() != X->shape()[0] * X->shape()[1] ||
      X->numElements() / std::max<int64_t>(Y->numElements(), 1) >= (1 << 23))
    return nodeError(N, "internal error: y must be x's [N, C, 1...] and the "
                        "planes below 2^23 elements");
  const QGapAttrs A(N);
  return verifyRescale(N, {A.Mult}, A.Shift, A.YLo, A.YHi);
}

llvm::Error lowerQPoolOp(const Node &N, std::vector<KernelCall> &Calls) {
  const QGapAttrs A(N);
  kabi::QglobalAvgpoolS8 K;
  K.x = N.input(0);
  K.y = N.output(0);
  K.nc = N.output(0)->numElements();
  K.hw = N.input(0)->numElements() / K.nc;
  K.x_type = qintType(N.input(0));
  K.y_type = qintType(N.output(0));
  K.x_zp = A.XZp;
  K.mult = A.Mult;
  K.shift = A.Shift;
  K.y_zp = A.YZp;
  K.y_lo = A.YLo;
  K.y_hi = A.YHi;
  Calls.push_back(K.call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef QGlobalAveragePoolOp = {.Name = "cuvil.QGlobalAveragePool",
                                           .Verify = verifyQPoolOp,
                                           .Lower = lowerQPoolOp,
                                           .Macs = noMacs,
                                           .Traits = NoTraits,
                                           .Attrs = QGapAttrs::Specs};

} // namespace cuvil
