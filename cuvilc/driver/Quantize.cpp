//===- Quantize.cpp - cuvilc quantize: post-training quantization --------===//
//
// Calibration runs the float model on the host through cuvil's own code
// (runner/HostRunner.h: the model compiled for target "host" and loaded
// into this process), with every tensor the plan quantizes exposed as an
// extra output; range estimators (quantize/RangeEstimator.h) turn what
// they saw into ranges; the QDQ writer makes the quantized model. The
// accuracy report compiles that model the same way, so it measures the
// integer kernels the boards run (bit-exact across targets), against the
// float model's outputs.
//
// --max-accuracy-drop: each quantized node's sensitivity is the output
// SQNR of the model with only that node quantized; nodes are then kept
// float, most sensitive first, until the top-1 agreement with the float
// model loses at most the given fraction. Both are measured on the
// calibration set; the report, on the --validate inputs when given.
//
//===----------------------------------------------------------------------===//
#include "driver/Driver.h"
#include "driver/QuantizeReport.h"

#include "emit/OutputFiles.h"
#include "ir/Diagnostic.h"
#include "quantize/Accuracy.h"
#include "quantize/CalibrationData.h"
#include "quantize/QuantModel.h"
#include "runner/HostRunner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace cuvil {
namespace {

using quant::Sample;

llvm::Expected<std::string> readFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return makeError("cannot open file");
  std::stringstream SS;
  SS << In.rdbuf();
  return SS.str();
}

std::vector<quant::ModelInput> modelInputs(const HostModel &M) {
  std::vector<quant::ModelInput> In;
  for (const RunnerTensor &T : M.inputs())
    In.push_back({T.Name, T.Ty, T.Shape});
  return In;
}

std::vector<const void *> inputPointers(const Sample &S) {
  std::vector<const void *> P;
  for (const auto &B : S)
    P.push_back(B.data());
  return P;
}

/// The outputs of one run, one buffer per output.
using Outputs = std::vector<std::vector<uint8_t>>;

llvm::Expected<Outputs> runOnce(HostModel &M, const Sample &S) {
  Outputs Out;
  std::vector<void *> Ptrs;
  for (const RunnerTensor &T : M.outputs())
    Out.emplace_back(T.Bytes);
  for (auto &B : Out)
    Ptrs.push_back(B.data());
  if (auto E = M.run(inputPointers(S), Ptrs))
    return E;
  return Out;
}

const float *asFloats(const std::vector<uint8_t> &B) {
  return reinterpret_cast<const float *>(B.data());
}

/// Calibration: the ranges of P's tensors, and the float model's outputs
/// (the first NumOutputs of the calibration model) for every sample.
struct Calibration {
  std::map<std::string, quant::Range> Ranges;
  std::vector<Outputs> FloatOutputs;
};

