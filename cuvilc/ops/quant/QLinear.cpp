//===- QLinear.cpp - Integer and QLinear matrix products and convolutions -===//
//
// MatMulInteger and ConvInteger produce the exact int32 accumulators of
// (a - a_zero_point) x (b - b_zero_point); QLinearMatMul and QLinearConv
// requantize them to uint8/int8 with the multiplier
// a_scale * b_scale / y_scale. Scales and zero points may be run-time
// inputs. The products share shape logic with the float ops: numpy matmul
// broadcasting (MatMulShape.h) and the window arithmetic (Spatial.h).
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/linalg/MatMulShape.h"
#include "ops/nn/Spatial.h"
#include "ops/quant/Quant.h"

#include <cuvil/kernels.h>

namespace cuvil {
namespace {

int64_t typeArg(const Value *V) { return *quantTypeCode(V->dtype()); }

/// Kern (cuvil_k_matmul_integer or cuvil_k_qlinear_matmul) with the
/// product's extents and batch walk D set, which both take as
/// cuvil_k_matmul_f32 does.
template <typename K> KernelCall withDims(K Kern, const MatMulDims &D) {
  Kern.m = D.M;
  Kern.n = D.N;
  Kern.k = D.K;
  Kern.batch_shape = D.Batch;
  Kern.a_bstride = D.AStride;
  Kern.b_bstride = D.BStride;
  return Kern.call();
}

int64_t batchCount(const MatMulDims &D) {
  int64_t B = 1;
  for (int64_t X : D.Batch)
    B *= X;
  return B;
}

// ---- MatMulInteger ------------------------------------------------------

/// Per-row a_zero_point / per-column b_zero_point flags of MatMulInteger.
/// Only 2-D (or 1-D) operands take a vector zero point: N-D ones would need
/// the [..., M, 1] / [..., 1, N] forms, which are not supported.
struct IntegerZeroPoints {
  bool APerRow = false, BPerCol = false;
};

llvm::Expected<IntegerZeroPoints> matmulIntegerZps(const Node &N,
                                                   const MatMulDims &D) {
  const Value *A = N.input(0), *B = N.input(1);
  IntegerZeroPoints Z;
  auto AZ = checkQuantParam(N, N.input(2), A->dtype(), A->rank() <= 2 ? D.M : 0,
                            "row of A");
  if (!AZ)
    return AZ.takeError();
  auto BZ = checkQuantParam(N, N.input(3), B->dtype(), B->rank() <= 2 ? D.N : 0,
                            "column of B");
  if (!BZ)
    return BZ.takeError();
  Z.APerRow = *AZ;
  Z.BPerCol = *BZ;
  return Z;
}

llvm::Error verifyMatMulInteger(const Node &N) {
  if (auto E = requireQuant8(N, N.input(0), "input A"))
    return E;
  if (auto E = requireQuant8(N, N.input(1), "input B"))
    return E;
  if (N.output(0)->dtype() != DType::I32)
    return nodeError(N, "output must be int32");
  auto D = matmulDims(N, N.input(0), N.input(1));
  if (!D)
    return D.takeError();
  return matmulIntegerZps(N, *D).takeError();
}

llvm::Error lowerMatMulInteger(const Node &N, std::vector<KernelCall> &Calls) {
  auto D = matmulDims(N, N.input(0), N.input(1));
  if (!D)
    return D.takeError();
  auto Z = matmulIntegerZps(N, *D);
  if (!Z)
    return Z.takeError();
  Calls.push_back(withDims(kabi::MatmulInteger{.a = N.input(0),
                                               .b = N.input(1),
                                               .a_zp = N.input(2),
                                               .b_zp = N.input(3),
                                               .y = N.output(0),
                                               .a_type = typeArg(N.input(0)),
                                               .b_type = typeArg(N.input(1)),
                                               .a_zp_per_row = Z->APerRow,
                                               .b_zp_per_col = Z->BPerCol},
                           *D));
  return llvm::Error::success();
}

int64_t matmulMacs(const Node &N, const Value *A, const Value *B) {
  auto D = matmulDims(N, A, B);
  if (!D) {
    llvm::consumeError(D.takeError());
    return 0;
  }
  return batchCount(*D) * D->M * D->N * D->K;
}

int64_t macsMatMulInteger(const Node &N) {
  return matmulMacs(N, N.input(0), N.input(1));
}

// ---- QLinearMatMul ------------------------------------------------------
// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
// y_zero_point. b's parameters may be per column of a 2-D b.

llvm::Expected<bool> qlinearMatMulParams(const Node &N, const MatMulDims &D) {
  const Value *A = N.input(0), *B = N.input(3), *Y = N.output(0);
  auto AP =
      checkScaleAndZeroPoint(N, N.input(1), N.input(2), A->dtype(), 0, "");
  if (!AP)
    return AP.takeError();
  auto YP =
      checkScaleAndZeroPoint(N, N.input(6), N.input(7), Y->dtype(), 0, "");
  if (!YP)
    return YP.takeError();
  return checkScaleAndZeroPoint(N, N.input(4), N.input(5), B->dtype(),
                                B->rank() <= 2 ? D.N : 0, "column of b");
}

llvm::Error verifyQLinearMatMul(const Node &N) {
  if (auto E = requireQuant8(N, N.input(0), "input a"))
    return E;
  if (auto E = requireQuant8(N, N.input(3), "input b"))
    return E;
  if (auto E = requireQuant8(N, N.output(0), "output y"))
    return E;
  auto D = matmulDims(N, N.input(0), N.input(3));
  if (!D)
    return D.takeError();
  return qlinearMatMulParams(N, *D).takeError();
}

llvm::Error lowerQLinearMatMul(const Node &N, std::vector<KernelCall> &Calls) {
  auto D = matmulDims(N, N.input(0), N.input(3));
  if (!D)
    return D.takeError();
  auto PerCol = qlinearMatMulParams(N, *D);
  if (!PerCol)
    return PerCol.takeError();
  Calls.push_back(withDims(kabi::QlinearMatmul{.a = N.input(0),
                                               .a_scale = N.input(1),
                                               .a_zp = N.input(2),
                                               .b = N.input(3),
                                               .b_scale = N.input(4),
                                               .b_zp = N.input(5),
                                               .y_scale = N.input(6),
                                               .y_zp = N.input(7),
                                               .y = N.output(0),
                                               .a_type = typeArg(N.input(0)),
                                               .b_type = typeArg(N.input(3)),
                                               .y_type = typeArg(N.output(0)),
                                               .b_per_col = *PerCol},
                           *D));
  return llvm::Error::success();
}

int64_t macsQLinearMatMul(const Node &N) {
  return matmulMacs(N, N.input(0), N.input(3));
}

// ---- ConvInteger and QLinearConv ------------------------------------------

} // namespace

llvm::Expected<std::vector<int64_t>> qconvGeometry(const Node &N,
                                                   const Value *X,
                                                   std::vector<int64_t> Kernel,
                                                   int64_t M, int64_t Group) {
  auto Wd = computeWindow(N, *X, *N.output(0), std::move(Kernel), false);
  if (!Wd)
    return Wd.takeError();
  std::vector<int64_t> G(CUVIL_QCONV_GEOM_SIZE);
  G[CUVIL_QCONV_N] = X->shape()[0];
  G[CUVIL_QCONV_C] = X->shape()[1];
  G[CUVIL_QCONV_H] = Wd->H;
  G[CUVIL_QCONV_W] = Wd->W;
  G[CUVIL_QCONV_M] = M;
  G[CUVIL_QCONV_KH] = Wd->KH;
  G[CUVIL_QCONV_KW] = Wd->KW;
  G[CUVIL_QCONV_OH] = Wd->OH;
  G[CUVIL_QCONV_OW] = Wd->OW;
  G[CUVIL_QCONV_SH] = Wd->SH;
  G[CUVIL_QCONV_SW] = Wd->SW;
  G[CUVIL_QCONV_DH] = Wd->DH;
  G[CUVIL_QCONV_DW] = Wd->DW;
  G[CUVIL_QCONV_PAD_TOP] = Wd->PadT;
  G[CUVIL_QCONV_PAD_LEFT] = Wd->PadL;
  G[CUVIL_QCONV_GROUP] = Group;
  return G;
}

namespace {

// ConvInteger's and QLinearConv's attributes: the window (read by
// computeWindow) and the group count.
#define QCONVOLUTION_ATTRS(X)                                                  \
  X(AutoPad, "auto_pad", String, "NOTSET")                                     \
  X(Dilations, "dilations", Ints, {})                                          \
  X(Group, "group", Int, 1)                                                    \
  X(KernelShape, "kernel_shape", Ints, {})                                     \
  X(Pads, "pads", Ints, {})                                                    \
  X(Strides, "strides", Ints, {})
CUVIL_OP_ATTRS(QConvolutionAttrs, QCONVOLUTION_ATTRS)

/// The geometry array of cuvil_k_conv_integer / cuvil_k_qlinear_conv for
/// input X and weight W; rejects what the float Conv would reject.
llvm::Expected<std::vector<int64_t>> convGeometry(const Node &N, const Value *X,
                                                  const Value *W) {
  if (auto E = verifyConvChannels(N, *X, *W))
    return E;
  return qconvGeometry(
      N, X, std::vector<int64_t>(W->shape().begin() + 2, W->shape().end()),
      W->shape()[0], QConvolutionAttrs(N).Group);
}

int64_t convMacs(const Node &N, const Value *W) {
  // Every output element accumulates over C/group * kernel elements.
  return N.output(0)->numElements() * (W->numElements() / W->shape()[0]);
}

// ConvInteger inputs: x, w, x_zero_point, w_zero_point (per output channel
// allowed).

llvm::Expected<bool> convIntegerWPerChannel(const Node &N) {
  const Value *X = N.input(0), *W = N.input(1);
  auto XZ = checkQuantParam(N, N.input(2), X->dtype(), 0, "");
  if (!XZ)
    return XZ.takeError();
  return checkQuantParam(N, N.input(3), W->dtype(), W->shape()[0],
                         "output channel");
}

llvm::Error verifyConvInteger(const Node &N) {
  if (auto E = requireQuant8(N, N.input(0), "input x"))
    return E;
  if (auto E = requireQuant8(N, N.input(1), "weight w"))
    return E;
  if (N.output(0)->dtype() != DType::I32)
    return nodeError(N, "output must be int32");
  auto G = convGeometry(N, N.input(0), N.input(1));
  if (!G)
    return G.takeError();
  return convIntegerWPerChannel(N).takeError();
}

llvm::Error lowerConvInteger(const Node &N, std::vector<KernelCall> &Calls) {
  auto G = convGeometry(N, N.input(0), N.input(1));
  if (!G)
    return G.takeError();
  auto PerChannel = convIntegerWPerChannel(N);
  if (!PerChannel)
    return PerChannel.takeError();
  Calls.push_back(kabi::ConvInteger{.x = N.input(0),
                                    .w = N.input(1),
                                    .x_zp = N.input(2),
                                    .w_zp = N.input(3),
                                    .y = N.output(0),
                                    .geom = std::move(*G),
                                    .x_type = typeArg(N.input(0)),
                                    .w_type = typeArg(N.input(1)),
                                    .w_zp_per_channel = *PerChannel}
                      .call());
  return llvm::Error::success();
}

int64_t macsConvInteger(const Node &N) { return convMacs(N, N.input(1)); }

// QLinearConv inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point,
// y_scale, y_zero_point, B (int32 bias). w's parameters may be per output
// channel.

llvm::Expected<bool> qlinearConvParams(const Node &N) {
  const Value *X = N.input(0), *W = N.input(3), *Y = N.output(0),
              *B = N.input(8);
  auto XP =
      checkScaleAndZeroPoint(N, N.input(1), N.input(2), X->dtype(), 0, "");
  if (!XP)
    return XP.takeError();
  auto YP =
      checkScaleAndZeroPoint(N, N.input(6), N.input(7), Y->dtype(), 0, "");
  if (!YP)
    return YP.takeError();
  if (B && (B->dtype() != DType::I32 || B->rank() != 1 ||
            B->shape()[0] != W->shape()[0]))
    return nodeError(N, "bias must be int32 of shape [{}]", W->shape()[0]);
  return checkScaleAndZeroPoint(N, N.input(4), N.input(5), W->dtype(),
                                W->shape()[0], "output channel");
}

llvm::Error verifyQLinearConv(const Node &N) {
  if (auto E = requireQuant8(N, N.input(0), "input x"))
    return E;
  if (auto E = requireQuant8(N, N.input(3), "weight w"))
    return E;
  if (auto E = requireQuant8(N, N.output(0), "output y"))
    return E;
  auto G = convGeometry(N, N.input(0), N.input(3));
  if (!G)
    return G.takeError();
  return qlinearConvParams(N).takeError();
}

llvm::Error lowerQLinearConv(const Node &N, std::vector<KernelCall> &Calls) {
  auto G = convGeometry(N, N.input(0), N.input(3));
  if (!G)
    return G.takeError();
  auto PerChannel = qlinearConvParams(N);
  if (!PerChannel)
    return PerChannel.takeError();
  Calls.push_back(kabi::QlinearConv{.x = N.input(0),
                                    .x_scale = N.input(1),
                                    .x_zp = N.input(2),
                                    .w = N.input(3),
                                    .w_scale = N.input(4),
                                    .w_zp = N.input(5),
                                    .y_scale = N.input(6),
                                    .y_zp = N.input(7),
                                    .bias = N.input(8),
                                    .y = N.output(0),
                                    .geom = std::move(*G),
                                    .x_type = typeArg(N.input(0)),
                                    .w_type = typeArg(N.input(3)),
                                    .y_type = typeArg(N.output(0)),
                                    .w_per_channel = *PerChannel}
                      .call());
  return llvm::Error::success();
}

int64_t macsQLinearConv(const Node &N) { return convMacs(N, N.input(3)); }

// The QOperator forms of Conv (weights input 3, bias input 8) and MatMul.
std::optional<ProductForm> productQLinearConv(const Node &) {
  return ProductForm{.K = ProductForm::Kind::Conv,
                     .WeightInput = 3,
                     .ChannelAxis = 0,
                     .BiasInput = 8,
                     .QLinear = true};
}

std::optional<ProductForm> productQLinearMatMul(const Node &) {
  return ProductForm{.K = ProductForm::Kind::Gemm,
                     .WeightInput = 3,
                     .ChannelAxis = 1,
                     .QLinear = true};
}

} // namespace

extern const OpDef ConvIntegerOp = {.Name = "ConvInteger",
                                    .Verify = verifyConvInteger,
                                    .Lower = lowerConvInteger,
                                    .Macs = macsConvInteger,
                                    .Traits = NoTraits,
                                    .Attrs = QConvolutionAttrs::Specs};
extern const OpDef MatMulIntegerOp = {.Name = "MatMulInteger",
                                      .Verify = verifyMatMulInteger,
                                      .Lower = lowerMatMulInteger,
                                      .Macs = macsMatMulInteger,
                                      .Traits = NoTraits,
                                      .Shape = matmulShapes<1>};
extern const OpDef QLinearConvOp = {.Name = "QLinearConv",
                                    .Verify = verifyQLinearConv,
                                    .Lower = lowerQLinearConv,
                                    .Macs = macsQLinearConv,
                                    .Traits = NoTraits,
                                    .Product = productQLinearConv,
                                    .Attrs = QConvolutionAttrs::Specs};
extern const OpDef QLinearMatMulOp = {.Name = "QLinearMatMul",
                                      .Verify = verifyQLinearMatMul,
                                      .Lower = lowerQLinearMatMul,
                                      .Macs = macsQLinearMatMul,
                                      .Traits = NoTraits,
                                      .Product = productQLinearMatMul,
                                      .Shape = matmulShapes<3>};

} // namespace cuvil
