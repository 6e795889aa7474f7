//===- Recurrent.cpp - ONNX RNN, GRU and LSTM -----------------------------===//
//
// The three recurrent ops share one kernel (cuvil_k_recurrent_f32): a time
// loop per direction and batch row that computes the gates' matrix-vector
// products and applies the cell. Every input except the attributes may be a
// runtime tensor (the backend tests feed W, R and B as graph inputs).
//
// Outputs: Y (position 0) is optional; Y_h (1) and, for LSTM, Y_c (2) hold
// the running state, so the op asks for them as scratch when the model
// leaves them out (OpDef::ScratchOutputs), plus one workspace position
// after the ONNX outputs for the gate pre-activations.
//
// With the target's optimized kernels, the pack-weights pass makes an LSTM
// of the common form (default activations, constant W and R; see packable)
// cuvil.PackedLSTM: W and R in the packed Gemm kernel's panels, each step
// two register-blocked products and the cell in one pass
// (cuvil_k_lstm_packed_f32); its workspace holds the gates of
// CUVIL_LSTM_STEPS steps, whose input products run together.
//
//===----------------------------------------------------------------------===//
#include "cuvil/kernels.h"
#include "ir/Diagnostic.h"
#include "lowering/KernelAbi.h"
#include "ops/Attrs.h"
#include "ops/OpRegistry.h"
#include "ops/ShapeRules.h"
#include "ops/nn/Packing.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fmt/ranges.h>

