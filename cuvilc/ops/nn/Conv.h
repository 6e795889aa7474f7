//===- Conv.h - Conv and its internal forms share one lowering --*- C++ -*-===//
//
// ONNX Conv and the internal ops the passes make of it (cuvil.FusedConv,
// cuvil.PackedConv, cuvil.DepthwiseConv) have the same inputs and geometry
// attributes; they differ in the kernel they call and its epilogue.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_OPS_NN_CONV_H
#define CUVIL_OPS_NN_CONV_H

#include "ops/OpRegistry.h"

namespace cuvil {

/// The kernel family a Conv node lowers to.
enum class ConvKernel : uint8_t {
  Reference, ///< cuvil_k_conv2d_f32 / cuvil_k_conv3d_f32 (any group).
  Packed,    ///< cuvil_k_conv2d_packed_f32: group 1, packed weights.
  Depthwise, ///< cuvil_k_dwconv2d_f32: one filter per channel.
};

/// Checks X, W, the bias and the window (the ONNX Conv's rules), and that
/// N has at most MaxInputs inputs.
llvm::Error verifyConv(const Node &N, size_t MaxInputs);
/// Appends the call of Kernel for N with the clamp epilogue Clamp; the
/// packed kernel also takes N's input 3 (a fused residual) if present.
llvm::Error lowerConv(const Node &N, ConvKernel Kernel,
                      std::pair<float, float> Clamp,
                      std::vector<KernelCall> &Calls);
int64_t convMacs(const Node &N);

/// OpDef::Split of the packed and the depthwise convolution: output
/// channel ranges (whole panels of Panel channels for the packed one), or
/// for the packed one output rows (columns of a one-row plane) when that
/// balances the cores better.
void splitPackedConv(const Node &N, const std::vector<KernelCall> &Calls,
                     int64_t Panel, int64_t Parts,
                     std::vector<std::vector<KernelCall>> &Shares);
void splitDepthwiseConv(const Node &N, const std::vector<KernelCall> &Calls,
                        int64_t Parts,
                        std::vector<std::vector<KernelCall>> &Shares);

} // namespace cuvil

#endif
