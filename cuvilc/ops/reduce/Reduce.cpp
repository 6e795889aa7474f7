//===- Reduce.cpp - ReduceSum/Mean/Max/... and ArgMax/ArgMin --------------===//
//
// Every Reduce* op lowers to one call of cuvil_k_reduce_<op>_<dtype> (see
// kernels.h): the input's dimensions split into kept ones (in output order)
// and reduced ones, each list with element strides into the input, unit
// dimensions dropped, contiguous neighbours merged and the result padded to
// CUVIL_REDUCE_RANK. The ops differ only in a row of the table below.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/reduce/ReduceLoops.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

// axes is an attribute before AxesInputOpset (below), input 1 since.
#define REDUCE_ATTRS(X)                                                        \
  X(Axes, "axes", Ints, {})                                                    \
  X(NoopWithEmptyAxes, "noop_with_empty_axes", Int, 0)
CUVIL_OP_ATTRS(ReduceAttrs, REDUCE_ATTRS)
#define ARG_ATTRS(X)                                                           \
  X(Axis, "axis", Int, 0) X(SelectLastIndex, "select_last_index", Int, 0)
CUVIL_OP_ATTRS(ArgAttrs, ARG_ATTRS)

struct ReduceSpec {
  const char *OnnxName;
  const char *KernelStem; ///< cuvil_k_reduce_<stem>_<dtype>
  bool Integers;          ///< also has i32/i64 kernels
  /// First opset whose axes come from input 1 rather than an attribute
  /// (ReduceSum 13, the others 18); noop_with_empty_axes arrived with it.
  int64_t AxesInputOpset;
};

constexpr ReduceSpec Specs[] = {
    {"ReduceSum", "sum", true, 13},
    {"ReduceMean", "mean", false, 18},
    {"ReduceMax", "max", true, 18},
    {"ReduceMin", "min", true, 18},
    {"ReduceProd", "prod", true, 18},
    {"ReduceSumSquare", "sum_square", false, 18},
    {"ReduceL1", "l1", false, 18},
    {"ReduceL2", "l2", false, 18},
    {"ReduceLogSum", "log_sum", false, 18},
    {"ReduceLogSumExp", "log_sum_exp", false, 18},
};

const ReduceSpec &specOf(const Node &N) {
  for (const ReduceSpec &S : Specs)
    if (N.opType() == S.OnnxName)
      return S;
  assert(false && "Reduce op without a ReduceSpec row");
  return Specs[0];
}

} // namespace

llvm::Expected<ReduceLoops> reduceLoops(const Node &N,
                                        const std::vector<int64_t> &Shape,
                                        const std::vector<bool> &Reduced,
                                        size_t PadToRank) {
  ReduceLoops L;
  std::vector<int64_t> Stride(Shape.size(), 1);
  for (size_t I = Shape.size(); I-- > 1;)
    Stride[I - 1] = Stride[I] * Shape[I];
  auto Add = [](std::vector<int64_t> &Sh, std::vector<int64_t> &St, int64_t Dim,
                int64_t S) {
    if (Dim == 1)
      return;
    // The previous dimension continues into this one: merge.
    if (!Sh.empty() && St.back() == S * Dim) {
      Sh.back() *= Dim;
      St.back() = S;
      return;
    }
    Sh.push_back(Dim);
    St.push_back(S);
  };
  for (size_t D = 0; D < Shape.size(); ++D) {
    if (Reduced[D])
      Add(L.RedShape, L.RedStr, Shape[D], Stride[D]);
    else
      Add(L.OutShape, L.OutStr, Shape[D], Stride[D]);
  }
  if (L.OutShape.size() > PadToRank || L.RedShape.size() > PadToRank)
    return nodeError(N,
                     "the reduction needs {} kept and {} reduced loop "
                     "dimensions; at most {} each are supported",
                     L.OutShape.size(), L.RedShape.size(), PadToRank);
  auto Pad = [&](std::vector<int64_t> &Sh, std::vector<int64_t> &St) {
    while (Sh.size() < PadToRank) {
      Sh.insert(Sh.begin(), 1);
      St.insert(St.begin(), 0);
    }
  };
  Pad(L.OutShape, L.OutStr);
  Pad(L.RedShape, L.RedStr);
  return L;
}

llvm::Expected<ReduceLoops> axesLoops(const Node &N,
                                      const std::vector<int64_t> &Shape,
                                      const std::vector<int64_t> &Axes,
                                      size_t PadToRank) {
  std::vector<bool> Reduced(Shape.size(), Axes.empty());
  for (int64_t A : Axes) {
    auto Ax = normalizeAxis(N, A, Shape.size());
    if (!Ax)
      return Ax.takeError();
    if (Reduced[*Ax])
      return nodeError(N, "axis {} is listed twice", A);
    Reduced[*Ax] = true;
  }
  return reduceLoops(N, Shape, Reduced, PadToRank);
}

