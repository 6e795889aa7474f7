//===- Driver.h - The cuvilc commands as library calls ----------*- C++ -*-===//
//
// The tool (tool/main.cpp) only parses the command line; each subcommand is
// one function here that runs the stages and returns an Error. Errors that
// come from the user's input are ModelError (exit code 1); others are
// usage errors (exit code 2).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_DRIVER_DRIVER_H
#define CUVIL_DRIVER_DRIVER_H

#include "driver/QuantizeReport.h"
#include "passes/Pass.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <llvm/Support/Error.h>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace cuvil {

class CustomOpSet;
class RuntimeOps;

/// `cuvilc quantize` (and `cuvilc build --quantize int8`): post-training
/// quantization into a QDQ model (see driver/Quantize.cpp).
struct QuantizeOptions {
  std::string Model;     ///< The float .onnx.
  std::string Calibrate; ///< Directory of calibration inputs.
  std::string Validate;  ///< Held-back inputs for the report; empty: none.
  std::string Out;       ///< The QDQ .onnx to write.
  std::string Report;    ///< JSON report path; empty: none.
  std::string Method = "minmax"; ///< minmax, percentile, entropy.
  double Percentile = 99.99;
  std::vector<std::string> KeepFloat;    ///< Node names.
  std::optional<double> MaxAccuracyDrop; ///< Top-1 agreement lost, 0-1.
  std::map<std::string, int64_t> Dims;
};

struct QuantizeResult {
  std::string Model; ///< The QDQ model's bytes.
  QuantizeReport Report;
};

/// `--dim NAME=LO..HI`: one object for every value of NAME in [Lo, Hi]
/// (driver/DimRange.h).
struct DimRangeOption {
  std::string Name;
  int64_t Lo = 0, Hi = 0;
};

struct BuildOptions {
  std::string Model;           ///< Input .onnx path.
  std::string Target;          ///< Target name.
  std::string Out;             ///< Object path.
  std::string Header;          ///< Default: Out with .h.
  std::string LinkerScript;    ///< Default: Out with .ld.
  std::string Report;          ///< JSON report path; empty: none.
  std::string Name;            ///< C prefix; default from the model file name.
  std::string ExternalWeights; ///< .cuvw path; empty: embed.
  /// --sign-key: file of the HMAC-SHA-256 key the blob is signed with;
  /// empty: not signed.
  std::string SignKey;
  std::string WeightsRegion; ///< Default: the target's weights_region.
  std::vector<std::string> ArenaRegions; ///< Default: the target's.
  /// --region-map TARGET=FIRMWARE pairs, or --regions-from: the firmware
  /// linker script whose MEMORY names the fragment uses (target/RegionMap.h).
  std::vector<std::string> RegionMapPairs;
  std::string RegionsFrom;
  /// --bank-policy: "spread" (default) or "compact" (PlanOptions::Banks).
  std::string BankPolicy;
  std::vector<std::string> Emit;   ///< "llvm", "asm".
  std::vector<std::string> DumpIR; ///< Pass names, or "all".
  bool DumpIRData = false;         ///< Dumps print every constant's data.
  bool DumpIRJson = false;         ///< --dump-ir-format json: Graph::printJson.
  std::map<std::string, int64_t> Dims;
  /// A dimension given as a range (build only); not also in Dims.
  std::optional<DimRangeOption> Range;
  /// --loop-bound NODE=K: the most iterations Loop NODE may run, for a
  /// Loop without a bound of its own (ImportOptions::LoopBounds).
  std::map<std::string, int64_t> LoopBounds;
  bool PortableKernels = false; ///< Reference kernels only (--kernels).
  bool Checked = false;         ///< --checked: guard gaps and bounds checks.
  /// --cores: layers are cut into shares for this many cores (cuvil/team.h).
  int64_t Cores = 1;
  /// Processes optimising and generating the model's code (--jobs); 0:
  /// one per core.
  /// The object does not depend on it.
  unsigned Jobs = 0;
  bool Profile = false;  ///< --profile: per-step counters in the model struct.
  std::string CustomOps; ///< --custom-ops: the user's op declarations.
  /// --quantize int8: quantize the float model first (Quant: calibration
  /// and the other quantize options; its Model and Dims are this build's).
  bool Quantize = false;
  QuantizeOptions Quant;
  /// -v: every stage with its wall time as it ends, then the table.
  bool Verbose = false;
  /// --time-passes: the table of the stages' times at the end.
  bool TimePasses = false;
  /// --quiet: errors only (no quantization report, no progress line).
  bool Quiet = false;
  /// -Werror: a warning is an error (and nothing is written).
  bool WarningsAsErrors = false;
  /// Log is a terminal: a build running longer than 2 s shows a progress
  /// line there (unless Verbose or Quiet).
  bool ProgressLine = false;
  /// The object is for the in-process runner (runner/HostRunner.h), not
  /// a firmware: it leaves out the arenas' absolute size symbols, which
  /// the JIT linker does not take (CodegenOptions::ArenaSizeSymbols).
  bool InProcess = false;
};

