//===- Pool.cpp - Max/Average/Lp/Global pooling and MaxUnpool -------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/OpRegistry.h"
#include "ops/nn/Spatial.h"

#include <cmath>

namespace cuvil {
namespace {

#define MAX_POOL_ATTRS(X)                                                      \
  CUVIL_POOL_WINDOW_ATTRS(X) X(StorageOrder, "storage_order", Int, 0)
CUVIL_OP_ATTRS(MaxPoolAttrs, MAX_POOL_ATTRS)
#define AVERAGE_POOL_ATTRS(X)                                                  \
  CUVIL_POOL_WINDOW_ATTRS(X) X(CountIncludePad, "count_include_pad", Int, 0)
CUVIL_OP_ATTRS(AveragePoolAttrs, AVERAGE_POOL_ATTRS)

int64_t nc(const Node &N) {
  return N.input(0)->shape()[0] * N.input(0)->shape()[1];
}

llvm::Expected<Window> windowPool(const Node &N) {
  return computeWindowNd(N, *N.input(0), *N.output(0), {}, true);
}

/// The Indices output of MaxPool, or null. The importer drops absent
/// optional outputs, but Indices is the last output so it stays second.
const Value *indicesOutput(const Node &N) {
  return N.outputs().size() > 1 ? N.output(1) : nullptr;
}

// ---- MaxPool
// -----------------------------------------------------------------

llvm::Error verifyMax(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  DType T = X->dtype();
  if (T != DType::F32 && T != DType::U8 && T != DType::I8)
    return nodeError(N,
                     "input '{}' has element type {}; only f32, u8 and i8 "
                     "are supported",
                     X->name(), dtypeName(T));
  if (Y->dtype() != T)
    return nodeError(N, "output type {} differs from the input's {}",
                     dtypeName(Y->dtype()), dtypeName(T));
  if (const Value *I = indicesOutput(N)) {
    if (I->dtype() != DType::I64)
      return nodeError(N, "Indices output '{}' must be i64", I->name());
    if (I->shape() != Y->shape())
      return nodeError(N, "Indices output '{}' must have the shape of '{}'",
                       I->name(), Y->name());
  }
  return windowPool(N).takeError();
}

llvm::Error lowerMax(const Node &N, std::vector<KernelCall> &Calls) {
  auto Wd = windowPool(N);
  if (!Wd)
    return Wd.takeError();
  const Value *X = N.input(0), *Y = N.output(0), *I = indicesOutput(N);
  if (Wd->fits2D() && !I && X->dtype() == DType::F32) {
    // The common case keeps its dedicated 2-D kernel.
    Calls.push_back(
        withWindow2D(*Wd, kabi::Maxpool2dF32{.x = X, .y = Y, .nc = nc(N)})
            .call());
    return llvm::Error::success();
  }
  Calls.push_back(
      withWindowNd(*Wd,
                   kabi::Maxpool3dGroup{
                       .Kernel = fmt::format("cuvil_k_maxpool3d_{}",
                                             dtypeName(X->dtype())),
                       .x = X,
                       .y = Y,
                       .indices = I,
                       .nc = nc(N),
                       .storage_order = MaxPoolAttrs(N).StorageOrder != 0})
          .call());
  return llvm::Error::success();
}

// ---- AveragePool
// -------------------------------------------------------------

llvm::Error verifyAvg(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  return windowPool(N).takeError();
}

bool dilated(const Window &Wd) {
  for (int64_t D : Wd.Dil)
    if (D != 1)
      return true;
  return false;
}

llvm::Error lowerAvg(const Node &N, std::vector<KernelCall> &Calls) {
  auto Wd = windowPool(N);
  if (!Wd)
    return Wd.takeError();
  int64_t IncludePad = AveragePoolAttrs(N).CountIncludePad;
  const Value *X = N.input(0), *Y = N.output(0);
  // The three kernels share these parameters; the window fills the rest.
  auto Params = [&](auto K) {
    K.x = X;
    K.y = Y;
    K.nc = nc(N);
    K.count_include_pad = IncludePad;
    return K;
  };
  if (dilated(*Wd)) // opset 19
    Calls.push_back(
        withWindowNd(*Wd, Params(kabi::Avgpool3dDilatedF32{})).call());
  else if (!Wd->fits2D())
    Calls.push_back(withWindowNd(*Wd, Params(kabi::Avgpool3dF32{})).call());
  else
    Calls.push_back(withWindow2D(*Wd, Params(kabi::Avgpool2dF32{})).call());
  return llvm::Error::success();
}

// ---- LpPool
// ------------------------------------------------------------------

/// The order p: a float attribute at opset 1, an integer since 2, so it is
/// read here and not declared with one kind among LpPool's attributes.
llvm::Expected<int64_t> lpOrder(const Node &N) {
  auto It = N.attrs().find("p");
  if (It == N.attrs().end())
    return 2;
  int64_t P = 0;
  if (const float *F = std::get_if<float>(&It->second)) {
    if (*F != std::floor(*F) || *F < 1 || *F > 64)
      return nodeError(N, "p = {} is not supported (an integer 1 to 64)", *F);
    P = static_cast<int64_t>(*F);
  } else if (const int64_t *I = std::get_if<int64_t>(&It->second)) {
    P = *I;
  } else {
    return nodeError(N, "attribute p must be a number");
  }
  if (P < 1 || P > 64)
    return nodeError(N, "p = {} is not supported (an integer 1 to 64)", P);
  return P;
}

llvm::Error verifyLp(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  if (auto P = lpOrder(N); !P)
    return P.takeError();
  return windowPool(N).takeError();
}

llvm::Error lowerLp(const Node &N, std::vector<KernelCall> &Calls) {
  auto Wd = windowPool(N);
  if (!Wd)
    return Wd.takeError();
  auto P = lpOrder(N);
  if (!P)
    return P.takeError();
  Calls.push_back(withWindowNd(*Wd, kabi::Lppool3dF32{.x = N.input(0),
                                                      .y = N.output(0),
                                                      .nc = nc(N),
                                                      .p = *P})
                      .call());
  return llvm::Error::success();
}

// ---- GlobalAveragePool / GlobalMaxPool
// ---------------------------------------

llvm::Error verifyGlobal(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  if (N.input(0)->rank() < 3)
    return nodeError(N, "input must have rank >= 3");
  if (N.output(0)->numElements() != nc(N))
    return nodeError(N, "output '{}' must have {} elements",
                     N.output(0)->name(), nc(N));
  return llvm::Error::success();
}

template <const char *Kernel>
llvm::Error lowerGlobal(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0);
  Calls.push_back(kabi::GlobalGroup{.Kernel = Kernel,
                                    .x = X,
                                    .y = N.output(0),
                                    .nc = nc(N),
                                    .hw = X->numElements() / nc(N)}
                      .call());
  return llvm::Error::success();
}

constexpr char GlobalAvgKernel[] = "cuvil_k_global_avgpool_f32";
constexpr char GlobalMaxKernel[] = "cuvil_k_global_maxpool_f32";

// ---- MaxUnpool
// ---------------------------------------------------------------

/// The spatial output size MaxUnpool's attributes give (what the MaxPool
/// that produced the indices had as input, up to its rounding).
llvm::Expected<std::vector<int64_t>> defaultUnpoolSize(const Node &N) {
  const Value *X = N.input(0);
  size_t S = X->rank() - 2;
  auto A = readWindowAttrs(N, S, {});
  if (!A)
    return A.takeError();
  std::vector<int64_t> Size(S);
  for (size_t D = 0; D < S; ++D)
    Size[D] = (X->shape()[D + 2] - 1) * A->Strides[D] + A->Kernel[D] -
              A->Pads[D] - A->Pads[D + S];
  return Size;
}

/// Spatial extents padded on the left with 1 to Window::MaxDims entries.
std::vector<int64_t> spatial3(std::vector<int64_t> Dims) {
  Dims.insert(Dims.begin(), Window::MaxDims - Dims.size(), 1);
  return Dims;
}

llvm::Error verifyUnpool(const Node &N) {
  const Value *X = N.input(0), *I = N.input(1), *Y = N.output(0);
  if (!X || !I)
    return nodeError(N, "MaxUnpool needs inputs X and I");
  if (X->dtype() != DType::F32 || Y->dtype() != DType::F32)
    return nodeError(N,
                     "input '{}' has element type {}; only f32 is "
                     "supported",
                     X->name(), dtypeName(X->dtype()));
  if (I->dtype() != DType::I64 || I->shape() != X->shape())
    return nodeError(N, "indices '{}' must be i64 with the shape of '{}'",
                     I->name(), X->name());
  auto Dims = spatialDims(N, *X);
  if (!Dims)
    return Dims.takeError();
  if (Y->rank() != X->rank() || Y->shape()[0] != X->shape()[0] ||
      Y->shape()[1] != X->shape()[1])
    return nodeError(N,
                     "output '{}' must have the rank, batch and channels "
                     "of input '{}'",
                     Y->name(), X->name());
  auto Default = defaultUnpoolSize(N);
  if (!Default)
    return Default.takeError();
  // The output is planned with the shape that shape inference or the model
  // declares; output_shape is often a graph input, only checked when it is
  // a constant. Without it the output has the default size.
  const Value *OutShape = N.input(2);
  std::vector<int64_t> Spatial(Y->shape().begin() + 2, Y->shape().end());
  if (OutShape && OutShape->isConstant() && OutShape->toInt64s() != Y->shape())
    return nodeError(N, "output '{}' disagrees with input output_shape",
                     Y->name());
  if (!OutShape && Spatial != *Default)
    return nodeError(N,
                     "output '{}' has a spatial shape other than the "
                     "attributes give",
                     Y->name());
  return llvm::Error::success();
}

llvm::Error lowerUnpool(const Node &N, std::vector<KernelCall> &Calls) {
  auto Default = defaultUnpoolSize(N);
  if (!Default)
    return Default.takeError();
  const Value *Y = N.output(0);
  Calls.push_back(
      kabi::MaxunpoolF32{.x = N.input(0),
                         .indices = N.input(1),
                         .y = Y,
                         .n_in = N.input(0)->numElements(),
                         .nc = nc(N),
                         .idx_dims = spatial3(*Default),
                         .out = spatial3(std::vector<int64_t>(
                             Y->shape().begin() + 2, Y->shape().end()))}
          .call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef MaxPoolOp = {.Name = "MaxPool",
                                .Verify = verifyMax,
                                .Lower = lowerMax,
                                .Macs = noMacs,
                                .Traits = SelectsValues,
                                .Attrs = MaxPoolAttrs::Specs};
extern const OpDef AveragePoolOp = {.Name = "AveragePool",
                                    .Verify = verifyAvg,
                                    .Lower = lowerAvg,
                                    .Macs = noMacs,
                                    .Traits = NoTraits,
                                    .Attrs = AveragePoolAttrs::Specs};
extern const OpDef LpPoolOp = {.Name = "LpPool",
                               .Verify = verifyLp,
                               .Lower = lowerLp,
                               .Macs = noMacs,
                               .Traits = NoTraits,
                               .Attrs = PoolWindowAttrs::Specs};
extern const OpDef GlobalAveragePoolOp = {"GlobalAveragePool", verifyGlobal,
                                          lowerGlobal<GlobalAvgKernel>, noMacs,
                                          GlobalMean};
extern const OpDef GlobalMaxPoolOp = {"GlobalMaxPool", verifyGlobal,
                                      lowerGlobal<GlobalMaxKernel>, noMacs,
                                      SelectsValues};
// MaxUnpool reads kernel_shape, strides and pads through readWindowAttrs.
extern const OpDef MaxUnpoolOp = {.Name = "MaxUnpool",
                                  .Verify = verifyUnpool,
                                  .Lower = lowerUnpool,
                                  .Macs = noMacs,
                                  .Traits = NoTraits,
                                  .Attrs = PoolWindowAttrs::Specs};

} // namespace cuvil
