//===- Spatial.cpp --------------------------------------------------------===//
#include "ops/Spatial.h"

#include "ir/Diagnostic.h"

namespace cuvil {

llvm::Expected<Window2D> computeWindow(const Node &N, const Value &X,
                                       const Value &Y,
                                       std::vector<int64_t> Kernel,
                                       bool AllowCeilMode) {
  size_t Rank = X.rank();
  if (Rank != 3 && Rank != 4)
    return nodeError(N, "input '{}' has rank {}; only 1-D and 2-D windows "
                        "(rank 3 or 4 inputs) are supported",
                     X.name(), Rank);
  size_t S = Rank - 2;
  if (Kernel.empty())
    Kernel = N.getInts("kernel_shape");
  if (Kernel.size() != S)
    return nodeError(N, "kernel_shape has {} dimensions, expected {}",
                     Kernel.size(), S);
  auto Strides = N.getInts("strides", std::vector<int64_t>(S, 1));
  auto Dils = N.getInts("dilations", std::vector<int64_t>(S, 1));
  auto Pads = N.getInts("pads", std::vector<int64_t>(2 * S, 0));
  if (Strides.size() != S || Dils.size() != S || Pads.size() != 2 * S)
    return nodeError(N, "strides/dilations/pads do not match {} spatial "
                        "dimensions",
                     S);
  for (size_t I = 0; I < S; ++I)
    if (Strides[I] < 1 || Dils[I] < 1 || Kernel[I] < 1)
      return nodeError(N, "kernel, strides and dilations must be positive");
  std::string AutoPad = N.getString("auto_pad", "NOTSET");
  int64_t CeilMode = N.getInt("ceil_mode", 0);
  if (CeilMode && !AllowCeilMode)
    return nodeError(N, "ceil_mode=1 is not supported");

  std::vector<int64_t> In(X.shape().begin() + 2, X.shape().end());
  std::vector<int64_t> Out(Y.shape().begin() + 2, Y.shape().end());
  if (Out.size() != S)
    return nodeError(N, "output '{}' has rank {}, expected {}", Y.name(),
                     Y.rank(), Rank);
  std::vector<int64_t> Begin(S), End(S);
  for (size_t I = 0; I < S; ++I) {
    int64_t KEff = (Kernel[I] - 1) * Dils[I] + 1;
    int64_t Expect;
    if (AutoPad == "NOTSET" || AutoPad == "VALID") {
      Begin[I] = AutoPad == "VALID" ? 0 : Pads[I];
      End[I] = AutoPad == "VALID" ? 0 : Pads[I + S];
      int64_t Span = In[I] + Begin[I] + End[I] - KEff;
      if (Span < 0)
        return nodeError(N, "window of {} is larger than the padded input {}",
                         KEff, In[I] + Begin[I] + End[I]);
      Expect = (CeilMode ? (Span + Strides[I] - 1) / Strides[I]
                         : Span / Strides[I]) + 1;
    } else if (AutoPad == "SAME_UPPER" || AutoPad == "SAME_LOWER") {
      Expect = (In[I] + Strides[I] - 1) / Strides[I];
      int64_t Total =
          std::max<int64_t>(0, (Expect - 1) * Strides[I] + KEff - In[I]);
      Begin[I] = AutoPad == "SAME_UPPER" ? Total / 2 : Total - Total / 2;
      End[I] = Total - Begin[I];
    } else {
      return nodeError(N, "unsupported auto_pad '{}'", AutoPad);
    }
    if (Out[I] != Expect)
      return nodeError(N, "output '{}' has spatial size {} but the window "
                          "arithmetic gives {}",
                       Y.name(), Out[I], Expect);
  }
  Window2D Wd;
  bool Is1D = S == 1;
  auto At = [&](const std::vector<int64_t> &V, size_t I, int64_t Def) {
    return Is1D ? (I == 0 ? Def : V[0]) : V[I];
  };
  Wd.H = At(In, 0, 1);
  Wd.W = At(In, 1, 1);
  Wd.OH = At(Out, 0, 1);
  Wd.OW = At(Out, 1, 1);
  Wd.KH = At(Kernel, 0, 1);
  Wd.KW = At(Kernel, 1, 1);
  Wd.SH = At(Strides, 0, 1);
  Wd.SW = At(Strides, 1, 1);
  Wd.DH = At(Dils, 0, 1);
  Wd.DW = At(Dils, 1, 1);
  Wd.PadT = At(Begin, 0, 0);
  Wd.PadL = At(Begin, 1, 0);
  Wd.PadB = At(End, 0, 0);
  Wd.PadR = At(End, 1, 0);
  return Wd;
}

llvm::Error verifyConvChannels(const Node &N, const Value &X,
                               const Value &W) {
  if (X.rank() < 3)
    return nodeError(N, "input '{}' has rank {}; expected N, C and spatial "
                        "dimensions",
                     X.name(), X.rank());
  if (W.rank() != X.rank())
    return nodeError(N, "weight rank {} differs from input rank {}", W.rank(),
                     X.rank());
  int64_t Group = N.getInt("group", 1);
  int64_t C = X.shape()[1], M = W.shape()[0];
  if (Group < 1 || C % Group || M % Group || W.shape()[1] * Group != C)
    return nodeError(N, "group={} does not divide {} input / {} output "
                        "channels consistently with weight shape",
                     Group, C, M);
  return llvm::Error::success();
}

} // namespace cuvil