/// Quantizes O.Model in memory (progress and notes go to Log).
llvm::Expected<QuantizeResult> quantizeModel(const QuantizeOptions &O,
                                             std::ostream &Log);
/// `cuvilc quantize`: writes O.Out (and O.Report), prints the report.
llvm::Error runQuantize(const QuantizeOptions &O, std::ostream &Log);

/// Whether an error is the user's input's fault (exit 1) or a usage error
/// (exit 2). Usage errors are created with usageError().
llvm::Error usageError(const std::string &Msg);
bool isUsageError(const llvm::Error &E);

/// The stages --dump-ir can name: "import", then the default pipeline's
/// passes in order.
std::vector<std::string> dumpStageNames();

/// How many stages `cuvilc build` times (-v, --time-passes): import, the
/// passes, and those after them, for the progress line's percent.
size_t buildStageCount(bool Quantize);

/// The planner options for target T: its DMA alignment, its arena regions
/// (or ArenaRegions, if not empty: names checked), its spill policy and the
/// bank policy ("spread", the default, or "compact").
llvm::Expected<PlanOptions>
planOptionsFor(const TargetInfo &T,
               const std::vector<std::string> &ArenaRegions,
               const std::string &BankPolicy = "");

/// The model at Model imported, verified and optimised by the pass
/// pipeline (IR dumps after the passes named in DumpIR go to Log).
/// PO carries the target facts some passes need (default: none, so every
/// weight keeps its ONNX layout). CustomOps: the ops the user declared.
/// DumpData: the dumps print the data of every constant, so that cuvil-opt
/// can read them. DumpJson: the dumps are JSON lines (Graph::printJson).
/// LoopBounds: the user's bounds on Loops, by node name (--loop-bound).
llvm::Expected<std::unique_ptr<Graph>>
loadModel(const std::string &Model, const std::map<std::string, int64_t> &Dims,
          const std::vector<std::string> &DumpIR, std::ostream &Log,
          const PipelineOptions &PO = {}, const RuntimeOps *CustomOps = nullptr,
          bool DumpData = false, bool DumpJson = false,
          const std::map<std::string, int64_t> &LoopBounds = {});

/// The declarations of a --custom-ops file (null for an empty path); a
/// bad file is a usage error naming its line, op and field.
llvm::Expected<std::unique_ptr<CustomOpSet>>
loadCustomOpsOption(const std::string &Path);
/// The same for a model already in memory (the bytes of a .onnx file):
/// nothing is read from or written to disk.
llvm::Expected<std::unique_ptr<Graph>>
loadModelBytes(std::string_view Bytes,
               const std::map<std::string, int64_t> &Dims,
               const std::vector<std::string> &DumpIR, std::ostream &Log,
               const PipelineOptions &PO = {}, bool DumpData = false,
               bool DumpJson = false,
               const std::map<std::string, int64_t> &LoopBounds = {});

/// With --quantize int8 (Opts.Quantize): the float model quantized as
/// `cuvilc quantize` would (its report printed to Log), for the build to
/// compile from memory; without it, nullopt.
llvm::Expected<std::optional<QuantizeResult>>
quantizeForBuild(const BuildOptions &Opts, std::ostream &Log);

/// `cuvilc build`: writes the object, header, linker script (and blob).
/// Progress/dumps go to Log.
llvm::Error runBuild(const BuildOptions &Opts, std::ostream &Log);

