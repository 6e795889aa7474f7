//===- QIntBuild.cpp - cuvil.QConv / cuvil.QGemm from a quantized product -===//
//
// Everything the integer kernels need that depends only on constants is
// computed here, once: int8 weights in the kernels' packing, the int32 bias
// with -x_zp * sum(w) folded in, the weight sums, and the fixed-point
// requantization pairs (cuvil/kernels/qint.h).
//
//===----------------------------------------------------------------------===//
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/nn/Spatial.h"
#include "ops/quant/QInt.h"
#include "ops/quant/Quant.h"

#include <cuvil/kernels.h>

#include <cmath>
#include <cstring>

namespace cuvil {

extern const OpDef QConvOp, QGemmOp;

std::optional<std::pair<int32_t, int32_t>> fixedPointMultiplier(float M) {
  if (!(M >= 0) || !std::isfinite(M))
    return std::nullopt;
  if (M == 0)
    return std::pair<int32_t, int32_t>{0, 1};
  int E = 0;
  double F = std::frexp(static_cast<double>(M), &E); // M = F 2^E, F in [.5, 1)
  // F has 24 significant bits: F * 2^31 is an integer in [2^30, 2^31).
  auto Mult = static_cast<int64_t>(std::ldexp(F, 31));
  int64_t Shift = 31 - E;
  if (Shift > 62) // below 2^-32: every accumulator rounds to 0
    return std::pair<int32_t, int32_t>{0, 1};
  if (Shift < 1)
    return std::nullopt;
  return std::pair<int32_t, int32_t>{static_cast<int32_t>(Mult),
                                     static_cast<int32_t>(Shift)};
}

std::vector<int32_t> constantInts(const Value &V) {
  std::vector<int32_t> Out(V.numElements());
  const uint8_t *D = V.data().data();
  for (size_t I = 0; I < Out.size(); ++I) {
    if (V.dtype() == DType::U8)
      Out[I] = D[I];
    else if (V.dtype() == DType::I8)
      Out[I] = static_cast<int8_t>(D[I]);
    else
      std::memcpy(&Out[I], D + 4 * I, 4);
  }
  return Out;
}

int32_t quantizeScalar(float V, float Scale, int32_t Zp, DType Type) {
  const double Lo = Type == DType::U8 ? 0 : -128,
               Hi = Type == DType::U8 ? 255 : 127;
  float Q = std::nearbyint(V / Scale); // the default mode: half to even
  double R = std::isnan(Q) ? Lo : static_cast<double>(Q) + Zp;
  return static_cast<int32_t>(std::min(Hi, std::max(Lo, R)));
}

namespace {

template <typename T> T at(const std::vector<T> &V, int64_t C) {
  return V.size() == 1 ? V[0] : V[C];
}

Value *constant(Graph &G, const std::string &Name, DType Ty,
                std::vector<int64_t> Shape, const void *Data, size_t Bytes) {
  Value *V = G.addValue(Name, Ty, std::move(Shape), ValueKind::Constant);
  std::vector<uint8_t> B(Bytes);
  if (Bytes)
    std::memcpy(B.data(), Data, Bytes);
  V->setData(std::move(B));
  return V;
}

/// The product's shape: M output channels in Groups groups, each reducing
/// over K steps; Raw(mo, t) is the raw weight of channel mo, step t.
struct Layout {
  int64_t M = 0, K = 0, Groups = 1;
};

Layout layoutOf(const QuantizedProduct &P) {
  const auto &S = P.W->shape();
  if (P.K == QuantizedProduct::Kind::Conv)
    return {S[0], P.W->numElements() / S[0], ConvAttrs(*P.Product).Group};
  return P.WTransposed ? Layout{S[0], S[1], 1} : Layout{S[1], S[0], 1};
}

bool isDepthwise(const QuantizedProduct &P, const Layout &L) {
  return P.K == QuantizedProduct::Kind::Conv && L.Groups > 1 &&
         L.Groups == L.M && L.K == P.W->numElements() / P.W->shape()[0] &&
         P.W->shape()[1] == 1;
}

/// The geometry of a convolution that takes the kernel on the
/// channel-interleaved image (cuvil_k_qconv2d_direct_s8: one group,
/// dilation 1, a window of several taps no narrower than the stride, so
/// that every phase of the image is read), or nullopt.
std::optional<std::vector<int64_t>>
directGeometry(const QuantizedProduct &P, const Layout &L, const QPacking &Pk) {
  if (!Pk.Packed || !Pk.Direct || Pk.Kr != 4 ||
      P.K != QuantizedProduct::Kind::Conv || L.Groups != 1)
    return std::nullopt;
  auto G = qconvGeometry(
      *P.Product, P.X,
      std::vector<int64_t>(P.W->shape().begin() + 2, P.W->shape().end()), L.M,
      1);
  if (!G) {
    llvm::consumeError(G.takeError());
    return std::nullopt;
  }
  const auto &V = *G;
  if (V[CUVIL_QCONV_DH] != 1 || V[CUVIL_QCONV_DW] != 1 ||
      V[CUVIL_QCONV_SH] > V[CUVIL_QCONV_KH] ||
      V[CUVIL_QCONV_SW] > V[CUVIL_QCONV_KW])
    return std::nullopt;
  // A 1x1 window: the packed kernel gathers a step with one copy (measured
  // on a78: DS-CNN's pointwise layers 7% faster there), without scratch.
  if (V[CUVIL_QCONV_KH] * V[CUVIL_QCONV_KW] == 1)
    return std::nullopt;
  // Channels padded to blocks of 4 cost their share of multiply-adds and
  // weights: at most a third more (3, 6, 7, 9... channels), not the 4x of
  // a one-channel input (DS-CNN's first layer ran 1.5x longer).
  const int64_t C = V[CUVIL_QCONV_C];
  if (3 * ((C + 3) / 4 * 4) > 4 * C)
    return std::nullopt;
  return *G;
}

/// W ([M][K], steps (ci * kh + ky) * kw + kx) in the direct kernel's step
/// order: ((ci / 4 * kh + ky) * kw + kx) * 4 + ci % 4, zero steps for the
/// channels that pad the last block of 4 (cuvil/kernels/qint.h).
std::vector<int8_t> directOrder(const std::vector<int8_t> &W, int64_t M,
                                const std::vector<int64_t> &G, int64_t &K) {
  const int64_t C = G[CUVIL_QCONV_C], KH = G[CUVIL_QCONV_KH],
                KW = G[CUVIL_QCONV_KW], Taps = KH * KW;
  K = (C + 3) / 4 * Taps * 4;
  std::vector<int8_t> Out(M * K, 0);
  for (int64_t Mo = 0; Mo < M; ++Mo)
    for (int64_t Ci = 0; Ci < C; ++Ci)
      for (int64_t T = 0; T < Taps; ++T)
        Out[Mo * K + (Ci / 4 * Taps + T) * 4 + Ci % 4] =
            W[(Mo * C + Ci) * Taps + T];
  return Out;
}

} // namespace

Node *buildQuantizedProduct(Graph &G, const QuantizedProduct &P,
                            const QPacking &Pk, std::string &WhyNot) {
  const Layout L = layoutOf(P);
  const std::vector<int32_t> Raw = constantInts(*P.W);
  auto RawAt = [&](int64_t Mo, int64_t T) {
    if (P.K == QuantizedProduct::Kind::Conv || P.WTransposed)
      return Raw[Mo * L.K + T];
    return Raw[T * L.M + Mo];
  };

  // int8 weights w_q - w_zp, their sums, the bias and the multipliers.
  std::vector<int8_t> W(L.M * L.K);
  std::vector<int32_t> WSum(L.M), Bias(L.M), Rq(2 * L.M);
  for (int64_t Mo = 0; Mo < L.M; ++Mo) {
    const int32_t Zp = P.WZp.empty() ? 0 : at(P.WZp, Mo);
    int64_t Sum = 0;
    for (int64_t T = 0; T < L.K; ++T) {
      int32_t V = RawAt(Mo, T) - Zp;
      if (V < -128 || V > 127) {
        WhyNot = "weight '" + P.W->name() +
                 "' does not fit int8 once its zero point is subtracted";
        return nullptr;
      }
      W[Mo * L.K + T] = static_cast<int8_t>(V);
      Sum += V;
    }
    WSum[Mo] = static_cast<int32_t>(Sum);

    // Accumulator units: x_scale * w_scale (alpha folds into the
    // multiplier, so the bias is divided by it too).
    const float Unit = P.XScale * at(P.WScale, Mo);
    auto Mult = fixedPointMultiplier(P.Alpha * Unit / P.YScale);
    if (!Mult) {
      WhyNot = "its requantization multiplier is out of the fixed-point range";
      return nullptr;
    }
    Rq[2 * Mo] = Mult->first;
    Rq[2 * Mo + 1] = Mult->second;

    double B = 0;
    if (!P.BiasQ.empty() && P.Alpha == 1 && at(P.BiasScale, Mo) == Unit)
      B = static_cast<double>(at(P.BiasQ, Mo)); // the quantizers' convention
    else if (!P.BiasQ.empty() && Unit != 0)
      B = std::nearbyint(static_cast<double>(at(P.BiasQ, Mo)) *
                         at(P.BiasScale, Mo) / (double(P.Alpha) * Unit));
    else if (!P.BiasF.empty() && Unit != 0)
      B = std::nearbyint(at(P.BiasF, Mo) / (double(P.Alpha) * Unit));
    B -= static_cast<double>(P.XZp) * static_cast<double>(Sum);
    if (!(std::fabs(B) < 2147483647.0)) {
      WhyNot = "its bias does not fit int32 in accumulator units";
      return nullptr;
    }
    Bias[Mo] = static_cast<int32_t>(B);
  }

  // Packing: each group's channels in panels of Mr, steps in groups of Kr
  // (depthwise weights stay plain: their kernel reads them so), in the
  // direct kernel's step order where it takes the convolution.
  const bool Dw = isDepthwise(P, L);
  const auto Direct = directGeometry(P, L, Pk);
  int64_t K = L.K;
  if (Direct)
    W = directOrder(W, L.M, *Direct, K);
  const int64_t Mr = Dw ? 1 : Pk.Mr, Kr = Dw ? 1 : Pk.Kr;
  const int64_t Kp = (K + Kr - 1) / Kr * Kr, Mg = L.M / L.Groups;
  std::vector<int8_t> Wp(L.M * Kp, 0);
  for (int64_t Gi = 0; Gi < L.Groups; ++Gi)
    for (int64_t M0 = 0; M0 < Mg; M0 += Mr) {
      const int64_t Mb = std::min(Mr, Mg - M0);
      int8_t *Panel = Wp.data() + (Gi * Mg + M0) * Kp;
      for (int64_t Mo = 0; Mo < Mb; ++Mo)
        for (int64_t T = 0; T < K; ++T)
          Panel[T / Kr * Mb * Kr + Mo * Kr + T % Kr] =
              W[(Gi * Mg + M0 + Mo) * K + T];
    }

  const std::string Base = P.Anchor->name();
  Value *WpV =
      constant(G, P.W->name() + ".q", DType::I8,
               {static_cast<int64_t>(Wp.size())}, Wp.data(), Wp.size());
  // The packed kernels' bias holds their domain's correction (int32,
  // wrapping as their accumulators do). Only the optimised depthwise
  // kernel reads wsum, on one-lane targets for int8 inputs (without it,
  // they take the reference kernel).
  const int64_t XType = *quantTypeCode(P.X->dtype());
  const bool Folds = Pk.Packed && !Dw;
  const bool KeepsSums = Pk.Packed && Dw && XType == CUVIL_Q_I8;
  if (Folds) {
    const int32_t Corr = cuvil_qpack_corr(Pk.XUnsigned, XType);
    for (int64_t Mo = 0; Mo < L.M; ++Mo)
      Bias[Mo] = static_cast<int32_t>(static_cast<uint32_t>(Bias[Mo]) +
                                      static_cast<uint32_t>(Corr) *
                                          static_cast<uint32_t>(WSum[Mo]));
  }
  // One int32 tensor of the per-channel parameters (QParams): one blob
  // entry per layer.
  std::vector<int32_t> Params(Bias);
  Params.insert(Params.end(), Rq.begin(), Rq.end());
  if (KeepsSums)
    Params.insert(Params.end(), WSum.begin(), WSum.end());
  Value *ParamsV = constant(G, Base + ".qparams", DType::I32,
                            {static_cast<int64_t>(Params.size())},
                            Params.data(), 4 * Params.size());

  const DType YT = P.Anchor->output(0)->dtype();
  const int32_t Lo = quantizeScalar(P.ClampLo, P.YScale, P.YZp, YT);
  const int32_t Hi = quantizeScalar(P.ClampHi, P.YScale, P.YZp, YT);

  std::vector<const Node *> Folded = P.Folded;
  const Node *Product = P.Product;
  Node *Anchor = P.Anchor;
  std::map<std::string, AttrValue> WindowAttrs;
  if (P.K == QuantizedProduct::Kind::Conv) {
    for (const char *A : {"pads", "strides", "dilations", "auto_pad", "group"})
      if (Product->hasAttr(A))
        WindowAttrs[A] = Product->attrs().at(A);
    WindowAttrs["kernel_shape"] =
        std::vector<int64_t>(P.W->shape().begin() + 2, P.W->shape().end());
  }
  Origin Orig = Anchor->origin();
  for (const Node *F : Folded)
    Orig.merge(F->origin());

  const OpDef &Def = P.K == QuantizedProduct::Kind::Conv ? QConvOp : QGemmOp;
  Node *N = G.replaceNode(Anchor, Def.Name, &Def, {P.X, WpV, ParamsV});
  for (auto &[Name, V] : WindowAttrs)
    N->setAttr(Name, V);
  N->setAttr("x_zero_point", int64_t{P.XZp});
  N->setAttr("y_zero_point", int64_t{P.YZp});
  N->setAttr("y_lo", int64_t{Lo});
  N->setAttr("y_hi", int64_t{Hi});
  N->setAttr("mr", Mr);
  N->setAttr("kr", Kr);
  N->setAttr("packed", int64_t{Pk.Packed});
  if (Direct) {
    // The interleaved image and the group offsets, live during the call.
    N->setAttr("direct", int64_t{1});
    if (Pk.Shares > 1)
      N->setAttr("shares", Pk.Shares);
    Value *Scratch = G.addValue(Base + ".qscratch", DType::U8,
                                {qdirectScratch(*Direct, Pk.Shares)},
                                ValueKind::Intermediate);
    G.addNodeOutput(N, Scratch);
  }
  N->origin() = Orig;
  return N;
}

} // namespace cuvil
