//===- QInt.h - The integer fast path: ops and their construction -*- C++
//-*-===//
//
// The lower-qdq pass finds quantized convolutions and matrix products (the
// QDQ form DQ -> Conv/Gemm/MatMul [-> Relu/Clip] -> Q, and QLinearConv /
// QLinearMatMul) and describes each as a QuantizedProduct: ONNX's view of
// it (scales, zero points, raw weights, bias). buildQuantizedProduct turns
// that into the internal op cuvil.QConv or cuvil.QGemm, whose operands are
// what the integer kernels take (cuvil/kernels/qint.h): weights as int8
// w_q - w_zp in the kernels' packing, and one int32 tensor of per-channel
// parameters: the bias holding the zero-point corrections, the fixed-point
// requantization pairs and the weight sums (QParams, ops/quant/QIntOps.h).
// The activations stay uint8/int8 between such nodes.
//
// cuvil.QConv: inputs x, wp, qparams; the Conv's window attributes
// (kernel_shape always present) and group; int attributes x_zero_point,
// y_zero_point, y_lo, y_hi (the clamp, in y's integers), mr, kr (the
// packing) and packed (1: the target's optimised kernel).
// cuvil.QGemm: the same inputs and int attributes, for y[..., n] = x[..., k]
// times the weights (x's leading dimensions are rows).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_QUANT_QINT_H
#define CUVIL_OPS_QUANT_QINT_H

#include "ir/Graph.h"
#include "ops/Shares.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace cuvil {

/// How the target's integer kernels want their weights (the kernel
/// library's cuvil_k_qpack_mr / _kr); Packed false: the reference kernels,
/// with mr = kr = 1 (plain [M][K] weights).
struct QPacking {
  int64_t Mr = 1, Kr = 1;
  bool Packed = false;
  /// Convolutions of one group and dilation 1 with a window of several
  /// taps take the kernel on the channel-interleaved image
  /// (cuvil_k_qconv2d_direct_s8; QIntBuild.cpp says which): weights in its
  /// step order, a scratch output (Packed with Kr 4 only).
  bool Direct = false;
  /// The cores (--cores) that split a direct convolution's output rows,
  /// each on a scratch of its own (qdirectScratch).
  int64_t Shares = 1;
  /// The packed kernels' activation domain (cuvil_k_qpack_x_unsigned):
  /// their bias holds its correction (cuvil_qpack_corr) and they take no
  /// weight sums.
  bool XUnsigned = false;
};

/// The direct convolution's rows for each of at most Shares cores (whole
/// rows; none when it stays whole), and the scratch that many need: one
/// cuvil_qdirect_scratch_rows per range, end to end (cuvil/kernels/qint.h).
ShareRanges qdirectRows(const std::vector<int64_t> &Geom, int64_t Shares);
int64_t qdirectScratch(const std::vector<int64_t> &Geom, int64_t Shares);

/// A quantized product in ONNX's terms (see the file comment).
struct QuantizedProduct {
  enum class Kind { Conv, Gemm } K = Kind::Conv;
  /// The node whose output Y the integer op computes (the Q of the QDQ
  /// form, or the QLinear op); it is replaced.
  Node *Anchor = nullptr;
  /// The node whose window attributes a convolution takes (Conv or
  /// QLinearConv), and the nodes folded into the result (for its origin).
  const Node *Product = nullptr;
  std::vector<const Node *> Folded;

  Value *X = nullptr; ///< uint8/int8 input.
  float XScale = 0;
  int32_t XZp = 0;

  /// Constant uint8/int8 weights: Conv [M, C/group, kernel...]; Gemm
  /// [K, N], or [N, K] when WTransposed.
  const Value *W = nullptr;
  bool WTransposed = false;
  std::vector<float> WScale; ///< One value, or one per output channel.
  std::vector<int32_t> WZp;  ///< Likewise; empty: 0.

  /// The bias, in float (BiasF) or as integers BiasQ of scale BiasScale
  /// (one or per channel); both empty: none. Gemm: beta is applied here.
  std::vector<float> BiasF;
  std::vector<int64_t> BiasQ;
  std::vector<float> BiasScale;
  float Alpha = 1; ///< Gemm's alpha.

  float YScale = 0;
  int32_t YZp = 0;
  /// A Relu/Clip between the product and its quantization.
  float ClampLo = -std::numeric_limits<float>::infinity();
  float ClampHi = std::numeric_limits<float>::infinity();
};

/// Builds the integer op for P in place of P.Anchor and returns it, or
/// returns null (graph unchanged) with the reason in WhyNot when the
/// integer kernels cannot compute it exactly (a weight that does not fit
/// int8 once its zero point is subtracted, a bias beyond int32, a
/// multiplier beyond the fixed-point range).
Node *buildQuantizedProduct(Graph &G, const QuantizedProduct &P,
                            const QPacking &Pk, std::string &WhyNot);

/// The fixed-point form (multiplier, shift) of a requantization multiplier
/// M (see cuvil/kernels/qint.h): exact for every float M; nullopt when M is
/// negative, not finite or 2^30 or more.
std::optional<std::pair<int32_t, int32_t>> fixedPointMultiplier(float M);

/// The elements of a uint8, int8 or int32 constant as int32.
std::vector<int32_t> constantInts(const Value &V);

/// Q(v) of ONNX's QuantizeLinear for a scalar: saturate(rhe(v / Scale) +
/// Zp) in the range of Type (U8 or I8); -inf and +inf give the ends.
int32_t quantizeScalar(float V, float Scale, int32_t Zp, DType Type);

} // namespace cuvil

#endif