/// `cuvilc run` (driver/Run.cpp): one inference of a model compiled as
/// `cuvilc build` would, in-process for the build machine's targets, under
/// QEMU for a board.
struct RunOptions {
  BuildOptions Build;               ///< Model, target, dims, kernels...
  std::vector<std::string> Inputs;  ///< .npy per graph input; empty: random.
  uint64_t Seed = 0;                ///< Of the random inputs.
  std::string OutputDir;            ///< Writes <output>.npy there; empty: none.
  std::vector<std::string> Compare; ///< Reference .npy per output.
  bool CompareOrt = false; ///< Compare with ONNX Runtime on the same inputs.
  double Atol = 1e-4, Rtol = 1e-3; ///< |got - ref| <= Atol + Rtol * |ref|.
  std::string Json;                ///< Summary path, "-" for Out; empty: none.
  std::string KeepWork; ///< Boards: the work directory to keep; empty: temp.
  std::string CC = "clang-19";   ///< Boards: the C compiler of the firmware.
  unsigned TimeoutSeconds = 600; ///< Boards: of the QEMU run.
};

/// `cuvilc run`: the human-readable summary goes to Out (the JSON one to
/// stdout with Json "-"), progress to Log. An output beyond the tolerance
/// of its reference is an error (exit 1) after everything was printed.
llvm::Error runRun(const RunOptions &O, std::ostream &Out, std::ostream &Log);

/// `cuvilc report` (driver/Report.cpp): one HTML page of a build.
struct ReportOptions {
  BuildOptions Build;      ///< Model, target, and what shapes the graph.
  std::string Out;         ///< The .html to write.
  std::string ProfileData; ///< A profile of the same build; empty: none.
};

/// `cuvilc report`: compiles the model as `cuvilc build` does, in memory,
/// and writes O.Out (emit/HtmlReport.h); with O.ProfileData, checks that
/// the profile is of this build and adds its heat map and bottlenecks. A
/// profile that cannot be read, or is of another build, is a usage error
/// naming the file; nothing is written then. "wrote FILE" goes to Out,
/// the quantization report (--quantize) to Log.
llvm::Error runReport(const ReportOptions &O, std::ostream &Out,
                      std::ostream &Log);

struct PlanCommandOptions {
  std::string Model;                     ///< Input .onnx path.
  std::string Target;                    ///< Target name.
  std::vector<std::string> ArenaRegions; ///< Default: the target's.
  std::string BankPolicy;                ///< As BuildOptions::BankPolicy.
  /// Write PREFIX.<region>.svg, a picture of each arena; empty: none.
  std::string SvgPrefix;
  std::map<std::string, int64_t> Dims;
  std::map<std::string, int64_t> LoopBounds; ///< As BuildOptions'.
  std::string CustomOps; ///< --custom-ops: the user's op declarations.
};

/// `cuvilc plan`: runs the stages of `build` up to the memory plan and
/// prints it: per arena its size, lower bound and ratio, then every arena
/// tensor with its offset, size, live steps and producing ONNX nodes.
llvm::Error runPlan(const PlanCommandOptions &Opts, std::ostream &Out);

/// `cuvilc link-plan` (driver/LinkPlan.cpp): the memory plan of the
/// models one firmware links (emit/SystemPlan.h).
struct LinkPlanOptions {
  std::vector<std::string> Reports;        ///< `cuvilc build --report` JSONs.
  std::vector<std::string> Exclusive;      ///< Each "a,b,...": one group.
  std::string Out;                         ///< The fragment to write.
  std::string Header;                      ///< The header; empty: none.
  std::vector<std::string> RegionMapPairs; ///< As BuildOptions'.
  std::string RegionsFrom;
  /// --target: the target (a name, or a target file's path, as for
  /// build) the reports must be of; empty: the reports' target by name.
  std::string Target;
};

/// `cuvilc link-plan`: writes O.Out (and O.Header) and prints the plan
/// per region to Out. A region the models overflow is an error listing
/// every model's share; nothing is written then.
llvm::Error runLinkPlan(const LinkPlanOptions &O, std::ostream &Out);

/// `cuvilc inspect`: graph summary after shape inference.
llvm::Error runInspect(const std::string &Model, const std::string &Target,
                       const std::map<std::string, int64_t> &Dims,
                       std::ostream &Out, const std::string &CustomOps = "");

/// `cuvilc targets`: the targets and their memory regions.
llvm::Error runTargets(std::ostream &Out);

/// The model name derived from a path: base name without extension, as a
/// lower-case C identifier.
std::string defaultModelName(const std::string &Path);

} // namespace cuvil

#endif
