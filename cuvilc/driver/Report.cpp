//===- Report.cpp - `cuvilc report`: one HTML page of a build -------------===//
//
// The model is compiled exactly as `cuvilc build` compiles it (quantized
// first with --quantize int8), in memory; the page is made from what that
// returns (emit/HtmlReport.h). A profile is read before the compilation,
// so that a bad file costs no build, and matched to the build after it.
//
//===----------------------------------------------------------------------===//
#include "driver/Compile.h"
#include "emit/HtmlReport.h"
#include "emit/OutputFiles.h"

#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <sstream>

namespace cuvil {

namespace {

/// The options that change the compiled graph, as one would type them:
/// the page says what build it shows.
std::string graphOptions(const BuildOptions &B) {
  std::vector<std::string> Parts;
  for (const auto &[Name, Value] : B.Dims)
    Parts.push_back(fmt::format("--dim {}={}", Name, Value));
  if (B.PortableKernels)
    Parts.push_back("--kernels portable");
  if (B.Quantize)
    Parts.push_back("--quantize int8");
  if (!B.ArenaRegions.empty())
    Parts.push_back(
        fmt::format("--arena-regions {}", fmt::join(B.ArenaRegions, ",")));
  if (!B.WeightsRegion.empty())
    Parts.push_back("--weights-region " + B.WeightsRegion);
  if (!B.BankPolicy.empty())
    Parts.push_back("--bank-policy " + B.BankPolicy);
  if (!B.CustomOps.empty())
    Parts.push_back("--custom-ops " + B.CustomOps);
  if (!B.Name.empty())
    Parts.push_back("--name " + B.Name);
  return fmt::format("{}", fmt::join(Parts, " "));
}

llvm::Error profileError(const std::string &Path, llvm::Error E) {
  return usageError(
      fmt::format("--profile-data {}: {}", Path, llvm::toString(std::move(E))));
}

llvm::Expected<std::optional<LayerProfile>>
readProfile(const std::string &Path) {
  if (Path.empty())
    return std::nullopt;
  std::error_code EC;
  if (std::filesystem::is_directory(Path, EC))
    return usageError(
        fmt::format("--profile-data {}: is a directory, not a file", Path));
  std::ifstream In(Path, std::ios::binary);
  std::stringstream Text;
  if (In)
    Text << In.rdbuf();
  if (!In || In.bad())
    return usageError(
        fmt::format("--profile-data {}: cannot read the file", Path));
  auto P = parseLayerProfile(Text.str());
  if (!P)
    return profileError(Path, P.takeError());
  return std::optional<LayerProfile>(std::move(*P));
}

} // namespace

llvm::Error runReport(const ReportOptions &O, std::ostream &Out,
                      std::ostream &Log) {
  auto Profile = readProfile(O.ProfileData);
  if (!Profile)
    return Profile.takeError();
  // A profile of another target is said before anything is compiled.
  if (*Profile && !(*Profile)->Target.empty() &&
      (*Profile)->Target != O.Build.Target)
    return usageError(fmt::format(
        "--profile-data {}: the profile was measured on target '{}', the "
        "report is for target '{}'",
        O.ProfileData, (*Profile)->Target, O.Build.Target));
  auto Q = quantizeForBuild(O.Build, Log);
  if (!Q)
    return Q.takeError();
  auto CM = *Q ? compileModel(O.Build, Log, std::string_view((*Q)->Model))
               : compileModel(O.Build, Log);
  if (!CM)
    return CM.takeError();
  std::vector<LayerFacts> Layers = layerFacts(*CM->G, CM->Lowering);

  HtmlReportInput In;
  In.G = CM->G.get();
  In.Plan = &CM->Plan;
  In.Target = &CM->Target;
  In.Layers = &Layers;
  In.ModelFile = O.Build.Model;
  In.Name = CM->Name;
  In.Options = graphOptions(O.Build);
  In.WeightsRegion = CM->WeightsRegion;
  In.BlobBytes = CM->Blob.size();
  for (const BuildWarning &W : CM->Warnings)
    In.Warnings.push_back(
        fmt::format("node '{}' ({}): {}", W.Node, W.Op, W.Message));
  std::optional<ProfileAnalysis> Analysis;
  if (*Profile) {
    auto A = analyzeProfile(**Profile, Layers, CM->Target);
    if (!A)
      return profileError(O.ProfileData, A.takeError());
    Analysis = std::move(*A);
    In.ProfileFile = O.ProfileData;
    In.Profile = &**Profile;
    In.Analysis = &*Analysis;
  }
  if (auto E = writeOutputFiles({{O.Out, writeHtmlReport(In)}}))
    return E;
  Out << "wrote " << O.Out << "\n";
  return llvm::Error::success();
}

} // namespace cuvil
