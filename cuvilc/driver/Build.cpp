//===- Build.cpp - `cuvilc build`: ONNX model -> object, header, script ---===//
#include "driver/Compile.h"
#include "emit/LinkerScript.h"
#include "emit/OutputFiles.h"
#include "emit/Report.h"
#include "ir/Diagnostic.h"
#include "ir/Escape.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace cuvil {

namespace {

std::string replaceExtension(const std::string &Path, const char *Ext) {
  return fs::path(Path).replace_extension(Ext).string();
}

/// The files a build reads, which it must not overwrite.
std::vector<InputFile> buildInputs(const BuildOptions &Opts) {
  std::vector<InputFile> In = {{Opts.Model, "the input model"}};
  if (!Opts.CustomOps.empty())
    In.push_back({Opts.CustomOps, "the custom ops file (--custom-ops)"});
  if (Opts.Quantize && !Opts.Quant.Calibrate.empty())
    In.push_back({Opts.Quant.Calibrate, "the calibration data (--calibrate)"});
  if (!Opts.RegionsFrom.empty())
    In.push_back({Opts.RegionsFrom, "the firmware's linker script "
                                    "(--regions-from)"});
  return In;
}

std::string headerPath(const BuildOptions &Opts) {
  return Opts.Header.empty() ? replaceExtension(Opts.Out, ".h") : Opts.Header;
}

std::string scriptPath(const BuildOptions &Opts) {
  return Opts.LinkerScript.empty() ? replaceExtension(Opts.Out, ".ld")
                                   : Opts.LinkerScript;
}

bool wants(const BuildOptions &Opts, const char *Kind) {
  return std::find(Opts.Emit.begin(), Opts.Emit.end(), Kind) != Opts.Emit.end();
}

/// The files the build will write, without their contents: checked before
/// the compile, so that a mistyped directory is said at once.
std::vector<OutputFile> plannedOutputs(const BuildOptions &Opts) {
  std::vector<OutputFile> Files = {
      {Opts.Out, "", "the object (--out)"},
      {headerPath(Opts), "", "the header (--header)"},
      {scriptPath(Opts), "", "the linker script (--linker-script)"}};
  if (!Opts.ExternalWeights.empty())
    Files.push_back(
        {Opts.ExternalWeights, "", "the weights (--weights external=)"});
  if (wants(Opts, "llvm"))
    Files.push_back(
        {replaceExtension(Opts.Out, ".ll"), "", "the LLVM IR (--emit llvm)"});
  if (wants(Opts, "asm"))
    Files.push_back(
        {replaceExtension(Opts.Out, ".s"), "", "the assembly (--emit asm)"});
  if (!Opts.Report.empty())
    Files.push_back({Opts.Report, "", "the report (--report)"});
  return Files;
}

} // namespace

llvm::Expected<std::optional<QuantizeResult>>
quantizeForBuild(const BuildOptions &Opts, std::ostream &Log) {
  if (!Opts.Quantize)
    return std::nullopt;
  if (Opts.Range)
    return usageError(fmt::format(
        "--quantize int8 and --dim {}={}..{}: quantize the model first "
        "(cuvilc quantize, with one value of '{}'), then build the quantized "
        "model for the range",
        Opts.Range->Name, Opts.Range->Lo, Opts.Range->Hi, Opts.Range->Name));
  // The QDQ model cuvilc quantize would write, built from memory. A wrong
  // target is said before the calibration runs.
  if (auto T = loadTarget(Opts.Target); !T)
    return usageError(llvm::toString(T.takeError()));
  QuantizeOptions Q = Opts.Quant;
  Q.Model = Opts.Model;
  Q.Dims = Opts.Dims;
  auto R = quantizeModel(Q, Log);
  if (!R)
    return R.takeError();
  Log << quantizeReportText(R->Report);
  return std::optional<QuantizeResult>(std::move(*R));
}