llvm::Expected<Calibration> calibrate(const quant::QuantModel &QM,
                                      const quant::QuantPlan &P,
                                      const std::vector<Sample> &Samples,
                                      const QuantizeOptions &O,
                                      size_t NumOutputs, std::ostream &Log) {
  auto Bytes = QM.calibrationModel(P);
  if (!Bytes)
    return Bytes.takeError();
  auto M = HostModel::compile(*Bytes, O.Dims, Log);
  if (!M)
    return M.takeError();
  auto Method = quant::parseCalibrationMethod(O.Method, O.Percentile);
  if (!Method)
    return Method.takeError();
  // Where each calibrated tensor is: a model input or an output.
  struct Source {
    bool Input;
    size_t Index;
  };
  std::map<std::string, Source> Where;
  for (size_t I = 0; I < (*M)->inputs().size(); ++I)
    Where[(*M)->inputs()[I].Name] = {true, I};
  for (size_t I = 0; I < (*M)->outputs().size(); ++I)
    Where.emplace((*M)->outputs()[I].Name, Source{false, I});
  std::vector<std::pair<quant::RangeEstimator, Source>> Est;
  for (const std::string &T : P.Tensors) {
    auto It = Where.find(T);
    if (It == Where.end())
      return makeError("internal error: calibration does not see tensor '{}'",
                       T);
    const RunnerTensor &RT = It->second.Input
                                 ? (*M)->inputs()[It->second.Index]
                                 : (*M)->outputs()[It->second.Index];
    if (RT.Ty != DType::F32)
      return makeError("internal error: tensor '{}' is not float32", T);
    quant::CalibrationMethod M = *Method;
    if (P.OutputSide.count(T))
      M.K = quant::CalibrationMethod::Kind::MinMax;
    Est.emplace_back(quant::RangeEstimator(M), It->second);
  }
  Calibration C;
  unsigned Passes = 1;
  for (const auto &E : Est)
    Passes = std::max(Passes, E.first.passes());
  for (unsigned Pass = 0; Pass < Passes; ++Pass)
    for (const Sample &S : Samples) {
      auto Out = runOnce(**M, S);
      if (!Out)
        return Out.takeError();
      for (auto &[E, Src] : Est) {
        if (Pass >= E.passes())
          continue; // min/max only: done after the first pass
        const auto &B = Src.Input ? S[Src.Index] : (*Out)[Src.Index];
        E.observe(Pass, asFloats(B), B.size() / sizeof(float));
      }
      if (Pass == 0) {
        Out->resize(NumOutputs);
        C.FloatOutputs.push_back(std::move(*Out));
      }
    }
  for (size_t I = 0; I < Est.size(); ++I)
    C.Ranges[P.Tensors[I]] = Est[I].first.range();
  return C;
}

/// The quantized model's accuracy against the float outputs.
llvm::Expected<std::vector<quant::OutputAccuracy>>
evaluate(const std::string &Bytes, const std::vector<Sample> &Samples,
         const std::vector<Outputs> &Float, const QuantizeOptions &O,
         std::ostream &Log) {
  auto M = HostModel::compile(Bytes, O.Dims, Log);
  if (!M)
    return M.takeError();
  std::vector<quant::OutputAccuracy> Acc;
  for (const RunnerTensor &T : (*M)->outputs())
    Acc.emplace_back(T.Shape.empty() ? 1 : T.Shape.back());
  for (size_t S = 0; S < Samples.size(); ++S) {
    auto Out = runOnce(**M, Samples[S]);
    if (!Out)
      return Out.takeError();
    for (size_t K = 0; K < Acc.size(); ++K) {
      if ((*M)->outputs()[K].Ty != DType::F32)
        continue;
      Acc[K].add(asFloats(Float[S][K]), asFloats((*Out)[K]),
                 (*Out)[K].size() / sizeof(float));
    }
  }
  return Acc;
}

/// The lowest SQNR over the outputs, and the largest top-1 loss.
double worstSqnr(const std::vector<quant::OutputAccuracy> &A) {
  double W = INFINITY;
  for (const auto &X : A)
    W = std::min(W, X.sqnrDb());
  return W;
}
double top1Drop(const std::vector<quant::OutputAccuracy> &A) {
  double D = 0;
  for (const auto &X : A)
    if (X.hasClasses())
      D = std::max(D, 1 - X.top1Agreement());
  return D;
}

std::string describe(const QuantizeOptions &O, size_t Samples) {
  std::string Method = O.Method == "percentile"
                           ? fmt::format("percentile {}", O.Percentile)
                           : O.Method;
  return fmt::format("cuvilc quantize: int8 (activations uint8 asymmetric, "
                     "weights int8 symmetric per channel), calibration {} on "
                     "{} samples",
                     Method, Samples);
}

} // namespace

