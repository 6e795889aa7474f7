//===- FoldBatchNorm.cpp - BatchNormalization into Conv/Gemm weights ------===//
//
// Inference BatchNormalization is y = (x - mean) * s + B with
// s = scale / sqrt(var + epsilon). When x comes straight from a Conv (or a
// Gemm with a [N] or absent bias) used only by this BN, the scale folds
// into the producer's weights (per output channel) and the shift into its
// bias. Otherwise the BN becomes a per-channel affine y = x * s + t. A BN
// in training mode or with run-time parameters is left alone.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "passes/Pass.h"

#include <cmath>
#include <cstring>

namespace cuvil {
namespace {

std::vector<uint8_t> bytesOf(const std::vector<float> &V) {
  std::vector<uint8_t> B(V.size() * 4);
  std::memcpy(B.data(), V.data(), B.size());
  return B;
}

std::vector<float> floatsOf(const Value &V) {
  return std::vector<float>(V.f32(), V.f32() + V.numElements());
}

bool isFloatConst(const Value *V, int64_t Count) {
  return V && V->isConstant() && V->dtype() == DType::F32 &&
         V->numElements() == Count;
}

/// Folds BN (scale S, shift T per channel) into producer P; false if P's
/// form does not allow it.
bool foldInto(Graph &G, Node &P, const std::vector<float> &S,
              const std::vector<float> &T) {
  int64_t C = S.size();
  Value *W = P.input(1), *B = P.input(2);
  bool IsConv = P.opType() == "Conv";
  if (IsConv) {
    if (!isFloatConst(W, W ? W->numElements() : 0) || W->shape()[0] != C)
      return false;
  } else { // Gemm: output channel = column of Y = row of B^T.
    if (P.getInt("transA", 0) || !isFloatConst(W, W ? W->numElements() : 0) ||
        P.getFloat("alpha", 1.0f) != 1.0f)
      return false;
  }
  if (B && (!isFloatConst(B, C) ||
            (!IsConv && (B->rank() != 1 || P.getFloat("beta", 1.0f) != 1.0f))))
    return false;

  std::vector<float> NW = floatsOf(*W);
  if (IsConv) {
    int64_t Per = W->numElements() / C;
    for (int64_t O = 0; O < C; ++O)
      for (int64_t I = 0; I < Per; ++I)
        NW[O * Per + I] *= S[O];
  } else {
    bool TB = P.getInt("transB", 0);
    int64_t Rows = W->shape()[0], Cols = W->shape()[1];
    if ((TB ? Rows : Cols) != C)
      return false;
    for (int64_t R = 0; R < Rows; ++R)
      for (int64_t Cl = 0; Cl < Cols; ++Cl)
        NW[R * Cols + Cl] *= S[TB ? R : Cl];
  }
  std::vector<float> NB(C);
  std::vector<float> OldB = B ? floatsOf(*B) : std::vector<float>(C, 0.0f);
  for (int64_t O = 0; O < C; ++O)
    NB[O] = OldB[O] * S[O] + T[O];

  Value *FW = G.addValue(W->name() + ".bnfold", DType::F32, W->shape(),
                         ValueKind::Constant);
  FW->setData(bytesOf(NW));
  Value *FB = G.addValue((B ? B->name() : P.name() + ".bias") + ".bnfold",
                         DType::F32, {C}, ValueKind::Constant);
  FB->setData(bytesOf(NB));
  P.setInput(1, FW);
  if (P.numInputs() > 2)
    P.setInput(2, FB);
  else
    G.addNodeInput(&P, FB);
  return true;
}

} // namespace

llvm::Error foldBatchNorm(Graph &G) {
  std::vector<Node *> BNs;
  for (const auto &N : G.nodes())
    if (N->opType() == "BatchNormalization" && !N->getInt("cuvil.affine", 0))
      BNs.push_back(N.get());
  for (Node *BN : BNs) {
    Value *X = BN->input(0);
    int64_t C = X->shape()[1];
    const Value *Scale = BN->input(1), *Bias = BN->input(2),
                *Mean = BN->input(3), *Var = BN->input(4);
    // Training mode and run-time parameters stay BatchNormalization nodes,
    // lowered to kernels that compute the statistics or read the
    // parameters at run time.
    bool Constant = BN->getInt("training_mode", 0) == 0;
    for (const Value *P : {Scale, Bias, Mean, Var})
      Constant = Constant && isFloatConst(P, C);
    if (!Constant)
      continue;
    float Eps = BN->getFloat("epsilon", 1e-5f);
    std::vector<float> S(C), T(C);
    for (int64_t I = 0; I < C; ++I) {
      S[I] = Scale->f32()[I] / std::sqrt(Var->f32()[I] + Eps);
      T[I] = Bias->f32()[I] - Mean->f32()[I] * S[I];
    }
    Node *P = X->producer();
    bool Foldable = P && (P->opType() == "Conv" || P->opType() == "Gemm") &&
                    X->users().size() == 1 && !G.isGraphOutput(X) &&
                    !P->hasAttr("cuvil.act_lo");
    if (Foldable && foldInto(G, *P, S, T)) {
      G.foldNodeInto(BN, X);
      continue;
    }
    // Not foldable: a per-channel affine with precomputed scale and shift.
    Value *SV = G.addValue(BN->name() + ".scale", DType::F32, {C},
                           ValueKind::Constant);
    SV->setData(bytesOf(S));
    Value *TV = G.addValue(BN->name() + ".shift", DType::F32, {C},
                           ValueKind::Constant);
    TV->setData(bytesOf(T));
    BN->setInput(1, SV);
    BN->setInput(2, TV);
    G.truncateNodeInputs(BN, 3);
    BN->setAttr("cuvil.affine", int64_t(1));
  }
  G.eraseDeadValues();
  return llvm::Error::success();
}

} // namespace cuvil
