//===- SystemPlan.cpp -----------------------------------------------------===//
#include "emit/SystemPlan.h"

#include "emit/LinkerScript.h"

#include "ir/CheckedMath.h"
#include "ir/Diagnostic.h"
#include "ir/Escape.h"
#include "planner/MemoryPlan.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

namespace cuvil {

namespace {

std::string upper(std::string S) {
  for (char &C : S)
    C = static_cast<char>(std::toupper(static_cast<unsigned char>(C)));
  return S;
}

/// The model's arena in Region, or null.
const SystemModel::Arena *arenaIn(const SystemModel &M,
                                  const std::string &Region) {
  for (const SystemModel::Arena &A : M.Arenas)
    if (A.Region == Region)
      return &A;
  return nullptr;
}

} // namespace

llvm::Expected<std::vector<std::vector<size_t>>>
resolveExclusive(const std::vector<SystemModel> &Models,
                 const std::vector<std::vector<std::string>> &Exclusive) {
  std::map<std::string, size_t> ByName;
  for (size_t I = 0; I < Models.size(); ++I)
    ByName[Models[I].Name] = I;
  std::vector<int> GroupOf(Models.size(), -1);
  std::vector<std::vector<size_t>> Groups;
  for (const std::vector<std::string> &Names : Exclusive) {
    std::string Listed = fmt::format("{}", fmt::join(Names, ","));
    if (Names.size() < 2)
      return makeError("--exclusive '{}': name two or more models that "
                       "never run at the same time",
                       printable(Listed));
    std::vector<size_t> G;
    for (const std::string &N : Names) {
      auto It = ByName.find(N);
      if (It == ByName.end()) {
        std::vector<std::string> Known;
        for (const SystemModel &M : Models)
          Known.push_back(M.Name);
        return makeError("--exclusive '{}': no model is named '{}' (the "
                         "reports are of {})",
                         printable(Listed), printable(N),
                         fmt::join(Known, ", "));
      }
      size_t I = It->second;
      if (std::find(G.begin(), G.end(), I) != G.end())
        return makeError("--exclusive '{}': '{}' is named twice",
                         printable(Listed), printable(N));
      if (GroupOf[I] >= 0)
        return makeError("--exclusive: '{}' is in two groups; models that "
                         "never run at the same time go in one group",
                         printable(N));
      GroupOf[I] = static_cast<int>(Groups.size());
      G.push_back(I);
    }
    std::sort(G.begin(), G.end());
    Groups.push_back(std::move(G));
  }
  return Groups;
}

namespace {

/// The error for a region its contents exceed: every model's share, the
/// shared arenas, and the ways out.
llvm::Error overflowError(const SystemPlan &P, const SystemPlan::RegionUse &U,
                          const TargetInfo &T) {
  std::string Shares;
  for (const SystemSlot &S : P.Slots) {
    if (S.Region != U.Region)
      continue;
    if (S.Members.size() == 1) {
      const SystemModel &M = P.Models[S.Owner];
      Shares += fmt::format("\n  {}: {} {} bytes ({})", M.Name,
                            S.Weights ? "weights" : "arena", S.Bytes,
                            printable(M.Source));
      continue;
    }
    std::vector<std::string> Each;
    for (size_t I : S.Members)
      Each.push_back(fmt::format("{} {}", P.Models[I].Name,
                                 arenaIn(P.Models[I], U.Region)->Bytes));
    Shares += fmt::format("\n  exclusive {}: one arena of {} bytes",
                          fmt::join(Each, ", "), S.Bytes);
  }
  bool AllGrouped = true;
  for (const SystemSlot &S : P.Slots)
    if (S.Region == U.Region && !S.Weights && S.Members.size() == 1)
      AllGrouped = false;
  return makeError(
      "region '{}' of target '{}' holds {} bytes; the models need {} "
      "there, {} too many:{}\n{}rebuild a model with --arena-regions "
      "naming another region, or with a smaller --dim",
      U.Region, T.Name, U.Capacity, U.Bytes,
      U.Bytes - static_cast<int64_t>(U.Capacity), Shares,
      AllGrouped ? ""
                 : "models that never run at the same time can share "
                   "their arenas (--exclusive A,B); or ");
}

} // namespace

llvm::Expected<SystemPlan> planSystem(std::vector<SystemModel> Models,
                                      std::vector<std::vector<size_t>> Groups,
                                      const TargetInfo &T) {
  SystemPlan P;
  for (size_t I = 0; I < Models.size(); ++I)
    for (size_t J = 0; J < I; ++J)
      if (Models[I].Name == Models[J].Name)
        return makeError("{} and {} are both of a model named '{}': build "
                         "one with another --name",
                         printable(Models[J].Source),
                         printable(Models[I].Source), Models[I].Name);
  P.Groups = std::move(Groups);
  for (const SystemModel &M : Models) {
    P.Alignment = std::max(P.Alignment, M.Alignment);
    auto Check = [&](const std::string &R) -> llvm::Error {
      if (!T.region(R))
        return makeError("{}: model '{}' uses region '{}', which target "
                         "'{}' does not have (its regions: {})",
                         printable(M.Source), M.Name, printable(R), T.Name,
                         fmt::join(T.regionNames(), ", "));
      return llvm::Error::success();
    };
    for (const SystemModel::Arena &A : M.Arenas)
      if (auto E = Check(A.Region))
        return E;
    if (M.EmbeddedWeights)
      if (auto E = Check(M.WeightsRegion))
        return E;
  }
  P.Models = std::move(Models);
  const int64_t Align = P.Alignment;

  std::vector<int> GroupOf(P.Models.size(), -1);
  for (size_t G = 0; G < P.Groups.size(); ++G)
    for (size_t I : P.Groups[G])
      GroupOf[I] = static_cast<int>(G);

  for (const MemoryRegion &R : T.Regions) {
    SystemPlan::RegionUse U{R.Name, R.Length, 0, 0};
    int64_t ArenaAlign = Align;
    if (R.Banks > 1 && R.BankInterleave > 0)
      ArenaAlign = std::max(Align, R.Banks * R.BankInterleave);
    // Weights first, as in the models' own fragments.
    for (size_t I = 0; I < P.Models.size(); ++I) {
      const SystemModel &M = P.Models[I];
      if (M.EmbeddedWeights && M.WeightsRegion == R.Name)
        P.Slots.push_back(
            {R.Name, true, {I}, I, alignUp(M.WeightsBytes, Align), -1, Align});
    }
    // Arenas in the order of their first model; a group's arena where its
    // first member with an arena in this region comes.
    std::vector<bool> Done(P.Groups.size(), false);
    for (size_t I = 0; I < P.Models.size(); ++I) {
      if (!arenaIn(P.Models[I], R.Name))
        continue;
      int G = GroupOf[I];
      if (G < 0) {
        P.Slots.push_back({R.Name,
                           false,
                           {I},
                           I,
                           alignUp(arenaIn(P.Models[I], R.Name)->Bytes, Align),
                           -1,
                           ArenaAlign});
        continue;
      }
      if (Done[G])
        continue;
      Done[G] = true;
      SystemSlot S{R.Name, false, {}, I, 0, G, ArenaAlign};
      for (size_t J : P.Groups[G])
        if (const SystemModel::Arena *A = arenaIn(P.Models[J], R.Name)) {
          S.Members.push_back(J);
          if (alignUp(A->Bytes, Align) > S.Bytes) {
            S.Bytes = alignUp(A->Bytes, Align);
            S.Owner = J;
          }
        }
      // A group with one member in this region is an ordinary arena here.
      if (S.Members.size() == 1)
        S.Group = -1;
      P.Slots.push_back(std::move(S));
    }
    for (const SystemSlot &S : P.Slots)
      if (S.Region == R.Name) {
        U.Bytes += alignUp(S.Bytes, S.Align);
        for (size_t J : S.Members)
          U.Unshared +=
              S.Weights ? S.Bytes
                        : alignUp(arenaIn(P.Models[J], R.Name)->Bytes, Align);
      }
    if (U.Unshared > 0)
      P.Regions.push_back(U);
  }
  for (const SystemPlan::RegionUse &U : P.Regions)
    if (U.Bytes > static_cast<int64_t>(U.Capacity))
      return overflowError(P, U, T);
  return P;
}

std::string writeSystemScript(const SystemPlan &P, const TargetInfo &T,
                              const RegionMap &Map) {
  const int64_t A = P.Alignment;
  std::vector<std::string> Names;
  for (const SystemModel &M : P.Models)
    Names.push_back(M.Name);
  std::string S = fmt::format(
      "/* Memory plan of models {} (target {}), generated by cuvilc "
      "link-plan.\n"
      " * cuvil-models.ld INCLUDEs this file instead of the models' own "
      "fragments.\n",
      fmt::join(Names, ", "), cComment(T.Name));
  for (const SystemPlan::RegionUse &U : P.Regions)
    S += fmt::format(" * {}: {} of {} bytes ({} without sharing).\n",
                     cComment(U.Region), U.Bytes, U.Capacity, U.Unshared);
  for (const std::vector<size_t> &G : P.Groups) {
    std::vector<std::string> Members;
    for (size_t I : G)
      Members.push_back(P.Models[I].Name);
    S += fmt::format(" * Exclusive, one arena per region: {}. The firmware "
                     "never runs two of them at the same time.\n",
                     fmt::join(Members, ", "));
  }
  S += regionMapComment(Map) + alignmentComment(A);
  S += "SECTIONS\n{\n";
  std::string Discard, Asserts;
  for (const SystemSlot &Slot : P.Slots) {
    std::string FW = Map.firmwareName(Slot.Region);
    const std::string &Own = P.Models[Slot.Owner].Name;
    if (Slot.Weights) {
      S += weightsSection(Own, A, FW);
      continue;
    }
    if (Slot.Group < 0) {
      S += arenaSection(Own, Slot.Region, Slot.Align, FW);
      continue;
    }
    // One section for the group: the owner's input section (a real one,
    // so that both linkers give the section its NOBITS flags), grown to
    // the plan's size in case the owner shrank since.
    std::string Base =
        fmt::format("__cuvil_exclusive{}_arena_{}", Slot.Group, Slot.Region);
    std::vector<std::string> Members;
    for (size_t I : Slot.Members)
      Members.push_back(P.Models[I].Name);
    S += fmt::format("  /* Shared by {0}. */\n"
                     "  .cuvil.exclusive{1}.arena.{2} (NOLOAD) : ALIGN({3})\n"
                     "  {{\n"
                     "    {4}_start = .;\n"
                     "    KEEP(*(.cuvil.{5}.arena.{2}))\n"
                     "    . = MAX(., {4}_start + {6});\n"
                     "    . = ALIGN({3});\n"
                     "    {4}_end = .;\n"
                     "  }} > {7}\n",
                     fmt::join(Members, ", "), Slot.Group, Slot.Region,
                     Slot.Align, Base, Own, Slot.Bytes, FW);
    for (size_t I : Slot.Members) {
      const std::string &M = P.Models[I].Name;
      int64_t Bytes = alignUp(arenaIn(P.Models[I], Slot.Region)->Bytes, A);
      S += fmt::format("  __cuvil_{0}_arena_{1}_start = {2}_start;\n"
                       "  __cuvil_{0}_arena_{1}_end = {2}_start + {3};\n",
                       M, Slot.Region, Base, Bytes);
      if (I == Slot.Owner)
        continue;
      std::string Sym = arenaSymbol(M, Slot.Region);
      S += fmt::format("  {} = {}_start;\n", Sym, Base);
      Discard += fmt::format("    *(.cuvil.{}.arena.{})\n", M, Slot.Region);
      Asserts += fmt::format(
          "ASSERT({0}_bytes <= {1}, \"cuvil: the arena of model {2} in {3} "
          "outgrew the plan of {1} bytes: rerun cuvilc link-plan with the "
          "model's new report\")\n",
          Sym, Slot.Bytes, M, Slot.Region);
    }
  }
  if (!Discard.empty())
    S += "  /* The shared arenas' other input sections. */\n"
         "  /DISCARD/ :\n  {\n" +
         Discard + "  }\n";
  S += "}\n";
  return S + Asserts;
}

std::string writeSystemHeader(const SystemPlan &P, const TargetInfo &T,
                              const std::string &Guard) {
  std::vector<std::string> Names;
  for (const SystemModel &M : P.Models)
    Names.push_back(M.Name);
  std::string S = fmt::format(
      "/* Memory plan of models {0} (target {1}), generated by cuvilc "
      "link-plan. */\n#ifndef {2}\n#define {2}\n\n",
      fmt::join(Names, ", "), cComment(T.Name), Guard);
  S += fmt::format("#define CUVIL_SYSTEM_NUM_MODELS {}\n", P.Models.size());
  S += fmt::format("#define CUVIL_SYSTEM_ALIGN {}u\n\n", P.Alignment);
  S += "/* Per region: the bytes the plan places there (arenas and embedded\n"
       " * weights), the region's size, and the bytes without sharing. */\n";
  for (const SystemPlan::RegionUse &U : P.Regions) {
    std::string R = upper(U.Region);
    S += fmt::format("#define CUVIL_SYSTEM_{}_BYTES {}u\n", R, U.Bytes);
    S += fmt::format("#define CUVIL_SYSTEM_{}_CAPACITY {}u\n", R, U.Capacity);
    S += fmt::format("#define CUVIL_SYSTEM_{}_UNSHARED_BYTES {}u\n", R,
                     U.Unshared);
  }
  S += "\n/* Exclusive groups: the models of one group share their arenas;\n"
       " * the firmware must never run two of them at the same time (from\n"
       " * two cores, or a run interrupted by another). Any model may be\n"
       " * initialised at any time: init does not touch the arena.\n"
       " * CUVIL_SYSTEM_<MODEL>_GROUP is its group, -1 for none. */\n";
  S += fmt::format("#define CUVIL_SYSTEM_NUM_GROUPS {}\n", P.Groups.size());
  for (size_t I = 0; I < P.Models.size(); ++I) {
    int G = -1;
    for (size_t K = 0; K < P.Groups.size(); ++K)
      if (std::find(P.Groups[K].begin(), P.Groups[K].end(), I) !=
          P.Groups[K].end())
        G = static_cast<int>(K);
    S += fmt::format("#define CUVIL_SYSTEM_{}_GROUP {}\n",
                     upper(P.Models[I].Name), G);
  }
  S += fmt::format("\n#endif /* {} */\n", Guard);
  return S;
}

} // namespace cuvil
