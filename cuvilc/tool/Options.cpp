//===- Options.cpp - cuvilc's shared command-line options ----------------===//
#include "tool/Options.h"

#include <fmt/format.h>
#include <stdexcept>

namespace cuvil::tool {

namespace {
/// The most values a range of a dimension may span: the build runs the
/// front end once per value (driver/DimRange.h).
constexpr int64_t MaxRangeValues = 4096;

} // namespace

/// Parses NAME=VALUE dimension bindings, and where Range is given one
/// NAME=LO..HI range.
std::string parseDims(const std::vector<std::string> &In,
                      std::map<std::string, int64_t> &Out,
                      std::optional<cuvil::DimRangeOption> *Range) {
  auto Number = [](const std::string &T) {
    size_t Used = 0;
    long long V = std::stoll(T, &Used);
    if (Used != T.size() || V <= 0)
      throw std::invalid_argument(T);
    return static_cast<int64_t>(V);
  };
  for (const std::string &S : In) {
    auto Eq = S.find('=');
    std::string Name = Eq == std::string::npos ? "" : S.substr(0, Eq);
    std::string Value = Eq == std::string::npos ? "" : S.substr(Eq + 1);
    auto Dots = Value.find("..");
    try {
      if (Name.empty())
        throw std::invalid_argument(S);
      if (Dots == std::string::npos) {
        Out[Name] = Number(Value);
        continue;
      }
      cuvil::DimRangeOption R{Name, Number(Value.substr(0, Dots)),
                              Number(Value.substr(Dots + 2))};
      if (!Range)
        return fmt::format("--dim '{}': a range is for `cuvilc build`; give "
                           "one value here, NAME=N",
                           S);
      if (R.Lo > R.Hi)
        return fmt::format("--dim '{}': the range's first value is above its "
                           "last",
                           S);
      if (R.Hi - R.Lo + 1 > MaxRangeValues)
        return fmt::format("--dim '{}': a range spans at most {} values (the "
                           "build compiles the model's front end at each)",
                           S, MaxRangeValues);
      if (*Range && (*Range)->Name != Name)
        return fmt::format("--dim '{}': one dimension may be a range, and "
                           "'{}' is already",
                           S, (*Range)->Name);
      *Range = R;
    } catch (const std::exception &) {
      return fmt::format("--dim '{}': expected NAME=N{} with N > 0", S,
                         Range ? " or NAME=LO..HI" : "");
    }
  }
  if (Range && *Range && Out.count((*Range)->Name))
    return fmt::format("--dim: '{}' is given as a range and as a value",
                       (*Range)->Name);
  return "";
}

void addLoopBoundOption(CLI::App *Sub, std::vector<std::string> &Strings) {
  Sub->add_option("--loop-bound", Strings,
                  "NODE=K: Loop NODE runs at most K iterations, for a loop "
                  "with no bound of its own (a run-time trip count, a while "
                  "loop): unrolled K times, and a run in which it would run "
                  "more stops with CUVIL_ERR_LOOP_BOUND (repeatable; see "
                  "docs/deployment.md)");
}

std::string parseLoopBounds(const std::vector<std::string> &In,
                            std::map<std::string, int64_t> &Out) {
  for (const std::string &S : In) {
    auto Eq = S.rfind('=');
    std::string Name = Eq == std::string::npos ? "" : S.substr(0, Eq);
    std::string Value = Eq == std::string::npos ? "" : S.substr(Eq + 1);
    size_t Used = 0;
    long long K = 0;
    try {
      K = std::stoll(Value, &Used);
    } catch (const std::exception &) {
      Used = 0;
    }
    if (Name.empty() || Used == 0 || Used != Value.size() || K < 1)
      return fmt::format("--loop-bound '{}': expected NODE=K, the Loop node's "
                         "name and K >= 1 iterations",
                         S);
    if (Out.count(Name) && Out[Name] != K)
      return fmt::format("--loop-bound: loop '{}' is given two bounds", Name);
    Out[Name] = K;
  }
  return "";
}

/// The calibration options `quantize` and `build --quantize` share.
void addCalibrationOptions(CLI::App *Sub, cuvil::QuantizeOptions &Q,
                           std::string &Drop) {
  Sub->add_option("--calibrate", Q.Calibrate,
                  "Directory of calibration inputs: .npy or ONNX TensorProto "
                  ".pb files, one sample (or a batch) per file; or one "
                  "subdirectory per sample with a file per input "
                  "(see docs/quantization.md)");
  Sub->add_option("--calibration-method", Q.Method,
                  "How ranges are chosen from the calibration data: minmax "
                  "(default), percentile, entropy (KL divergence)")
      ->check(CLI::IsMember({"minmax", "percentile", "entropy"}));
  Sub->add_option("--percentile", Q.Percentile,
                  "With --calibration-method percentile: the share of "
                  "values the range keeps (default 99.99)")
      ->check(CLI::Range(50.0, 100.0));
  Sub->add_option("--validate", Q.Validate,
                  "Directory of held-back inputs (same layout as "
                  "--calibrate) the accuracy report is measured on "
                  "(default: the calibration inputs)");
  Sub->add_option("--keep-float", Q.KeepFloat,
                  "Nodes that stay float (ONNX node names, comma-separated)")
      ->delimiter(',');
  Sub->add_option("--max-accuracy-drop", Drop,
                  "Keep the most sensitive layers float until the top-1 "
                  "agreement with the float model loses at most this "
                  "fraction (e.g. 0.01) on the evaluation inputs");
}

/// --max-accuracy-drop's value, a fraction or a percentage ("1%").
std::string parseDrop(const std::string &S, std::optional<double> &Out) {
  if (S.empty())
    return "";
  try {
    size_t Used = 0;
    double V = std::stod(S, &Used);
    if (Used + 1 == S.size() && S.back() == '%')
      V /= 100;
    else if (Used != S.size())
      throw std::invalid_argument(S);
    Out = V;
    return "";
  } catch (const std::exception &) {
    return fmt::format("--max-accuracy-drop '{}': expected a fraction (0.01) "
                       "or a percentage (1%)",
                       S);
  }
}

/// The calibration options are only for --quantize int8.
std::string checkCalibrationUse(const cuvil::BuildOptions &B) {
  if (!B.Quantize &&
      (!B.Quant.Calibrate.empty() || !B.Quant.KeepFloat.empty() ||
       B.Quant.MaxAccuracyDrop || !B.Quant.Validate.empty()))
    return "--calibrate, --validate, --keep-float and --max-accuracy-drop go "
           "with --quantize int8";
  return "";
}

void addBankPolicyOption(CLI::App *Sub, std::string &Policy) {
  Sub->add_option("--bank-policy", Policy,
                  "In a memory region with banks: 'spread' (default) puts "
                  "a kernel's inputs and output in different banks, growing "
                  "the arena within the region; 'compact' keeps the "
                  "smallest arena")
      ->check(CLI::IsMember({"spread", "compact"}));
}

void addGraphOptions(CLI::App *Sub, cuvil::BuildOptions &B,
                     GraphOptionStrings &S) {
  Sub->add_option("--dim", S.Dims,
                  "Value of a symbolic input dimension, NAME=N (repeatable)");
  addLoopBoundOption(Sub, S.LoopBounds);
  Sub->add_option("--weights-region", B.WeightsRegion,
                  "Memory region for the weights, as for build (e.g. FLASH "
                  "on u74-mc)");
  Sub->add_option("--arena-regions", B.ArenaRegions,
                  "Memory regions for the activation arenas, fastest "
                  "first, as for build")
      ->delimiter(',');
  addBankPolicyOption(Sub, B.BankPolicy);
  Sub->add_option("--kernels", S.Kernels,
                  "'optimized' (default) or 'portable', as for build")
      ->check(CLI::IsMember({"optimized", "portable"}));
  Sub->add_option("--quantize", S.Quantize,
                  "'int8': quantize the float model first (needs "
                  "--calibrate), as for build")
      ->check(CLI::IsMember({"int8"}));
  addCalibrationOptions(Sub, B.Quant, S.Drop);
}

/// The command-line strings that shape the compiled graph, as build, run
/// and report take them: into B. Returns the usage error, or "".
std::string finishGraphOptions(cuvil::BuildOptions &B,
                               const GraphOptionStrings &S, bool RangeAllowed) {
  if (std::string Err =
          parseDims(S.Dims, B.Dims, RangeAllowed ? &B.Range : nullptr);
      !Err.empty())
    return Err;
  if (std::string Err = parseLoopBounds(S.LoopBounds, B.LoopBounds);
      !Err.empty())
    return Err;
  B.PortableKernels = S.Kernels == "portable";
  B.Quantize = S.Quantize == "int8";
  if (std::string Err = parseDrop(S.Drop, B.Quant.MaxAccuracyDrop);
      !Err.empty())
    return Err;
  return checkCalibrationUse(B);
}

} // namespace cuvil::tool
