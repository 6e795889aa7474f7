//===- GatherScatter.cpp - GatherElements, GatherND, Scatter* -------------===//
//
// Element-wise and slice-wise gathers and scatters. Their indices are
// ordinary tensors, usually computed at run time, so the kernels read them
// at run time (cuvil/kernels.h says what they do with out-of-range ones);
// shapes, strides and the axis are compile-time arguments. A scatter first
// copies the data into its output (the copy vanishes when the planner
// places both at the same bytes) and then updates it in place.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"
#include "ops/tensor/Indexing.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

using namespace indexing;

#define GATHERELEMENTS_ATTRS(X) X(Axis, "axis", Int, 0)
CUVIL_OP_ATTRS(GatherElementsAttrs, GATHERELEMENTS_ATTRS)
#define SCATTERELEMENTS_ATTRS(X)                                               \
  X(Axis, "axis", Int, 0) X(Reduction, "reduction", String, "none")
CUVIL_OP_ATTRS(ScatterElementsAttrs, SCATTERELEMENTS_ATTRS)
#define GATHERND_ATTRS(X) X(BatchDims, "batch_dims", Int, 0)
CUVIL_OP_ATTRS(GatherNDAttrs, GATHERND_ATTRS)
#define SCATTERND_ATTRS(X) X(Reduction, "reduction", String, "none")
CUVIL_OP_ATTRS(ScatterNDAttrs, SCATTERND_ATTRS)

/// Elements of 1, 2, 4 or 8 bytes, the same type in Data and Y.
llvm::Error checkElements(const Node &N, const Value *Data, const Value *Y) {
  if (auto E = checkBits(N, Data->dtype()))
    return E;
  if (Y->dtype() != Data->dtype())
    return nodeError(N, "output '{}' differs in type from the data", Y->name());
  return llvm::Error::success();
}

llvm::Expected<std::string_view> indexSuffix(const Node &N, const Value *Idx,
                                             bool AllowI32) {
  if (Idx->dtype() == DType::I64)
    return "i64";
  if (AllowI32 && Idx->dtype() == DType::I32)
    return "i32";
  return nodeError(N,
                   "indices of type {} are not supported (only int64{} "
                   "is supported)",
                   dtypeName(Idx->dtype()), AllowI32 ? " and int32" : "");
}

/// The kernel name part of a reduction: "none_b<bits>" or "<op>_<type>".
llvm::Expected<std::string> reductionKernel(const Node &N, DType T) {
  // ScatterElements declares the same reduction; the deprecated Scatter
  // has none and reads the default.
  std::string R = ScatterNDAttrs(N).Reduction;
  if (R == "none")
    return fmt::format("none_b{}", dtypeSize(T) * 8);
  if (R != "add" && R != "mul" && R != "max" && R != "min")
    return nodeError(N, "reduction '{}' is not supported", R);
  if (T != DType::F32 && T != DType::F64 && T != DType::I32 && T != DType::I64)
    return nodeError(N, "reduction '{}' on element type {} is not supported", R,
                     dtypeName(T));
  return fmt::format("{}_{}", R, dtypeName(T));
}

/// The shared layout of GatherElements and ScatterElements: Data and Idx
/// have the same rank, Idx no larger than Data except along the axis.
struct ElementsLayout {
  std::vector<int64_t> Shape, Str; // CUVIL_MAX_RANK loop dimensions
  int64_t AxisDim = 0, AxisStr = 0;
};

llvm::Expected<ElementsLayout> elementsLayout(const Node &N, const Value *Data,
                                              const Value *Idx) {
  size_t R = Data->rank();
  if (R == 0 || Idx->rank() != R)
    return nodeError(N, "data and indices must have the same rank (not 0)");
  // GatherElements, ScatterElements and Scatter declare the same axis.
  auto Axis = normalizeAxis(N, GatherElementsAttrs(N).Axis, R);
  if (!Axis)
    return Axis.takeError();
  for (size_t D = 0; D < R; ++D)
    if (D != static_cast<size_t>(*Axis) && Idx->shape()[D] > Data->shape()[D])
      return nodeError(N, "indices dimension {} exceeds the data's", D);
  if (Data->shape()[*Axis] == 0 && Idx->numElements() > 0)
    return nodeError(N, "indices into an empty axis");
  ElementsLayout L;
  std::vector<int64_t> Str = denseStrides(Data->shape());
  L.AxisDim = Data->shape()[*Axis];
  L.AxisStr = Str[*Axis];
  Str[*Axis] = 0;
  // The loop runs over the (dense) indices; dimensions both sides walk
  // contiguously merge, so ranks above CUVIL_MAX_RANK usually fit.
  L.Shape = Idx->shape();
  L.Str = Str;
  std::vector<int64_t> IdxStr = denseStrides(L.Shape);
  if (Idx->numElements() > 0 &&
      !canonicalizeCopy(L.Shape, L.Str, IdxStr, CUVIL_MAX_RANK))
    return nodeError(N,
                     "indices of rank {} that need more than {} loop "
                     "dimensions are not supported",
                     R, CUVIL_MAX_RANK);
  return L;
}

