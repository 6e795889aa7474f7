//===- Spatial.h - Window geometry shared by Conv and pooling ---*- C++ -*-===//
#ifndef CUVIL_OPS_SPATIAL_H
#define CUVIL_OPS_SPATIAL_H

#include "ir/Graph.h"
#include "ops/Attrs.h"

#include <llvm/Support/Error.h>

#include <array>
#include <string>

namespace cuvil {

/// The geometry of a sliding window over the 1 to 3 spatial dimensions of an
/// N, C, spatial... tensor. Every field has three entries, outermost (depth)
/// first; fewer spatial dimensions are padded on the left with a neutral
/// dimension (extent, kernel, stride and dilation 1, no padding). So a 2-D
/// kernel reads entries 1 and 2 (a 1-D op has H = 1) and a 3-D kernel takes
/// whole fields as int arrays.
struct Window {
  static constexpr size_t MaxDims = 3;
  using Dims = std::array<int64_t, MaxDims>;

  size_t Rank = 0; ///< Spatial dimensions of the op (1 to 3).
  Dims In{};       ///< Input extent.
  Dims Out{};      ///< Output extent (from shape inference).
  Dims Kernel{};   ///< Kernel extent.
  Dims Stride{};   ///< Strides.
  Dims Dil{};      ///< Dilations.
  Dims PadBegin{}; ///< Padding before the first element.
  Dims PadEnd{};   ///< Padding after the last element.

  /// True when the 2-D kernels (entries 1 and 2) cover the window.
  bool fits2D() const { return Rank <= 2; }
  /// A field as a kernel int-array argument value.
  static std::vector<int64_t> vec(const Dims &D) {
    return std::vector<int64_t>(D.begin(), D.end());
  }
};

/// The window attributes of Conv, ConvTranspose and the pooling ops, as the
/// model gives them. Strides, dilations and pads default to values that
/// depend on the number of spatial dimensions: readWindowAttrs fills those
/// in when the attribute is absent.
#define CUVIL_WINDOW_ATTRS(X)                                                  \
  X(KernelShape, "kernel_shape", Ints, {})                                     \
  X(Strides, "strides", Ints, {})                                              \
  X(Dilations, "dilations", Ints, {})                                          \
  X(Pads, "pads", Ints, {})                                                    \
  X(AutoPad, "auto_pad", String, "NOTSET")
/// The window attributes and ceil_mode, which computeWindowNd reads of
/// every op (an op without it, such as Conv, has the default 0).
#define CUVIL_POOL_WINDOW_ATTRS(X)                                             \
  CUVIL_WINDOW_ATTRS(X) X(CeilMode, "ceil_mode", Int, 0)
CUVIL_OP_ATTRS(PoolWindowAttrs, CUVIL_POOL_WINDOW_ATTRS)
/// The attributes of Conv and of its internal forms (cuvil.FusedConv, ...).
#define CUVIL_CONV_ATTRS(X) CUVIL_WINDOW_ATTRS(X) X(Group, "group", Int, 1)
CUVIL_OP_ATTRS(ConvAttrs, CUVIL_CONV_ATTRS)

/// Sets the window parameters of an N-d kernel builder K (kabi::*3d*):
/// in, out, k, stride, and dil and pad (or pad_begin and pad_end) where the
/// kernel has them.
template <typename KernelT> KernelT withWindowNd(const Window &Wd, KernelT K) {
  K.in = Window::vec(Wd.In);
  K.out = Window::vec(Wd.Out);
  K.k = Window::vec(Wd.Kernel);
  K.stride = Window::vec(Wd.Stride);
  if constexpr (requires { K.dil; })
    K.dil = Window::vec(Wd.Dil);
  if constexpr (requires { K.pad; })
    K.pad = Window::vec(Wd.PadBegin);
  if constexpr (requires { K.pad_end; }) {
    K.pad_begin = Window::vec(Wd.PadBegin);
    K.pad_end = Window::vec(Wd.PadEnd);
  }
  return K;
}

/// Sets the window parameters of a 2-D pooling kernel builder K (entries 1
/// and 2 of the window): h, w, oh, ow, kh, kw, strides and the top/left
/// padding, plus dilations and bottom/right padding where it has them.
template <typename KernelT> KernelT withWindow2D(const Window &Wd, KernelT K) {
  K.h = Wd.In[1];
  K.w = Wd.In[2];
  K.oh = Wd.Out[1];
  K.ow = Wd.Out[2];
  K.kh = Wd.Kernel[1];
  K.kw = Wd.Kernel[2];
  K.stride_h = Wd.Stride[1];
  K.stride_w = Wd.Stride[2];
  if constexpr (requires { K.dil_h; }) {
    K.dil_h = Wd.Dil[1];
    K.dil_w = Wd.Dil[2];
  }
  K.pad_top = Wd.PadBegin[1];
  K.pad_left = Wd.PadBegin[2];
  if constexpr (requires { K.pad_bottom; }) {
    K.pad_bottom = Wd.PadEnd[1];
    K.pad_right = Wd.PadEnd[2];
  }
  return K;
}

/// The number of spatial dimensions of X (rank 3 to 5: 1 to 3), or an error
/// naming the unsupported rank.
llvm::Expected<size_t> spatialDims(const Node &N, const Value &X);

/// Given, the value of N's attribute Name as its typed attributes read it,
/// when N has that attribute; else Count entries Fill (the default of a
/// per-dimension attribute). One given empty stays empty, for the caller
/// to refuse as of the wrong length.
std::vector<int64_t> givenOr(const Node &N, const char *Name,
                             std::vector<int64_t> Given, size_t Count,
                             int64_t Fill);

/// The window attributes of N for S spatial dimensions, checked for length
/// and sign. Kernel comes from kernel_shape unless the caller passes it (Conv
/// takes it from the weight); Pads has 2 * S entries (all begins, then all
/// ends), as in ONNX.
struct WindowAttrs {
  std::vector<int64_t> Kernel, Strides, Dils, Pads;
  std::string AutoPad;
};
llvm::Expected<WindowAttrs> readWindowAttrs(const Node &N, size_t S,
                                            std::vector<int64_t> Kernel);

/// Fills a Window from per-dimension vectors of S = In.size() entries.
Window packWindow(const std::vector<int64_t> &In,
                  const std::vector<int64_t> &Out, const WindowAttrs &A,
                  const std::vector<int64_t> &PadBegin,
                  const std::vector<int64_t> &PadEnd);

/// Reads kernel_shape (or KernelShape when given), strides, dilations, pads
/// and auto_pad from N for input X and output Y; rejects inputs that are not
/// 1-D to 3-D (rank 3 to 5) and output shapes that disagree with the window
/// arithmetic.
llvm::Expected<Window> computeWindowNd(const Node &N, const Value &X,
                                       const Value &Y,
                                       std::vector<int64_t> KernelShape,
                                       bool AllowCeilMode);

/// The geometry of a sliding window over the spatial dimensions (1 or 2)
/// of an N,C,spatial... tensor, always expressed as 2-D (a 1-D op has H = 1).
/// For ops whose kernels are 2-D only; computeWindowNd covers 3-D too.
struct Window2D {
  int64_t H, W;   ///< Input extent.
  int64_t OH, OW; ///< Output extent (from shape inference).
  int64_t KH, KW; ///< Kernel extent.
  int64_t SH, SW; ///< Strides.
  int64_t DH, DW; ///< Dilations.
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
