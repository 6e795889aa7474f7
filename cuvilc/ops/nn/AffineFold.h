//===- AffineFold.h - Per-channel affines, folded into Conv/Gemm -*- C++
//-*-===//
//
// y = x * S[c] + T[c] applied to the result of a Conv or Gemm (c its output
// channel) folds into that op: its weights of channel c scale by S[c] and
// its bias becomes bias * S + T. The fold-batchnorm pass uses it (through
// OpDef::FoldChannelAffine) for an inference BatchNormalization.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_NN_AFFINEFOLD_H
#define CUVIL_OPS_NN_AFFINEFOLD_H

#include "ir/Graph.h"

namespace cuvil {

/// Checks that input 0 of N has rank >= 2 and that inputs 1..Count are
/// present with one element per channel (axis 1 of input 0): the
/// parameters of BatchNormalization and cuvil.ChannelAffine.
llvm::Error verifyChannelParams(const Node &N, size_t Count);

/// A new float32 constant holding Data.
Value *addF32Constant(Graph &G, std::string Name, std::vector<int64_t> Shape,
                      const std::vector<float> &Data);

/// Conv with a constant weight of S.size() output channels (and a constant
/// bias, if any).
bool foldConvChannelAffine(Graph &G, Node &N, const std::vector<float> &S,
                           const std::vector<float> &T);
/// Gemm with a constant B, no transA, alpha 1, and a constant [N] bias with
/// beta 1 (or none).
bool foldGemmChannelAffine(Graph &G, Node &N, const std::vector<float> &S,
                           const std::vector<float> &T);

} // namespace cuvil

#endif