namespace {

/// The reduced axes of N (normalised), or Identity.
llvm::Expected<ReduceLoops> loops(const Node &N) {
  const ReduceSpec &S = specOf(N);
  const Value *X = N.input(0);
  if (!X)
    return nodeError(N, "missing input");
  ReduceAttrs At(N);
  std::vector<int64_t> Axes;
  bool AxesInput = N.opset() >= S.AxesInputOpset;
  if (AxesInput) {
    if (N.hasAttr("axes"))
      return nodeError(N, "opset {} takes axes as an input, not an attribute",
                       N.opset());
    if (const Value *A = N.input(1)) {
      // A non-constant axes input of static length 0 is the empty list; any
      // other is read at run time (with keepdims=0 the output shape alone
      // may not tell which axes go, e.g. [3,2,2] -> [3,2]).
      if (A->isConstant()) {
        Axes = A->toInt64s();
      } else if (A->numElements() != 0) {
        ReduceLoops L;
        L.RuntimeAxes = A;
        return L;
      }
    }
  } else {
    if (N.input(1))
      return nodeError(N, "opset {} takes axes as an attribute, not an input",
                       N.opset());
    Axes = At.Axes;
  }
  if (Axes.empty() && AxesInput && At.NoopWithEmptyAxes) {
    ReduceLoops L;
    L.Identity = true;
    return L;
  }
  return axesLoops(N, X->shape(), Axes, CUVIL_REDUCE_RANK);
}

llvm::Error verifyReduce(const Node &N) {
  const ReduceSpec &S = specOf(N);
  const Value *X = N.input(0);
  if (!X)
    return nodeError(N, "missing input");
  DType T = X->dtype();
  bool Ok = T == DType::F32 || T == DType::F64 ||
            (S.Integers && (T == DType::I32 || T == DType::I64));
  if (!Ok)
    return nodeError(N,
                     "input '{}' has element type {}; {} supports f32, "
                     "f64{}",
                     X->name(), dtypeName(T), S.OnnxName,
                     S.Integers ? ", i32 and i64" : "");
  if (N.output(0)->dtype() != T)
    return nodeError(N, "output type {} differs from the input's {}",
                     dtypeName(N.output(0)->dtype()), dtypeName(T));
  auto L = loops(N);
  if (!L)
    return L.takeError();
  if (const Value *A = L->RuntimeAxes) {
    if (A->dtype() != DType::I64 || A->rank() != 1)
      return nodeError(N, "axes input '{}' must be a 1-D i64 tensor",
                       A->name());
    if (X->rank() > 2 * CUVIL_REDUCE_RANK)
      return nodeError(N,
                       "axes input '{}' is not a constant; run-time axes "
                       "support input ranks up to {}, not {}",
                       A->name(), 2 * CUVIL_REDUCE_RANK, X->rank());
    return llvm::Error::success();
  }
  int64_t Kept = 1;
  for (int64_t D : L->OutShape)
    Kept *= D;
  if (!L->Identity && Kept != N.output(0)->numElements())
    return nodeError(N, "output '{}' has {} elements; the reduction yields {}",
                     N.output(0)->name(), N.output(0)->numElements(), Kept);
  return llvm::Error::success();
}

llvm::Error lowerReduce(const Node &N, std::vector<KernelCall> &Calls) {
  auto L = loops(N);
  if (!L)
    return L.takeError();
  const Value *X = N.input(0), *Y = N.output(0);
  if (const Value *A = L->RuntimeAxes) {
    Calls.push_back(kabi::ReduceRtGroup{
        .Kernel = fmt::format("cuvil_k_reduce_rt_{}_{}", specOf(N).KernelStem,
                              dtypeName(X->dtype())),
        .x = X,
        .y = Y,
        .axes = A,
        .naxes = A->numElements(),
        .rank = static_cast<int64_t>(X->rank()),
        .shape = X->shape(),
        .noop_with_empty_axes = ReduceAttrs(N).NoopWithEmptyAxes,
        .out_count = Y->numElements()}
                        .call());
    return llvm::Error::success();
  }
  if (L->Identity) {
    KernelCall C =
        kabi::Copy{.src = X, .dst = Y, .nbytes = X->byteSize()}.call();
    C.IsCopy = true;
    Calls.push_back(std::move(C));
    return llvm::Error::success();
  }
  Calls.push_back(kabi::XYOutShapeOutStrRedShapeRedStrGroup{
      .Kernel = fmt::format("cuvil_k_reduce_{}_{}", specOf(N).KernelStem,
                            dtypeName(X->dtype())),
      .x = X,
      .y = Y,
      .out_shape = L->OutShape,
      .out_str = L->OutStr,
      .red_shape = L->RedShape,
      .red_str = L->RedStr}
                      .call());
  return llvm::Error::success();
}

// ---- ArgMax / ArgMin -------------------------------------------------------

struct ArgExtents {
  int64_t Outer = 1, N = 1, Inner = 1;
};

llvm::Expected<ArgExtents> argExtents(const Node &Nd) {
  const Value *X = Nd.input(0);
  if (!X)
    return nodeError(Nd, "missing input");
  auto Axis = normalizeAxis(Nd, ArgAttrs(Nd).Axis, X->rank());
  if (!Axis)
    return Axis.takeError();
  ArgExtents E;
  for (int64_t D = 0; D < static_cast<int64_t>(X->rank()); ++D)
    (D < *Axis ? E.Outer : D == *Axis ? E.N : E.Inner) *= X->shape()[D];
  return E;
}

llvm::Error verifyArg(const Node &N) {
  const Value *X = N.input(0);
  if (!X)
    return nodeError(N, "missing input");
  DType T = X->dtype();
  if (T != DType::F32 && T != DType::I32 && T != DType::I64)
    return nodeError(N,
                     "input '{}' has element type {}; only f32, i32 and "
                     "i64 are supported",
                     X->name(), dtypeName(T));
  if (N.output(0)->dtype() != DType::I64)
    return nodeError(N, "output '{}' must be i64", N.output(0)->name());
  auto E = argExtents(N);
  if (!E)
    return E.takeError();
  if (E->N == 0)
    return nodeError(N, "the reduced axis is empty");
  if (E->Outer * E->Inner != N.output(0)->numElements())
    return nodeError(N, "output '{}' has {} elements; expected {}",
                     N.output(0)->name(), N.output(0)->numElements(),
                     E->Outer * E->Inner);
  return llvm::Error::success();
}

template <const char *Stem>
llvm::Error lowerArg(const Node &N, std::vector<KernelCall> &Calls) {
  auto E = argExtents(N);
  if (!E)
    return E.takeError();
  Calls.push_back(kabi::XYOuterNInnerSelectLastGroup{
      .Kernel =
          fmt::format("cuvil_k_{}_{}", Stem, dtypeName(N.input(0)->dtype())),
      .x = N.input(0),
      .y = N.output(0),
      .outer = E->Outer,
      .n = E->N,
      .inner = E->Inner,
      .select_last = ArgAttrs(N).SelectLastIndex != 0}
                      .call());
  return llvm::Error::success();
}

constexpr char ArgMaxStem[] = "argmax";
constexpr char ArgMinStem[] = "argmin";

} // namespace