llvm::Error runBuild(const BuildOptions &Opts, std::ostream &Log) {
  StageTimer::Options TO;
  if (Opts.Verbose)
    TO.Verbose = &Log;
  else if (Opts.ProgressLine && !Opts.Quiet)
    TO.Progress = &Log;
  StageTimer Timer(TO);
  Timer.expect(buildStageCount(Opts.Quantize));
  // --quiet: what is not an error, or asked for (--dump-ir), is dropped.
  std::ostream Discard(nullptr);
  std::ostream &Notes = Opts.Quiet ? Discard : Log;

  if (auto E = checkOutputFiles(plannedOutputs(Opts), buildInputs(Opts)))
    return E;
  if (Opts.Quantize)
    Timer.begin("quantize");
  auto Q = quantizeForBuild(Opts, Notes);
  if (!Q)
    return Q.takeError();
  std::optional<QuantizeResult> Quant = std::move(*Q);
  auto CM =
      Quant ? compileModel(Opts, Log, std::string_view(Quant->Model), &Timer)
            : compileModel(Opts, Log, std::nullopt, &Timer);
  if (!CM)
    return CM.takeError();
  // Warnings before any file is written: with -Werror none is.
  for (const BuildWarning &W : CM->Warnings)
    if (!Opts.Quiet || Opts.WarningsAsErrors)
      Log << fmt::format("{}: {}: node '{}' ({}): {}\n",
                         Opts.WarningsAsErrors ? "error" : "warning",
                         printable(Opts.Model), printable(W.Node),
                         printable(W.Op), printable(W.Message));
  if (Opts.WarningsAsErrors && !CM->Warnings.empty())
    return makeError("{} warning(s) treated as errors (-Werror); nothing "
                     "was written",
                     CM->Warnings.size());
  Timer.begin("emit");
  const std::string &Name = CM->Name;
  CodegenResult &Code = CM->Code;
  const std::string HeaderPath = headerPath(Opts);
  const std::string ScriptPath = scriptPath(Opts);
  std::vector<OutputFile> Files = {
      {Opts.Out, std::move(Code.Object), "the object (--out)"},
      {HeaderPath, writeHeader(*CM->G, CM->Plan, CM->Target, CM->Header),
       "the header (--header)"},
      {ScriptPath,
       writeLinkerScript(Name, CM->Plan, CM->Target, CM->WeightsRegion,
                         CM->Embed, CM->Regions),
       "the linker script (--linker-script)"},
  };
  if (!CM->Embed)
    Files.push_back({Opts.ExternalWeights,
                     std::string(CM->Blob.begin(), CM->Blob.end()),
                     "the weights (--weights external=)"});
  if (wants(Opts, "llvm"))
    Files.push_back({replaceExtension(Opts.Out, ".ll"), Code.LLVMIR,
                     "the LLVM IR (--emit llvm)"});
  if (wants(Opts, "asm"))
    Files.push_back({replaceExtension(Opts.Out, ".s"), Code.Asm,
                     "the assembly (--emit asm)"});
  if (!Opts.Report.empty()) {
    std::string Report =
        writeReport(*CM->G, CM->Plan, CM->Target, CM->Header, CM->WeightsRegion,
                    CM->Blob.size(), &CM->Lowering);
    // A quantized build's report also says how it was quantized and how
    // close its outputs are to the float model's.
    if (Quant) {
      auto J = nlohmann::ordered_json::parse(Report);
      J["quantization"] =
          nlohmann::ordered_json::parse(quantizeReportJson(Quant->Report));
      Report = J.dump(2, ' ', false,
                      nlohmann::ordered_json::error_handler_t::replace) +
               "\n";
    }
    Files.push_back({Opts.Report, std::move(Report), "the report (--report)"});
  }
  if (auto E = writeOutputFiles(Files, buildInputs(Opts)))
    return E;
  Timer.finish();
  if (Opts.Verbose || Opts.TimePasses)
    Log << Timer.table() << std::flush;
  return llvm::Error::success();
}

} // namespace cuvil