//===- MatMulAsGemm.cpp - MatMul by a constant matrix as a Gemm -----------===//
//
// y = MatMul(x, W), W a float32 constant matrix [K, N] and x of static shape
// [..., M, K]: the batch dimensions of x only repeat the same product, and
// x is stored row-major, so x is a [P, K] matrix (P the product of every
// dimension but the last) and y the [P, N] result of one Gemm. The MatMul
// becomes
//
//   Reshape(x -> [P, K]) -> Gemm(., W) -> Reshape(-> [..., M, N])
//
// (the Reshapes are views, no copies; rank-2 x needs neither), and the
// Gemm then takes what a Gemm gets: fused activations, packed weights,
// folded BatchNormalization, a share per core. An Add of a constant bias
// that broadcasts along the last axis only ([N], [1, N], [1, 1, N]...), the
// other half of a PyTorch nn.Linear on a sequence as exported, becomes the
// Gemm's C when the product has no other use. MatMul's Rewrite hook
// (rewrite-patterns pass).
//
//===----------------------------------------------------------------------===//
#include "ops/linalg/MatMulAsGemm.h"
#include "ops/OpRegistry.h"

#include <algorithm>
#include <cstring>

namespace cuvil {
namespace {

bool isFloatMatrix(const Value *V) {
  return V && V->isConstant() && V->dtype() == DType::F32 && V->rank() == 2;
}

/// The Add that only adds a bias of Y's last axis to Y, with its bias.
std::pair<Node *, Value *> biasAdd(const Graph &G, const Value *Y) {
  if (Y->users().size() != 1 || G.isGraphOutput(Y))
    return {};
  Node *A = Y->users()[0];
  if (!A->def() || !A->def()->has(Sum) || A->numInputs() != 2 ||
      A->output(0)->shape() != Y->shape())
    return {};
  Value *C = A->input(A->input(0) == Y ? 1 : 0);
  if (!C || C == Y || !C->isConstant() || C->dtype() != DType::F32 ||
      C->rank() > Y->rank())
    return {};
  const auto &S = C->shape();
  for (size_t I = 0; I + 1 < S.size(); ++I)
    if (S[I] != 1)
      return {};
  if (!S.empty() && S.back() != 1 && S.back() != Y->shape().back())
    return {};
  return {A, C};
}

Value *int64Constant(Graph &G, const std::string &Name,
                     const std::vector<int64_t> &Data) {
  Value *V =
      G.addValue(Name, DType::I64, {int64_t(Data.size())}, ValueKind::Constant);
  std::vector<uint8_t> Bytes(Data.size() * sizeof(int64_t));
  std::memcpy(Bytes.data(), Data.data(), Bytes.size());
  V->setData(std::move(Bytes));
  return V;
}

} // namespace

Node *rewriteMatMulAsGemm(Graph &G, Node &MM) {
  const OpDef *GemmDef = lookupOp("Gemm"), *ReshapeDef = lookupOp("Reshape");
  Value *X = MM.input(0), *W = MM.input(1), *Y = MM.output(0);
  if (!X || !isFloatMatrix(W) || X->rank() < 2 || !X->hasStaticShape() ||
      X->dtype() != DType::F32 || !Y->hasStaticShape() ||
      X->shape().back() != W->shape()[0])
    return nullptr;
  const int64_t K = W->shape()[0], N = W->shape()[1];
  const int64_t P = X->numElements() / K;
  auto [Add, Bias] = biasAdd(G, Y);
  std::vector<Value *> GemmIns = {X, W};
  if (Bias) {
    // The bias as Gemm's C: [N], or [1] for one value for all.
    int64_t Len = Bias->rank() ? Bias->shape().back() : 1;
    Value *C =
        G.addValue(MM.name() + "/bias", DType::F32, {Len}, ValueKind::Constant);
    C->setData(Bias->data());
    GemmIns.push_back(C);
  }
  if (X->rank() == 2) {
    // Already a matrix: the MatMul itself becomes the Gemm.
    Node *Gm = G.replaceNode(&MM, "Gemm", GemmDef, GemmIns);
    if (Add)
      G.foldNodeInto(Add, Gm->output(0));
    return Gm;
  }
  const std::string Base = MM.name();
  Value *Rows =
      G.addValue(Base + "/rows", DType::F32, {P, K}, ValueKind::Intermediate);
  Node *In =
      G.addNode("Reshape", Base + "/rows", ReshapeDef,
                {X, int64Constant(G, Base + "/rows_shape", {P, K})}, {Rows});
  GemmIns[0] = Rows;
  Value *Prod =
      G.addValue(Base + "/gemm", DType::F32, {P, N}, ValueKind::Intermediate);
  Node *Gm = G.addNode("Gemm", Base, GemmDef, GemmIns, {Prod});
  Gm->origin() = MM.origin();
  if (Add)
    Gm->origin().merge(Add->origin());
  In->setOpset(std::max<int64_t>(MM.opset(), 5));
  Gm->setOpset(MM.opset());
  // The MatMul's (or the bias Add's) value is now the Reshape of the
  // Gemm's result, computed where that value was.
  Node *Last = Add ? Add : &MM;
  const std::vector<int64_t> OutShape = Last->output(0)->shape();
  Node *Out =
      G.replaceNode(Last, "Reshape", ReshapeDef,
                    {Prod, int64Constant(G, Base + "/unrows_shape", OutShape)});
  Out->setOpset(std::max<int64_t>(Out->opset(), 5));
  if (Add) // the product is computed inside the Gemm now
    G.eraseNode(&MM);
  return Out;
}

} // namespace cuvil