llvm::Error runGatherElements(const Node &N, std::vector<KernelCall> *Calls) {
  const Value *X = N.input(0), *Idx = N.input(1), *Y = N.output(0);
  if (!X || !Idx)
    return nodeError(N, "needs data and indices");
  if (auto E = checkElements(N, X, Y))
    return E;
  auto Sfx = indexSuffix(N, Idx, true);
  if (!Sfx)
    return Sfx.takeError();
  auto L = elementsLayout(N, X, Idx);
  if (!L)
    return L.takeError();
  if (Y->shape() != Idx->shape())
    return nodeError(N, "the output must have the indices' shape");
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  Calls->push_back(kabi::GatherElementsGroup{
      .Kernel = fmt::format("cuvil_k_gather_elements_b{}_{}",
                            dtypeSize(X->dtype()) * 8, *Sfx),
      .x = X,
      .idx = Idx,
      .y = Y,
      .shape = L->Shape,
      .x_str = L->Str,
      .axis_dim = L->AxisDim,
      .axis_str = L->AxisStr}
                       .call());
  return llvm::Error::success();
}

/// Y = copy of Data (dropped when the planner shares their bytes).
void copyData(const Value *Data, const Value *Y,
              std::vector<KernelCall> &Calls) {
  KernelCall C =
      kabi::Copy{.src = Data, .dst = Y, .nbytes = Y->byteSize()}.call();
  C.IsCopy = true;
  Calls.push_back(std::move(C));
}

/// The operands of a scatter (data, indices, updates, output), checked for
/// types, with the kernel name parts of the index type and the reduction.
struct ScatterOperands {
  const Value *X, *Idx, *U, *Y;
  std::string_view IdxSfx;
  std::string Red;
};

llvm::Expected<ScatterOperands> scatterOperands(const Node &N, bool AllowI32) {
  const Value *X = N.input(0), *Idx = N.input(1), *U = N.input(2),
              *Y = N.output(0);
  if (!X || !Idx || !U)
    return nodeError(N, "needs data, indices and updates");
  if (auto E = checkElements(N, X, Y))
    return E;
  if (U->dtype() != X->dtype())
    return nodeError(N, "updates differ in type from the data");
  if (Y->shape() != X->shape())
    return nodeError(N, "the output must have the data's shape");
  auto Sfx = indexSuffix(N, Idx, AllowI32);
  if (!Sfx)
    return Sfx.takeError();
  auto Red = reductionKernel(N, X->dtype());
  if (!Red)
    return Red.takeError();
  return ScatterOperands{X, Idx, U, Y, *Sfx, *Red};
}

// ScatterElements and the deprecated Scatter (opset 9/10, no reduction).
llvm::Error runScatterElements(const Node &N, std::vector<KernelCall> *Calls) {
  auto Ops = scatterOperands(N, true);
  if (!Ops)
    return Ops.takeError();
  auto [X, Idx, U, Y, Sfx, Red] = *Ops;
  auto L = elementsLayout(N, X, Idx);
  if (!L)
    return L.takeError();
  if (U->shape() != Idx->shape())
    return nodeError(N, "updates must have the indices' shape");
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  copyData(X, Y, *Calls);
  if (Idx->numElements() == 0)
    return llvm::Error::success();
  Calls->push_back(kabi::ScatterElementsGroup{
      .Kernel = fmt::format("cuvil_k_scatter_elements_{}_{}", Red, Sfx),
      .y = Y,
      .idx = Idx,
      .upd = U,
      .shape = L->Shape,
      .y_str = L->Str,
      .axis_dim = L->AxisDim,
      .axis_str = L->AxisStr}
                       .call());
  return llvm::Error::success();
}

/// The index tuple length k (the last dimension of the indices) of GatherND
/// and ScatterND, checked against the data dimensions after the batch ones.
llvm::Expected<size_t> tupleLength(const Node &N, const Value *Data,
                                   const Value *Idx, size_t Batch) {
  if (Idx->rank() < 1 || Idx->rank() <= Batch || Data->rank() <= Batch)
    return nodeError(N, "indices of rank {} do not fit batch_dims {}",
                     Idx->rank(), Batch);
  int64_t K = Idx->shape().back();
  if (K < 1 || K > static_cast<int64_t>(Data->rank() - Batch))
    return nodeError(N,
                     "index tuples of length {} do not fit data of rank "
                     "{} (batch_dims {})",
                     K, Data->rank(), Batch);
  for (size_t D = 0; D < Batch; ++D)
    if (Idx->shape()[D] != Data->shape()[D])
      return nodeError(N,
                       "batch dimension {} differs between data and "
                       "indices",
                       D);
  for (size_t D = Batch; D < Batch + K; ++D)
    if (Data->shape()[D] == 0 && Idx->numElements() > 0)
      return nodeError(N, "indices into an empty dimension {}", D);
  return static_cast<size_t>(K);
}

