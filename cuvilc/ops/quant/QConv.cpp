//===- QConv.cpp - cuvil.QConv: the integer convolution -------------------===//
//
// Internal op (domain "cuvil", see ops/quant/QInt.h): a quantized 1-D or
// 2-D convolution on uint8/int8 activations and packed int8 weights, made
// by the lower-qdq pass. Depthwise convolutions (group = C = M, plain
// weights) call the depthwise kernels; with attribute direct = 1 (one
// group, dilation 1, weights in that kernel's step order) the kernel on the
// channel-interleaved image, whose image goes to output 1 (scratch: with
// attribute shares = N > 1, one for each of N cores' output rows); every
// other the packed ones.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Shares.h"
#include "ops/quant/QInt.h"
#include "ops/quant/QIntOps.h"
#include "ops/quant/Quant.h"

#include <algorithm>
#include <cuvil/kernels.h>

namespace cuvil {
namespace {

#define QCONV_ATTRS(X)                                                         \
  CUVIL_QINT_ATTRS(X)                                                          \
  X(KernelShape, "kernel_shape", Ints, {})                                     \
  X(Group, "group", Int, 1)                                                    \
  X(Pads, "pads", Ints, {})                                                    \
  X(Strides, "strides", Ints, {})                                              \
  X(Dilations, "dilations", Ints, {})                                          \
  X(AutoPad, "auto_pad", String, "NOTSET")                                     \
  X(Direct, "direct", Int, 0)                                                  \
  X(Shares, "shares", Int, 1)
CUVIL_OP_ATTRS(QConvAttrs, QCONV_ATTRS)

/// The geometry array, and whether the node is depthwise.
llvm::Expected<std::vector<int64_t>> geometry(const Node &N) {
  const QConvAttrs A(N);
  const Value *X = N.input(0);
  if (X->rank() < 3 || X->rank() > 4 || A.KernelShape.size() != X->rank() - 2)
    return nodeError(N, "internal error: the integer convolution needs a 1-D "
                        "or 2-D input and a kernel_shape of its rank");
  const Value *Y = N.output(0);
  if (Y->rank() != X->rank())
    return nodeError(N, "internal error: the integer convolution's output "
                        "has another rank than its input");
  const int64_t M = Y->shape()[1];
  if (A.Group <= 0 || X->shape()[1] % A.Group || M % A.Group)
    return nodeError(N,
                     "internal error: group {} does not divide the {} "
                     "input and {} output channels",
                     A.Group, X->shape()[1], M);
  return qconvGeometry(N, X, A.KernelShape, M, A.Group);
}

bool depthwise(const std::vector<int64_t> &G) {
  return G[CUVIL_QCONV_GROUP] > 1 && G[CUVIL_QCONV_GROUP] == G[CUVIL_QCONV_C] &&
         G[CUVIL_QCONV_GROUP] == G[CUVIL_QCONV_M];
}

int64_t packedBytesPerChannel(const Node &N, const std::vector<int64_t> &G) {
  const int64_t Taps = G[CUVIL_QCONV_KH] * G[CUVIL_QCONV_KW];
  const int64_t K = QConvAttrs(N).Direct
                        ? (G[CUVIL_QCONV_C] + 3) / 4 * 4 * Taps
                        : G[CUVIL_QCONV_C] / G[CUVIL_QCONV_GROUP] * Taps;
  const int64_t Kr = std::max<int64_t>(QIntAttrs(N).Kr, 1);
  return (K + Kr - 1) / Kr * Kr;
}

llvm::Error verifyQConvOp(const Node &N) {
  const bool Direct = QConvAttrs(N).Direct;
  if (N.numInputs() != 3 || N.outputs().size() != (Direct ? 2u : 1u))
    return nodeError(N,
                     "internal error: the integer convolution takes x, "
                     "wp, qparams and gives y{}",
                     Direct ? " and its scratch" : "");
  auto G = geometry(N);
  if (!G)
    return G.takeError();
  if (Direct) {
    const auto &V = *G;
    if (V[CUVIL_QCONV_GROUP] != 1 || V[CUVIL_QCONV_DH] != 1 ||
        V[CUVIL_QCONV_DW] != 1 || QIntAttrs(N).Kr != 4 || !QIntAttrs(N).Packed)
      return nodeError(N, "internal error: the direct integer convolution "
                          "takes one group, dilation 1 and weights packed "
                          "by 4 steps");
    const int64_t Shares = QConvAttrs(N).Shares;
    if (Shares < 1)
      return nodeError(N, "internal error: the direct integer convolution's "
                          "shares attribute is not positive");
    if (N.output(1)->dtype() != DType::U8 ||
        N.output(1)->numElements() != qdirectScratch(V, Shares))
      return nodeError(N,
                       "internal error: the direct integer convolution's "
                       "scratch is not {} bytes",
                       qdirectScratch(V, Shares));
  }
  if (depthwise(*G) && (QIntAttrs(N).Mr != 1 || QIntAttrs(N).Kr != 1))
    return nodeError(N, "internal error: depthwise weights are not packed");
  return verifyQIntOperands(N, (*G)[CUVIL_QCONV_M],
                            packedBytesPerChannel(N, *G));
}

llvm::Error lowerQConvOp(const Node &N, std::vector<KernelCall> &Calls) {
  auto G = geometry(N);
  if (!G)
    return G.takeError();
  const QIntAttrs A(N);
  const QParams P = qparams(N, (*G)[CUVIL_QCONV_M]);
  auto Fill = [&](auto K) {
    K.x = N.input(0);
    K.bias = P.Bias;
    if constexpr (requires { K.wsum; }) // the packed kernels take none
      K.wsum = P.WSum;
    K.rq = P.Rq;
    K.y = N.output(0);
    K.geom = *G;
    K.x_type = qintType(N.input(0));
    K.x_zp = A.XZp;
    K.y_type = qintType(N.output(0));
    K.y_zp = A.YZp;
    K.y_lo = A.YLo;
    K.y_hi = A.YHi;
    return K;
  };
  if (QConvAttrs(N).Direct) {
    kabi::Qconv2dDirectS8 K;
    K.wp = N.input(1);
    K.scratch = N.output(1);
    K.oy0 = 0;
    K.oy1 = (*G)[CUVIL_QCONV_OH];
    Calls.push_back(Fill(K).call());
  } else if (depthwise(*G)) {
    if (A.Packed) {
      kabi::Qdwconv2dTiledS8 K;
      K.w = N.input(1);
      Calls.push_back(Fill(K).call());
    } else {
      kabi::Qdwconv2dS8 K;
      K.w = N.input(1);
      Calls.push_back(Fill(K).call());
    }
  } else if (A.Packed) {
    kabi::Qconv2dPackedS8 K;
    K.wp = N.input(1);
    K.p0 = 0;
    K.p1 = (*G)[CUVIL_QCONV_OH] * (*G)[CUVIL_QCONV_OW];
    Calls.push_back(Fill(K).call());
  } else {
    kabi::Qconv2dS8 K;
    K.wp = N.input(1);
    K.mr = A.Mr;
    K.kr = A.Kr;
    Calls.push_back(Fill(K).call());
  }
  return llvm::Error::success();
}

int64_t macsQConv(const Node &N) {
  auto G = geometry(N);
  if (!G) {
    llvm::consumeError(G.takeError());
    return 0;
  }
  return N.output(0)->numElements() *
         ((*G)[CUVIL_QCONV_C] / (*G)[CUVIL_QCONV_GROUP] * (*G)[CUVIL_QCONV_KH] *
          (*G)[CUVIL_QCONV_KW]);
}

/// OpDef::Split (--cores), batch 1: for the packed kernel (one group)
/// ranges of positions of every plane (the kernel's [p0, p1): its stores
/// stay inside) or of whole panels of output channels (its weights are
/// stored panel by panel), whichever balances better; ranges of channels
/// for the depthwise one (in groups of 8, the lanes of its small-map form,
/// where there are two or more), which write whole planes of y (the
/// a78 kernels write ahead inside a plane: cuvil/kernels/qint.h). A share of
/// channels is the same call on fewer channels, its pointers moved to the
/// range's start. The direct kernel splits by output rows (its stores stay in
/// its rows), each share on its part of the scratch, which the node holds for
/// its shares attribute's cores.
void splitQConvOp(const Node &N, const std::vector<KernelCall> &Calls,
                  int64_t Parts, std::vector<std::vector<KernelCall>> &Shares) {
  if (Calls.size() != 1)
    return;
  auto Cut = [&](auto K, int64_t Count, int64_t Grain, auto Move) {
    const std::vector<int64_t> &G = K.geom.Array;
    if (K.geom.K != KernelArg::Kind::IntArray || !K.geom.Dyn.empty() ||
        G.size() <= CUVIL_QCONV_M || G[CUVIL_QCONV_N] != 1)
      return;
    for (auto [B, E] : shareRanges(Count, Grain, Parts)) {
      auto S = K;
      Move(S, B, E);
      Shares.push_back({S.call()});
    }
  };
  const KernelCall &C = Calls[0];
  if (C.Kernel == kabi::Qconv2dDirectS8::Name) {
    const auto K = kabi::Qconv2dDirectS8::from(C);
    const std::vector<int64_t> &G = K.geom.Array;
    if (K.geom.K != KernelArg::Kind::IntArray || !K.geom.Dyn.empty() ||
        G.size() <= CUVIL_QCONV_M)
      return;
    int64_t Scratch = 0;
    for (auto [B, E] :
         qdirectRows(G, std::min<int64_t>(Parts, QConvAttrs(N).Shares))) {
      auto S = K;
      S.oy0 = B;
      S.oy1 = E;
      S.scratch = atBytes(K.scratch, Scratch);
      Scratch += cuvil_qdirect_scratch_rows(G.data(), E - B);
      Shares.push_back({S.call()});
    }
  } else if (C.Kernel == kabi::Qconv2dPackedS8::Name) {
    const auto K = kabi::Qconv2dPackedS8::from(C);
    const std::vector<int64_t> &G = K.geom.Array;
    if (G.size() <= CUVIL_QCONV_M || G[CUVIL_QCONV_GROUP] != 1)
      return;
    const int64_t Kp = packedBytesPerChannel(N, G);
    const int64_t Plane = G[CUVIL_QCONV_OH] * G[CUVIL_QCONV_OW];
    const int64_t M = G[CUVIL_QCONV_M],
                  Mr = std::max<int64_t>(QIntAttrs(N).Mr, 1);
    // Positions: whole rows where a row holds the kernel's blocks (at most
    // 12 positions), else runs of 48 (whole blocks of every target's).
    const int64_t OW = G[CUVIL_QCONV_OW];
    const int64_t Grain = OW >= 12 ? OW : 48;
    const ShareRanges ByPanels = shareRanges(M, Mr, Parts),
                      ByPositions = shareRanges(Plane, Grain, Parts);
    // Positions whenever they balance as well: every share then gathers
    // only its own positions' activations, where a share of the panels
    // gathers all of them again.
    if (!ByPositions.empty() &&
        largestShare(ByPositions, Plane) <= largestShare(ByPanels, M)) {
      Cut(K, Plane, Grain,
          [&](kabi::Qconv2dPackedS8 &S, int64_t P0, int64_t P1) {
            S.p0 = P0;
            S.p1 = P1;
          });
      return;
    }
    Cut(K, M, Mr, [&](kabi::Qconv2dPackedS8 &S, int64_t M0, int64_t M1) {
      S.wp = atBytes(K.wp, M0 * Kp);
      S.bias = atBytes(K.bias, 4 * M0);
      S.rq = atBytes(K.rq, 8 * M0);
      S.y = atBytes(K.y, M0 * Plane);
      S.geom.Array[CUVIL_QCONV_M] = M1 - M0;
    });
  } else if (C.Kernel == kabi::Qdwconv2dTiledS8::Name) {
    const auto K = kabi::Qdwconv2dTiledS8::from(C);
    const std::vector<int64_t> &G = K.geom.Array;
    if (G.size() <= CUVIL_QCONV_M)
      return;
    const int64_t Taps = G[CUVIL_QCONV_KH] * G[CUVIL_QCONV_KW];
    const int64_t In = G[CUVIL_QCONV_H] * G[CUVIL_QCONV_W];
    const int64_t Out = G[CUVIL_QCONV_OH] * G[CUVIL_QCONV_OW];
    // Groups of 8 where there are two or more, else an even share of the
    // channels. On a78, MobileNetV1-0.25's 8-channel 48x48 layer costs the
    // same in 4 shares of 2 channels as whole, but its 16-channel stride-2
    // layer cost 3.48x its one-core count in 4 shares of 4 (2 of 8: 1.00x;
    // bench/share_profile.py).
    const int64_t Channels = G[CUVIL_QCONV_C];
    const int64_t Grain = Channels >= 16 ? 8 : (Channels + Parts - 1) / Parts;
    Cut(K, Channels, Grain,
        [&](kabi::Qdwconv2dTiledS8 &S, int64_t C0, int64_t C1) {
          S.x = atBytes(K.x, C0 * In);
          S.w = atBytes(K.w, C0 * Taps);
          S.bias = atBytes(K.bias, 4 * C0);
          S.wsum = atBytes(K.wsum, 4 * C0);
          S.rq = atBytes(K.rq, 8 * C0);
          S.y = atBytes(K.y, C0 * Out);
          for (int I : {CUVIL_QCONV_C, CUVIL_QCONV_M, CUVIL_QCONV_GROUP})
            S.geom.Array[I] = C1 - C0;
        });
  }
}

} // namespace

ShareRanges qdirectRows(const std::vector<int64_t> &Geom, int64_t Shares) {
  if (Geom.size() <= CUVIL_QCONV_M)
    return {};
  return shareRanges(Geom[CUVIL_QCONV_OH], 1, Shares);
}

int64_t qdirectScratch(const std::vector<int64_t> &Geom, int64_t Shares) {
  const ShareRanges Rows = qdirectRows(Geom, Shares);
  if (Rows.empty())
    return cuvil_qdirect_scratch(Geom.data());
  int64_t Bytes = 0;
  for (auto [B, E] : Rows)
    Bytes += cuvil_qdirect_scratch_rows(Geom.data(), E - B);
  return Bytes;
}

extern const OpDef QConvOp = {.Name = "cuvil.QConv",
                              .Verify = verifyQConvOp,
                              .Lower = lowerQConvOp,
                              .Macs = macsQConv,
                              .Traits = NoTraits,
                              .Split = splitQConvOp,
                              .Attrs = QConvAttrs::Specs};

} // namespace cuvil