#define CUVIL_REDUCE_OP(R)                                                     \
  extern const OpDef R##Op = {.Name = #R,                                      \
                              .Verify = verifyReduce,                          \
                              .Lower = lowerReduce,                            \
                              .Macs = noMacs,                                  \
                              .Traits = NoTraits,                              \
                              .Attrs = ReduceAttrs::Specs};
CUVIL_REDUCE_OP(ReduceSum)
CUVIL_REDUCE_OP(ReduceMean)
CUVIL_REDUCE_OP(ReduceMax)
CUVIL_REDUCE_OP(ReduceMin)
CUVIL_REDUCE_OP(ReduceProd)
CUVIL_REDUCE_OP(ReduceSumSquare)
CUVIL_REDUCE_OP(ReduceL1)
CUVIL_REDUCE_OP(ReduceL2)
CUVIL_REDUCE_OP(ReduceLogSum)
CUVIL_REDUCE_OP(ReduceLogSumExp)
#undef CUVIL_REDUCE_OP

extern const OpDef ArgMaxOp = {.Name = "ArgMax",
                               .Verify = verifyArg,
                               .Lower = lowerArg<ArgMaxStem>,
                               .Macs = noMacs,
                               .Traits = NoTraits,
                               .Attrs = ArgAttrs::Specs};
extern const OpDef ArgMinOp = {.Name = "ArgMin",
                               .Verify = verifyArg,
                               .Lower = lowerArg<ArgMinStem>,
                               .Macs = noMacs,
                               .Traits = NoTraits,
                               .Attrs = ArgAttrs::Specs};

} // namespace cuvil
