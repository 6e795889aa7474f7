//===- AffineFold.cpp - A per-channel affine into Conv/Gemm weights -------===//
#include "ops/nn/AffineFold.h"

#include "ir/Diagnostic.h"
#include "ops/linalg/Gemm.h"

#include <cstring>

namespace cuvil {

llvm::Error verifyChannelParams(const Node &N, size_t Count) {
  const Value *X = N.input(0);
  if (!X || X->rank() < 2)
    return nodeError(N, "input must have rank >= 2");
  for (size_t I = 1; I <= Count; ++I) {
    const Value *P = N.input(I);
    if (!P)
      return nodeError(N, "parameter {} is required", I);
    if (P->numElements() != X->shape()[1])
      return nodeError(N, "parameter '{}' has {} elements for {} channels",
                       P->name(), P->numElements(), X->shape()[1]);
  }
  return llvm::Error::success();
}

Value *addF32Constant(Graph &G, std::string Name, std::vector<int64_t> Shape,
                      const std::vector<float> &Data) {
  Value *V = G.addValue(std::move(Name), DType::F32, std::move(Shape),
                        ValueKind::Constant);
  std::vector<uint8_t> B(Data.size() * 4);
  std::memcpy(B.data(), Data.data(), B.size());
  V->setData(std::move(B));
  return V;
}

namespace {

std::vector<float> floatsOf(const Value &V) {
  return std::vector<float>(V.f32(), V.f32() + V.numElements());
}

bool isFloatConst(const Value *V, int64_t Count) {
  return V && V->isConstant() && V->dtype() == DType::F32 &&
         V->numElements() == Count;
}

/// Gives P the scaled weights NW and the bias B * S + T (B: P's input 2).
void replaceWeights(Graph &G, Node &P, const std::vector<float> &NW,
                    const std::vector<float> &S, const std::vector<float> &T) {
  int64_t C = S.size();
  Value *W = P.input(1), *B = P.input(2);
  std::vector<float> NB(C);
  std::vector<float> OldB = B ? floatsOf(*B) : std::vector<float>(C, 0.0f);
  for (int64_t O = 0; O < C; ++O)
    NB[O] = OldB[O] * S[O] + T[O];

  Value *FW = addF32Constant(G, W->name() + ".bnfold", W->shape(), NW);
  Value *FB = addF32Constant(
      G, (B ? B->name() : P.name() + ".bias") + ".bnfold", {C}, NB);
  P.setInput(1, FW);
  if (P.numInputs() > 2)
    P.setInput(2, FB);
  else
    G.addNodeInput(&P, FB);
}

} // namespace

bool foldConvChannelAffine(Graph &G, Node &P, const std::vector<float> &S,
                           const std::vector<float> &T) {
  int64_t C = S.size();
  Value *W = P.input(1), *B = P.input(2);
  if (!isFloatConst(W, W ? W->numElements() : 0) || W->shape()[0] != C)
    return false;
  if (B && !isFloatConst(B, C))
    return false;
  std::vector<float> NW = floatsOf(*W);
  int64_t Per = W->numElements() / C;
  for (int64_t O = 0; O < C; ++O)
    for (int64_t I = 0; I < Per; ++I)
      NW[O * Per + I] *= S[O];
  replaceWeights(G, P, NW, S, T);
  return true;
}

bool foldGemmChannelAffine(Graph &G, Node &P, const std::vector<float> &S,
                           const std::vector<float> &T) {
  // Output channel = column of Y = row of B^T.
  int64_t C = S.size();
  Value *W = P.input(1), *B = P.input(2);
  GemmAttrs A(P);
  if (A.TransA || !isFloatConst(W, W ? W->numElements() : 0) || A.Alpha != 1.0f)
    return false;
  if (B && (!isFloatConst(B, C) || B->rank() != 1 || A.Beta != 1.0f))
    return false;
  std::vector<float> NW = floatsOf(*W);
  bool TB = A.TransB;
  int64_t Rows = W->shape()[0], Cols = W->shape()[1];
  if ((TB ? Rows : Cols) != C)
    return false;
  for (int64_t R = 0; R < Rows; ++R)
    for (int64_t Cl = 0; Cl < Cols; ++Cl)
      NW[R * Cols + Cl] *= S[TB ? R : Cl];
  replaceWeights(G, P, NW, S, T);
  return true;
}

} // namespace cuvil