llvm::Expected<QuantizeResult> quantizeModel(const QuantizeOptions &O,
                                             std::ostream &Log) {
  if (O.Calibrate.empty())
    return usageError("--calibrate DIR is required: the calibration inputs");
  if (auto M = quant::parseCalibrationMethod(O.Method, O.Percentile); !M)
    return usageError(llvm::toString(M.takeError()));
  if (O.MaxAccuracyDrop && (*O.MaxAccuracyDrop < 0 || *O.MaxAccuracyDrop > 1))
    return usageError("--max-accuracy-drop: expected a fraction in [0, 1] "
                      "(0.01 = one percentage point of top-1 agreement)");
  auto Bytes = readFile(O.Model);
  if (!Bytes)
    return Bytes.takeError();
  // The float model first: cuvil's importer checks the model (before
  // ONNX's own shape inference, which the quantizer's planning runs and
  // which crashes on some malformed models), its inputs say what the
  // calibration files must hold, its outputs are the reference.
  auto Float = HostModel::compile(*Bytes, O.Dims, Log);
  if (!Float)
    return Float.takeError();
  size_t NumOutputs = (*Float)->outputs().size();
  std::vector<std::string> OutputNames;
  for (const RunnerTensor &T : (*Float)->outputs())
    OutputNames.push_back(T.Name);
  auto Samples = quant::readCalibrationSet(O.Calibrate, modelInputs(**Float));
  if (!Samples)
    return Samples.takeError();
  if (Samples->empty())
    return makeError("--calibrate {}: no calibration sample", O.Calibrate);
  std::vector<Sample> Check;
  if (!O.Validate.empty()) {
    auto V = quant::readCalibrationSet(O.Validate, modelInputs(**Float));
    if (!V)
      return V.takeError();
    Check = std::move(*V);
  }
  auto QM = quant::QuantModel::open(*Bytes);
  if (!QM)
    return QM.takeError();
  quant::PlanOptions PO;
  PO.KeepFloat.insert(O.KeepFloat.begin(), O.KeepFloat.end());
  auto Plan = (*QM)->plan(PO);
  if (!Plan)
    return Plan.takeError();

  // Every tensor any plan may quantize is measured, whatever --keep-float
  // and --max-accuracy-drop then keep float.
  auto Full = (*QM)->plan(quant::PlanOptions());
  if (!Full)
    return Full.takeError();
  auto Cal = calibrate(**QM, *Full, *Samples, O, NumOutputs, Log);
  if (!Cal)
    return Cal.takeError();
  // The report's reference: the float outputs of the validation set, or
  // of the calibration set.
  std::vector<Outputs> CheckFloat;
  for (const Sample &S : Check) {
    auto Out = runOnce(**Float, S);
    if (!Out)
      return Out.takeError();
    CheckFloat.push_back(std::move(*Out));
  }
  Float->reset();
  const std::vector<Sample> &EvalSet = Check.empty() ? *Samples : Check;
  const std::vector<Outputs> &EvalFloat =
      Check.empty() ? Cal->FloatOutputs : CheckFloat;
  std::string Desc = describe(O, Samples->size());

  QuantizeResult R;
  R.Report.Method = O.Method;
  R.Report.CalibrationSamples = Samples->size();
  R.Report.EvaluationSamples = EvalSet.size();
  R.Report.EvaluatedOn = Check.empty() ? "calibration set" : "validation set";

  // One candidate: the QDQ model of the plan for Keep, and its accuracy.
  // Candidates are compiled quietly; the chosen one's notes are printed.
  struct Candidate {
    quant::QuantPlan Plan;
    std::string Bytes;
    std::vector<quant::OutputAccuracy> Acc;
  };
  auto Try = [&](const std::set<std::string> &Keep, bool Final,
                 std::ostream &Notes) -> llvm::Expected<Candidate> {
    quant::PlanOptions KO;
    KO.KeepFloat = Keep;
    auto P = (*QM)->plan(KO);
    if (!P)
      return P.takeError();
    auto B = (*QM)->quantizedModel(*P, Cal->Ranges, Desc);
    if (!B)
      return B.takeError();
    // The search measures on the calibration set (what it may tune
    // on); the report on the held-back inputs when there are some.
    auto A = Final ? evaluate(*B, EvalSet, EvalFloat, O, Notes)
                   : evaluate(*B, *Samples, Cal->FloatOutputs, O, Notes);
    if (!A)
      return A.takeError();
    return Candidate{std::move(*P), std::move(*B), std::move(*A)};
  };
  std::ostringstream Quiet;

  // Mixed precision: each node's sensitivity alone, then the most
  // sensitive nodes float until the drop is small enough.
  std::set<std::string> Kept = PO.KeepFloat;
  std::map<std::string, double> NodeSqnr;
  if (O.MaxAccuracyDrop) {
    std::vector<std::pair<double, std::string>> Order;
    for (const quant::QuantNode &N : Plan->Nodes) {
      std::set<std::string> Others = Kept;
      for (const quant::QuantNode &Other : Plan->Nodes)
        if (Other.Name != N.Name)
          Others.insert(Other.Name);
      auto Alone = Try(Others, false, Quiet);
      if (!Alone)
        return Alone.takeError();
      NodeSqnr[N.Name] = worstSqnr(Alone->Acc);
      Order.push_back({NodeSqnr[N.Name], N.Name});
    }
    std::sort(Order.begin(), Order.end());
    // The fewest float nodes that meet the limit, by bisection (log2 N
    // candidates instead of N), on the assumption that keeping more nodes
    // float does not lose agreement. The K chosen was itself measured to
    // meet the limit, unless it is every node (the float model).
    auto KeepFirst = [&](size_t K) {
      std::set<std::string> Keep = Kept;
      for (size_t J = 0; J < K; ++J)
        Keep.insert(Order[J].second);
      return Keep;
    };
    size_t Lo = 0, Hi = Order.size(); // Hi: known to meet it (all float)
    while (Lo < Hi) {
      size_t Mid = (Lo + Hi) / 2;
      auto C = Try(KeepFirst(Mid), false, Quiet);
      if (!C)
        return C.takeError();
      if (top1Drop(C->Acc) <= *O.MaxAccuracyDrop)
        Hi = Mid;
      else
        Lo = Mid + 1;
    }
    PO.KeepFloat = KeepFirst(Hi);
    R.Report.KeptForAccuracy = Hi;
  }

  auto Out = Try(PO.KeepFloat, true, Log);
  if (!Out)
    return Out.takeError();
  *Plan = std::move(Out->Plan);
  const std::vector<quant::OutputAccuracy> &Acc = Out->Acc;
  R.Model = std::move(Out->Bytes);
  for (size_t K = 0; K < Acc.size() && K < OutputNames.size(); ++K)
    R.Report.Outputs.push_back({OutputNames[K], Acc[K]});
  // Every node that could be quantized, with its precision and why.
  std::set<std::string> Int8;
  for (const quant::QuantNode &N : Plan->Nodes)
    Int8.insert(N.Name);
  for (const quant::QuantNode &N : Full->Nodes) {
    auto S = NodeSqnr.find(N.Name);
    double Sqnr = S == NodeSqnr.end() ? NAN : S->second;
    if (Int8.count(N.Name))
      R.Report.Nodes.push_back({N.Name, N.Op, "int8", "", Sqnr});
    else
      R.Report.Nodes.push_back(
          {N.Name, N.Op, "float",
           Kept.count(N.Name) ? "--keep-float" : "--max-accuracy-drop", Sqnr});
  }
  R.Report.Notes = Plan->Notes;
  R.Report.MaxAccuracyDrop = O.MaxAccuracyDrop;
  return R;
}

llvm::Error runQuantize(const QuantizeOptions &O, std::ostream &Log) {
  if (O.Out.empty())
    return usageError("--out FILE.onnx is required");
  // The destinations are checked before the calibration runs.
  std::vector<OutputFile> Files = {{O.Out, "", "the quantized model (--out)"}};
  if (!O.Report.empty())
    Files.push_back({O.Report, "", "the report (--report)"});
  std::vector<InputFile> In = {{O.Model, "the input model"},
                               {O.Calibrate, "the calibration data"}};
  if (!O.Validate.empty())
    In.push_back({O.Validate, "the validation data (--validate)"});
  if (auto E = checkOutputFiles(Files, In))
    return E;
  auto R = quantizeModel(O, Log);
  if (!R)
    return R.takeError();
  Log << quantizeReportText(R->Report);
  Files[0].Contents = std::move(R->Model);
  if (!O.Report.empty())
    Files[1].Contents = quantizeReportJson(R->Report);
  return writeOutputFiles(Files, In);
}

} // namespace cuvil
