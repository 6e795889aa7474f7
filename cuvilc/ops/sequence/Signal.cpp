//===- Signal.cpp - Windows, DFT, STFT and MelWeightMatrix ----------------===//
//
// HannWindow, HammingWindow and BlackmanWindow are one generalised cosine
// window (cuvil_k_cosine_window_f32) with the ONNX coefficients. Their size
// input may be a run-time scalar: the output's static length (from shape
// inference or the model's declared output) is the window length.
// DFT and STFT are direct O(n^2) transforms (cuvil_k_dft_f32,
// cuvil_k_stft_f32) of any length; STFT reads frame_step and frame_length
// (int32 or int64) at run time, the frame and bin counts come from the
// static output shape.
// MelWeightMatrix (cuvil_k_mel_weight_matrix_f32) computes its filter bank
// at run time from its scalar inputs.
//
//===----------------------------------------------------------------------===//
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"

#include <algorithm>
#include <fmt/ranges.h>

namespace cuvil {
namespace {

bool isInt(DType T) { return T == DType::I32 || T == DType::I64; }

// The windows' attributes; MelWeightMatrix has output_datatype alone.
#define WINDOW_ATTRS(X)                                                        \
  X(OutputDatatype, "output_datatype", Int, static_cast<int64_t>(DType::F32))  \
  X(Periodic, "periodic", Int, 1)
CUVIL_OP_ATTRS(SignalWindowAttrs, WINDOW_ATTRS)
#define MEL_ATTRS(X)                                                           \
  X(OutputDatatype, "output_datatype", Int, static_cast<int64_t>(DType::F32))
CUVIL_OP_ATTRS(MelAttrs, MEL_ATTRS)
// DFT's axis is an input from opset 20 on.
#define DFT_ATTRS(X)                                                           \
  X(Axis, "axis", Int, 1)                                                      \
  X(Inverse, "inverse", Int, 0)                                                \
  X(Onesided, "onesided", Int, 0)
CUVIL_OP_ATTRS(DftAttrs, DFT_ATTRS)

/// The output of a generator op must be float32 and its output_datatype
/// (OutputDatatype) says so.
llvm::Error requireF32Output(const Node &N, int64_t OutputDatatype) {
  const Value *Y = N.output(0);
  if (OutputDatatype != static_cast<int64_t>(DType::F32) ||
      Y->dtype() != DType::F32)
    return nodeError(N, "output_datatype {} is not supported (only float32)",
                     dtypeName(Y->dtype()));
  return llvm::Error::success();
}

/// A scalar input that is an integer tensor, read at run time unless constant.
llvm::Error requireIntScalar(const Node &N, size_t I, const char *What) {
  const Value *V = N.input(I);
  if (!V || !isInt(V->dtype()) || V->numElements() != 1)
    return nodeError(N, "{} must be an int32 or int64 scalar", What);
  return llvm::Error::success();
}

// -- Windows
// --------------------------------------------------------------------

struct WindowCoefs {
  float A0, A1, A2;
};

template <const WindowCoefs &C> llvm::Error verifyWindow(const Node &N) {
  if (auto E = requireIntScalar(N, 0, "size"))
    return E;
  if (auto E = requireF32Output(N, SignalWindowAttrs(N).OutputDatatype))
    return E;
  const Value *Y = N.output(0);
  if (Y->rank() != 1 || !Y->hasStaticShape())
    return nodeError(N, "the output must be 1-D, its length known at "
                        "compile time");
  if (N.input(0)->isConstant()) {
    auto S = constInts(N, 0, "size");
    if (!S)
      return S.takeError();
    if ((*S)[0] != Y->shape()[0])
      return nodeError(N, "size {} disagrees with the output's length {}",
                       (*S)[0], Y->shape()[0]);
  }
  return llvm::Error::success();
}

template <const WindowCoefs &C>
llvm::Error lowerWindow(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *Y = N.output(0);
  Calls.push_back(
      kabi::CosineWindowF32{.y = Y,
                            .n = Y->numElements(),
                            .periodic = SignalWindowAttrs(N).Periodic != 0,
                            .a0 = C.A0,
                            .a1 = C.A1,
                            .a2 = C.A2}
          .call());
  return llvm::Error::success();
}

// The ONNX coefficients (Hamming: a0 = 25/46).
constexpr WindowCoefs Hann{0.5f, 0.5f, 0.0f};
constexpr WindowCoefs Hamming{25.0f / 46.0f, 21.0f / 46.0f, 0.0f};
constexpr WindowCoefs Blackman{0.42f, 0.5f, 0.08f};

// -- DFT
// ------------------------------------------------------------------------------

struct DftParams {
  int64_t Outer = 1, NIn = 0, Inner = 1, Complex = 0, NFft = 0, NOut = 0;
};

llvm::Expected<DftParams> dftParams(const Node &N) {
  const Value *X = N.input(0), *Y = N.output(0);
  if (!X || X->dtype() != DType::F32 || Y->dtype() != DType::F32)
    return nodeError(N, "only float32 input and output are supported");
  size_t R = X->rank();
  if (R < 2 || (X->shape()[R - 1] != 1 && X->shape()[R - 1] != 2))
    return nodeError(N, "the input's last dimension must be 1 (real) or 2 "
                        "(complex)");
  const DftAttrs A(N);
  int64_t Axis = A.Axis;
  if (N.opset() >= 20) {
    Axis = -2;
    if (N.input(2)) {
      auto In = constInts(N, 2, "axis");
      if (!In)
        return In.takeError();
      Axis = (*In)[0];
    }
  }
  if (Axis < 0)
    Axis += R;
  if (Axis < 0 || Axis >= static_cast<int64_t>(R) - 1)
    return nodeError(N, "axis {} is out of range for a rank-{} input", A.Axis,
                     R);
  DftParams P;
  P.NIn = X->shape()[Axis];
  P.NFft = P.NIn;
  if (N.input(1)) {
    auto L = constInts(N, 1, "dft_length");
    if (!L)
      return L.takeError();
    P.NFft = (*L)[0];
  }
  if (P.NFft < 1)
    return nodeError(N, "dft_length {} is not positive", P.NFft);
  bool Onesided = A.Onesided != 0;
  bool Inverse = A.Inverse != 0;
  if (Onesided && Inverse)
    return nodeError(N, "onesided together with inverse is not supported");
  P.NOut = Onesided ? P.NFft / 2 + 1 : P.NFft;
  for (int64_t D = 0; D < Axis; ++D)
    P.Outer *= X->shape()[D];
  for (size_t D = Axis + 1; D + 1 < R; ++D)
    P.Inner *= X->shape()[D];
  P.Complex = X->shape()[R - 1] == 2;
  std::vector<int64_t> Want = X->shape();
  Want[Axis] = P.NOut;
  Want[R - 1] = 2;
  if (Y->shape() != Want)
    return nodeError(N, "output '{}' has shape [{}], expected [{}]", Y->name(),
                     fmt::join(Y->shape(), ", "), fmt::join(Want, ", "));
  return P;
}

llvm::Error verifyDft(const Node &N) { return dftParams(N).takeError(); }

llvm::Error lowerDft(const Node &N, std::vector<KernelCall> &Calls) {
  auto P = dftParams(N);
  if (!P)
    return P.takeError();
  Calls.push_back(kabi::DftF32{.x = N.input(0),
                               .y = N.output(0),
                               .outer = P->Outer,
                               .n_in = P->NIn,
                               .inner = P->Inner,
                               .complex_in = P->Complex,
                               .n_fft = P->NFft,
                               .n_out = P->NOut,
                               .inverse = DftAttrs(N).Inverse != 0}
                      .call());
  return llvm::Error::success();
}

int64_t dftMacs(const Node &N) {
  auto P = dftParams(N);
  if (!P) {
    llvm::consumeError(P.takeError());
    return 0;
  }
  return P->Outer * P->Inner * P->NOut * std::min(P->NIn, P->NFft);
}

// -- STFT
// -----------------------------------------------------------------------------

llvm::Error verifyStft(const Node &N) {
  const Value *X = N.input(0), *Step = N.input(1), *W = N.input(2),
              *Len = N.input(3), *Y = N.output(0);
  if (!X || X->dtype() != DType::F32 || Y->dtype() != DType::F32)
    return nodeError(N, "only float32 signal and output are supported");
  if (X->rank() != 3 || (X->shape()[2] != 1 && X->shape()[2] != 2))
    return nodeError(N, "the signal must be [batch, length, 1 or 2]");
  if (auto E = requireIntScalar(N, 1, "frame_step"))
    return E;
  if (Len && (Len->dtype() != Step->dtype() || Len->numElements() != 1))
    return nodeError(N, "frame_length must be a scalar of frame_step's type");
  if (W && (W->dtype() != DType::F32 || W->rank() != 1))
    return nodeError(N, "the window must be a 1-D float32 tensor");
  if (!W && !Len)
    return nodeError(N, "either window or frame_length is needed");
  if (Y->rank() != 4 || Y->shape()[0] != X->shape()[0] || Y->shape()[3] != 2)
    return nodeError(N, "output '{}' must be [batch, frames, bins, 2]",
                     Y->name());
  return llvm::Error::success();
}

llvm::Error lowerStft(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *X = N.input(0), *W = N.input(2), *Len = N.input(3),
              *Y = N.output(0);
  Calls.push_back(
      kabi::StftF32{.x = X,
                    .frame_step = N.input(1),
                    .frame_length = Len,
                    .window = W,
                    .y = Y,
                    .batch = X->shape()[0],
                    .sig_len = X->shape()[1],
                    .complex_in = X->shape()[2] == 2,
                    .frames = Y->shape()[1],
                    .bins = Y->shape()[2],
                    .window_len = W ? W->shape()[0] : 0,
                    .int64_scalars = N.input(1)->dtype() == DType::I64}
          .call());
  return llvm::Error::success();
}

// -- MelWeightMatrix
// ------------------------------------------------------------------

llvm::Error verifyMel(const Node &N) {
  const char *Names[] = {"num_mel_bins", "dft_length", "sample_rate"};
  for (size_t I = 0; I < 3; ++I)
    if (auto E = requireIntScalar(N, I, Names[I]))
      return E;
  if (N.input(0)->dtype() != N.input(1)->dtype() ||
      N.input(0)->dtype() != N.input(2)->dtype())
    return nodeError(N, "the integer inputs must share one type");
  for (size_t I = 3; I < 5; ++I)
    if (!N.input(I) || N.input(I)->dtype() != DType::F32 ||
        N.input(I)->numElements() != 1)
      return nodeError(N, "only float32 scalar edge frequencies are "
                          "supported");
  if (auto E = requireF32Output(N, MelAttrs(N).OutputDatatype))
    return E;
  if (N.output(0)->rank() != 2)
    return nodeError(N, "the output must be 2-D");
  return llvm::Error::success();
}

llvm::Error lowerMel(const Node &N, std::vector<KernelCall> &Calls) {
  const Value *Y = N.output(0);
  Calls.push_back(kabi::MelWeightMatrixF32{
      .num_mel_bins = N.input(0),
      .dft_length = N.input(1),
      .sample_rate = N.input(2),
      .lower_edge_hertz = N.input(3),
      .upper_edge_hertz = N.input(4),
      .y = Y,
      .bins = Y->shape()[0],
      .mels = Y->shape()[1],
      .int64_inputs = N.input(0)->dtype() == DType::I64}
                      .call());
  return llvm::Error::success();
}

} // namespace

/// Window op X of coefficients C.
#define CUVIL_WINDOW_OP(X, C)                                                  \
  extern const OpDef X##Op = {.Name = #X,                                      \
                              .Verify = verifyWindow<C>,                       \
                              .Lower = lowerWindow<C>,                         \
                              .Macs = noMacs,                                  \
                              .Traits = NoTraits,                              \
                              .Attrs = SignalWindowAttrs::Specs};
CUVIL_WINDOW_OP(HannWindow, Hann)
CUVIL_WINDOW_OP(HammingWindow, Hamming)
CUVIL_WINDOW_OP(BlackmanWindow, Blackman)
#undef CUVIL_WINDOW_OP

extern const OpDef DFTOp = {.Name = "DFT",
                            .Verify = verifyDft,
                            .Lower = lowerDft,
                            .Macs = dftMacs,
                            .Traits = NoTraits,
                            .Attrs = DftAttrs::Specs};
extern const OpDef STFTOp = {"STFT", verifyStft, lowerStft, noMacs, NoTraits};
extern const OpDef MelWeightMatrixOp = {.Name = "MelWeightMatrix",
                                        .Verify = verifyMel,
                                        .Lower = lowerMel,
                                        .Macs = noMacs,
                                        .Traits = NoTraits,
                                        .Attrs = MelAttrs::Specs};

} // namespace cuvil