namespace cuvil {

extern const OpDef LSTMOp, GRUOp, PackedLSTMOp;

namespace {

// The attributes of the three ops (linear_before_reset is GRU's,
// input_forget LSTM's). hidden_size defaults to R's last dimension and
// clip to none: both are read only when present.
#define RECURRENT_ATTRS(X)                                                     \
  X(ActivationAlpha, "activation_alpha", Floats, {})                           \
  X(ActivationBeta, "activation_beta", Floats, {})                             \
  X(Activations, "activations", Strings, {})                                   \
  X(Clip, "clip", Float, 0.0f)                                                 \
  X(Direction, "direction", String, "forward")                                 \
  X(HiddenSize, "hidden_size", Int, 0)                                         \
  X(Layout, "layout", Int, 0)                                                  \
  X(LinearBeforeReset, "linear_before_reset", Int, 0)                          \
  X(InputForget, "input_forget", Int, 0)
CUVIL_OP_ATTRS(RecurrentAttrs, RECURRENT_ATTRS)
#define PACKED_LSTM_ATTRS(X) RECURRENT_ATTRS(X) CUVIL_PANEL_ATTRS(X)
CUVIL_OP_ATTRS(PackedLstmAttrs, PACKED_LSTM_ATTRS)

/// What distinguishes the three ops.
struct Cell {
  int64_t Code;        ///< The kernel's cell argument.
  int64_t Gates;       ///< Gate blocks in W and R (RNN i; GRU zrh; LSTM iofc).
  unsigned Outputs;    ///< ONNX outputs; the workspace comes after them.
  unsigned NumActs;    ///< Activations per direction.
  const char *Acts[3]; ///< Their defaults.
};

const Cell RnnCell = {0, 1, 2, 1, {"Tanh"}};
const Cell GruCell = {1, 3, 2, 2, {"Sigmoid", "Tanh"}};
const Cell LstmCell = {2, 4, 3, 3, {"Sigmoid", "Tanh", "Tanh"}};

const Cell &cellOf(const Node &N) {
  if (N.def() == &LSTMOp || N.def() == &PackedLSTMOp)
    return LstmCell;
  return N.def() == &GRUOp ? GruCell : RnnCell;
}

/// The kernel's activation codes and which parameters each one takes (with
/// the defaults of the ONNX op of the same name).
struct Activation {
  const char *Name;
  int64_t Code;
  bool TakesAlpha, TakesBeta;
  float Alpha, Beta;
};
constexpr Activation Activations[] = {
    {"relu", 0, false, false, 0, 0},
    {"tanh", 1, false, false, 0, 0},
    {"sigmoid", 2, false, false, 0, 0},
    {"affine", 3, true, true, 1.0f, 0.0f},
    {"leakyrelu", 4, true, false, 0.01f, 0},
    {"thresholdedrelu", 5, true, false, 1.0f, 0},
    {"scaledtanh", 6, true, true, 1.0f, 1.0f},
    {"hardsigmoid", 7, true, true, 0.2f, 0.5f},
    {"elu", 8, true, false, 1.0f, 0},
    {"softsign", 9, false, false, 0, 0},
    {"softplus", 10, false, false, 0, 0},
};

int64_t floatBits(float F) {
  uint32_t U;
  std::memcpy(&U, &F, sizeof U);
  return U;
}

struct Dims {
  int64_t T, B, I, H, D;
  bool Reverse;
  int64_t Layout;
};

llvm::Expected<Dims> dims(const Node &N) {
  const Value *X = N.input(0), *W = N.input(1), *R = N.input(2);
  if (!X || !W || !R || X->rank() != 3 || W->rank() != 3 || R->rank() != 3)
    return nodeError(N, "X, W and R must be present and of rank 3");
  const Cell &C = cellOf(N);
  const RecurrentAttrs A(N);
  Dims D;
  D.Layout = A.Layout;
  if (D.Layout != 0 && D.Layout != 1)
    return nodeError(N, "layout={} is not supported", D.Layout);
  D.T = X->shape()[D.Layout ? 1 : 0];
  D.B = X->shape()[D.Layout ? 0 : 1];
  D.I = X->shape()[2];
  D.H = N.hasAttr("hidden_size") ? A.HiddenSize : R->shape()[2];
  const std::string &Dir = A.Direction;
  if (Dir != "forward" && Dir != "reverse" && Dir != "bidirectional")
    return nodeError(N, "direction '{}' is not supported", Dir);
  D.D = Dir == "bidirectional" ? 2 : 1;
  D.Reverse = Dir == "reverse";
  auto Expect = [&](const Value *V, const char *What,
                    std::vector<int64_t> Shape) -> llvm::Error {
    if (V && V->shape() != Shape)
      return nodeError(N, "{} '{}' must have shape [{}]", What, V->name(),
                       fmt::join(Shape, ", "));
    return llvm::Error::success();
  };
  const int64_t GH = C.Gates * D.H;
  std::vector<int64_t> State = D.Layout ? std::vector<int64_t>{D.B, D.D, D.H}
                                        : std::vector<int64_t>{D.D, D.B, D.H};
  if (auto E = Expect(W, "W", {D.D, GH, D.I}))
    return E;
  if (auto E = Expect(R, "R", {D.D, GH, D.H}))
    return E;
  if (auto E = Expect(N.input(3), "B", {D.D, 2 * GH}))
    return E;
  if (auto E = Expect(N.input(4), "sequence_lens", {D.B}))
    return E;
  if (auto E = Expect(N.input(5), "initial_h", State))
    return E;
  if (C.Code == LstmCell.Code) {
    if (auto E = Expect(N.input(6), "initial_c", State))
      return E;
    if (auto E = Expect(N.input(7), "P", {D.D, 3 * D.H}))
      return E;
  }
  return D;
}

/// Per direction and activation: code, alpha bits, beta bits (the kernel's
/// acts array; 3 activations per direction, unused ones 0).
llvm::Expected<std::vector<int64_t>> activations(const Node &N, const Dims &D) {
  const Cell &C = cellOf(N);
  const RecurrentAttrs A(N);
  std::vector<std::string> Names = A.Activations;
  if (Names.empty())
    for (int64_t Dir = 0; Dir < D.D; ++Dir)
      Names.insert(Names.end(), C.Acts, C.Acts + C.NumActs);
  if (Names.size() != static_cast<size_t>(D.D) * C.NumActs)
    return nodeError(N, "{} activations given; {} expected ({} per direction)",
                     Names.size(), D.D * C.NumActs, C.NumActs);
  // activation_alpha/beta are consumed in order by the activations that
  // take the parameter.
  const std::vector<float> &Alphas = A.ActivationAlpha,
                           &Betas = A.ActivationBeta;
  size_t NextAlpha = 0, NextBeta = 0;
  std::vector<int64_t> Acts(D.D * 9, 0);
  for (size_t K = 0; K < Names.size(); ++K) {
    std::string Lower = Names[K];
    std::transform(Lower.begin(), Lower.end(), Lower.begin(),
                   [](unsigned char Ch) { return std::tolower(Ch); });
    const Activation *Act =
        std::find_if(std::begin(Activations), std::end(Activations),
                     [&](const Activation &X) { return Lower == X.Name; });
    if (Act == std::end(Activations))
      return nodeError(N, "activation '{}' is not supported", Names[K]);
    float Alpha = Act->Alpha, Beta = Act->Beta;
    if (Act->TakesAlpha && NextAlpha < Alphas.size())
      Alpha = Alphas[NextAlpha++];
    if (Act->TakesBeta && NextBeta < Betas.size())
      Beta = Betas[NextBeta++];
    size_t Slot = (K / C.NumActs) * 9 + (K % C.NumActs) * 3;
    Acts[Slot] = Act->Code;
    Acts[Slot + 1] = floatBits(Alpha);
    Acts[Slot + 2] = floatBits(Beta);
  }
  if (NextAlpha != Alphas.size() || NextBeta != Betas.size())
    return nodeError(N, "activation_alpha/activation_beta have more values "
                        "than the activations take");
  return Acts;
}

llvm::Error verifyRecurrentOp(const Node &N) {
  const Cell &C = cellOf(N);
  for (size_t I = 0; I < N.numInputs(); ++I)
    if (const Value *V = N.input(I)) {
      DType Want = I == 4 ? DType::I32 : DType::F32;
      if (V->dtype() != Want)
        return nodeError(N,
                         "input '{}' has element type {}; only {} is "
                         "supported",
                         V->name(), dtypeName(V->dtype()), dtypeName(Want));
    }
  for (const Value *V : N.outputs())
    if (V->dtype() != DType::F32)
      return nodeError(N,
                       "output '{}' has element type {}; only f32 is "
                       "supported",
                       V->name(), dtypeName(V->dtype()));
  auto D = dims(N);
  if (!D)
    return D.takeError();
  const RecurrentAttrs A(N);
  if (C.Code == GruCell.Code && A.LinearBeforeReset > 1)
    return nodeError(N, "linear_before_reset={} is not supported",
                     A.LinearBeforeReset);
  if (C.Code == LstmCell.Code && A.InputForget > 1)
    return nodeError(N, "input_forget={} is not supported", A.InputForget);
  if (N.hasAttr("clip") && !(A.Clip > 0))
    return nodeError(N, "clip={} is not supported (it must be positive)",
                     A.Clip);
  // The state outputs and the workspace exist whether or not the model
  // names them (ScratchOutputs).
  for (unsigned P = 1; P <= C.Outputs; ++P)
    if (!N.outputAt(P))
      return nodeError(N, "internal: output position {} was not materialised",
                       P);
  return activations(N, *D).takeError();
}

llvm::Error lowerRecurrentOp(const Node &N, std::vector<KernelCall> &Calls) {
  auto D = dims(N);
  if (!D)
    return D.takeError();
  auto Acts = activations(N, *D);
  if (!Acts)
    return Acts.takeError();
  const Cell &C = cellOf(N);
  const RecurrentAttrs A(N);
  bool Lstm = C.Code == LstmCell.Code;
  Calls.push_back(kabi::RecurrentF32{.x = N.input(0),
                                     .w = N.input(1),
                                     .r = N.input(2),
                                     .b = N.input(3),
                                     .seq_lens = N.input(4),
                                     .init_h = N.input(5),
                                     .init_c = Lstm ? N.input(6) : nullptr,
                                     .p = Lstm ? N.input(7) : nullptr,
                                     .y = N.outputAt(0),
                                     .y_h = N.outputAt(1),
                                     .y_c = Lstm ? N.outputAt(2) : nullptr,
                                     .work = N.outputAt(C.Outputs),
                                     .cell = C.Code,
                                     .seq_len = D->T,
                                     .n_batch = D->B,
                                     .n_in = D->I,
                                     .n_hid = D->H,
                                     .n_dir = D->D,
                                     .reverse = D->Reverse,
                                     .layout = D->Layout,
                                     .acts = std::move(*Acts),
                                     .clip = A.Clip,
                                     .linear_before_reset = A.LinearBeforeReset,
                                     .input_forget = A.InputForget}
                      .call());
  return llvm::Error::success();
}

int64_t macsRecurrent(const Node &N) {
  auto D = dims(N);
  if (!D) {
    llvm::consumeError(D.takeError());
    return 0;
  }
  return D->T * D->D * D->B * cellOf(N).Gates * D->H * (D->I + D->H);
}

/// The LSTM's inputs and attributes are the packed kernel's common form:
/// default activations, no clip, input_forget, sequence lengths or
/// peepholes, and constant float W and R.
bool packable(const Node &N) {
  auto Const = [](const Value *V) {
    return V && V->isConstant() && V->dtype() == DType::F32 &&
           !V->data().empty();
  };
  if (!Const(N.input(1)) || !Const(N.input(2)) || N.input(4) || N.input(7) ||
      N.hasAttr("clip") || N.hasAttr("activation_alpha") ||
      N.hasAttr("activation_beta") || RecurrentAttrs(N).InputForget != 0)
    return false;
  auto D = dims(N);
  if (!D) {
    llvm::consumeError(D.takeError());
    return false;
  }
  const RecurrentAttrs A(N);
  for (size_t K = 0; K < A.Activations.size(); ++K) {
    std::string Lower = A.Activations[K];
    std::transform(Lower.begin(), Lower.end(), Lower.begin(),
                   [](unsigned char Ch) { return std::tolower(Ch); });
    if (Lower != (K % 3 == 0 ? "sigmoid" : "tanh"))
      return false;
  }
  return true;
}

Node *packLstm(Graph &G, Node &N, int64_t Panel) {
  if (!packable(N))
    return nullptr;
  auto D = dims(N);
  if (!D)
    return llvm::consumeError(D.takeError()), nullptr;
  const int64_t Hidden = D->H;
  N.setInput(1, packMatricesAsTransB(G, *N.input(1), Panel));
  N.setInput(2, packMatricesAsTransB(G, *N.input(2), Panel));
  Node *R = rebuildAs(G, N, PackedLSTMOp);
  R->setAttr(PanelAttr, Panel);
  // The packed kernel's workspace is larger (recurrentShapes): the value
  // keeps the shape inferred for the LSTM until it is given the new one.
  if (Value *Work = R->outputAt(LstmCell.Outputs))
    Work->setShape({CUVIL_LSTM_STEPS * LstmCell.Gates * Hidden});
  return R;
}

llvm::Error lowerPacked(const Node &N, std::vector<KernelCall> &Calls) {
  auto D = dims(N);
  if (!D)
    return D.takeError();
  Calls.push_back(kabi::LstmPackedF32{.x = N.input(0),
                                      .wp = N.input(1),
                                      .rp = N.input(2),
                                      .b = N.input(3),
                                      .init_h = N.input(5),
                                      .init_c = N.input(6),
                                      .y = N.outputAt(0),
                                      .y_h = N.outputAt(1),
                                      .y_c = N.outputAt(2),
                                      .work = N.outputAt(LstmCell.Outputs),
                                      .seq_len = D->T,
                                      .n_batch = D->B,
                                      .n_in = D->I,
                                      .n_hid = D->H,
                                      .n_dir = D->D,
                                      .reverse = D->Reverse,
                                      .layout = D->Layout}
                      .call());
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<std::vector<int64_t>>>
recurrentShapes(const Node &N) {
  auto D = dims(N);
  if (!D)
    return D.takeError();
  const Cell &C = cellOf(N);
  std::vector<std::vector<int64_t>> S;
  for (size_t I = 0; I < N.outputs().size(); ++I) {
    unsigned P = N.outputPos(I);
    if (P == 0)
      S.push_back(D->Layout ? std::vector<int64_t>{D->B, D->T, D->D, D->H}
                            : std::vector<int64_t>{D->T, D->D, D->B, D->H});
    else if (P < C.Outputs)
      S.push_back(D->Layout ? std::vector<int64_t>{D->B, D->D, D->H}
                            : std::vector<int64_t>{D->D, D->B, D->H});
    else if (N.def() == &PackedLSTMOp) // the gates of CUVIL_LSTM_STEPS steps
      S.push_back({CUVIL_LSTM_STEPS * C.Gates * D->H});
    else // the workspace: the gates and one more vector (GRU's r * h)
      S.push_back({(C.Gates + 1) * D->H});
  }
  return S;
}

extern const OpDef GRUOp = {.Name = "GRU",
                            .Verify = verifyRecurrentOp,
                            .Lower = lowerRecurrentOp,
                            .Macs = macsRecurrent,
                            .Traits = NoTraits,
                            .ScratchOutputs = 0b110,
                            .Shape = recurrentShapes,
                            .Attrs = RecurrentAttrs::Specs};
extern const OpDef LSTMOp = {.Name = "LSTM",
                             .Verify = verifyRecurrentOp,
                             .Lower = lowerRecurrentOp,
                             .Macs = macsRecurrent,
                             .Traits = NoTraits,
                             .ScratchOutputs = 0b1110,
                             .PackWeights = packLstm,
                             .Shape = recurrentShapes,
                             .Attrs = RecurrentAttrs::Specs};
// The pack-weights pass makes it of an LSTM in the packed kernel's form
// (see packable): W and R in Gemm panels, attribute panel.
extern const OpDef PackedLSTMOp = {.Name = "cuvil.PackedLSTM",
                                   .Verify = verifyRecurrentOp,
                                   .Lower = lowerPacked,
                                   .Macs = macsRecurrent,
                                   .Traits = NoTraits,
                                   .ScratchOutputs = 0b1110,
                                   .Shape = recurrentShapes,
                                   .Attrs = PackedLstmAttrs::Specs};
extern const OpDef RNNOp = {.Name = "RNN",
                            .Verify = verifyRecurrentOp,
                            .Lower = lowerRecurrentOp,
                            .Macs = macsRecurrent,
                            .Traits = NoTraits,
                            .ScratchOutputs = 0b110,
                            .Shape = recurrentShapes,
                            .Attrs = RecurrentAttrs::Specs};

} // namespace cuvil
