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
#include "ops/tensor/Indexing.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

using namespace indexing;

/// Elements of 1, 2, 4 or 8 bytes, the same type in Data and Y.
llvm::Error checkElements(const Node &N, const Value *Data, const Value *Y) {
  if (auto E = checkBits(N, Data->dtype()))
    return E;
  if (Y->dtype() != Data->dtype())
    return nodeError(N, "output '{}' differs in type from the data",
                     Y->name());
  return llvm::Error::success();
}

llvm::Expected<std::string_view> indexSuffix(const Node &N, const Value *Idx,
                                             bool AllowI32) {
  if (Idx->dtype() == DType::I64)
    return "i64";
  if (AllowI32 && Idx->dtype() == DType::I32)
    return "i32";
  return nodeError(N, "indices of type {} are not supported (only int64{} "
                      "is supported)",
                   dtypeName(Idx->dtype()), AllowI32 ? " and int32" : "");
}

/// The kernel name part of a reduction: "none_b<bits>" or "<op>_<type>".
llvm::Expected<std::string> reductionKernel(const Node &N, DType T) {
  std::string R = N.getString("reduction", "none");
  if (R == "none")
    return fmt::format("none_b{}", dtypeSize(T) * 8);
  if (R != "add" && R != "mul" && R != "max" && R != "min")
    return nodeError(N, "reduction '{}' is not supported", R);
  if (T != DType::F32 && T != DType::F64 && T != DType::I32 && T != DType::I64)
    return nodeError(N, "reduction '{}' on element type {} is not supported",
                     R, dtypeName(T));
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
  auto Axis = normalizeAxis(N, N.getInt("axis", 0), R);
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
    return nodeError(N, "indices of rank {} that need more than {} loop "
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
  Calls->push_back({fmt::format("cuvil_k_gather_elements_b{}_{}",
                                dtypeSize(X->dtype()) * 8, *Sfx),
                    {KernelArg::tensor(X), KernelArg::tensor(Idx),
                     KernelArg::tensor(Y), KernelArg::array(L->Shape),
                     KernelArg::array(L->Str), KernelArg::i(L->AxisDim),
                     KernelArg::i(L->AxisStr)}});
  return llvm::Error::success();
}

/// Y = copy of Data (dropped when the planner shares their bytes).
void copyData(const Value *Data, const Value *Y,
              std::vector<KernelCall> &Calls) {
  KernelCall C{"cuvil_k_copy",
               {KernelArg::tensor(Data), KernelArg::tensor(Y),
                KernelArg::i(Y->byteSize())}};
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

llvm::Expected<ScatterOperands> scatterOperands(const Node &N,
                                                bool AllowI32) {
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
  Calls->push_back({fmt::format("cuvil_k_scatter_elements_{}_{}", Red, Sfx),
                    {KernelArg::tensor(Y), KernelArg::tensor(Idx),
                     KernelArg::tensor(U), KernelArg::array(L->Shape),
                     KernelArg::array(L->Str), KernelArg::i(L->AxisDim),
                     KernelArg::i(L->AxisStr)}});
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
    return nodeError(N, "index tuples of length {} do not fit data of rank "
                        "{} (batch_dims {})",
                     K, Data->rank(), Batch);
  for (size_t D = 0; D < Batch; ++D)
    if (Idx->shape()[D] != Data->shape()[D])
      return nodeError(N, "batch dimension {} differs between data and "
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
  int64_t B = N.getInt("batch_dims", 0);
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
      {"cuvil_k_gather_nd_i64",
       {KernelArg::tensor(X), KernelArg::tensor(Idx), KernelArg::tensor(Y),
        KernelArg::i(product(XS, 0, B)),
        KernelArg::i(product(IS, B, IS.size() - 1)), KernelArg::i(*K),
        KernelArg::array(Dims), KernelArg::array(StrBytes),
        KernelArg::i(product(XS, B + *K, XS.size()) * ES),
        KernelArg::i(product(XS, B, XS.size()) * ES)}});
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
  Calls->push_back(
      {fmt::format("cuvil_k_scatter_nd_{}", Red),
       {KernelArg::tensor(Y), KernelArg::tensor(Idx), KernelArg::tensor(U),
        KernelArg::i(product(IS, 0, IS.size() - 1)), KernelArg::i(*K),
        KernelArg::array({XS.begin(), XS.begin() + *K}),
        KernelArg::array({Str.begin(), Str.begin() + *K}),
        KernelArg::i(product(XS, *K, XS.size()))}});
  return llvm::Error::success();
}

} // namespace

extern const OpDef GatherElementsOp = {
    "GatherElements", verifyWith<runGatherElements>,
    lowerWith<runGatherElements>, noMacs, NoTraits};
extern const OpDef GatherNDOp = {"GatherND", verifyWith<runGatherND>,
                                 lowerWith<runGatherND>, noMacs,
                                 NoTraits};
// Fresh, not in place: the updates or indices could be the data itself.
extern const OpDef ScatterElementsOp = {
    "ScatterElements", verifyWith<runScatterElements>,
    lowerWith<runScatterElements>, noMacs, NoTraits};
extern const OpDef ScatterOp = {"Scatter", verifyWith<runScatterElements>,
                                lowerWith<runScatterElements>, noMacs,
                                NoTraits};
extern const OpDef ScatterNDOp = {"ScatterND", verifyWith<runScatterND>,
                                  lowerWith<runScatterND>, noMacs,
                                  NoTraits};

} // namespace cuvil
