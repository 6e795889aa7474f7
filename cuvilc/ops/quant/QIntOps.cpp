//===- QIntOps.cpp - Shared parts of cuvil.QConv and cuvil.QGemm ----------===//
#include "ops/quant/QIntOps.h"
#include "ir/Diagnostic.h"
#include "ops/Shares.h"
#include "ops/quant/Quant.h"

namespace cuvil {

int64_t qintType(const Value *V) { return *quantTypeCode(V->dtype()); }

namespace {

llvm::Error requireConstant(const Node &N, const Value *V, DType Ty,
                            int64_t Elements, const char *What) {
  if (!V || !V->isConstant() || V->dtype() != Ty ||
      V->numElements() != Elements)
    return nodeError(N,
                     "internal error: {} must be a constant {} of {} "
                     "elements",
                     What, dtypeName(Ty), Elements);
  return llvm::Error::success();
}

bool inRange(int64_t V, DType Ty) {
  return Ty == DType::U8 ? V >= 0 && V <= 255 : V >= -128 && V <= 127;
}

} // namespace

llvm::Error verifyQIntOperands(const Node &N, int64_t M, int64_t Kp) {
  if (auto E = requireQuant8(N, N.input(0), "input x"))
    return E;
  if (auto E = requireQuant8(N, N.output(0), "output y"))
    return E;
  if (auto E = requireConstant(N, N.input(1), DType::I8, M * Kp, "wp"))
    return E;
  const Value *P = N.input(2);
  if (auto E = requireConstant(N, P, DType::I32,
                               P && P->numElements() == 4 * M ? 4 * M : 3 * M,
                               "qparams"))
    return E;
  const QIntAttrs A(N);
  const DType XT = N.input(0)->dtype(), YT = N.output(0)->dtype();
  if (!inRange(A.XZp, XT) || !inRange(A.YZp, YT) || !inRange(A.YLo, YT) ||
      !inRange(A.YHi, YT) || A.YLo > A.YHi)
    return nodeError(N,
                     "internal error: zero points or clamp [{}, {}] out "
                     "of the range of their types",
                     A.YLo, A.YHi);
  if (A.Mr < 1 || A.Kr < 1)
    return nodeError(N, "internal error: packing {} x {} is not positive", A.Mr,
                     A.Kr);
  return llvm::Error::success();
}

llvm::Error verifyRescale(const Node &N, std::initializer_list<int64_t> Mults,
                          int64_t Shift, int64_t YLo, int64_t YHi) {
  for (int64_t M : Mults)
    if (M < 0 || M >= (int64_t{1} << 31))
      return nodeError(N, "internal error: multiplier {} out of [0, 2^31)", M);
  const DType YT = N.output(0)->dtype();
  if (Shift < 1 || Shift > 62 || !inRange(YLo, YT) || !inRange(YHi, YT) ||
      YLo > YHi)
    return nodeError(N,
                     "internal error: shift {} or clamp [{}, {}] out of "
                     "range",
                     Shift, YLo, YHi);
  return llvm::Error::success();
}

QParams qparams(const Node &N, int64_t M) {
  const Value *V = N.input(2);
  const kabi::PtrArg P = V;
  return {P, atBytes(P, 4 * M),
          V->numElements() == 4 * M
              ? atBytes(P, 12 * M)
              : kabi::PtrArg(static_cast<const Value *>(nullptr))};
}

} // namespace cuvil
