//===- MatMul.cpp - ONNX MatMul with numpy batch broadcasting -------------===//
//
// MatMul calls the reference kernel. With the target's optimized kernels,
// the pack-weights pass makes a float MatMul cuvil.BlockedMatMul, the same
// product in register blocks (cuvil_k_matmul_blocked_f32); neither operand
// is packed, since a MatMul that reaches that pass multiplies values
// computed at run time (rewrite-patterns made the ones by a constant
// matrix Gemms: MatMulAsGemm.h).
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/OpRegistry.h"
#include "ops/linalg/MatMulAsGemm.h"
#include "ops/linalg/MatMulShape.h"

#include <cuvil/kernels.h>

namespace cuvil {

extern const OpDef BlockedMatMulOp;

namespace {

llvm::Error verifyMatMulOp(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  return matmulDims(N, N.input(0), N.input(1)).takeError();
}

template <typename Kernel>
llvm::Error lowerWith(const Node &N, std::vector<KernelCall> &Calls) {
  auto D = matmulDims(N, N.input(0), N.input(1));
  if (!D)
    return D.takeError();
  Calls.push_back(Kernel{.a = N.input(0),
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

Node *block(Graph &G, Node &N, int64_t) {
  if (N.output(0)->dtype() != DType::F32)
    return nullptr;
  return rebuildAs(G, N, BlockedMatMulOp);
}

int64_t macsMatMul(const Node &N) {
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
                               .Verify = verifyMatMulOp,
                               .Lower = lowerWith<kabi::MatmulF32>,
                               .Macs = macsMatMul,
                               .Traits = NoTraits,
                               .PackWeights = block,
                               .Product = product,
                               .Rewrite = rewriteMatMulAsGemm,
                               .Shape = matmulShapes<1>};

extern const OpDef BlockedMatMulOp = {.Name = "cuvil.BlockedMatMul",
                                      .Verify = verifyMatMulOp,
                                      .Lower =
                                          lowerWith<kabi::MatmulBlockedF32>,
                                      .Macs = macsMatMul,
                                      .Traits = NoTraits,
                                      .Shape = matmulShapes<1>};

} // namespace cuvil
