//===- QuantizeReport.cpp - What cuvilc quantize did, as text and JSON ----===//
#include "driver/QuantizeReport.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

namespace cuvil {
namespace {

/// JSON has no infinity: identical outputs report null SQNR with
/// "identical": true.
nlohmann::ordered_json number(double V) {
  return std::isfinite(V) ? nlohmann::ordered_json(V)
                          : nlohmann::ordered_json();
}

} // namespace

std::string quantizeReportText(const QuantizeReport &R) {
  std::string S;
  size_t Int8 = 0;
  for (const auto &N : R.Nodes)
    Int8 += N.Precision == "int8";
  S += fmt::format("quantized {} of {} nodes to int8 (calibration: {}, {} "
                   "samples)\n",
                   Int8, R.Nodes.size(), R.Method, R.CalibrationSamples);
  for (const auto &N : R.Nodes) {
    S += fmt::format("  {:<5} {} ({})", N.Precision, N.Name, N.Op);
    if (!std::isnan(N.AloneSqnrDb))
      S += fmt::format(", alone {}", quant::formatDb(N.AloneSqnrDb));
    if (!N.Reason.empty())
      S += fmt::format(" [{}]", N.Reason);
    S += "\n";
  }
  for (const auto &N : R.Notes)
    S += fmt::format("note: {}\n", N);
  if (R.MaxAccuracyDrop)
    S += fmt::format("--max-accuracy-drop {}: {} node(s) kept float for "
                     "accuracy\n",
                     *R.MaxAccuracyDrop, R.KeptForAccuracy);
  S += fmt::format("accuracy against the float model on {} samples ({}):\n",
                   R.EvaluationSamples, R.EvaluatedOn);
  for (const auto &O : R.Outputs) {
    const quant::OutputAccuracy &A = O.Accuracy;
    S += fmt::format("  output '{}': SQNR {}, max abs error {:.6g}", O.Name,
                     quant::formatDb(A.sqnrDb()), A.maxAbsError());
    if (A.hasClasses())
      S += fmt::format(", top-1 agreement {:.2f}% ({}/{})",
                       100 * A.top1Agreement(), A.agreeingRows(), A.rows());
    S += "\n";
  }
  return S;
}

std::string quantizeReportJson(const QuantizeReport &R) {
  nlohmann::ordered_json J;
  J["calibration"] = {{"method", R.Method}, {"samples", R.CalibrationSamples}};
  J["evaluation"] = {{"on", R.EvaluatedOn}, {"samples", R.EvaluationSamples}};
  if (R.MaxAccuracyDrop)
    J["max_accuracy_drop"] = {{"limit", *R.MaxAccuracyDrop},
                              {"nodes_kept_float", R.KeptForAccuracy}};
  J["outputs"] = nlohmann::ordered_json::array();
  for (const auto &O : R.Outputs) {
    const quant::OutputAccuracy &A = O.Accuracy;
    nlohmann::ordered_json X = {
        {"name", O.Name},
        {"sqnr_db", number(A.sqnrDb())},
        {"identical", std::isinf(A.sqnrDb()) && A.sqnrDb() > 0},
        {"max_abs_error", number(A.maxAbsError())}};
    if (A.hasClasses())
      X["top1_agreement"] = A.top1Agreement();
    J["outputs"].push_back(X);
  }
  J["nodes"] = nlohmann::ordered_json::array();
  for (const auto &N : R.Nodes) {
    nlohmann::ordered_json X = {
        {"name", N.Name}, {"op", N.Op}, {"precision", N.Precision}};
    if (!N.Reason.empty())
      X["reason"] = N.Reason;
    if (!std::isnan(N.AloneSqnrDb))
      X["alone_sqnr_db"] = number(N.AloneSqnrDb);
    J["nodes"].push_back(X);
  }
  J["notes"] = R.Notes;
  // Node names are the model's bytes: invalid UTF-8 is replaced, not
  // thrown about.
  return J.dump(2, ' ', false,
                nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

} // namespace cuvil
