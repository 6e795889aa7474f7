//===- Normalization.cpp - LayerNorm, Instance/GroupNorm, MVN, LRN, LpNorm ===//
//
// The statistics-based normalizations. Each lowers to one kernel of
// kernels/nn/normalization.c; parameters (scale, bias) may be run-time
// tensors, since the kernels read them like any other input.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/reduce/ReduceLoops.h"

#include <cuvil/kernels.h>
#include <fmt/ranges.h>

namespace cuvil {
namespace {

#define LAYER_NORM_ATTRS(X)                                                    \
  X(Axis, "axis", Int, -1)                                                     \
  X(Epsilon, "epsilon", Float, 1e-5f)                                          \
  X(StashType, "stash_type", Int, 1)
CUVIL_OP_ATTRS(LayerNormAttrs, LAYER_NORM_ATTRS)
#define INSTANCE_NORM_ATTRS(X) X(Epsilon, "epsilon", Float, 1e-5f)
CUVIL_OP_ATTRS(InstanceNormAttrs, INSTANCE_NORM_ATTRS)
// num_groups is required: verification refuses the default 0, so lowering
// never sees it.
#define GROUP_NORM_ATTRS(X)                                                    \
  X(NumGroups, "num_groups", Int, 0)                                           \
  X(Epsilon, "epsilon", Float, 1e-5f)                                          \
  X(StashType, "stash_type", Int, 1)
CUVIL_OP_ATTRS(GroupNormAttrs, GROUP_NORM_ATTRS)
// size is required: verification refuses the default 0.
#define LRN_ATTRS(X)                                                           \
  X(Size, "size", Int, 0)                                                      \
  X(Alpha, "alpha", Float, 1e-4f)                                              \
  X(Beta, "beta", Float, 0.75f)                                                \
  X(Bias, "bias", Float, 1.0f)
CUVIL_OP_ATTRS(LRNAttrs, LRN_ATTRS)
#define MVN_ATTRS(X) X(Axes, "axes", Ints, (std::vector<int64_t>{0, 2, 3}))
CUVIL_OP_ATTRS(MVNAttrs, MVN_ATTRS)
#define LP_NORM_ATTRS(X) X(Axis, "axis", Int, -1) X(P, "p", Int, 2)
CUVIL_OP_ATTRS(LpNormAttrs, LP_NORM_ATTRS)

int64_t product(const std::vector<int64_t> &Shape, size_t From, size_t To) {
  int64_t P = 1;
  for (size_t D = From; D < To; ++D)
    P *= Shape[D];
  return P;
}

// ---- LayerNormalization ---------------------------------------------------

struct LayerNormGeometry {
  int64_t Outer, N;
  int64_t ScalePeriod, BiasPeriod;
};

/// The element count of P if, broadcast to the normalized dimensions Norm,
/// it repeats with that period (its shape without leading 1s is a suffix of
/// Norm); an error otherwise.
llvm::Expected<int64_t> periodOf(const Node &N, const Value &P,
                                 const std::vector<int64_t> &Norm) {
  const std::vector<int64_t> &S = P.shape();
  size_t Lead = 0;
  while (Lead < S.size() && S[Lead] == 1)
    ++Lead;
  size_t Len = S.size() - Lead;
  bool Suffix = Len <= Norm.size();
  for (size_t I = 0; Suffix && I < Len; ++I)
    Suffix = S[Lead + I] == Norm[Norm.size() - Len + I];
  if (!Suffix)
    return nodeError(N,
                     "parameter '{}' of shape [{}] does not broadcast to the "
                     "normalized dimensions [{}] (only trailing-dimension "
                     "broadcasting is supported)",
                     P.name(), fmt::join(S, ", "), fmt::join(Norm, ", "));
  return P.numElements();
}

llvm::Expected<LayerNormGeometry> layerNormGeometry(const Node &N) {
  const Value *X = N.input(0), *Scale = N.input(1), *Bias = N.input(2);
  if (!X || !Scale)
    return nodeError(N, "inputs X and Scale are required");
  auto Axis = normalizeAxis(N, LayerNormAttrs(N).Axis, X->rank());
  if (!Axis)
    return Axis.takeError();
  const std::vector<int64_t> &Shape = X->shape();
  std::vector<int64_t> Norm(Shape.begin() + *Axis, Shape.end());
  LayerNormGeometry G{product(Shape, 0, *Axis),
                      product(Shape, *Axis, Shape.size()), 1, 1};
  auto SP = periodOf(N, *Scale, Norm);
  if (!SP)
    return SP.takeError();
  G.ScalePeriod = *SP;
  if (Bias) {
    auto BP = periodOf(N, *Bias, Norm);
    if (!BP)
      return BP.takeError();
    G.BiasPeriod = *BP;
  }
  return G;
}

llvm::Error verifyLayerNorm(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  if (int64_t Stash = LayerNormAttrs(N).StashType; Stash != 1)
    return nodeError(N, "stash_type={} is not supported (only 1, float)",
                     Stash);
  // The importer drops an omitted optional output and shifts the later
  // ones: with two outputs, the second may be Mean or InvStdDev.
  if (N.outputs().size() == 2)
    return nodeError(N, "exactly one of the optional Mean/InvStdDev outputs "
                        "is not supported (only none or both)");
  return layerNormGeometry(N).takeError();
}

llvm::Error lowerLayerNorm(const Node &N, std::vector<KernelCall> &Calls) {
  auto G = layerNormGeometry(N);
  if (!G)
    return G.takeError();
  auto Opt = [&](size_t I) {
    return I < N.outputs().size() ? N.output(I) : nullptr;
  };
  Calls.push_back(kabi::LayerNormF32{.x = N.input(0),
                                     .scale = N.input(1),
                                     .bias = N.input(2),
                                     .y = N.output(0),
                                     .mean = Opt(1),
                                     .inv_std = Opt(2),
                                     .outer = G->Outer,
                                     .n = G->N,
                                     .scale_period = G->ScalePeriod,
                                     .bias_period = G->BiasPeriod,
                                     .eps = LayerNormAttrs(N).Epsilon}
                      .call());
  return llvm::Error::success();
}

// ---- Per-channel ops on [N, C, spatial...] --------------------------------

/// Checks that X is [N, C, ...] and that each present per-channel parameter
/// input (from index First on) has C elements.
llvm::Error verifyChannels(const Node &N, size_t First) {
  if (auto E = requireF32(N))
    return E;
  const Value *X = N.input(0);
  if (!X || X->rank() < 2)
    return nodeError(N, "input must have rank >= 2 ([N, C, ...])");
  for (size_t I = First; I < N.inputs().size(); ++I) {
    const Value *P = N.input(I);
    if (!P)
      return nodeError(N, "input {} is required", I);
    if (P->numElements() != X->shape()[1])
      return nodeError(N, "parameter '{}' has {} elements for {} channels",
                       P->name(), P->numElements(), X->shape()[1]);
  }
  return llvm::Error::success();
}

/// Sets the parameters n, c and spatial of kernel K from X's shape.
template <typename Kernel> Kernel withNCS(const Value &X, Kernel K) {
  const std::vector<int64_t> &S = X.shape();
  K.n = S[0];
  K.c = S[1];
  K.spatial = product(S, 2, S.size());
  return K;
}

llvm::Error verifyInstanceNorm(const Node &N) {
  if (N.inputs().size() != 3)
    return nodeError(N, "expects inputs input, scale and B");
  return verifyChannels(N, 1);
}

llvm::Error lowerInstanceNorm(const Node &N, std::vector<KernelCall> &Calls) {
  Calls.push_back(
      withNCS(*N.input(0),
              kabi::InstanceNormF32{.x = N.input(0),
                                    .scale = N.input(1),
                                    .bias = N.input(2),
                                    .y = N.output(0),
                                    .eps = InstanceNormAttrs(N).Epsilon})
          .call());
  return llvm::Error::success();
}

// ---- GroupNormalization (opset 18: scale/bias per group; 21: per channel)

llvm::Error verifyGroupNorm(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  const Value *X = N.input(0);
  if (!X || X->rank() < 2 || N.inputs().size() != 3 || !N.input(1) ||
      !N.input(2))
    return nodeError(N, "expects X ([N, C, ...]), scale and bias");
  GroupNormAttrs A(N);
  int64_t Groups = A.NumGroups, C = X->shape()[1];
  if (Groups <= 0 || C % Groups != 0)
    return nodeError(N, "num_groups {} does not divide the {} channels", Groups,
                     C);
  if (A.StashType != 1)
    return nodeError(N, "stash_type {} is not supported (only 1: float)",
                     A.StashType);
  int64_t Want = N.opset() >= 21 ? C : Groups;
  for (size_t I = 1; I < 3; ++I)
    if (N.input(I)->numElements() != Want)
      return nodeError(N,
                       "parameter '{}' has {} elements; opset {} wants {} "
                       "(one per {})",
                       N.input(I)->name(), N.input(I)->numElements(), N.opset(),
                       Want, N.opset() >= 21 ? "channel" : "group");
  return llvm::Error::success();
}

llvm::Error lowerGroupNorm(const Node &N, std::vector<KernelCall> &Calls) {
  const std::vector<int64_t> &S = N.input(0)->shape();
  GroupNormAttrs A(N);
  int64_t Groups = A.NumGroups;
  Calls.push_back(kabi::GroupNormF32{.x = N.input(0),
                                     .scale = N.input(1),
                                     .bias = N.input(2),
                                     .y = N.output(0),
                                     .n = S[0],
                                     .groups = Groups,
                                     .cpg = S[1] / Groups,
                                     .spatial = product(S, 2, S.size()),
                                     .per_channel = N.opset() >= 21,
                                     .eps = A.Epsilon}
                      .call());
  return llvm::Error::success();
}

llvm::Error verifyLRN(const Node &N) {
  if (auto E = verifyChannels(N, 1))
    return E;
  if (LRNAttrs(N).Size < 1)
    return nodeError(N, "attribute size must be >= 1");
  return llvm::Error::success();
}

llvm::Error lowerLRN(const Node &N, std::vector<KernelCall> &Calls) {
  LRNAttrs A(N);
  Calls.push_back(withNCS(*N.input(0), kabi::LrnF32{.x = N.input(0),
                                                    .y = N.output(0),
                                                    .size = A.Size,
                                                    .alpha = A.Alpha,
                                                    .beta = A.Beta,
                                                    .bias = A.Bias})
                      .call());
  return llvm::Error::success();
}

// ---- MeanVarianceNormalization --------------------------------------------

llvm::Expected<ReduceLoops> mvnLoops(const Node &N) {
  const Value *X = N.input(0);
  if (!X)
    return nodeError(N, "missing input");
  return axesLoops(N, X->shape(), MVNAttrs(N).Axes, CUVIL_REDUCE_RANK);
}

llvm::Error verifyMVN(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  return mvnLoops(N).takeError();
}

llvm::Error lowerMVN(const Node &N, std::vector<KernelCall> &Calls) {
  auto L = mvnLoops(N);
  if (!L)
    return L.takeError();
  Calls.push_back(kabi::MvnF32{.x = N.input(0),
                               .y = N.output(0),
                               .out_shape = L->OutShape,
                               .out_str = L->OutStr,
                               .red_shape = L->RedShape,
                               .red_str = L->RedStr}
                      .call());
  return llvm::Error::success();
}

// ---- LpNormalization ------------------------------------------------------

llvm::Error verifyLpNorm(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  LpNormAttrs A(N);
  if (A.P != 1 && A.P != 2)
    return nodeError(N, "p={} is not supported (only 1 and 2)", A.P);
  if (!N.input(0))
    return nodeError(N, "missing input");
  return normalizeAxis(N, A.Axis, N.input(0)->rank()).takeError();
}

llvm::Error lowerLpNorm(const Node &N, std::vector<KernelCall> &Calls) {
  const std::vector<int64_t> &S = N.input(0)->shape();
  LpNormAttrs A(N);
  auto Axis = normalizeAxis(N, A.Axis, S.size());
  if (!Axis)
    return Axis.takeError();
  Calls.push_back(kabi::LpNormF32{.x = N.input(0),
                                  .y = N.output(0),
                                  .outer = product(S, 0, *Axis),
                                  .n = S[*Axis],
                                  .inner = product(S, *Axis + 1, S.size()),
                                  .p = A.P}
                      .call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef LayerNormalizationOp = {.Name = "LayerNormalization",
                                           .Verify = verifyLayerNorm,
                                           .Lower = lowerLayerNorm,
                                           .Macs = noMacs,
                                           .Traits = NoTraits,
                                           .Attrs = LayerNormAttrs::Specs};
// Each (n, c) row is read in full before it is written: safe in place.
extern const OpDef InstanceNormalizationOp = {.Name = "InstanceNormalization",
                                              .Verify = verifyInstanceNorm,
                                              .Lower = lowerInstanceNorm,
                                              .Macs = noMacs,
                                              .Traits = InPlace,
                                              .Attrs =
                                                  InstanceNormAttrs::Specs};
// Each (n, group) block is read in full before it is written.
extern const OpDef GroupNormalizationOp = {.Name = "GroupNormalization",
                                           .Verify = verifyGroupNorm,
                                           .Lower = lowerGroupNorm,
                                           .Macs = noMacs,
                                           .Traits = InPlace,
                                           .Attrs = GroupNormAttrs::Specs};
// Reads neighbouring channels of what it writes: never in place.
extern const OpDef LRNOp = {.Name = "LRN",
                            .Verify = verifyLRN,
                            .Lower = lowerLRN,
                            .Macs = noMacs,
                            .Traits = NoTraits,
                            .Attrs = LRNAttrs::Specs};
extern const OpDef LpNormalizationOp = {.Name = "LpNormalization",
                                        .Verify = verifyLpNorm,
                                        .Lower = lowerLpNorm,
                                        .Macs = noMacs,
                                        .Traits = InPlace,
                                        .Attrs = LpNormAttrs::Specs};
extern const OpDef MeanVarianceNormalizationOp = {
    .Name = "MeanVarianceNormalization",
    .Verify = verifyMVN,
    .Lower = lowerMVN,
    .Macs = noMacs,
    .Traits = InPlace,
    .Attrs = MVNAttrs::Specs};

} // namespace cuvil
