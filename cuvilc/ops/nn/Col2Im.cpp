//===- Col2Im.cpp - Col2Im (opset 18) -------------------------------------===//
//
// Col2Im sums the column blocks of [N, C * prod(block_shape), L] back into
// an [N, C, image_shape...] image: the inverse of the im2col unfolding of a
// convolution. image_shape and block_shape must be constants (they give
// the output shape); 1 to 3 spatial dimensions, padded to the kernel's
// three like the N-d pooling kernels.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/OpRegistry.h"
#include "ops/nn/Spatial.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

#define COL2IM_ATTRS(X)                                                        \
  X(Strides, "strides", Ints, {})                                              \
  X(Dilations, "dilations", Ints, {})                                          \
  X(Pads, "pads", Ints, {})
CUVIL_OP_ATTRS(Col2ImAttrs, COL2IM_ATTRS)

struct Col2ImGeometry {
  int64_t N = 0, C = 0;
  std::vector<int64_t> Image, Block, Blocks, Strides, Dils, PadBegin;
};

/// V left-padded with Fill to three entries.
std::vector<int64_t> three(std::vector<int64_t> V, int64_t Fill) {
  V.insert(V.begin(), 3 - V.size(), Fill);
  return V;
}

llvm::Expected<Col2ImGeometry> geometry(const Node &N) {
  const Value *X = N.input(0), *Img = N.input(1), *Blk = N.input(2);
  if (!X || !Img || !Blk)
    return nodeError(N, "expects input, image_shape and block_shape");
  if (!Img->isConstant() || !Blk->isConstant())
    return nodeError(N, "image_shape and block_shape must be compile-time "
                        "constants");
  if (X->rank() != 3)
    return nodeError(N, "input '{}' must have rank 3, not {}", X->name(),
                     X->rank());
  Col2ImGeometry G;
  G.Image = Img->toInt64s();
  G.Block = Blk->toInt64s();
  size_t S = G.Image.size();
  if (S < 1 || S > 3 || G.Block.size() != S)
    return nodeError(N, "image_shape and block_shape must have 1 to 3 "
                        "entries each, the same number");
  Col2ImAttrs A(N);
  G.Strides = givenOr(N, "strides", std::move(A.Strides), S, 1);
  G.Dils = givenOr(N, "dilations", std::move(A.Dilations), S, 1);
  std::vector<int64_t> Pads = givenOr(N, "pads", std::move(A.Pads), 2 * S, 0);
  if (G.Strides.size() != S || G.Dils.size() != S || Pads.size() != 2 * S)
    return nodeError(N,
                     "strides, dilations and pads must match the {} "
                     "spatial dimensions",
                     S);
  // Bounded so that the arithmetic below cannot overflow; the input's
  // shape bounds the product of the block counts and taps.
  constexpr int64_t Big = int64_t(1) << 31;
  int64_t Taps = 1, Count = 1;
  for (size_t D = 0; D < S; ++D) {
    if (G.Image[D] <= 0 || G.Block[D] <= 0 || G.Strides[D] <= 0 ||
        G.Dils[D] <= 0 || Pads[D] < 0 || Pads[D + S] < 0)
      return nodeError(N, "image, block, strides and dilations must be "
                          "positive, pads not negative");
    for (int64_t V : {G.Image[D], G.Block[D], G.Strides[D], G.Dils[D], Pads[D],
                      Pads[D + S]})
      if (V > Big)
        return nodeError(N, "geometry value {} is too large", V);
    int64_t Eff = (G.Block[D] - 1) * G.Dils[D] + 1;
    int64_t Span = G.Image[D] + Pads[D] + Pads[D + S] - Eff;
    if (Span < 0)
      return nodeError(N, "block of {} is larger than the padded image {}", Eff,
                       G.Image[D] + Pads[D] + Pads[D + S]);
    G.Blocks.push_back(Span / G.Strides[D] + 1);
    G.PadBegin.push_back(Pads[D]);
    Taps *= G.Block[D];
    Count *= G.Blocks.back();
    if (Taps > X->shape()[1] || Count > X->shape()[2])
      break; // stop before the products can overflow
  }
  const std::vector<int64_t> &XS = X->shape();
  if (G.Blocks.size() != S || XS[1] == 0 || XS[1] % Taps != 0 || XS[2] != Count)
    return nodeError(N,
                     "input '{}' is [{}, {}, {}]; the blocks need a "
                     "multiple of {} rows and {} columns",
                     X->name(), XS[0], XS[1], XS[2], Taps, Count);
  G.N = XS[0];
  G.C = XS[1] / Taps;
  std::vector<int64_t> Want{G.N, G.C};
  Want.insert(Want.end(), G.Image.begin(), G.Image.end());
  if (N.output(0)->shape() != Want)
    return nodeError(N, "output '{}' does not have the shape the image gives",
                     N.output(0)->name());
  return G;
}

llvm::Error verifyCol2Im(const Node &N) {
  auto G = geometry(N);
  if (!G)
    return G.takeError();
  const Value *X = N.input(0), *Y = N.output(0);
  if (X->dtype() != DType::F32 || Y->dtype() != DType::F32)
    return nodeError(N,
                     "input '{}' has element type {}; only f32 is "
                     "supported",
                     X->name(), dtypeName(X->dtype()));
  if (N.input(1)->dtype() != DType::I64 || N.input(2)->dtype() != DType::I64)
    return nodeError(N, "image_shape and block_shape must be int64");
  return llvm::Error::success();
}

llvm::Error lowerCol2Im(const Node &N, std::vector<KernelCall> &Calls) {
  auto G = geometry(N);
  if (!G)
    return G.takeError();
  Calls.push_back(kabi::Col2imF32{.x = N.input(0),
                                  .y = N.output(0),
                                  .n = G->N,
                                  .c = G->C,
                                  .img = three(G->Image, 1),
                                  .k = three(G->Block, 1),
                                  .nblk = three(G->Blocks, 1),
                                  .stride = three(G->Strides, 1),
                                  .dil = three(G->Dils, 1),
                                  .pad = three(G->PadBegin, 0)}
                      .call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef Col2ImOp = {.Name = "Col2Im",
                               .Verify = verifyCol2Im,
                               .Lower = lowerCol2Im,
                               .Macs = noMacs,
                               .Traits = NoTraits,
                               .Attrs = Col2ImAttrs::Specs};

} // namespace cuvil
