//===- ConvTranspose.cpp - ONNX ConvTranspose (1-D to 3-D, grouped) -------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/OpRegistry.h"
#include "ops/nn/Spatial.h"

namespace cuvil {
namespace {

#define CONV_TRANSPOSE_ATTRS(X)                                                \
  CUVIL_CONV_ATTRS(X)                                                          \
  X(OutputPadding, "output_padding", Ints, {})                                 \
  X(OutputShape, "output_shape", Ints, {})
CUVIL_OP_ATTRS(ConvTransposeAttrs, CONV_TRANSPOSE_ATTRS)

/// The window of a ConvTranspose node: In is X's spatial extent, Out is Y's,
/// PadBegin/PadEnd are the amounts cropped from the full transposed output.
llvm::Expected<Window> windowConvTranspose(const Node &N) {
  const Value &X = *N.input(0), &W = *N.input(1), &Y = *N.output(0);
  auto Dims = spatialDims(N, X);
  if (!Dims)
    return Dims.takeError();
  size_t S = *Dims;
  std::vector<int64_t> K(W.shape().begin() + 2, W.shape().end());
  ConvTransposeAttrs Attr(N);
  if (N.hasAttr("kernel_shape") && Attr.KernelShape != K)
    return nodeError(N, "kernel_shape disagrees with the weight's shape");
  auto A = readWindowAttrs(N, S, K);
  if (!A)
    return A.takeError();
  auto OutPad =
      givenOr(N, "output_padding", std::move(Attr.OutputPadding), S, 0);
  if (OutPad.size() != S)
    return nodeError(N, "output_padding has {} entries, expected {}",
                     OutPad.size(), S);
  // output_shape may list only the spatial dimensions or all of them.
  auto Shape = std::move(Attr.OutputShape);
  if (Shape.size() == S + 2)
    Shape.erase(Shape.begin(), Shape.begin() + 2);
  if (!Shape.empty() && Shape.size() != S)
    return nodeError(N, "output_shape has {} entries, expected {}",
                     Shape.size(), S);

  std::vector<int64_t> In(X.shape().begin() + 2, X.shape().end());
  std::vector<int64_t> Out(Y.shape().begin() + 2, Y.shape().end());
  std::vector<int64_t> Begin(S), End(S);
  for (size_t I = 0; I < S; ++I) {
    if (OutPad[I] < 0)
      return nodeError(N, "output_padding must not be negative");
    // The transposed output before cropping by the pads.
    int64_t Full = A->Strides[I] * (In[I] - 1) + OutPad[I] +
                   (A->Kernel[I] - 1) * A->Dils[I] + 1;
    bool Same = A->AutoPad == "SAME_UPPER" || A->AutoPad == "SAME_LOWER";
    if (!Shape.empty() || Same) {
      // The pads follow from the requested output size; the odd unit goes
      // to the end for SAME_UPPER and to the beginning otherwise (ONNX spec).
      int64_t Target = Shape.empty() ? In[I] * A->Strides[I] : Shape[I];
      // The halves round down even when the total is negative (an output
      // larger than the full one): the spec's arithmetic is Python's.
      int64_t Total = Full - Target;
      int64_t Half = Total >= 0 ? Total / 2 : -((1 - Total) / 2);
      Begin[I] = A->AutoPad == "SAME_UPPER" ? Half : Total - Half;
      End[I] = Total - Begin[I];
    } else if (A->AutoPad == "NOTSET") {
      Begin[I] = A->Pads[I];
      End[I] = A->Pads[I + S];
    }
    int64_t Expect = Full - Begin[I] - End[I];
    if (Expect < 1)
      return nodeError(N, "the pads leave no output along spatial axis {}", I);
    if (Out[I] != Expect)
      return nodeError(N,
                       "output '{}' has spatial size {} but the window "
                       "arithmetic gives {}",
                       Y.name(), Out[I], Expect);
  }
  return packWindow(In, Out, *A, Begin, End);
}

llvm::Error verifyConvTransposeOp(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  const Value *X = N.input(0), *W = N.input(1), *B = N.input(2);
  if (!X || !W)
    return nodeError(N, "ConvTranspose needs inputs X and W");
  const Value *Y = N.output(0);
  if (X->rank() < 3 || W->rank() != X->rank() || Y->rank() != X->rank())
    return nodeError(N,
                     "input '{}', weight '{}' and output '{}' must have "
                     "the same rank, at least 3",
                     X->name(), W->name(), Y->name());
  int64_t Group = ConvTransposeAttrs(N).Group;
  int64_t C = X->shape()[1], M = W->shape()[1] * Group;
  if (Group < 1 || C % Group || W->shape()[0] != C)
    return nodeError(N,
                     "group={} does not divide {} input channels "
                     "consistently with weight shape",
                     Group, C);
  if (Y->shape()[0] != X->shape()[0] || Y->shape()[1] != M)
    return nodeError(N, "output '{}' must have batch {} and {} channels",
                     Y->name(), X->shape()[0], M);
  if (B && (B->rank() != 1 || B->shape()[0] != M))
    return nodeError(N, "bias must have shape [{}]", M);
  return windowConvTranspose(N).takeError();
}

llvm::Error lowerConvTransposeOp(const Node &N,
                                 std::vector<KernelCall> &Calls) {
  auto Wd = windowConvTranspose(N);
  if (!Wd)
    return Wd.takeError();
  const Value *X = N.input(0), *W = N.input(1), *B = N.input(2);
  int64_t Group = ConvTransposeAttrs(N).Group;
  Calls.push_back(
      withWindowNd(*Wd, kabi::Convtranspose3dF32{.x = X,
                                                 .w = W,
                                                 .bias = B,
                                                 .y = N.output(0),
                                                 .n = X->shape()[0],
                                                 .c = X->shape()[1],
                                                 .m = W->shape()[1] * Group,
                                                 .group = Group})
          .call());
  return llvm::Error::success();
}

int64_t macsConvTranspose(const Node &N) {
  // Every input element is multiplied by M/group * kernel weights.
  const Value *W = N.input(1);
  return N.input(0)->numElements() * (W->numElements() / W->shape()[0]);
}

} // namespace

extern const OpDef ConvTransposeOp = {.Name = "ConvTranspose",
                                      .Verify = verifyConvTransposeOp,
                                      .Lower = lowerConvTransposeOp,
                                      .Macs = macsConvTranspose,
                                      .Traits = NoTraits,
                                      .Attrs = ConvTransposeAttrs::Specs};

} // namespace cuvil
