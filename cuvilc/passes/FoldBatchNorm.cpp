//===- FoldBatchNorm.cpp - BatchNormalization into Conv/Gemm weights ------===//
//
// Inference BatchNormalization is y = (x - mean) * s + B with
// s = scale / sqrt(var + epsilon): a per-channel affine (its
// OpDef::ChannelAffine gives s and the shift). When x comes straight from
// an op that can absorb one (OpDef::FoldChannelAffine: Conv, Gemm) used
// only by this BN, the scale folds into the producer's weights (per output
// channel) and the shift into its bias. Otherwise the BN becomes the
// internal op cuvil.ChannelAffine y = x * s + t. A BN in training mode or
// with run-time parameters is left alone.
//
//===----------------------------------------------------------------------===//
#include "ops/OpRegistry.h"
#include "ops/nn/AffineFold.h"
#include "passes/Pass.h"

namespace cuvil {

extern const OpDef ChannelAffineOp;

llvm::Error foldBatchNorm(Graph &G) {
  std::vector<Node *> BNs;
  for (const auto &N : G.nodes())
    if (N->def() && N->def()->ChannelAffine)
      BNs.push_back(N.get());
  for (Node *BN : BNs) {
    // Training mode and run-time parameters stay BatchNormalization nodes,
    // lowered to kernels that compute the statistics or read the
    // parameters at run time.
    std::vector<float> S, T;
    if (!BN->def()->ChannelAffine(*BN, S, T))
      continue;
    Value *X = BN->input(0);
    Node *P = X->producer();
    bool Foldable = P && P->def() && P->def()->FoldChannelAffine &&
                    X->users().size() == 1 && !G.isGraphOutput(X);
    if (Foldable && P->def()->FoldChannelAffine(G, *P, S, T)) {
      G.foldNodeInto(BN, X);
      continue;
    }
    // Not foldable: a per-channel affine with precomputed scale and shift.
    int64_t C = S.size();
    Value *SV = addF32Constant(G, BN->name() + ".scale", {C}, S);
    Value *TV = addF32Constant(G, BN->name() + ".shift", {C}, T);
    G.replaceNode(BN, ChannelAffineOp.Name, &ChannelAffineOp, {X, SV, TV});
  }
  G.eraseDeadValues();
  return llvm::Error::success();
}

} // namespace cuvil
