//===- Packing.cpp - Weights in the register-blocked kernels' order -------===//
#include "ops/nn/Packing.h"
#include "ops/OpRegistry.h"
#include "ops/linalg/Gemm.h"
#include "ops/nn/Spatial.h"

#include <algorithm>
#include <cstring>

namespace cuvil {
namespace {

/// Packs Rows x Taps weights, element (r, t) at Src(r, t), into panels of
/// Panel rows: panel [r0, r0 + w) starts at r0 * Taps and stores tap t's w
/// values contiguously (see cuvil/kernels.h).
template <typename At>
std::vector<float> panels(int64_t Rows, int64_t Taps, int64_t Panel, At Src) {
  std::vector<float> Out(Rows * Taps);
  for (int64_t R0 = 0; R0 < Rows; R0 += Panel) {
    int64_t W = std::min(Panel, Rows - R0);
    for (int64_t T = 0; T < Taps; ++T)
      for (int64_t R = 0; R < W; ++R)
        Out[R0 * Taps + T * W + R] = Src(R0 + R, T);
  }
  return Out;
}

bool isFloatConstant(const Value *V) {
  return V && V->isConstant() && V->dtype() == DType::F32 && !V->data().empty();
}

/// The constant holding Bytes, W packed (W's shape): the one another node
/// already packed W into when the bytes are the same (the copies of an
/// unrolled loop's body share their weights), else a new one, named
/// W.packed (W.packed.K when another packing of W has that name).
Value *packedConstant(Graph &G, const Value &W, std::vector<uint8_t> Bytes) {
  const std::string Base = W.name() + ".packed";
  int Taken = 0;
  for (const auto &V : G.values()) {
    if (V->name() != Base && V->name().rfind(Base + ".", 0) != 0)
      continue;
    if (V->isConstant() && V->dtype() == DType::F32 &&
        V->shape() == W.shape() && V->data() == Bytes)
      return V.get();
    ++Taken;
  }
  Value *P = G.addValue(Taken ? Base + "." + std::to_string(Taken) : Base,
                        DType::F32, W.shape(), ValueKind::Constant);
  P->setData(std::move(Bytes));
  return P;
}

/// Gives N the packed weights and rebuilds it as Def (with the panel).
Node *replaceWeight(Graph &G, Node &N, const std::vector<float> &Packed,
                    int64_t Panel, const OpDef &Def) {
  std::vector<uint8_t> Bytes(Packed.size() * sizeof(float));
  std::memcpy(Bytes.data(), Packed.data(), Bytes.size());
  N.setInput(1, packedConstant(G, *N.input(1), std::move(Bytes)));
  Node *R = rebuildAs(G, N, Def);
  R->setAttr(PanelAttr, Panel);
  return R;
}

} // namespace

extern const OpDef PackedConvOp, DepthwiseConvOp, PackedGemmOp;

Node *packConvWeights(Graph &G, Node &N, int64_t Panel) {
  const Value *W = N.input(1);
  if (!W || W->rank() < 3 || W->rank() > 4 ||
      N.output(0)->dtype() != DType::F32)
    return nullptr;
  int64_t Group = ConvAttrs(N).Group;
  if (Group > 1 && Group == W->shape()[0] && W->shape()[1] == 1) {
    // Depthwise: [C, 1, KH, KW] already is the depthwise kernel's order.
    return rebuildAs(G, N, DepthwiseConvOp);
  }
  if (Group != 1 || !isFloatConstant(W))
    return nullptr;
  int64_t M = W->shape()[0], Taps = W->numElements() / M;
  const float *Src = W->f32();
  return replaceWeight(
      G, N,
      panels(M, Taps, Panel,
             [&](int64_t R, int64_t T) { return Src[R * Taps + T]; }),
      Panel, PackedConvOp);
}

Value *packMatricesAsTransB(Graph &G, const Value &W, int64_t Panel) {
  const int64_t Rows = W.shape()[W.rank() - 2], Taps = W.shape().back();
  const int64_t Count = W.numElements() / (Rows * Taps);
  std::vector<uint8_t> Bytes(W.numElements() * sizeof(float));
  for (int64_t I = 0; I < Count; ++I) {
    const float *Src = W.f32() + I * Rows * Taps;
    std::vector<float> P = panels(Rows, Taps, Panel, [&](int64_t R, int64_t T) {
      return Src[R * Taps + T];
    });
    std::memcpy(Bytes.data() + I * Rows * Taps * sizeof(float), P.data(),
                P.size() * sizeof(float));
  }
  return packedConstant(G, W, std::move(Bytes));
}

Node *packGemmWeights(Graph &G, Node &N, int64_t Panel) {
  const Value *B = N.input(1);
  if (!isFloatConstant(B) || B->rank() != 2 ||
      N.output(0)->dtype() != DType::F32)
    return nullptr;
  GemmAttrs A(N);
  bool TB = A.TransB;
  int64_t K = B->shape()[TB ? 1 : 0], Cols = B->shape()[TB ? 0 : 1];
  float Alpha = A.Alpha;
  const float *Src = B->f32();
  // Rows of the panels are the output columns j; taps are the reduction p.
  return replaceWeight(G, N,
                       panels(Cols, K, Panel,
                              [&](int64_t J, int64_t P) {
                                return Alpha *
                                       Src[TB ? J * K + P : P * Cols + J];
                              }),
                       Panel, PackedGemmOp);
}

} // namespace cuvil
