//===- main.cpp - cuvilc command line -------------------------------------===//
//
// Only command-line parsing lives here; the work is in cuvil's libraries
// (driver/). Exit codes: 0 success, 1 bad model or input, 2 usage error.
//
//===----------------------------------------------------------------------===//
#include "driver/Driver.h"
#include "ir/Escape.h"
#include "tool/Options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iostream>
#include <llvm/Support/Error.h>
#include <unistd.h>

#ifndef CUVIL_VERSION
#error "CUVIL_VERSION must be defined by the build"
#endif

using namespace cuvil::tool;

namespace {

/// Names in a damaged model can hold any bytes: each line of a message is
/// made printable (ir/Escape.h); the line breaks between them stay.
std::string printable(const std::string &S) {
  std::string Out;
  size_t Start = 0;
  for (size_t NL; (NL = S.find('\n', Start)) != std::string::npos;
       Start = NL + 1)
    Out +=
        cuvil::printable(std::string_view(S).substr(Start, NL - Start)) + "\n";
  return Out + cuvil::printable(std::string_view(S).substr(Start));
}

/// Prints every error joined in E, prefixed with the file it concerns.
int report(llvm::Error E, const std::string &File) {
  if (!E)
    return 0;
  int Code = cuvil::isUsageError(E) ? 2 : 1;
  llvm::handleAllErrors(std::move(E), [&](const llvm::ErrorInfoBase &EI) {
    if (File.empty() || Code == 2)
      std::cerr << "error: " << printable(EI.message()) << "\n";
    else
      std::cerr << "error: " << File << ": " << printable(EI.message()) << "\n";
  });
  return Code;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App App{"cuvilc: ahead-of-time compiler from ONNX models to bare-metal "
               "objects (" CUVIL_VERSION ")",
               "cuvilc"};
  App.set_version_flag("--version", "cuvilc " CUVIL_VERSION);
  App.require_subcommand(1);

  cuvil::BuildOptions B;
  std::vector<std::string> BuildDims, BuildLoopBounds;
  std::string Weights = "embed";
  auto *Build = App.add_subcommand(
      "build", "Compile MODEL.onnx into FILE.o, FILE.h and FILE.ld");
  Build->add_option("model", B.Model, "ONNX model file")->required();
  Build
      ->add_option("--target,-t", B.Target,
                   "Target name (see `cuvilc targets`)")
      ->required();
  Build->add_option("--out,-o", B.Out, "Object file to write")->required();
  Build->add_option("--header", B.Header,
                    "C header to write (default: FILE.h)");
  Build->add_option("--linker-script", B.LinkerScript,
                    "Linker-script fragment to write (default: FILE.ld)");
  Build->add_option("--name", B.Name,
                    "C symbol prefix: cuvil_NAME_run() (default: from the "
                    "model file name)");
  Build->add_option("--weights", Weights,
                    "'embed' (default): weights inside the object; "
                    "'external=FILE.cuvw': a separate blob for weight-only "
                    "updates");
  Build->add_option("--sign-key", B.SignKey,
                    "File holding an HMAC-SHA-256 key (16 bytes or more): the "
                    "blob is signed with it, and the firmware's "
                    "init_signed/switch_weights_signed, given the same key, "
                    "refuse blobs not signed with it (docs/deployment.md)");
  Build->add_option(
      "--weights-region", B.WeightsRegion,
      "Memory region for the embedded weights (default: the "
      "target's, e.g. DDR; FLASH on u74-mc for execute-in-place)");
  Build
      ->add_option("--arena-regions", B.ArenaRegions,
                   "Memory regions for the activation arenas, fastest "
                   "first (default: the target's)")
      ->delimiter(',');
  addBankPolicyOption(Build, B.BankPolicy);
  Build
      ->add_option("--region-map", B.RegionMapPairs,
                   "Names of the target's memory regions in your firmware's "
                   "linker script, TARGET=FIRMWARE (e.g. DDR=RAM,L2LIM=SRAM); "
                   "the region options then take either name")
      ->delimiter(',');
  Build->add_option("--regions-from", B.RegionsFrom,
                    "Your firmware's linker script: each target region is "
                    "named after the MEMORY region that overlaps it, and "
                    "cut to it");
  Build
      ->add_option("--emit", B.Emit,
                   "Also write intermediate forms of the model's code "
                   "(not the runtime support code): llvm (FILE.ll), asm "
                   "(FILE.s)")
      ->delimiter(',');
  std::string Passes =
      fmt::format("{}", fmt::join(cuvil::dumpStageNames(), ", "));
  Build
      ->add_option("--dump-ir", B.DumpIR,
                   fmt::format("Print the IR after these passes ({}, or all) "
                               "to stderr; each node lists the ONNX nodes it "
                               "came from",
                               Passes))
      ->delimiter(',');
  Build->add_flag("--dump-ir-data", B.DumpIRData,
                  "With --dump-ir: print the data of every constant (by "
                  "default those of more than 16 elements are elided), so "
                  "that cuvil-opt can read the dump");
  std::string DumpFormat = "text";
  Build
      ->add_option("--dump-ir-format", DumpFormat,
                   "With --dump-ir: 'text' (default; what cuvil-opt reads) "
                   "or 'json': one JSON object per dump and line, every "
                   "node with its id, op, operands with shapes, attributes "
                   "and ONNX origins with their source location when the "
                   "model records one (PyTorch's verbose export)")
      ->check(CLI::IsMember({"text", "json"}));
  std::string Kernels = "optimized";
  Build
      ->add_option("--kernels", Kernels,
                   "'optimized' (default): register-blocked kernels on "
                   "weights packed at compile time where an op has them; "
                   "'portable': the reference kernels only (smaller code, "
                   "the oracle the optimised ones are tested against)")
      ->check(CLI::IsMember({"optimized", "portable"}));
  Build->add_flag("--checked", B.Checked,
                  "Debug build: a guard gap after every arena buffer whose "
                  "canary run checks after each step (CUVIL_ERR_BOUNDS and "
                  "the step on a violation), operands checked against "
                  "their regions");
  Build
      ->add_option("--cores", B.Cores,
                   "Cores that run the model together (1..4, default 1): "
                   "convolutions are cut into that many shares of output "
                   "channels, run through cuvil_team_run of the runtime "
                   "(cuvil/team.h, docs/multicore.md); boards only")
      ->check(CLI::Range(1, 4));
  Build
      ->add_option("-j,--jobs", B.Jobs,
                   "Processes that optimise and generate the layers' code "
                   "in parallel (default: one per core this process may "
                   "use, at most 8); the object is the same whatever the "
                   "number")
      ->check(CLI::Range(1u, 64u));
  Build->add_flag("--profile", B.Profile,
                  "Per-layer profiling: read the cycle and instruction "
                  "counters (host: a monotonic clock) after every step into "
                  "a table in the model struct (docs/profiling.md)");
  Build->add_option("--report", B.Report,
                    "Write a JSON report (memory map, per-node MACs, origins)");
  auto *Verbose = Build->add_flag(
      "-v,--verbose", B.Verbose,
      "Print every stage (import, each graph pass, memory planning, the "
      "weight blob, lowering, the LLVM stages, writing the files) with its "
      "wall time as it ends, then the --time-passes table");
  Build->add_flag("--time-passes", B.TimePasses,
                  "Print the wall time of every stage at the end, slowest "
                  "first, with its share of the total");
  Build
      ->add_flag("-q,--quiet", B.Quiet,
                 "Print errors only: no quantization report, no progress "
                 "line (a build that runs longer than 2 s on a terminal "
                 "otherwise shows one)")
      ->excludes(Verbose);
  std::string WarnAs;
  Build
      ->add_option("-W", WarnAs,
                   "-Werror: every warning (an arena buffer spilled to a "
                   "slower region, a node computing in float inside an "
                   "INT8 model) is an error, and nothing is written")
      ->check(CLI::IsMember({"error"}));
  Build->add_option("--dim", BuildDims,
                    "Value of a symbolic input dimension, NAME=N "
                    "(repeatable); or one range NAME=LO..HI: one object "
                    "runs every value in it (see docs/deployment.md)");
  addLoopBoundOption(Build, BuildLoopBounds);
  const char *CustomOpsHelp =
      "TOML file declaring the model's ops of other domains, whose C "
      "kernels the firmware provides (see docs/custom-ops.md)";
  Build->add_option("--custom-ops", B.CustomOps, CustomOpsHelp);
  std::string BuildQuantize, BuildDrop;
  Build
      ->add_option("--quantize", BuildQuantize,
                   "'int8': quantize the float model first, as `cuvilc "
                   "quantize` does (needs --calibrate), then build the "
                   "integer model")
      ->check(CLI::IsMember({"int8"}));
  addCalibrationOptions(Build, B.Quant, BuildDrop);

  cuvil::QuantizeOptions Q;
  std::vector<std::string> QuantDims;
  std::string QuantDrop;
  auto *Quantize = App.add_subcommand(
      "quantize", "Post-training quantization: MODEL.onnx (float) into a "
                  "QDQ model (int8 weights, uint8 activations) calibrated "
                  "on your inputs, with an accuracy report");
  Quantize->add_option("model", Q.Model, "ONNX model file (float)")->required();
  Quantize->add_option("--out,-o", Q.Out, "Quantized ONNX model to write")
      ->required();
  addCalibrationOptions(Quantize, Q, QuantDrop);
  Quantize->get_option("--calibrate")->required();
  Quantize->add_option("--report", Q.Report,
                       "Write the report as JSON (precision of every node, "
                       "accuracy of every output)");
  Quantize->add_option("--dim", QuantDims,
                       "Value of a symbolic input dimension, NAME=N "
                       "(repeatable)");

  cuvil::RunOptions R;
  GraphOptionStrings RunGraph;
  auto *Run = App.add_subcommand(
      "run", "Compile MODEL.onnx as `build` does and run one inference: "
             "in-process for host targets, under QEMU for boards; print "
             "the outputs and what the run cost");
  Run->add_option("model", R.Build.Model, "ONNX model file")->required();
  Run->add_option("--target,-t", R.Build.Target,
                  "Target name (see `cuvilc targets`): host (or another "
                  "target this machine executes), or a board with a [qemu] "
                  "section in its targets/<name>.toml (a78, u74-mc)")
      ->required();
  Run->add_option("--input,-i", R.Inputs,
                  "A .npy file per graph input, in order (its dtype and "
                  "shape must be the input's), or the word none to leave "
                  "an optional input out (run gets NULL); no --input: "
                  "random data from --seed (floats uniform in [-1, 1), "
                  "integers in [0, 8), bools 0 or 1)");
  Run->add_option("--seed", R.Seed,
                  "Seed of the random inputs (default 0; mt19937_64, the "
                  "same data on every machine)");
  Run->add_option("--output-dir", R.OutputDir,
                  "Write each output to DIR/<output name>.npy (characters "
                  "other than letters, digits, '-', '_', '.' become '_')");
  Run->add_option("--compare", R.Compare,
                  "A reference .npy per output, in order: prints the max "
                  "absolute and relative errors and exits 1 unless every "
                  "element is within atol + rtol * |ref| (numpy.allclose; "
                  "default atol 1e-4, rtol 1e-3)");
  Run->add_flag("--compare-ort", R.CompareOrt,
                "Compare every output with ONNX Runtime's for the same "
                "inputs (the model cuvil compiled: the INT8 one with "
                "--quantize), with the tolerance of --compare. Needs the "
                "onnxruntime-node that scripts/install-deps.sh installs into "
                "the source tree's tests/reference; float32 outputs only");
  Run->add_option("--atol", R.Atol,
                  "Absolute tolerance of --compare "
                  "(default 1e-4)")
      ->check(CLI::NonNegativeNumber);
  Run->add_option("--rtol", R.Rtol,
                  "Relative tolerance of --compare "
                  "(default 1e-3)")
      ->check(CLI::NonNegativeNumber);
  Run->add_option("--json", R.Json,
                  "Write a JSON summary (outputs, files, instructions, "
                  "cycles, run_us, arena and weight bytes, comparisons) to "
                  "FILE; '-': to stdout, the text summary then goes to "
                  "stderr");
  addGraphOptions(Run, R.Build, RunGraph);
  Run->add_flag("--checked", R.Build.Checked,
                "Debug build with guard gaps and bounds checks, as for "
                "build");
  Run->add_option("--cores", R.Build.Cores,
                  "Boards: build for N cores as build --cores does and run "
                  "on them (the runner starts the team); the instruction "
                  "count is then the whole machine's (QEMU -icount counts "
                  "every core, waiting included)")
      ->check(CLI::Range(1, 4));
  Run->add_flag("--profile", R.Build.Profile,
                "Build with --profile and print the per-layer table "
                "(cycles and instructions per step; host: nanoseconds); "
                "--json adds it as \"profile\", the input of cuvilc report "
                "--profile-data");
  Run->add_option("--keep-work", R.KeepWork,
                  "Boards: build and run in DIR and keep it (model, "
                  "runtime, image.elf, input_<i>.bin, out_<i>.bin, QEMU's "
                  "output); default: a temporary directory, removed");
  Run->add_option("--cc", R.CC,
                  "Boards: C compiler of the firmware (default clang-19; a "
                  "GNU cross gcc also works)");
  Run->add_option("--timeout", R.TimeoutSeconds,
                  "Boards: seconds the QEMU run may take (default 600)")
      ->check(CLI::PositiveNumber);

  std::string InspectModel, InspectTarget = "host";
  std::vector<std::string> InspectDims;
  auto *Inspect = App.add_subcommand(
      "inspect", "Summarise a model after ONNX shape inference");
  Inspect->add_option("model", InspectModel, "ONNX model file")->required();
  Inspect->add_option("--target,-t", InspectTarget,
                      "Target to check support against (default: host)");
  Inspect->add_option("--dim", InspectDims,
                      "Value of a symbolic input dimension, NAME=N");
  std::string InspectCustomOps;
  Inspect->add_option("--custom-ops", InspectCustomOps, CustomOpsHelp);

  cuvil::PlanCommandOptions P;
  std::vector<std::string> PlanDims;
  auto *Plan = App.add_subcommand(
      "plan", "Print the memory plan of MODEL.onnx; draw each arena as SVG");
  Plan->add_option("model", P.Model, "ONNX model file")->required();
  Plan->add_option("--target,-t", P.Target,
                   "Target name (see `cuvilc targets`)")
      ->required();
  Plan->add_option("--arena-regions", P.ArenaRegions,
                   "Memory regions for the activation arenas, fastest "
                   "first (default: the target's)")
      ->delimiter(',');
  addBankPolicyOption(Plan, P.BankPolicy);
  Plan->add_option("--svg", P.SvgPrefix,
                   "Write PREFIX.<region>.svg: each arena over the "
                   "execution steps, one rectangle per tensor");
  Plan->add_option("--dim", PlanDims,
                   "Value of a symbolic input dimension, NAME=N (repeatable)");
  std::vector<std::string> PlanLoopBounds;
  addLoopBoundOption(Plan, PlanLoopBounds);
  Plan->add_option("--custom-ops", P.CustomOps, CustomOpsHelp);

  cuvil::ReportOptions Rep;
  GraphOptionStrings RepGraph;
  auto *Report = App.add_subcommand(
      "report", "Compile MODEL.onnx as `build` does and write one "
                "self-contained HTML page of it: the graph after fusion "
                "(MACs, bytes, kernels, precision per node), the memory "
                "map, and with --profile-data a per-layer heat map and "
                "bottlenecks (see docs/report.md)");
  Report->add_option("model", Rep.Build.Model, "ONNX model file")->required();
  Report
      ->add_option("--target,-t", Rep.Build.Target,
                   "Target name (see `cuvilc targets`)")
      ->required();
  Report->add_option("--out,-o", Rep.Out, "HTML file to write")->required();
  Report->add_option("--profile-data", Rep.ProfileData,
                     "JSON profile of this build (`cuvilc run --profile`, "
                     "built with the same options): adds the heat map and "
                     "the bottleneck list");
  addGraphOptions(Report, Rep.Build, RepGraph);
  Report->add_option("--name", Rep.Build.Name, "C symbol prefix, as for build");
  Report->add_option("--custom-ops", Rep.Build.CustomOps, CustomOpsHelp);

  cuvil::LinkPlanOptions LP;
  auto *LinkPlan = App.add_subcommand(
      "link-plan", "Place the arenas and weights of several models built "
                   "for one target in one memory map: one linker-script "
                   "fragment for the firmware (see docs/deployment.md)");
  LinkPlan
      ->add_option("reports", LP.Reports,
                   "Build reports, one per model (cuvilc build --report "
                   "FILE.json)")
      ->required();
  LinkPlan->add_option("--out,-o", LP.Out, "Linker-script fragment to write")
      ->required();
  LinkPlan->add_option("--target,-t", LP.Target,
                       "The reports' target, a name or a target file's path "
                       "(default: the reports' target by name)");
  LinkPlan->add_option("--header", LP.Header,
                       "C header to write: the plan's totals per region");
  LinkPlan
      ->add_option("--exclusive", LP.Exclusive,
                   "Models that never run at the same time, A,B[,...]: "
                   "they share one arena per region (repeatable, one "
                   "group each)")
      ->allow_extra_args(false);
  LinkPlan
      ->add_option("--region-map", LP.RegionMapPairs,
                   "Names of the target's memory regions in your firmware's "
                   "linker script, TARGET=FIRMWARE, as for build")
      ->delimiter(',');
  LinkPlan->add_option("--regions-from", LP.RegionsFrom,
                       "Your firmware's linker script, as for build: the "
                       "plan fits the regions it declares");

  auto *Targets = App.add_subcommand(
      "targets", "List the targets and their memory regions");
  for (CLI::App *Sub :
       {Build, Run, Quantize, Inspect, Plan, Report, LinkPlan, Targets})
    Sub->set_version_flag("--version", "cuvilc " CUVIL_VERSION);

  try {
    App.parse(argc, argv);
  } catch (const CLI::ParseError &E) {
    int Code = App.exit(E);
    return Code == 0 ? 0 : 2;
  }

  if (Build->parsed()) {
    if (std::string Err = finishGraphOptions(
            B, {BuildDims, Kernels, BuildQuantize, BuildDrop, BuildLoopBounds},
            true);
        !Err.empty())
      return report(cuvil::usageError(Err), "");
    if (Weights.rfind("external=", 0) == 0 && Weights.size() > 9)
      B.ExternalWeights = Weights.substr(9);
    else if (Weights != "embed")
      return report(
          cuvil::usageError(fmt::format("--weights '{}': expected 'embed' or "
                                        "'external=FILE.cuvw'",
                                        Weights)),
          "");
    B.ProgressLine = isatty(STDERR_FILENO) != 0;
    B.WarningsAsErrors = WarnAs == "error";
    B.DumpIRJson = DumpFormat == "json";
    return report(cuvil::runBuild(B, std::cerr), B.Model);
  }
  if (Run->parsed()) {
    if (std::string Err = finishGraphOptions(R.Build, RunGraph); !Err.empty())
      return report(cuvil::usageError(Err), "");
    // With the JSON summary on stdout, the text goes to stderr.
    std::ostream &Out = R.Json == "-" ? std::cerr : std::cout;
    return report(cuvil::runRun(R, Out, std::cerr), R.Build.Model);
  }
  if (Quantize->parsed()) {
    if (std::string Err = parseDims(QuantDims, Q.Dims); !Err.empty())
      return report(cuvil::usageError(Err), "");
    if (std::string Err = parseDrop(QuantDrop, Q.MaxAccuracyDrop); !Err.empty())
      return report(cuvil::usageError(Err), "");
    return report(cuvil::runQuantize(Q, std::cerr), Q.Model);
  }
  if (Inspect->parsed()) {
    std::map<std::string, int64_t> Dims;
    if (std::string Err = parseDims(InspectDims, Dims); !Err.empty())
      return report(cuvil::usageError(Err), "");
    return report(cuvil::runInspect(InspectModel, InspectTarget, Dims,
                                    std::cout, InspectCustomOps),
                  InspectModel);
  }
  if (Plan->parsed()) {
    if (std::string Err = parseDims(PlanDims, P.Dims); !Err.empty())
      return report(cuvil::usageError(Err), "");
    if (std::string Err = parseLoopBounds(PlanLoopBounds, P.LoopBounds);
        !Err.empty())
      return report(cuvil::usageError(Err), "");
    return report(cuvil::runPlan(P, std::cout), P.Model);
  }
  if (Report->parsed()) {
    if (std::string Err = finishGraphOptions(Rep.Build, RepGraph); !Err.empty())
      return report(cuvil::usageError(Err), "");
    return report(cuvil::runReport(Rep, std::cout, std::cerr), Rep.Build.Model);
  }
  if (LinkPlan->parsed())
    return report(cuvil::runLinkPlan(LP, std::cout), "");
  if (Targets->parsed())
    return report(cuvil::runTargets(std::cout), "");
  return 2;
}
