//===- Spatial.cpp --------------------------------------------------------===//
#include "ops/nn/Spatial.h"

#include "ir/Diagnostic.h"

namespace cuvil {

llvm::Expected<size_t> spatialDims(const Node &N, const Value &X) {
  size_t Rank = X.rank();
  if (Rank < 3 || Rank > 2 + Window::MaxDims)
    return nodeError(N,
                     "input '{}' has rank {}; only 1-D, 2-D and 3-D "
                     "windows (rank 3 to 5 inputs) are supported",
                     X.name(), Rank);
  return Rank - 2;
}

std::vector<int64_t> givenOr(const Node &N, const char *Name,
                             std::vector<int64_t> Given, size_t Count,
                             int64_t Fill) {
  return N.hasAttr(Name) ? std::move(Given) : std::vector<int64_t>(Count, Fill);
}

llvm::Expected<WindowAttrs> readWindowAttrs(const Node &N, size_t S,
                                            std::vector<int64_t> Kernel) {
  PoolWindowAttrs Given(N);
  WindowAttrs A;
  A.Kernel = Kernel.empty() ? std::move(Given.KernelShape) : std::move(Kernel);
  if (A.Kernel.size() != S)
    return nodeError(N, "kernel_shape has {} dimensions, expected {}",
                     A.Kernel.size(), S);
  A.Strides = givenOr(N, "strides", std::move(Given.Strides), S, 1);
  A.Dils = givenOr(N, "dilations", std::move(Given.Dilations), S, 1);
  A.Pads = givenOr(N, "pads", std::move(Given.Pads), 2 * S, 0);
  if (A.Strides.size() != S || A.Dils.size() != S || A.Pads.size() != 2 * S)
    return nodeError(N,
                     "strides/dilations/pads do not match {} spatial "
                     "dimensions",
                     S);
  for (size_t I = 0; I < S; ++I)
    if (A.Strides[I] < 1 || A.Dils[I] < 1 || A.Kernel[I] < 1)
      return nodeError(N, "kernel, strides and dilations must be positive");
  A.AutoPad = std::move(Given.AutoPad);
  if (A.AutoPad != "NOTSET" && A.AutoPad != "VALID" &&
      A.AutoPad != "SAME_UPPER" && A.AutoPad != "SAME_LOWER")
    return nodeError(N, "unsupported auto_pad '{}'", A.AutoPad);
  return A;
}

Window packWindow(const std::vector<int64_t> &In,
                  const std::vector<int64_t> &Out, const WindowAttrs &A,
                  const std::vector<int64_t> &PadBegin,
                  const std::vector<int64_t> &PadEnd) {
  Window Wd;
  Wd.Rank = In.size();
  size_t Skip = Window::MaxDims - Wd.Rank;
  for (size_t I = 0; I < Window::MaxDims; ++I) {
    bool Real = I >= Skip;
    size_t J = I - Skip;
    Wd.In[I] = Real ? In[J] : 1;
    Wd.Out[I] = Real ? Out[J] : 1;
    Wd.Kernel[I] = Real ? A.Kernel[J] : 1;
    Wd.Stride[I] = Real ? A.Strides[J] : 1;
    Wd.Dil[I] = Real ? A.Dils[J] : 1;
    Wd.PadBegin[I] = Real ? PadBegin[J] : 0;
    Wd.PadEnd[I] = Real ? PadEnd[J] : 0;
  }
  return Wd;
}

llvm::Expected<Window> computeWindowNd(const Node &N, const Value &X,
                                       const Value &Y,
                                       std::vector<int64_t> Kernel,
                                       bool AllowCeilMode) {
  auto Dims = spatialDims(N, X);
  if (!Dims)
    return Dims.takeError();
  size_t S = *Dims, Rank = S + 2;
  auto A = readWindowAttrs(N, S, std::move(Kernel));
  if (!A)
    return A.takeError();
  int64_t CeilMode = PoolWindowAttrs(N).CeilMode;
  if (CeilMode && !AllowCeilMode)
    return nodeError(N, "ceil_mode=1 is not supported");

  std::vector<int64_t> In(X.shape().begin() + 2, X.shape().end());
  if (Y.rank() != Rank)
    return nodeError(N, "output '{}' has rank {}, expected {}", Y.name(),
                     Y.rank(), Rank);
  std::vector<int64_t> Out(Y.shape().begin() + 2, Y.shape().end());
  std::vector<int64_t> Begin(S), End(S);
  for (size_t I = 0; I < S; ++I) {
    int64_t Stride = A->Strides[I];
    int64_t KEff = (A->Kernel[I] - 1) * A->Dils[I] + 1;
    int64_t Expect;
    if (A->AutoPad == "NOTSET" || A->AutoPad == "VALID") {
      bool Valid = A->AutoPad == "VALID";
      Begin[I] = Valid ? 0 : A->Pads[I];
      End[I] = Valid ? 0 : A->Pads[I + S];
      int64_t Span = In[I] + Begin[I] + End[I] - KEff;
      if (Span < 0)
        return nodeError(N, "window of {} is larger than the padded input {}",
                         KEff, In[I] + Begin[I] + End[I]);
      Expect = (CeilMode ? (Span + Stride - 1) / Stride : Span / Stride) + 1;
    } else {
      Expect = (In[I] + Stride - 1) / Stride;
      int64_t Total =
          std::max<int64_t>(0, (Expect - 1) * Stride + KEff - In[I]);
      Begin[I] = A->AutoPad == "SAME_UPPER" ? Total / 2 : Total - Total / 2;
      End[I] = Total - Begin[I];
    }
    if (Out[I] != Expect)
      return nodeError(N,
                       "output '{}' has spatial size {} but the window "
                       "arithmetic gives {}",
                       Y.name(), Out[I], Expect);
  }
  return packWindow(In, Out, *A, Begin, End);
}

llvm::Expected<Window2D> computeWindow(const Node &N, const Value &X,
                                       const Value &Y,
                                       std::vector<int64_t> Kernel,
                                       bool AllowCeilMode) {
  size_t Rank = X.rank();
  if (Rank != 3 && Rank != 4)
    return nodeError(N,
                     "input '{}' has rank {}; only 1-D and 2-D windows "
                     "(rank 3 or 4 inputs) are supported",
                     X.name(), Rank);
  auto Nd = computeWindowNd(N, X, Y, std::move(Kernel), AllowCeilMode);
  if (!Nd)
    return Nd.takeError();
  // Entries 1 and 2 of the N-d window (entry 0 is the neutral depth).
  Window2D Wd;
  Wd.H = Nd->In[1];
  Wd.W = Nd->In[2];
  Wd.OH = Nd->Out[1];
  Wd.OW = Nd->Out[2];
  Wd.KH = Nd->Kernel[1];
  Wd.KW = Nd->Kernel[2];
  Wd.SH = Nd->Stride[1];
  Wd.SW = Nd->Stride[2];
  Wd.DH = Nd->Dil[1];
  Wd.DW = Nd->Dil[2];
  Wd.PadT = Nd->PadBegin[1];
  Wd.PadL = Nd->PadBegin[2];
  Wd.PadB = Nd->PadEnd[1];
  Wd.PadR = Nd->PadEnd[2];
  return Wd;
}

llvm::Error verifyConvChannels(const Node &N, const Value &X, const Value &W) {
  if (X.rank() < 3)
    return nodeError(N,
                     "input '{}' has rank {}; expected N, C and spatial "
                     "dimensions",
                     X.name(), X.rank());
  if (W.rank() != X.rank())
    return nodeError(N, "weight rank {} differs from input rank {}", W.rank(),
                     X.rank());
  int64_t Group = ConvAttrs(N).Group;
  int64_t C = X.shape()[1], M = W.shape()[0];
  if (Group < 1 || C % Group || M % Group || W.shape()[1] * Group != C)
    return nodeError(N,
                     "group={} does not divide {} input / {} output "
                     "channels consistently with weight shape",
                     Group, C, M);
  return llvm::Error::success();
}

} // namespace cuvil
