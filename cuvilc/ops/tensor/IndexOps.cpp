//===- IndexOps.cpp - TopK, OneHot, Trilu, EyeLike, ReverseSeq, CumSum ----===//
//
// Ops that select or place elements by position. A parameter that fixes an
// output extent (TopK's k, OneHot's depth) may be computed at run time: the
// output shape is static (ONNX shape inference or the model's declaration),
// so the extent is taken from it, and checked against the parameter when
// that is a constant. Parameters that do not change shapes (Trilu's k,
// ReverseSequence's lengths, CumSum's axis) are read by the kernels at run
// time.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"
#include "ops/tensor/Indexing.h"

#include <cstring>
#include <cuvil/kernels.h>
#include <optional>

namespace cuvil {
namespace {

using namespace indexing;

#define TOPK_ATTRS(X)                                                          \
  X(Axis, "axis", Int, -1) X(K, "k", Int, -1) X(Largest, "largest", Int, 1)
CUVIL_OP_ATTRS(TopKAttrs, TOPK_ATTRS)
#define ONEHOT_ATTRS(X) X(Axis, "axis", Int, -1)
CUVIL_OP_ATTRS(OneHotAttrs, ONEHOT_ATTRS)
#define TRILU_ATTRS(X) X(Upper, "upper", Int, 1)
CUVIL_OP_ATTRS(TriluAttrs, TRILU_ATTRS)
#define EYELIKE_ATTRS(X) X(K, "k", Int, 0)
CUVIL_OP_ATTRS(EyeLikeAttrs, EYELIKE_ATTRS)
#define REVERSESEQUENCE_ATTRS(X)                                               \
  X(BatchAxis, "batch_axis", Int, 1) X(TimeAxis, "time_axis", Int, 0)
CUVIL_OP_ATTRS(ReverseSequenceAttrs, REVERSESEQUENCE_ATTRS)
#define CUMSUM_ATTRS(X)                                                        \
  X(Exclusive, "exclusive", Int, 0) X(Reverse, "reverse", Int, 0)
CUVIL_OP_ATTRS(CumSumAttrs, CUMSUM_ATTRS)

/// The single value of constant scalar V (integer or float, truncated).
std::optional<int64_t> constScalar(const Value *V) {
  if (!V || !V->isConstant() || V->numElements() != 1)
    return std::nullopt;
  if (V->dtype() == DType::I64 || V->dtype() == DType::I32)
    return V->toInt64s()[0];
  if (V->dtype() == DType::F32)
    return static_cast<int64_t>(V->f32()[0]);
  return std::nullopt;
}

// TopK: k from input 1 (opset >= 10) or the attribute; the values and
// indices outputs have k elements along the axis.
llvm::Error runTopK(const Node &N, std::vector<KernelCall> *Calls) {
  const Value *X = N.input(0);
  if (!X || N.outputs().size() != 2)
    return nodeError(N, "needs an input and both outputs");
  const Value *V = N.output(0), *I = N.output(1);
  DType T = X->dtype();
  if (T != DType::F32 && T != DType::F64 && T != DType::I32 && T != DType::I64)
    return nodeError(N, "element type {} is not supported", dtypeName(T));
  if (V->dtype() != T || I->dtype() != DType::I64)
    return nodeError(N, "outputs must be the input's type and int64");
  if (X->rank() == 0)
    return nodeError(N, "a scalar input is not supported");
  TopKAttrs At(N);
  auto Axis = normalizeAxis(N, At.Axis, X->rank());
  if (!Axis)
    return Axis.takeError();
  if (V->shape() != I->shape() || V->rank() != X->rank())
    return nodeError(N, "the outputs' shapes do not match the input's");
  int64_t K = V->shape()[*Axis];
  std::optional<int64_t> Given;
  if (N.opset() < 10)
    Given = At.K;
  else if (const Value *KV = N.input(1)) {
    if (KV->dtype() != DType::I64 || KV->numElements() != 1)
      return nodeError(N, "k must be one int64");
    Given = constScalar(KV);
  } else
    return nodeError(N, "missing input k");
  if (Given && *Given != K)
    return nodeError(N, "k = {} differs from the outputs' extent {}", *Given,
                     K);
  std::vector<int64_t> Want = X->shape();
  Want[*Axis] = K;
  if (V->shape() != Want || K > X->shape()[*Axis])
    return nodeError(N, "the outputs' shapes do not match the input's");
  if (!Calls || V->numElements() == 0)
    return llvm::Error::success();
  const std::vector<int64_t> &S = X->shape();
  Calls->push_back(
      kabi::TopkGroup{.Kernel = fmt::format("cuvil_k_topk_{}", dtypeName(T)),
                      .x = X,
                      .values = V,
                      .indices = I,
                      .outer = product(S, 0, *Axis),
                      .n = S[*Axis],
                      .inner = product(S, *Axis + 1, S.size()),
                      .k = K,
                      .largest = At.Largest != 0}
          .call());
  return llvm::Error::success();
}

// OneHot(indices, depth, values): depth is the output's extent on the axis.
llvm::Error runOneHot(const Node &N, std::vector<KernelCall> *Calls) {
  const Value *Idx = N.input(0), *Depth = N.input(1), *Vals = N.input(2),
              *Y = N.output(0);
  if (!Idx || !Depth || !Vals)
    return nodeError(N, "needs indices, depth and values");
  if (auto E = checkBits(N, Y->dtype()))
    return E;
  const char *ISfx = Idx->dtype() == DType::I64   ? "i64"
                     : Idx->dtype() == DType::I32 ? "i32"
                     : Idx->dtype() == DType::F32 ? "f32"
                                                  : nullptr;
  if (!ISfx)
    return nodeError(N, "indices of type {} are not supported",
                     dtypeName(Idx->dtype()));
  if (Vals->dtype() != Y->dtype() || Vals->numElements() != 2)
    return nodeError(N, "values must be [off, on] of the output's type");
  if (Depth->numElements() != 1)
    return nodeError(N, "depth must be a scalar");
  auto Axis = normalizeAxis(N, OneHotAttrs(N).Axis, Idx->rank() + 1);
  if (!Axis)
    return Axis.takeError();
  if (Y->rank() != Idx->rank() + 1)
    return nodeError(N, "the output's rank must be the indices' plus one");
  int64_t D = Y->shape()[*Axis];
  if (auto Given = constScalar(Depth); Given && *Given != D)
    return nodeError(N, "depth {} differs from the output's extent {}", *Given,
                     D);
  std::vector<int64_t> Want = Idx->shape();
  Want.insert(Want.begin() + *Axis, D);
  if (Y->shape() != Want)
    return nodeError(N, "the output's shape does not match the indices'");
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  const std::vector<int64_t> &S = Idx->shape();
  Calls->push_back(
      kabi::OnehotGroup{.Kernel = fmt::format("cuvil_k_onehot_{}_b{}", ISfx,
                                              dtypeSize(Y->dtype()) * 8),
                        .idx = Idx,
                        .values = Vals,
                        .y = Y,
                        .outer = product(S, 0, *Axis),
                        .depth = D,
                        .inner = product(S, *Axis, S.size())}
          .call());
  return llvm::Error::success();
}

// Trilu: k (input 1, optional) is folded into the call when constant.
llvm::Error runTrilu(const Node &N, std::vector<KernelCall> *Calls) {
  const Value *X = N.input(0), *K = N.input(1), *Y = N.output(0);
  if (!X)
    return nodeError(N, "missing input");
  if (auto E = checkBits(N, X->dtype()))
    return E;
  if (Y->dtype() != X->dtype() || Y->shape() != X->shape())
    return nodeError(N, "the output must have the input's type and shape");
  if (X->rank() < 2)
    return nodeError(N, "the input must have rank 2 or more");
  if (K && (K->dtype() != DType::I64 || K->numElements() != 1))
    return nodeError(N, "k must be one int64");
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  const std::vector<int64_t> &S = X->shape();
  std::optional<int64_t> KC = K ? constScalar(K) : std::optional<int64_t>(0);
  Calls->push_back(kabi::TriluGroup{
      .Kernel = fmt::format("cuvil_k_trilu_b{}", dtypeSize(X->dtype()) * 8),
      .x = X,
      .y = Y,
      .k = KC ? nullptr : K,
      .k_default = KC.value_or(0),
      .batch = product(S, 0, S.size() - 2),
      .n = S[S.size() - 2],
      .m = S.back(),
      .upper = TriluAttrs(N).Upper != 0}
                       .call());
  return llvm::Error::success();
}

/// The bits of 1 in type T.
int64_t oneBits(DType T) {
  switch (T) {
  case DType::F32: {
    float F = 1.0f;
    int32_t B;
    std::memcpy(&B, &F, 4);
    return B;
  }
  case DType::F64: {
    double F = 1.0;
    int64_t B;
    std::memcpy(&B, &F, 8);
    return B;
  }
  case DType::F16: return 0x3C00;
  case DType::BF16: return 0x3F80;
  default: return 1;
  }
}

// EyeLike: only the input's (static) shape matters.
llvm::Error runEyeLike(const Node &N, std::vector<KernelCall> *Calls) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (!X || X->rank() != 2 || Y->shape() != X->shape())
    return nodeError(N, "needs a 2-D input and an output of its shape");
  if (auto E = checkBits(N, Y->dtype()))
    return E;
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  Calls->push_back(kabi::EyeGroup{
      .Kernel = fmt::format("cuvil_k_eye_b{}", dtypeSize(Y->dtype()) * 8),
      .y = Y,
      .rows = Y->shape()[0],
      .cols = Y->shape()[1],
      .k = EyeLikeAttrs(N).K,
      .one = oneBits(Y->dtype())}
                       .call());
  return llvm::Error::success();
}

llvm::Error runReverseSequence(const Node &N, std::vector<KernelCall> *Calls) {
  const Value *X = N.input(0), *Lens = N.input(1), *Y = N.output(0);
  if (!X || !Lens)
    return nodeError(N, "needs an input and sequence_lens");
  if (auto E = checkBits(N, X->dtype()))
    return E;
  if (Y->dtype() != X->dtype() || Y->shape() != X->shape())
    return nodeError(N, "the output must have the input's type and shape");
  ReverseSequenceAttrs At(N);
  int64_t BA = At.BatchAxis, TA = At.TimeAxis;
  if (X->rank() < 2 || BA < 0 || BA > 1 || TA < 0 || TA > 1 || BA == TA)
    return nodeError(N,
                     "batch_axis {} and time_axis {} on rank {} are not "
                     "supported (they must be 0 and 1)",
                     BA, TA, X->rank());
  const std::vector<int64_t> &S = X->shape();
  if (Lens->dtype() != DType::I64 || Lens->numElements() != S[BA])
    return nodeError(N, "sequence_lens must be {} int64 values", S[BA]);
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  std::vector<int64_t> Str = denseStrides(S);
  Calls->push_back(kabi::ReverseSequenceGroup{
      .Kernel = fmt::format("cuvil_k_reverse_sequence_b{}",
                            dtypeSize(X->dtype()) * 8),
      .x = X,
      .lens = Lens,
      .y = Y,
      .batch = S[BA],
      .time = S[TA],
      .inner = product(S, 2, S.size()),
      .batch_str = Str[BA],
      .time_str = Str[TA]}
                       .call());
  return llvm::Error::success();
}

// CumSum: a constant axis folds the shape into [outer, n, inner]; a run-time
// one is read by the kernel, which then needs the whole (padded) shape.
llvm::Error runCumSum(const Node &N, std::vector<KernelCall> *Calls) {
  const Value *X = N.input(0), *A = N.input(1), *Y = N.output(0);
  if (!X || !A)
    return nodeError(N, "needs an input and an axis");
  DType T = X->dtype();
  if (T != DType::F32 && T != DType::F64 && T != DType::I32 && T != DType::I64)
    return nodeError(N, "element type {} is not supported", dtypeName(T));
  if (Y->dtype() != T || Y->shape() != X->shape())
    return nodeError(N, "the output must have the input's type and shape");
  if ((A->dtype() != DType::I64 && A->dtype() != DType::I32) ||
      A->numElements() != 1)
    return nodeError(N, "axis must be one int32 or int64");
  if (X->rank() == 0)
    return nodeError(N, "a scalar input is not supported");
  std::vector<int64_t> Shape = X->shape();
  std::optional<int64_t> Axis = constScalar(A);
  if (Axis) {
    auto Norm = normalizeAxis(N, *Axis, X->rank());
    if (!Norm)
      return Norm.takeError();
    Shape = {product(Shape, 0, *Norm), Shape[*Norm],
             product(Shape, *Norm + 1, Shape.size())};
    Axis = 1;
  } else if (X->rank() > CUVIL_MAX_RANK) {
    return nodeError(N, "a run-time axis on rank {} is not supported",
                     X->rank());
  }
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  int64_t Rank = Shape.size();
  Shape.insert(Shape.begin(), CUVIL_MAX_RANK - Shape.size(), 1);
  CumSumAttrs At(N);
  Calls->push_back(kabi::CumsumGroup{
      .Kernel = fmt::format("cuvil_k_cumsum_{}", dtypeName(T)),
      .x = X,
      .y = Y,
      .shape = Shape,
      .rank = Rank,
      .axis = Axis ? nullptr : A,
      .axis_is_i32 = A->dtype() == DType::I32,
      .axis_default = Axis.value_or(0),
      .exclusive = At.Exclusive != 0,
      .reverse = At.Reverse != 0}
                       .call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef TopKOp = {.Name = "TopK",
                             .Verify = verifyWith<runTopK>,
                             .Lower = lowerWith<runTopK>,
                             .Macs = noMacs,
                             .Traits = NoTraits,
                             .Attrs = TopKAttrs::Specs};
extern const OpDef OneHotOp = {.Name = "OneHot",
                               .Verify = verifyWith<runOneHot>,
                               .Lower = lowerWith<runOneHot>,
                               .Macs = noMacs,
                               .Traits = NoTraits,
                               .Attrs = OneHotAttrs::Specs};
// Element-wise in position: the output may take the input's buffer.
extern const OpDef TriluOp = {.Name = "Trilu",
                              .Verify = verifyWith<runTrilu>,
                              .Lower = lowerWith<runTrilu>,
                              .Macs = noMacs,
                              .Traits = InPlace,
                              .Attrs = TriluAttrs::Specs};
extern const OpDef EyeLikeOp = {.Name = "EyeLike",
                                .Verify = verifyWith<runEyeLike>,
                                .Lower = lowerWith<runEyeLike>,
                                .Macs = noMacs,
                                .Traits = NoTraits,
                                .Attrs = EyeLikeAttrs::Specs};
// A prefix sum in place reads each element before writing it.
extern const OpDef CumSumOp = {.Name = "CumSum",
                               .Verify = verifyWith<runCumSum>,
                               .Lower = lowerWith<runCumSum>,
                               .Macs = noMacs,
                               .Traits = InPlace,
                               .Attrs = CumSumAttrs::Specs};
extern const OpDef ReverseSequenceOp = {.Name = "ReverseSequence",
                                        .Verify =
                                            verifyWith<runReverseSequence>,
                                        .Lower = lowerWith<runReverseSequence>,
                                        .Macs = noMacs,
                                        .Traits = NoTraits,
                                        .Attrs = ReverseSequenceAttrs::Specs};

} // namespace cuvil
