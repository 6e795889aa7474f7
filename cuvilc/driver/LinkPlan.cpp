//===- LinkPlan.cpp - `cuvilc link-plan`: several models, one memory map --===//
//
// Reads the build reports (cuvilc build --report) of the models one
// firmware links, checks that they are of one target, and writes the
// system plan's linker-script fragment and header (emit/SystemPlan.h).
//
//===----------------------------------------------------------------------===//
#include "driver/Driver.h"
#include "emit/OutputFiles.h"
#include "emit/SystemPlan.h"
#include "ir/Diagnostic.h"
#include "ir/Escape.h"

#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace cuvil {

namespace {

using Json = nlohmann::json;

/// Field Key of object J if it has type Is; null otherwise.
const Json *field(const Json &J, const char *Key, bool (Json::*Is)() const) {
  if (!J.is_object())
    return nullptr;
  auto It = J.find(Key);
  if (It == J.end() || !((*It).*Is)())
    return nullptr;
  return &*It;
}

struct ReportFacts {
  SystemModel Model;
  std::string Target;
};

/// The facts link-plan needs from one build report; errors name the file
/// and the field.
llvm::Expected<ReportFacts> readReport(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return makeError("{}: cannot read the report", printable(Path));
  std::stringstream Buf;
  Buf << In.rdbuf();
  Json J = Json::parse(Buf.str(), nullptr, false);
  auto Bad = [&](const char *What) {
    return makeError("{}: not a report of `cuvilc build --report`: {}",
                     printable(Path), What);
  };
  if (J.is_discarded())
    return Bad("not valid JSON");
  ReportFacts R;
  SystemModel &M = R.Model;
  M.Source = Path;
  const Json *Model = field(J, "model", &Json::is_string);
  const Json *Target = field(J, "target", &Json::is_string);
  const Json *Iface = field(J, "interface", &Json::is_object);
  const Json *External =
      Iface ? field(*Iface, "external_weights", &Json::is_boolean) : nullptr;
  const Json *Arena = field(J, "arena", &Json::is_object);
  const Json *Align =
      Arena ? field(*Arena, "alignment", &Json::is_number_unsigned) : nullptr;
  const Json *Arenas = field(J, "arenas", &Json::is_array);
  const Json *Weights = field(J, "weights", &Json::is_object);
  const Json *WRegion =
      Weights ? field(*Weights, "region", &Json::is_string) : nullptr;
  const Json *WBytes =
      Weights ? field(*Weights, "blob_bytes", &Json::is_number_unsigned)
              : nullptr;
  if (!Model || !Target)
    return Bad("no \"model\" and \"target\" strings");
  if (!External)
    return Bad("no \"interface.external_weights\"");
  if (!Align || Align->get<uint64_t>() == 0 ||
      Align->get<uint64_t>() > (1u << 20))
    return Bad("no \"arena.alignment\" of 1 to 1 MiB");
  if (!Arenas)
    return Bad("no \"arenas\" list");
  if (!WRegion || !WBytes)
    return Bad("no \"weights.region\" and \"weights.blob_bytes\"");
  M.Name = Model->get<std::string>();
  R.Target = Target->get<std::string>();
  M.Alignment = static_cast<int64_t>(Align->get<uint64_t>());
  M.EmbeddedWeights = !External->get<bool>();
  M.WeightsRegion = WRegion->get<std::string>();
  // A blob or arena past 2^48 bytes is not a report cuvilc wrote.
  constexpr uint64_t Most = uint64_t(1) << 48;
  if (WBytes->get<uint64_t>() > Most)
    return Bad("\"weights.blob_bytes\" is out of range");
  M.WeightsBytes = static_cast<int64_t>(WBytes->get<uint64_t>());
  for (const Json &A : *Arenas) {
    const Json *Region = field(A, "region", &Json::is_string);
    const Json *Bytes = field(A, "bytes", &Json::is_number_unsigned);
    if (!Region || !Bytes || Bytes->get<uint64_t>() > Most)
      return Bad("an arena without \"region\" and \"bytes\"");
    for (const SystemModel::Arena &Seen : M.Arenas)
      if (Seen.Region == Region->get<std::string>())
        return Bad("two arenas in one region");
    M.Arenas.push_back({Region->get<std::string>(),
                        static_cast<int64_t>(Bytes->get<uint64_t>())});
  }
  // The name becomes symbols and section names: it must be what
  // `cuvilc build --name` accepts.
  bool Ident =
      !M.Name.empty() && !std::isdigit(static_cast<unsigned char>(M.Name[0]));
  for (char C : M.Name)
    Ident = Ident && (std::isalnum(static_cast<unsigned char>(C)) || C == '_');
  if (!Ident)
    return Bad("\"model\" is not a C identifier");
  return R;
}

/// "CUVIL_<STEM>_H" for the header at Path.
std::string headerGuard(const std::string &Path) {
  std::string G = "CUVIL_";
  for (char C : std::filesystem::path(Path).stem().string())
    G += std::isalnum(static_cast<unsigned char>(C))
             ? static_cast<char>(std::toupper(static_cast<unsigned char>(C)))
             : '_';
  return G + "_H";
}

/// "a,b" -> {"a", "b"}.
std::vector<std::string> splitNames(const std::string &List) {
  std::vector<std::string> Names;
  std::string Cur;
  for (char C : List + ",") {
    if (C != ',') {
      Cur += C;
      continue;
    }
    if (!Cur.empty())
      Names.push_back(Cur);
    Cur.clear();
  }
  return Names;
}

} // namespace

