//===- Gemm.cpp - ONNX Gemm: Y = alpha * op(A) * op(B) + beta * C ---------===//
#include "ops/linalg/Gemm.h"
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/nn/AffineFold.h"
#include "ops/nn/Packing.h"

namespace cuvil {
namespace {

struct GemmDims {
  int64_t M, N, K;
  int64_t CRowStride, CColStride;
};

llvm::Expected<GemmDims> dims(const Node &Nd) {
  const Value *A = Nd.input(0), *B = Nd.input(1), *C = Nd.input(2);
  if (!A || !B || A->rank() != 2 || B->rank() != 2)
    return nodeError(Nd, "A and B must be matrices");
  GemmAttrs Attr(Nd);
  bool TA = Attr.TransA, TB = Attr.TransB;
  GemmDims D;
  D.M = A->shape()[TA ? 1 : 0];
  D.K = A->shape()[TA ? 0 : 1];
  D.N = B->shape()[TB ? 0 : 1];
  if (B->shape()[TB ? 1 : 0] != D.K)
    return nodeError(Nd, "inner dimensions differ: {} vs {}", D.K,
                     B->shape()[TB ? 1 : 0]);
  D.CRowStride = D.CColStride = 0;
  if (C) {
    // C broadcasts unidirectionally to [M, N].
    std::vector<int64_t> S = C->shape();
    if (S.size() > 2)
      return nodeError(Nd, "C has rank {}; at most 2 is allowed", S.size());
    while (S.size() < 2)
      S.insert(S.begin(), 1);
    if ((S[0] != 1 && S[0] != D.M) || (S[1] != 1 && S[1] != D.N))
      return nodeError(Nd, "C of shape [{}, {}] does not broadcast to [{}, {}]",
                       S[0], S[1], D.M, D.N);
    D.CRowStride = S[0] == 1 ? 0 : S[1];
    D.CColStride = S[1] == 1 ? 0 : 1;
  }
  return D;
}

/// [M, N], where ONNX inference left the output open (an operand only
/// folding or a taken If branch made static).
llvm::Expected<ShapeList> gemmShape(const Node &N) {
  auto D = dims(N);
  if (!D)
    return D.takeError();
  return ShapeList{{D->M, D->N}};
}

} // namespace

llvm::Error verifyGemm(const Node &N) {
  if (auto E = requireF32(N))
    return E;
  return dims(N).takeError();
}

llvm::Error lowerGemm(const Node &N, bool Packed, std::pair<float, float> Clamp,
                      std::vector<KernelCall> &Calls) {
  auto D = dims(N);
  if (!D)
    return D.takeError();
  const Value *C = N.input(2);
  GemmAttrs Attr(N);
  auto [Lo, Hi] = Clamp;
  // The parameters of both kernels but B, trans_b and alpha.
  auto Common = [&](auto K) {
    K.a = N.input(0);
    K.c = C;
    K.y = N.output(0);
    K.m = D->M;
    K.n = D->N;
    K.k = D->K;
    K.trans_a = Attr.TransA;
    K.beta = C ? Attr.Beta : 0.0f;
    K.c_rs = D->CRowStride;
    K.c_cs = D->CColStride;
    K.act_lo = Lo;
    K.act_hi = Hi;
    return K.call();
  };
  if (Packed) {
    // B packed by the pack-weights pass, alpha folded into it.
    // Every output column (a share of a layer: fewer).
    Calls.push_back(Common(kabi::GemmPackedF32{.bp = N.input(1), .j1 = D->N}));
    return llvm::Error::success();
  }
  Calls.push_back(Common(kabi::GemmF32{
      .b = N.input(1), .trans_b = Attr.TransB, .alpha = Attr.Alpha}));
  return llvm::Error::success();
}

int64_t gemmMacs(const Node &N) {
  auto D = dims(N);
  if (!D) {
    llvm::consumeError(D.takeError());
    return 0;
  }
  return D->M * D->N * D->K;
}

namespace {

llvm::Error lowerGemmOp(const Node &N, std::vector<KernelCall> &Calls) {
  return lowerGemm(N, /*Packed=*/false, noClamp(), Calls);
}

} // namespace

extern const OpDef FusedGemmOp;

namespace {
// alpha * (x . w) + beta * C, w transposed by transB; a product form only
// with x untransposed and C (if any) one value per output column.
std::optional<ProductForm> gemmProduct(const Node &N) {
  const GemmAttrs A(N);
  const bool TB = A.TransB != 0;
  const Value *B = N.input(1), *C = N.input(2);
  if (A.TransA != 0 || !B || B->rank() != 2)
    return std::nullopt;
  if (C && (C->rank() == 0 || C->shape().back() != B->shape()[TB ? 0 : 1]))
    return std::nullopt;
  return ProductForm{.K = ProductForm::Kind::Gemm,
                     .ChannelAxis = TB ? 0 : 1,
                     .BiasInput = 2,
                     .Alpha = A.Alpha,
                     .Beta = A.Beta};
}
} // namespace

extern const OpDef GemmOp = {.Name = "Gemm",
                             .Verify = verifyGemm,
                             .Lower = lowerGemmOp,
                             .Macs = gemmMacs,
                             .Traits = NoTraits,
                             .PackWeights = packGemmWeights,
                             .WithClamp = &FusedGemmOp,
                             .FoldChannelAffine = foldGemmChannelAffine,
                             .Product = gemmProduct,
                             .Shape = gemmShape,
                             .Attrs = GemmAttrs::Specs};

} // namespace cuvil