llvm::Error runGatherND(const Node &N, std::vector<KernelCall> *Calls) {
  const Value *X = N.input(0), *Idx = N.input(1), *Y = N.output(0);
  if (!X || !Idx)
    return nodeError(N, "needs data and indices");
  if (auto E = checkElements(N, X, Y))
    return E;
  if (auto S = indexSuffix(N, Idx, false); !S)
    return S.takeError();
  int64_t B = GatherNDAttrs(N).BatchDims;
  if (B < 0)
    return nodeError(N, "batch_dims {} is not supported", B);
  auto K = tupleLength(N, X, Idx, B);
  if (!K)
    return K.takeError();
  const std::vector<int64_t> &XS = X->shape(), &IS = Idx->shape();
  std::vector<int64_t> Want(IS.begin(), IS.end() - 1);
  Want.insert(Want.end(), XS.begin() + B + *K, XS.end());
  if (Y->shape() != Want)
    return nodeError(N, "output '{}' does not have the shape its inputs give",
                     Y->name());
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  int64_t ES = dtypeSize(X->dtype());
  std::vector<int64_t> Str = denseStrides(XS), Dims, StrBytes;
  for (size_t D = B; D < B + *K; ++D) {
    Dims.push_back(XS[D]);
    StrBytes.push_back(Str[D] * ES);
  }
  Calls->push_back(
      kabi::GatherNdI64{.x = X,
                        .idx = Idx,
                        .y = Y,
                        .batch = product(XS, 0, B),
                        .n_tuples = product(IS, B, IS.size() - 1),
                        .k = static_cast<int64_t>(*K),
                        .dims = Dims,
                        .str_bytes = StrBytes,
                        .slice_bytes = product(XS, B + *K, XS.size()) * ES,
                        .x_batch_bytes = product(XS, B, XS.size()) * ES}
          .call());
  return llvm::Error::success();
}

llvm::Error runScatterND(const Node &N, std::vector<KernelCall> *Calls) {
  auto Ops = scatterOperands(N, false);
  if (!Ops)
    return Ops.takeError();
  auto [X, Idx, U, Y, Sfx, Red] = *Ops;
  auto K = tupleLength(N, X, Idx, 0);
  if (!K)
    return K.takeError();
  const std::vector<int64_t> &XS = X->shape(), &IS = Idx->shape();
  std::vector<int64_t> Want(IS.begin(), IS.end() - 1);
  Want.insert(Want.end(), XS.begin() + *K, XS.end());
  if (U->shape() != Want)
    return nodeError(N, "updates do not have the shape indices and data "
                        "give");
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  copyData(X, Y, *Calls);
  if (U->numElements() == 0)
    return llvm::Error::success();
  std::vector<int64_t> Str = denseStrides(XS);
  Calls->push_back(kabi::ScatterNdGroup{
      .Kernel = fmt::format("cuvil_k_scatter_nd_{}", Red),
      .y = Y,
      .idx = Idx,
      .upd = U,
      .n_tuples = product(IS, 0, IS.size() - 1),
      .k = static_cast<int64_t>(*K),
      .dims = std::vector<int64_t>(XS.begin(), XS.begin() + *K),
      .str = std::vector<int64_t>(Str.begin(), Str.begin() + *K),
      .slice = product(XS, *K, XS.size())}
                       .call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef GatherElementsOp = {.Name = "GatherElements",
                                       .Verify = verifyWith<runGatherElements>,
                                       .Lower = lowerWith<runGatherElements>,
                                       .Macs = noMacs,
                                       .Traits = NoTraits,
                                       .Attrs = GatherElementsAttrs::Specs};
extern const OpDef GatherNDOp = {.Name = "GatherND",
                                 .Verify = verifyWith<runGatherND>,
                                 .Lower = lowerWith<runGatherND>,
                                 .Macs = noMacs,
                                 .Traits = NoTraits,
                                 .Attrs = GatherNDAttrs::Specs};
// Fresh, not in place: the updates or indices could be the data itself.
extern const OpDef ScatterElementsOp = {.Name = "ScatterElements",
                                        .Verify =
                                            verifyWith<runScatterElements>,
                                        .Lower = lowerWith<runScatterElements>,
                                        .Macs = noMacs,
                                        .Traits = NoTraits,
                                        .Attrs = ScatterElementsAttrs::Specs};
// The deprecated Scatter has ScatterElements' axis but no reduction.
extern const OpDef ScatterOp = {.Name = "Scatter",
                                .Verify = verifyWith<runScatterElements>,
                                .Lower = lowerWith<runScatterElements>,
                                .Macs = noMacs,
                                .Traits = NoTraits,
                                .Attrs = GatherElementsAttrs::Specs};
extern const OpDef ScatterNDOp = {.Name = "ScatterND",
                                  .Verify = verifyWith<runScatterND>,
                                  .Lower = lowerWith<runScatterND>,
                                  .Macs = noMacs,
                                  .Traits = NoTraits,
                                  .Attrs = ScatterNDAttrs::Specs};

} // namespace cuvil