llvm::Error runLinkPlan(const LinkPlanOptions &O, std::ostream &Out) {
  if (O.Reports.empty())
    return usageError("link-plan: give the build report (cuvilc build "
                      "--report FILE.json) of every model the firmware links");
  if (!O.RegionMapPairs.empty() && !O.RegionsFrom.empty())
    return usageError("--region-map and --regions-from both name the "
                      "firmware's regions: give one of them");
  std::vector<SystemModel> Models;
  std::string TargetName, TargetFrom;
  for (const std::string &Path : O.Reports) {
    auto R = readReport(Path);
    if (!R)
      return R.takeError();
    if (TargetName.empty()) {
      TargetName = R->Target;
      TargetFrom = Path;
    } else if (R->Target != TargetName) {
      return makeError("{} is of target '{}', {} of target '{}': one plan "
                       "places the models of one image",
                       printable(TargetFrom), printable(TargetName),
                       printable(Path), printable(R->Target));
    }
    Models.push_back(std::move(R->Model));
  }
  // A board of the user's own (a target file) is named by its path.
  auto T = loadTarget(O.Target.empty() ? TargetName : O.Target);
  if (!T) {
    if (!O.Target.empty())
      return usageError("--target: " + llvm::toString(T.takeError()));
    return makeError("{}: {} (a target file of your own is given with "
                     "--target FILE.toml)",
                     printable(TargetFrom), llvm::toString(T.takeError()));
  }
  if (T->Name != TargetName)
    return makeError("{} is of target '{}', not of --target '{}'",
                     printable(TargetFrom), printable(TargetName), T->Name);

  RegionMap Map;
  if (!O.RegionMapPairs.empty()) {
    auto M = parseRegionMap(O.RegionMapPairs, *T);
    if (!M)
      return usageError(llvm::toString(M.takeError()));
    Map = std::move(*M);
  } else if (!O.RegionsFrom.empty()) {
    auto M = regionMapFromScript(O.RegionsFrom, *T);
    if (!M)
      return usageError(llvm::toString(M.takeError()));
    Map = std::move(*M);
    for (const SystemModel &SM : Models) {
      std::vector<std::string> Used;
      for (const SystemModel::Arena &A : SM.Arenas)
        Used.push_back(A.Region);
      if (SM.EmbeddedWeights)
        Used.push_back(SM.WeightsRegion);
      for (const std::string &R : Used)
        if (T->region(R) && !Map.ToFirmware.count(R))
          return makeError("{}: model '{}': {}", printable(SM.Source), SM.Name,
                           unmappedMessage(Map, *T, R));
    }
  }

  std::vector<std::vector<std::string>> Exclusive;
  for (const std::string &G : O.Exclusive)
    Exclusive.push_back(splitNames(G));
  auto Groups = resolveExclusive(Models, Exclusive);
  if (!Groups)
    return usageError(llvm::toString(Groups.takeError()));
  auto P = planSystem(std::move(Models), std::move(*Groups), *T);
  if (!P)
    return P.takeError();

  std::vector<OutputFile> Files = {
      {O.Out, writeSystemScript(*P, *T, Map), "the linker script (--out)"}};
  if (!O.Header.empty())
    Files.push_back({O.Header, writeSystemHeader(*P, *T, headerGuard(O.Header)),
                     "the header (--header)"});
  std::vector<InputFile> Inputs;
  for (const std::string &R : O.Reports)
    Inputs.push_back({R, "a build report"});
  if (!O.RegionsFrom.empty())
    Inputs.push_back(
        {O.RegionsFrom, "the firmware's linker script (--regions-from)"});
  if (auto E = writeOutputFiles(Files, Inputs))
    return E;

  for (const SystemPlan::RegionUse &U : P->Regions) {
    Out << fmt::format("{}: {} of {} bytes", U.Region, U.Bytes, U.Capacity);
    if (U.Unshared != U.Bytes)
      Out << fmt::format(" ({} without sharing)", U.Unshared);
    Out << "\n";
    for (const SystemSlot &S : P->Slots) {
      if (S.Region != U.Region)
        continue;
      std::vector<std::string> Names;
      for (size_t I : S.Members)
        Names.push_back(P->Models[I].Name);
      Out << fmt::format("  {:<10} {:>10}  {}\n",
                         S.Weights              ? "weights"
                         : S.Members.size() > 1 ? "shared"
                                                : "arena",
                         S.Bytes, fmt::join(Names, ", "));
    }
  }
  Out << "wrote " << O.Out;
  if (!O.Header.empty())
    Out << ", " << O.Header;
  Out << "\n";
  return llvm::Error::success();
}

} // namespace cuvil
