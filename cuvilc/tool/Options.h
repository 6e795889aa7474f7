//===- Options.h - cuvilc's shared command-line options ---------*- C++ -*-===//
//
// The options several subcommands take (--dim, the calibration options,
// --bank-policy, the graph options of build, run and report), turned from
// command-line strings into the driver's option structs. Each function
// returns the usage error as a message, or "".
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_TOOL_OPTIONS_H
#define CUVIL_TOOL_OPTIONS_H

#include "driver/Driver.h"

#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cuvil::tool {

/// What run and report take, as build does, of the options that shape the
/// compiled graph: --dim, the regions, --kernels, --quantize with its
/// calibration options. The strings are for finishGraphOptions.
struct GraphOptionStrings {
  std::vector<std::string> Dims;
  std::string Kernels = "optimized", Quantize, Drop;
  std::vector<std::string> LoopBounds;
};

/// Parses NAME=VALUE dimension bindings, and where Range is given one
/// NAME=LO..HI range (build only).
std::string parseDims(const std::vector<std::string> &In,
                      std::map<std::string, int64_t> &Out,
                      std::optional<cuvil::DimRangeOption> *Range = nullptr);
/// --loop-bound NODE=K (repeatable) on Sub, into Strings.
void addLoopBoundOption(CLI::App *Sub, std::vector<std::string> &Strings);
/// Parses NODE=K loop bounds (K >= 1).
std::string parseLoopBounds(const std::vector<std::string> &In,
                            std::map<std::string, int64_t> &Out);
/// The calibration options `quantize` and `build --quantize` share.
void addCalibrationOptions(CLI::App *Sub, cuvil::QuantizeOptions &Q,
                           std::string &Drop);
/// --max-accuracy-drop's value into Out.
std::string parseDrop(const std::string &S, std::optional<double> &Out);
/// The calibration options given without --quantize int8 are refused.
std::string checkCalibrationUse(const cuvil::BuildOptions &B);
void addBankPolicyOption(CLI::App *Sub, std::string &Policy);
/// The options of GraphOptionStrings and the placement options, on Sub.
void addGraphOptions(CLI::App *Sub, cuvil::BuildOptions &B,
                     GraphOptionStrings &S);
/// The strings of S into B (a --dim range only where RangeAllowed).
std::string finishGraphOptions(cuvil::BuildOptions &B,
                               const GraphOptionStrings &S,
                               bool RangeAllowed = false);

} // namespace cuvil::tool

#endif
