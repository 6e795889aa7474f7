//===- DataMovement.cpp - Slice, Expand, Tile, Split, Pad, Gather ---------===//
//
// Ops that move elements of any type without computing on them. Their
// parameters (starts/ends, shape, repeats, split sizes, pads, indices) must
// be compile-time constants; their shape rules live in ShapeRules.cpp,
// shared with the fold-constants pass. Each lowers to strided copies
// (cuvil_k_strided_copy_b<bits>), fills and gathers.
//
//===----------------------------------------------------------------------===//
#include "ops/tensor/DataMovement.h"
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <cstring>
#include <cuvil/kernels.h>

namespace cuvil {
namespace {

/// One strided copy from X (at element XOff) to Y (at element YOff).
struct Copy {
  const Value *X;
  int64_t XOff;
  int64_t YOff;
  std::vector<int64_t> Shape, XStr, YStr;
};

llvm::Error checkElement(const Node &N) {
  const Value *X = N.input(0);
  if (!X)
    return nodeError(N, "missing input");
  unsigned S = dtypeSize(X->dtype());
  if (S != 1 && S != 2 && S != 4 && S != 8)
    return nodeError(N, "element type {} is not supported",
                     dtypeName(X->dtype()));
  for (const Value *Y : N.outputs())
    if (Y->dtype() != X->dtype())
      return nodeError(N, "output '{}' differs in type from the input",
                       Y->name());
  return llvm::Error::success();
}

llvm::Error checkShape(const Node &N, const Value *Y,
                       const std::vector<int64_t> &Want) {
  if (Y->shape() != Want)
    return nodeError(N,
                     "output '{}' has a shape that differs from the one "
                     "its parameters give",
                     Y->name());
  return llvm::Error::success();
}

/// Appends the kernel call of C (none when it copies nothing).
llvm::Error emitCopy(const Node &N, const Value *Y, Copy C,
                     std::vector<KernelCall> *Calls) {
  for (int64_t D : C.Shape)
    if (D == 0)
      return llvm::Error::success();
  if (!canonicalizeCopy(C.Shape, C.XStr, C.YStr, CUVIL_MAX_RANK)) {
    // Too many loop dimensions (Tile of rank > 3): one copy per index of
    // the outermost ones, up to a bound on the code size.
    int64_t Calls1 = 1;
    size_t Peel = 0;
    while (C.Shape.size() - Peel > CUVIL_MAX_RANK)
      Calls1 *= C.Shape[Peel++];
    if (Calls1 > 256)
      return nodeError(N, "the copy needs more than {} loop dimensions",
                       CUVIL_MAX_RANK);
    Copy Inner = C;
    for (int64_t I = 0; I < C.Shape[0]; ++I) {
      Inner.XOff = C.XOff + I * C.XStr[0];
      Inner.YOff = C.YOff + I * C.YStr[0];
      Inner.Shape.assign(C.Shape.begin() + 1, C.Shape.end());
      Inner.XStr.assign(C.XStr.begin() + 1, C.XStr.end());
      Inner.YStr.assign(C.YStr.begin() + 1, C.YStr.end());
      if (auto E = emitCopy(N, Y, Inner, Calls))
        return E;
    }
    return llvm::Error::success();
  }
  if (!Calls)
    return llvm::Error::success();
  int64_t ES = dtypeSize(Y->dtype());
  Calls->push_back(kabi::StridedCopyGroup{
      .Kernel = fmt::format("cuvil_k_strided_copy_b{}", ES * 8),
      .x = KernelArg::tensor(C.X, C.XOff * ES),
      .y = KernelArg::tensor(Y, C.YOff * ES),
      .shape = C.Shape,
      .x_str = C.XStr,
      .y_str = C.YStr}
                       .call());
  return llvm::Error::success();
}

/// A copy of access A of X into the dense output Y.
llvm::Error emitAccess(const Node &N, const Value *X, const Value *Y,
                       const StridedAccess &A, std::vector<KernelCall> *Calls) {
  int64_t Count = 1;
  for (int64_t D : A.Shape)
    Count *= D;
  if (Count != Y->numElements())
    return nodeError(N, "output '{}' does not have the expected {} elements",
                     Y->name(), Count);
  // The dense strides of Y over the access dimensions.
  return emitCopy(
      N, Y, {X, A.Offset, 0, A.Shape, A.Strides, denseStrides(A.Shape)}, Calls);
}

// Slice, Expand, Tile: one access of input 0 each.
llvm::Expected<StridedAccess> sliceOf(const Node &N) {
  return sliceAccess(N, N.input(0)->shape());
}
/// Whether input I is present and computed at run time: then the output
/// shape (static) says what the parameter must have been.
bool runtimeParam(const Node &N, size_t I) {
  return N.input(I) && !N.input(I)->isConstant();
}

llvm::Expected<StridedAccess> expandOf(const Node &N) {
  const std::vector<int64_t> &In = N.input(0)->shape();
  if (runtimeParam(N, 1)) {
    auto S = broadcastShapes(N, In, N.output(0)->shape());
    if (!S)
      return S.takeError();
    return broadcastAccess(In, *S);
  }
  auto S = expandShape(N, In);
  if (!S)
    return S.takeError();
  return broadcastAccess(In, *S);
}
llvm::Expected<StridedAccess> tileOf(const Node &N) {
  const std::vector<int64_t> &In = N.input(0)->shape();
  if (!runtimeParam(N, 1))
    return tileAccess(N, In);
  const std::vector<int64_t> &Out = N.output(0)->shape();
  if (Out.size() != In.size())
    return nodeError(N, "output rank differs from the input's");
  StridedAccess A;
  std::vector<int64_t> S = denseStrides(In);
  for (size_t I = 0; I < In.size(); ++I) {
    if (In[I] == 0 ? Out[I] != 0 : Out[I] % In[I] != 0)
      return nodeError(N,
                       "output dimension {} is not a multiple of the "
                       "input's",
                       I);
    A.Shape.push_back(In[I] == 0 ? 0 : Out[I] / In[I]);
    A.Strides.push_back(0);
    A.Shape.push_back(In[I]);
    A.Strides.push_back(S[I]);
  }
  return A;
}

template <llvm::Expected<StridedAccess> (*Access)(const Node &), bool Paired>
llvm::Error runAccess(const Node &N, std::vector<KernelCall> *Calls) {
  if (auto E = checkElement(N))
    return E;
  auto A = Access(N);
  if (!A)
    return A.takeError();
  // Tile's access has two dimensions (repeat, extent) per output
  // dimension (Paired).
  std::vector<int64_t> Want = A->Shape;
  if (Paired) {
    Want.clear();
    for (size_t I = 0; I + 1 < A->Shape.size(); I += 2)
      Want.push_back(A->Shape[I] * A->Shape[I + 1]);
  }
  if (auto E = checkShape(N, N.output(0), Want))
    return E;
  return emitAccess(N, N.input(0), N.output(0), *A, Calls);
}

template <llvm::Expected<StridedAccess> (*Access)(const Node &), bool Paired>
llvm::Error verifyAccess(const Node &N) {
  return runAccess<Access, Paired>(N, nullptr);
}
template <llvm::Expected<StridedAccess> (*Access)(const Node &), bool Paired>
llvm::Error lowerAccess(const Node &N, std::vector<KernelCall> &Calls) {
  return runAccess<Access, Paired>(N, &Calls);
}

// Split: one slice of the axis per output.
llvm::Error runSplit(const Node &N, std::vector<KernelCall> *Calls) {
  if (auto E = checkElement(N))
    return E;
  const Value *X = N.input(0);
  auto Axis = normalizeAxis(N, SplitAttrs(N).Axis, X->rank());
  if (!Axis)
    return Axis.takeError();
  // Run-time split sizes must be the outputs' extents.
  std::vector<int64_t> Known;
  for (const Value *Y : N.outputs())
    Known.push_back(Y->rank() == X->rank() ? Y->shape()[*Axis] : -1);
  auto Sizes = N.opset() >= 13 && runtimeParam(N, 1)
                   ? llvm::Expected<std::vector<int64_t>>(Known)
                   : splitSizes(N, *Axis, X->shape());
  if (!Sizes)
    return Sizes.takeError();
  int64_t Sum = 0;
  for (int64_t Z : *Sizes)
    Sum += Z;
  if (Sum != X->shape()[*Axis] || Sizes->size() != N.outputs().size())
    return nodeError(N, "the outputs do not partition axis {}", *Axis);
  std::vector<int64_t> Str = denseStrides(X->shape());
  int64_t Start = 0;
  for (size_t I = 0; I < N.outputs().size(); ++I) {
    StridedAccess A{X->shape(), Str, Start * Str[*Axis]};
    A.Shape[*Axis] = (*Sizes)[I];
    Start += (*Sizes)[I];
    if (auto E = checkShape(N, N.output(I), A.Shape))
      return E;
    if (auto E = emitAccess(N, X, N.output(I), A, Calls))
      return E;
  }
  return llvm::Error::success();
}
llvm::Error verifySplit(const Node &N) { return runSplit(N, nullptr); }
llvm::Error lowerSplit(const Node &N, std::vector<KernelCall> &Calls) {
  return runSplit(N, &Calls);
}

// Pad (constant mode): fill the output, then copy the input's kept part
// into its interior.
llvm::Expected<int64_t> padBits(const Node &N) {
  const Value *Y = N.output(0);
  int64_t Bits = 0;
  if (N.opset() >= 11) {
    const Value *C = N.input(2);
    if (!C)
      return 0;
    if (!C->isConstant() || C->dtype() != Y->dtype() || C->numElements() != 1)
      return nodeError(N, "constant_value must be a constant scalar of the "
                          "input's type");
    std::memcpy(&Bits, C->data().data(), dtypeSize(Y->dtype()));
    return Bits;
  }
  float F = PadAttrs(N).Value;
  if (Y->dtype() == DType::F32)
    std::memcpy(&Bits, &F, 4);
  else if (Y->dtype() == DType::F64) {
    double D = F;
    std::memcpy(&Bits, &D, 8);
  } else
    Bits = static_cast<int64_t>(F);
  return Bits;
}

/// Pad's edge and reflect modes: after the interior copy, the border slabs
/// of each dimension, innermost first, are copies of output slabs (the slab
/// spans the whole padded extent of the dimensions after it and the
/// interior of those before it).
llvm::Error padBorders(const Node &N, const Copy &Interior, const int64_t *Pads,
                       const std::vector<int64_t> &Keep,
                       const std::vector<int64_t> &Out, bool Reflect,
                       std::vector<KernelCall> *Calls) {
  const Value *Y = N.output(0);
  size_t R = Out.size();
  int64_t Copies = 0;
  for (size_t D = 0; D < R; ++D) {
    if (Pads[D] < 0 || Pads[R + D] < 0)
      return nodeError(N, "negative pads need mode 'constant'");
    if (Keep[D] == 0 && Pads[D] + Pads[R + D] > 0)
      return nodeError(N, "cannot pad an empty axis in this mode");
    if (Reflect && (Pads[D] >= Keep[D] || Pads[R + D] >= Keep[D]))
      return nodeError(N, "reflect pads must be smaller than the axis");
    Copies += Pads[D] + Pads[R + D];
  }
  if (Copies > 1024)
    return nodeError(N, "{} border copies are too many", Copies);
  if (auto E = emitCopy(N, Y, Interior, Calls))
    return E;
  std::vector<int64_t> YS = denseStrides(Out);
  for (size_t D = R; D-- > 0;) {
    int64_t B = Pads[D], L = Keep[D];
    Copy Slab{Y, 0, 0, Out, YS, YS};
    Slab.Shape[D] = 1;
    int64_t Base = 0;
    for (size_t K = 0; K < D; ++K) {
      Slab.Shape[K] = Keep[K];
      Base += Pads[K] * YS[K];
    }
    for (int64_t P = 0; P < Out[D]; ++P) {
      if (P >= B && P < B + L)
        continue;
      int64_t Q = P < B ? (Reflect ? 2 * B - P : B)
                        : (Reflect ? 2 * (B + L - 1) - P : B + L - 1);
      Slab.XOff = Base + Q * YS[D];
      Slab.YOff = Base + P * YS[D];
      if (auto E = emitCopy(N, Y, Slab, Calls))
        return E;
    }
  }
  return llvm::Error::success();
}

/// Pad whose pads (or axes) are computed at run time: cuvil_k_pad_b<bits>
/// reads them, the output shape being static.
llvm::Error runPadAtRunTime(const Node &N, const std::string &Mode,
                            std::vector<KernelCall> *Calls) {
  const Value *X = N.input(0), *Y = N.output(0), *P = N.input(1);
  const Value *Axes = N.opset() >= 18 ? N.input(3) : nullptr;
  int64_t ModeId = Mode == "constant"  ? 0
                   : Mode == "edge"    ? 1
                   : Mode == "reflect" ? 2
                                       : 3;
  if (P->dtype() != DType::I64 || (Axes && Axes->dtype() != DType::I64))
    return nodeError(N, "run-time pads and axes must be int64");
  if (X->rank() > CUVIL_MAX_RANK || Y->rank() != X->rank())
    return nodeError(N, "rank {} is not supported", X->rank());
  const Value *C = N.input(2);
  if (C && (C->dtype() != Y->dtype() || C->numElements() != 1))
    return nodeError(N, "constant_value must be a scalar of the input's type");
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  auto Pad = [](std::vector<int64_t> S) {
    S.insert(S.begin(), CUVIL_MAX_RANK - S.size(), 1);
    return S;
  };
  int64_t NAxes = Axes ? Axes->numElements() : X->rank();
  Calls->push_back(kabi::PadGroup{
      .Kernel = fmt::format("cuvil_k_pad_b{}", dtypeSize(Y->dtype()) * 8),
      .x = X,
      .y = Y,
      .in_shape = Pad(X->shape()),
      .out_shape = Pad(Y->shape()),
      .pads = P,
      .axes = Axes,
      .n_axes = NAxes,
      .rank = static_cast<int64_t>(X->rank()),
      .mode = ModeId,
      .value = C}
                       .call());
  return llvm::Error::success();
}

llvm::Error runPad(const Node &N, std::vector<KernelCall> *Calls) {
  if (auto E = checkElement(N))
    return E;
  std::string Mode = PadAttrs(N).Mode;
  if (Mode != "constant" && Mode != "edge" && Mode != "reflect" &&
      Mode != "wrap")
    return nodeError(N, "mode '{}' is not supported", Mode);
  if (N.opset() >= 11 && N.input(1) &&
      (runtimeParam(N, 1) || runtimeParam(N, 2) ||
       (N.opset() >= 18 && runtimeParam(N, 3)) || Mode == "wrap"))
    return runPadAtRunTime(N, Mode, Calls);
  const Value *X = N.input(0), *Y = N.output(0);
  auto Pads = padAmounts(N, X->shape());
  if (!Pads)
    return Pads.takeError();
  auto Bits = padBits(N);
  if (!Bits)
    return Bits.takeError();
  size_t R = X->rank();
  std::vector<int64_t> OutShape(R), Keep(R);
  for (size_t D = 0; D < R; ++D) {
    int64_t B = (*Pads)[D], E = (*Pads)[R + D];
    OutShape[D] = X->shape()[D] + B + E;
    Keep[D] =
        X->shape()[D] - std::max<int64_t>(0, -B) - std::max<int64_t>(0, -E);
  }
  if (auto E = checkShape(N, Y, OutShape))
    return E;
  std::vector<int64_t> XS = denseStrides(X->shape()),
                       YS = denseStrides(OutShape);
  Copy C{X, 0, 0, Keep, XS, YS};
  for (size_t D = 0; D < R; ++D) {
    int64_t B = (*Pads)[D];
    C.XOff += std::max<int64_t>(0, -B) * XS[D];
    C.YOff += std::max<int64_t>(0, B) * YS[D];
  }
  int64_t KeepCount = 1;
  for (int64_t K : Keep)
    KeepCount *= std::max<int64_t>(K, 0);
  if (Mode != "constant")
    return padBorders(N, C, Pads->data(), Keep, OutShape, Mode == "reflect",
                      Calls);
  if (Calls && KeepCount < Y->numElements())
    Calls->push_back(kabi::FillGroup{
        .Kernel = fmt::format("cuvil_k_fill_b{}", dtypeSize(Y->dtype()) * 8),
        .y = Y,
        .n = Y->numElements(),
        .bits = *Bits}
                         .call());
  if (KeepCount <= 0)
    return llvm::Error::success();
  return emitCopy(N, Y, C, Calls);
}
llvm::Error verifyPad(const Node &N) { return runPad(N, nullptr); }
llvm::Error lowerPad(const Node &N, std::vector<KernelCall> &Calls) {
  return runPad(N, &Calls);
}

// Gather: constant indices become an array in the code, run-time ones
// (int64 or int32) are read from their tensor.
llvm::Error runGather(const Node &N, std::vector<KernelCall> *Calls) {
  if (auto E = checkElement(N))
    return E;
  const Value *X = N.input(0), *Idx = N.input(1), *Y = N.output(0);
  if (X->rank() == 0 || !Idx)
    return nodeError(N, "needs a tensor and indices");
  auto Axis = normalizeAxis(N, GatherAttrs(N).Axis, X->rank());
  if (!Axis)
    return Axis.takeError();
  kabi::PtrArg IdxArg = Idx;
  std::string Kernel = "cuvil_k_gather_i64";
  if (Idx->isConstant()) {
    auto P = gatherParams(N, X->shape());
    if (!P)
      return P.takeError();
    IdxArg = std::move(P->Indices);
  } else if (Idx->dtype() == DType::I32) {
    Kernel = "cuvil_k_gather_i32";
  } else if (Idx->dtype() != DType::I64) {
    return nodeError(N, "indices must be int64 or int32");
  }
  std::vector<int64_t> Want(X->shape().begin(), X->shape().begin() + *Axis);
  Want.insert(Want.end(), Idx->shape().begin(), Idx->shape().end());
  Want.insert(Want.end(), X->shape().begin() + *Axis + 1, X->shape().end());
  if (auto E = checkShape(N, Y, Want))
    return E;
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  int64_t Outer = 1, Inner = dtypeSize(X->dtype());
  for (int64_t D = 0; D < *Axis; ++D)
    Outer *= X->shape()[D];
  for (size_t D = *Axis + 1; D < X->rank(); ++D)
    Inner *= X->shape()[D];
  Calls->push_back(kabi::GatherGroup{.Kernel = Kernel,
                                     .x = X,
                                     .y = Y,
                                     .idx = IdxArg,
                                     .outer = Outer,
                                     .n_idx = Idx->numElements(),
                                     .axis_dim = X->shape()[*Axis],
                                     .inner_bytes = Inner}
                       .call());
  return llvm::Error::success();
}
llvm::Error verifyGather(const Node &N) { return runGather(N, nullptr); }
llvm::Error lowerGather(const Node &N, std::vector<KernelCall> &Calls) {
  return runGather(N, &Calls);
}

// Slice: constant parameters give one strided copy; run-time ones (opset
// >= 10) are read by cuvil_k_slice_b<bits>_<index type>, which needs only
// the static output shape besides them.
llvm::Error runSlice(const Node &N, std::vector<KernelCall> *Calls) {
  bool Runtime = false;
  for (size_t I = 1; I < 5 && N.opset() >= 10; ++I)
    Runtime |= runtimeParam(N, I);
  if (!Runtime)
    return runAccess<sliceOf, false>(N, Calls);
  if (auto E = checkElement(N))
    return E;
  const Value *X = N.input(0), *Y = N.output(0);
  DType IT = N.input(1)->dtype();
  if (IT != DType::I64 && IT != DType::I32)
    return nodeError(N, "starts must be int64 or int32");
  for (size_t I = 2; I < 5; ++I)
    if (N.input(I) && N.input(I)->dtype() != IT)
      return nodeError(N, "starts, ends, axes and steps differ in type");
  if (X->rank() > CUVIL_MAX_RANK || Y->rank() != X->rank())
    return nodeError(N, "rank {} is not supported", X->rank());
  if (!Calls || Y->numElements() == 0)
    return llvm::Error::success();
  auto Pad = [](std::vector<int64_t> S) {
    S.insert(S.begin(), CUVIL_MAX_RANK - S.size(), 1);
    return S;
  };
  Calls->push_back(kabi::SliceGroup{
      .Kernel = fmt::format("cuvil_k_slice_b{}_{}", dtypeSize(X->dtype()) * 8,
                            dtypeName(IT)),
      .x = X,
      .y = Y,
      .in_shape = Pad(X->shape()),
      .out_shape = Pad(Y->shape()),
      .starts = N.input(1),
      .axes = N.input(3),
      .steps = N.input(4),
      .count = N.input(1)->numElements(),
      .rank = static_cast<int64_t>(X->rank())}
                       .call());
  return llvm::Error::success();
}
llvm::Error verifySlice(const Node &N) { return runSlice(N, nullptr); }
llvm::Error lowerSlice(const Node &N, std::vector<KernelCall> &Calls) {
  return runSlice(N, &Calls);
}

} // namespace

extern const OpDef SliceOp = {.Name = "Slice",
                              .Verify = verifySlice,
                              .Lower = lowerSlice,
                              .Macs = noMacs,
                              .Traits = NoTraits,
                              .Shape = sliceShapes,
                              .Fold = foldSlice,
                              .Attrs = SliceAttrs::Specs};
extern const OpDef ExpandOp = {.Name = "Expand",
                               .Verify = verifyAccess<expandOf, false>,
                               .Lower = lowerAccess<expandOf, false>,
                               .Macs = noMacs,
                               .Traits = NoTraits,
                               .Shape = shapeFromInput0<expandShape>,
                               .Fold = foldExpand};
extern const OpDef TileOp = {.Name = "Tile",
                             .Verify = verifyAccess<tileOf, true>,
                             .Lower = lowerAccess<tileOf, true>,
                             .Macs = noMacs,
                             .Traits = NoTraits,
                             .Shape = shapeFromInput0<tileShape>,
                             .Fold = foldTile};
extern const OpDef SplitOp = {.Name = "Split",
                              .Verify = verifySplit,
                              .Lower = lowerSplit,
                              .Macs = noMacs,
                              .Traits = NoTraits,
                              .Shape = splitShapes,
                              .Fold = foldSplit,
                              .Attrs = SplitAttrs::Specs};
extern const OpDef PadOp = {.Name = "Pad",
                            .Verify = verifyPad,
                            .Lower = lowerPad,
                            .Macs = noMacs,
                            .Traits = NoTraits,
                            .Shape = padShapes,
                            .Attrs = PadAttrs::Specs};
extern const OpDef GatherOp = {.Name = "Gather",
                               .Verify = verifyGather,
                               .Lower = lowerGather,
                               .Macs = noMacs,
                               .Traits = NoTraits,
                               .Shape = gatherShapes,
                               .Fold = foldGather,
                               .Attrs = GatherAttrs::Specs};

} // namespace cuvil
