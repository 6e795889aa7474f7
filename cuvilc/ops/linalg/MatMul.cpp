//===- MatMul.cpp - ONNX MatMul with numpy batch broadcasting -------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/OpRegistry.h"
#include "ops/linalg/MatMulShape.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

llvm::Error verify(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  return matmulDims(N, N.input(0), N.input(1)).takeError();
}

llvm::Error lower(const Node &N, std::vector<KernelCall> &Calls) {
  auto D = matmulDims(N, N.input(0), N.input(1));
  if (!D)
    return D.takeError();
  Calls.push_back(kabi::MatmulF32{.a = N.input(0),
                                  .b = N.input(1),
                                  .y = N.output(0),
                                  .m = D->M,
                                  .n = D->N,
                                  .k = D->K,
                                  .batch_shape = D->Batch,
                                  .a_bstride = D->AStride,
                                  .b_bstride = D->BStride}
                      .call());
  return llvm::Error::success();
}

int64_t macs(const Node &N) {
  auto D = matmulDims(N, N.input(0), N.input(1));
  if (!D) {
    llvm::consumeError(D.takeError());
    return 0;
  }
  int64_t B = 1;
  for (int64_t X : D->Batch)
    B *= X;
  return B * D->M * D->N * D->K;
}

// x . w: the columns of w (axis 1) are the output channels; no bias.
std::optional<ProductForm> product(const Node &) {
  return ProductForm{.K = ProductForm::Kind::Gemm, .ChannelAxis = 1};
}

} // namespace

extern const OpDef MatMulOp = {.Name = "MatMul",
                               .Verify = verify,
                               .Lower = lower,
                               .Macs = macs,
                               .Traits = NoTraits,
                               .Product = product,
                               .Shape = matmulShapes<1>};

} // namespace cuvil
