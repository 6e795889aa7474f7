//===- QAdd.cpp - cuvil.QAdd: the sum of two quantized tensors ------------===//
//
// Internal op (domain "cuvil"): the lower-qdq pass makes it of
// Q(Add(DQ(a), DQ(b))) [with a Relu/Clip before the Q] where a, b and the
// result have one shape (a residual connection). Inputs a, b (uint8/int8);
// int attributes a_zero_point, b_zero_point, y_zero_point, the fixed-point
// multipliers a_mult, b_mult and their shift (a_mult / 2^shift =
// a_scale / y_scale), the clamp y_lo, y_hi, and lanes (1: the kernel in
// int32 lanes, cuvil_k_qadd_lanes_s8). See cuvil_k_qadd_s8. --cores splits
// it by ranges of elements.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/Shares.h"
#include "ops/quant/QIntOps.h"
#include "ops/quant/Quant.h"

namespace cuvil {
namespace {

#define QADD_ATTRS(X)                                                          \
  X(AZp, "a_zero_point", Int, 0)                                               \
  X(BZp, "b_zero_point", Int, 0)                                               \
  X(YZp, "y_zero_point", Int, 0)                                               \
  X(AMult, "a_mult", Int, 0)                                                   \
  X(BMult, "b_mult", Int, 0)                                                   \
  X(Shift, "shift", Int, 1)                                                    \
  X(YLo, "y_lo", Int, 0)                                                       \
  X(YHi, "y_hi", Int, 0)                                                       \
  X(Lanes, "lanes", Int, 0)
CUVIL_OP_ATTRS(QAddAttrs, QADD_ATTRS)

llvm::Error verifyQAddOp(const Node &N) {
  if (N.numInputs() != 2 || N.outputs().size() != 1)
    return nodeError(N, "internal error: the integer Add takes a, b and "
                        "gives y");
  if (auto E = requireQuant8(N, N.input(0), "input a"))
    return E;
  if (auto E = requireQuant8(N, N.input(1), "input b"))
    return E;
  if (auto E = requireQuant8(N, N.output(0), "output y"))
    return E;
  const Value *Y = N.output(0);
  if (N.input(0)->shape() != Y->shape() || N.input(1)->shape() != Y->shape())
    return nodeError(N, "internal error: a, b and y must have one shape");
  const QAddAttrs A(N);
  return verifyRescale(N, {A.AMult, A.BMult}, A.Shift, A.YLo, A.YHi);
}

llvm::Error lowerQAddOp(const Node &N, std::vector<KernelCall> &Calls) {
  const QAddAttrs A(N);
  auto Fill = [&](auto K) {
    K.a = N.input(0);
    K.b = N.input(1);
    K.y = N.output(0);
    K.n = N.output(0)->numElements();
    K.a_type = qintType(N.input(0));
    K.b_type = qintType(N.input(1));
    K.y_type = qintType(N.output(0));
    K.a_zp = A.AZp;
    K.b_zp = A.BZp;
    K.a_mult = A.AMult;
    K.b_mult = A.BMult;
    K.shift = A.Shift;
    K.y_zp = A.YZp;
    K.y_lo = A.YLo;
    K.y_hi = A.YHi;
    return K.call();
  };
  if (A.Lanes)
    Calls.push_back(Fill(kabi::QaddLanesS8{}));
  else
    Calls.push_back(Fill(kabi::QaddS8{}));
  return llvm::Error::success();
}

/// OpDef::Split (--cores): ranges of elements, in units of 256 (whole
/// vectors, and more work than a barrier costs). A share reads and writes
/// only its own range, so in place (y over a or b) holds too.
void splitQAddOp(const Node &N, const std::vector<KernelCall> &Calls,
                 int64_t Parts, std::vector<std::vector<KernelCall>> &Shares) {
  (void)N;
  if (Calls.size() != 1)
    return;
  auto Cut = [&](auto K) {
    for (auto [B, E] : shareRanges(K.n, 256, Parts)) {
      auto S = K;
      S.a = atBytes(K.a, B);
      S.b = atBytes(K.b, B);
      S.y = atBytes(K.y, B);
      S.n = E - B;
      Shares.push_back({S.call()});
    }
  };
  if (Calls[0].Kernel == kabi::QaddLanesS8::Name)
    Cut(kabi::QaddLanesS8::from(Calls[0]));
  else if (Calls[0].Kernel == kabi::QaddS8::Name)
    Cut(kabi::QaddS8::from(Calls[0]));
}

} // namespace

extern const OpDef QAddOp = {.Name = "cuvil.QAdd",
                             .Verify = verifyQAddOp,
                             .Lower = lowerQAddOp,
                             .Macs = noMacs,
                             .Traits = InPlace,
                             .Split = splitQAddOp,
                             .Attrs = QAddAttrs::Specs};

} // namespace cuvil
