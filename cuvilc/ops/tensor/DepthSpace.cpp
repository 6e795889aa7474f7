//===- DepthSpace.cpp - ONNX DepthToSpace and SpaceToDepth
//-----------------===//
//
// Both are a reshape to 6-D, a transpose and a reshape back: one strided
// copy (cuvil_k_strided_copy_b<bits>) that walks the output densely and
// reads the input through the transposed strides. Any element type.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

#define DEPTHTOSPACE_ATTRS(X)                                                  \
  X(BlockSize, "blocksize", Int, 0) X(Mode, "mode", String, "DCR")
CUVIL_OP_ATTRS(DepthToSpaceAttrs, DEPTHTOSPACE_ATTRS)
#define SPACETODEPTH_ATTRS(X) X(BlockSize, "blocksize", Int, 0)
CUVIL_OP_ATTRS(SpaceToDepthAttrs, SPACETODEPTH_ATTRS)

/// The copy's loop shape (the output's 6-D view) and the input strides of
/// its dimensions.
struct Access6 {
  std::vector<int64_t> Shape, XStr;
};

llvm::Expected<Access6> access(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (!X)
    return nodeError(N, "missing input");
  unsigned S = dtypeSize(X->dtype());
  if (S != 1 && S != 2 && S != 4 && S != 8)
    return nodeError(N, "element type {} is not supported",
                     dtypeName(X->dtype()));
  if (X->rank() != 4 || Y->rank() != 4 || Y->dtype() != X->dtype())
    return nodeError(N, "only 4-D (N, C, H, W) inputs are supported");
  int64_t B = SpaceToDepthAttrs(N).BlockSize; // as both declare it
  if (B <= 0)
    return nodeError(N, "blocksize must be positive");
  int64_t Nn = X->shape()[0], C = X->shape()[1], H = X->shape()[2],
          W = X->shape()[3];
  Access6 A;
  if (N.opType() == "DepthToSpace") {
    std::string Mode = DepthToSpaceAttrs(N).Mode;
    if (Mode != "DCR" && Mode != "CRD")
      return nodeError(N, "mode '{}' is not supported", Mode);
    if (C % (B * B))
      return nodeError(N, "channels {} are not a multiple of blocksize^2", C);
    int64_t C2 = C / (B * B), HW = H * W;
    if (Y->shape() != std::vector<int64_t>{Nn, C2, H * B, W * B})
      return nodeError(N, "output '{}' has an unexpected shape", Y->name());
    // Output viewed as [n, c2, h, b1, w, b2]; the input channel is
    // (b1 * B + b2) * C2 + c2 (DCR) or (c2 * B + b1) * B + b2 (CRD).
    A.Shape = {Nn, C2, H, B, W, B};
    if (Mode == "DCR")
      A.XStr = {C * HW, HW, W, B * C2 * HW, 1, C2 * HW};
    else
      A.XStr = {C * HW, B * B * HW, W, B * HW, 1, HW};
  } else {
    if (H % B || W % B)
      return nodeError(N, "spatial extents are not multiples of blocksize");
    int64_t H2 = H / B, W2 = W / B;
    if (Y->shape() != std::vector<int64_t>{Nn, C * B * B, H2, W2})
      return nodeError(N, "output '{}' has an unexpected shape", Y->name());
    // Output viewed as [n, b1, b2, c, h2, w2]; it reads input element
    // (n, c, h2 * B + b1, w2 * B + b2).
    A.Shape = {Nn, B, B, C, H2, W2};
    A.XStr = {C * H * W, W, 1, H * W, B * W, B};
  }
  return A;
}

llvm::Error verifyDepthSpaceOp(const Node &N) {
  auto A = access(N);
  return A ? llvm::Error::success() : A.takeError();
}

llvm::Error lowerDepthSpaceOp(const Node &N, std::vector<KernelCall> &Calls) {
  auto A = access(N);
  if (!A)
    return A.takeError();
  if (N.output(0)->numElements() == 0)
    return llvm::Error::success();
  std::vector<int64_t> YStr = denseStrides(A->Shape);
  if (!canonicalizeCopy(A->Shape, A->XStr, YStr, CUVIL_MAX_RANK))
    return nodeError(N,
                     "internal error: the copy needs more than {} loop "
                     "dimensions",
                     CUVIL_MAX_RANK);
  int64_t Bits = dtypeSize(N.input(0)->dtype()) * 8;
  Calls.push_back(kabi::StridedCopyGroup{
      .Kernel = fmt::format("cuvil_k_strided_copy_b{}", Bits),
      .x = N.input(0),
      .y = N.output(0),
      .shape = A->Shape,
      .x_str = A->XStr,
      .y_str = YStr}
                      .call());
  return llvm::Error::success();
}

} // namespace

extern const OpDef DepthToSpaceOp = {.Name = "DepthToSpace",
                                     .Verify = verifyDepthSpaceOp,
                                     .Lower = lowerDepthSpaceOp,
                                     .Macs = noMacs,
                                     .Traits = NoTraits,
                                     .Attrs = DepthToSpaceAttrs::Specs};
extern const OpDef SpaceToDepthOp = {.Name = "SpaceToDepth",
                                     .Verify = verifyDepthSpaceOp,
                                     .Lower = lowerDepthSpaceOp,
                                     .Macs = noMacs,
                                     .Traits = NoTraits,
                                     .Attrs = SpaceToDepthAttrs::Specs};

} // namespace cuvil
