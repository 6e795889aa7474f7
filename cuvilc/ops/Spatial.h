//===- Spatial.h - Window geometry shared by Conv and pooling ---*- C++ -*-===//
#ifndef CUVIL_OPS_SPATIAL_H
#define CUVIL_OPS_SPATIAL_H

#include "ir/Graph.h"

#include <llvm/Support/Error.h>

namespace cuvil {

/// The geometry of a sliding window over the spatial dimensions (1 or 2)
/// of an N,C,spatial... tensor, always expressed as 2-D (a 1-D op has H = 1).
struct Window2D {
  int64_t H, W;            ///< Input extent.
  int64_t OH, OW;          ///< Output extent (from shape inference).
  int64_t KH, KW;          ///< Kernel extent.
  int64_t SH, SW;          ///< Strides.
  int64_t DH, DW;          ///< Dilations.
  int64_t PadT, PadL, PadB, PadR;
};

/// Reads kernel_shape (or KernelShape when given), strides, dilations, pads
/// and auto_pad from N for input X and output Y; rejects what is not 1-D or
/// 2-D and output shapes that disagree with the window arithmetic.
llvm::Expected<Window2D> computeWindow(const Node &N, const Value &X,
                                       const Value &Y,
                                       std::vector<int64_t> KernelShape,
                                       bool AllowCeilMode);

/// Checks the ranks of a convolution's input X ([N, C, spatial...]) and
/// weight W ([M, C/group, kernel...]) and that group divides C and M.
llvm::Error verifyConvChannels(const Node &N, const Value &X, const Value &W);

} // namespace cuvil

#endif
