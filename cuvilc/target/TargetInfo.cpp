//===- TargetInfo.cpp - targets/*.toml -> TargetInfo ----------------------===//
// Header-only, exception-free toml++ (the shared library is built with
// exceptions, which this library does not use).
#define TOML_EXCEPTIONS 0
#define TOML_HEADER_ONLY 1
// toml++ 3.3 asserts that a table header's key starts with a key character,
// which text such as "[=" breaks (found by tests/fuzz/fuzz_target_toml); its
// parser then reports the error itself ("expected bare key starting
// character or string delimiter"). The assertion exists only in builds
// without NDEBUG, such as the sanitized one: untrusted text must not abort.
#define TOML_ASSERT(expr) static_cast<void>(0)
#include "target/TargetInfo.h"

#include "ir/Diagnostic.h"
#include "ir/Escape.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/ranges.h>
#include <fstream>
#include <llvm/TargetParser/Triple.h>
#include <map>
#include <optional>
#include <sstream>
#include <toml++/toml.h>

#ifndef CUVIL_SOURCE_TARGETS_DIR
#error "CUVIL_SOURCE_TARGETS_DIR must name the source tree's targets/"
#endif
#ifndef CUVIL_INSTALLED_TARGETS_DIR
#define CUVIL_INSTALLED_TARGETS_DIR "../share/cuvil/targets"
#endif

namespace fs = std::filesystem;

namespace cuvil {

const MemoryRegion *TargetInfo::region(const std::string &N) const {
  for (const MemoryRegion &R : Regions)
    if (R.Name == N)
      return &R;
  return nullptr;
}

std::vector<std::string> TargetInfo::regionNames() const {
  std::vector<std::string> Names;
  for (const MemoryRegion &R : Regions)
    Names.push_back(R.Name);
  return Names;
}

std::string targetsDir() {
  if (const char *Env = std::getenv("CUVIL_TARGETS_DIR"))
    return Env;
  std::error_code EC;
  fs::path Self = fs::read_symlink("/proc/self/exe", EC);
  if (!EC) {
    fs::path Installed = Self.parent_path() / CUVIL_INSTALLED_TARGETS_DIR;
    if (fs::is_directory(Installed, EC))
      return Installed.lexically_normal().string();
  }
  return CUVIL_SOURCE_TARGETS_DIR;
}

/// The memory map must be one the planner can trust: every region inside
/// the address space, DMA-aligned (arenas and weights are placed at its
/// origin in multiples of dma_align), named once, and apart from the others.
static llvm::Error checkRegions(const std::string &Path, const TargetInfo &TI) {
  unsigned __int128 Space = static_cast<unsigned __int128>(1) << TI.AddressBits;
  std::vector<const MemoryRegion *> ByOrigin;
  for (const MemoryRegion &R : TI.Regions) {
    for (const MemoryRegion &Q : TI.Regions) {
      if (&Q == &R)
        break;
      if (Q.Name == R.Name)
        return makeError("{}:{}: region '{}' is defined twice (first at line "
                         "{})",
                         Path, R.Line, R.Name, Q.Line);
    }
    if (static_cast<unsigned __int128>(R.Origin) + R.Length > Space)
      return makeError("{}:{}: region '{}' (origin 0x{:x}, length 0x{:x}) "
                       "ends beyond the {}-bit address space",
                       Path, R.Line, R.Name, R.Origin, R.Length,
                       TI.AddressBits);
    if (R.Origin % TI.DmaAlign || R.Length % TI.DmaAlign)
      return makeError("{}:{}: region '{}': origin 0x{:x} and length 0x{:x} "
                       "must be multiples of memory.dma_align ({})",
                       Path, R.Line, R.Name, R.Origin, R.Length, TI.DmaAlign);
    int64_t Granule = R.BankInterleave ? R.BankInterleave
                      : R.BankSize     ? R.BankSize
                                   : static_cast<int64_t>(R.Length / R.Banks);
    if (R.Banks > 1 && Granule % TI.DmaAlign)
      return makeError("{}:{}: region '{}': the bank granule ({} bytes) must "
                       "be a multiple of memory.dma_align ({})",
                       Path, R.Line, R.Name, Granule, TI.DmaAlign);
    ByOrigin.push_back(&R);
  }
  std::stable_sort(ByOrigin.begin(), ByOrigin.end(),
                   [](const MemoryRegion *A, const MemoryRegion *B) {
                     return A->Origin < B->Origin;
                   });
  for (size_t I = 1; I < ByOrigin.size(); ++I) {
    const MemoryRegion &A = *ByOrigin[I - 1], &B = *ByOrigin[I];
    if (static_cast<unsigned __int128>(A.Origin) + A.Length <= B.Origin)
      continue;
    // Name the one defined later in the file, the other by its line.
    const MemoryRegion &Late = A.Line > B.Line ? A : B;
    const MemoryRegion &Early = A.Line > B.Line ? B : A;
    auto Range = [](const MemoryRegion &R) {
      return fmt::format("[0x{:x}, 0x{:x})", R.Origin,
                         static_cast<unsigned __int128>(R.Origin) + R.Length);
    };
    return makeError("{}:{}: region '{}' {} overlaps region '{}' {} (line {})",
                     Path, Late.Line, Late.Name, Range(Late), Early.Name,
                     Range(Early), Early.Line);
  }
  return llvm::Error::success();
}

/// An integer key: Default when it is absent. A value of another type is
/// reported through Bad (the key's name): toml++ would convert a float such
/// as 4e96 to int64_t with undefined behaviour (found by
/// tests/fuzz/fuzz_target_toml).
template <typename View>
static int64_t intKey(View N, int64_t Default, const char *Key,
                      std::string &Bad) {
  if (!N)
    return Default;
  if (const auto *I = N.as_integer())
    return I->get();
  if (Bad.empty())
    Bad = Key;
  return Default;
}

/// The optional [perf] table: peak MACs per cycle and core, positive
/// numbers (an integer is taken as the number it is).
static llvm::Error readPerf(const toml::table &T, const std::string &Path,
                            TargetInfo &TI) {
  auto Peak = [&](const char *Key, double &Out) -> llvm::Error {
    toml::node_view<const toml::node> N = T.at_path(Key);
    if (!N)
      return llvm::Error::success();
    std::optional<double> V = N.is_integer()
                                  ? std::optional<double>(N.as_integer()->get())
                                  : N.value<double>();
    if (!V || !(*V > 0) || *V > 1e6)
      return makeError("{}:{}: {} must be a positive number of MACs per "
                       "cycle",
                       Path, N.node()->source().begin.line, Key);
    Out = *V;
    return llvm::Error::success();
  };
  if (auto E = Peak("perf.peak_macs_per_cycle_f32", TI.PeakMacsF32))
    return E;
  return Peak("perf.peak_macs_per_cycle_int8", TI.PeakMacsInt8);
}

/// The target described by R, the parse of the file at Path.
static llvm::Expected<TargetInfo> targetFromToml(const toml::parse_result &R,
                                                 const std::string &Path) {
  if (!R)
    return makeError("{}:{}: {}", Path, R.error().source().begin.line,
                     R.error().description());
  const toml::table &T = R.table();
  TargetInfo TI;
  std::string Missing;
  auto Str = [&](std::string_view Key, std::string &Out, bool Required) {
    auto V = T.at_path(Key).value<std::string>();
    if (V)
      Out = *V;
    else if (Required && Missing.empty())
      Missing = std::string(Key);
  };
  Str("name", TI.Name, true);
  TI.Path = Path;
  if (const toml::node *N = T.get("name"))
    TI.NameLine = N->source().begin.line;
  Str("description", TI.Description, false);
  Str("llvm.triple", TI.Triple, true);
  Str("llvm.cpu", TI.CPU, true);
  Str("llvm.features", TI.Features, false);
  Str("llvm.abi", TI.ABI, false);
  Str("llvm.code_model", TI.CodeModel, false);
  Str("llvm.kernels", TI.Kernels, false);
  if (TI.Kernels.empty())
    TI.Kernels = TI.Name;
  Str("llvm.clang_flags", TI.ClangFlags, false);
  Str("runtime.boot", TI.Boot, false);
  if (TI.Boot.empty())
    TI.Boot = TI.Name;
  Str("qemu.command", TI.QemuCommand, false);
  Str("qemu.base_linker_script", TI.BaseLinkerScript, false);
  Str("memory.weights_region", TI.WeightsRegion, true);
  TI.PIC = T.at_path("llvm.pic").value_or(false);
  TI.AllowSpill = T.at_path("memory.spill").value_or(false);
  std::string NotInt;
  TI.DmaAlign =
      intKey(T.at_path("memory.dma_align"), 64, "memory.dma_align", NotInt);
  TI.CacheLine =
      intKey(T.at_path("memory.cache_line"), 64, "memory.cache_line", NotInt);
  if (!NotInt.empty())
    return makeError("{}: {} must be an integer", Path, NotInt);
  if (auto E = readPerf(T, Path, TI))
    return E;
  if (!Missing.empty())
    return makeError("{}: missing required key '{}'", Path, Missing);
  // The name is what --target takes and what names the kernel library.
  if (TI.Name.empty() ||
      !std::all_of(TI.Name.begin(), TI.Name.end(), [](char C) {
        return std::isalnum(static_cast<unsigned char>(C)) || C == '-' ||
               C == '_' || C == '.';
      }))
    return makeError("{}:{}: target name '{}' may only hold letters, digits, "
                     "'-', '_' and '.'",
                     Path, TI.NameLine, printable(TI.Name));
  if (TI.DmaAlign < TI.CacheLine || (TI.DmaAlign & (TI.DmaAlign - 1)))
    return makeError("{}: memory.dma_align must be a power of two and at "
                     "least memory.cache_line",
                     Path);
  if (auto *A = T.at_path("memory.arena_regions").as_array())
    for (const auto &E : *A)
      if (auto S = E.value<std::string>())
        TI.ArenaRegions.push_back(*S);
  if (auto *Regs = T.at_path("memory.region").as_array())
    for (const auto &E : *Regs) {
      const toml::table *RT = E.as_table();
      if (!RT)
        continue;
      MemoryRegion MR;
      MR.Line = E.source().begin.line;
      MR.Name = (*RT)["name"].value_or(std::string());
      std::string Bad;
      int64_t Origin = intKey((*RT)["origin"], 0, "origin", Bad);
      int64_t Length = intKey((*RT)["length"], 0, "length", Bad);
      MR.Access = (*RT)["access"].value_or(std::string("rwx"));
      MR.Kind = (*RT)["kind"].value_or(std::string());
      MR.Banks = intKey((*RT)["banks"], 1, "banks", Bad);
      MR.BankSize = intKey((*RT)["bank_size"], 0, "bank_size", Bad);
      MR.BankInterleave =
          intKey((*RT)["bank_interleave"], 0, "bank_interleave", Bad);
      if (!Bad.empty())
        return makeError("{}:{}: region '{}': {} must be an integer", Path,
                         MR.Line, printable(MR.Name), Bad);
      if (MR.Banks < 1 || MR.Banks > 64 || (MR.BankSize && MR.BankInterleave))
        return makeError("{}:{}: region '{}': banks must be 1..64, with "
                         "either bank_size or bank_interleave",
                         Path, MR.Line, MR.Name);
      if (MR.Name.empty() || Length == 0)
        return makeError("{}:{}: every [[memory.region]] needs a name and a "
                         "non-zero length",
                         Path, MR.Line);
      // The name becomes a MEMORY region of the linker-script fragment and
      // part of section and symbol names: an identifier, nothing else.
      if (!isLinkerScriptName(MR.Name))
        return makeError("{}:{}: region name '{}' must be a linker-script "
                         "identifier (letters, digits and '_', not starting "
                         "with a digit)",
                         Path, MR.Line, printable(MR.Name));
      if (Origin < 0 || Length < 0 || MR.BankSize < 0 || MR.BankInterleave < 0)
        return makeError("{}:{}: region '{}': origin, length and bank sizes "
                         "must not be negative",
                         Path, MR.Line, MR.Name);
      MR.Origin = static_cast<uint64_t>(Origin);
      MR.Length = static_cast<uint64_t>(Length);
      TI.Regions.push_back(MR);
    }
  llvm::Triple Triple(TI.Triple);
  TI.AddressBits = Triple.isArch64Bit() ? 64 : Triple.isArch32Bit() ? 32 : 16;
  if (auto E = checkRegions(Path, TI))
    return E;
  if (TI.ArenaRegions.empty())
    return makeError("{}: memory.arena_regions is empty", Path);
  for (const std::string &N : TI.ArenaRegions) {
    if (!TI.region(N))
      return makeError("{}: arena region '{}' is not a [[memory.region]]", Path,
                       N);
    if (!TI.region(N)->writable())
      return makeError("{}: arena region '{}' is not writable", Path, N);
  }
  if (!TI.region(TI.WeightsRegion))
    return makeError("{}: weights region '{}' is not a [[memory.region]]", Path,
                     TI.WeightsRegion);
  return TI;
}

llvm::Expected<TargetInfo> loadTargetFile(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    return makeError("{}: cannot read the file", Path);
  std::stringstream SS;
  SS << In.rdbuf();
  return parseTarget(SS.str(), Path);
}

llvm::Expected<TargetInfo> parseTarget(std::string_view Text,
                                       const std::string &Path) {
  // Target files are ASCII. toml++ 3.3 trips over a NUL byte in a table
  // header (see TOML_ASSERT above), and its Unicode whitespace table reaches
  // __builtin_unreachable on some characters (U+00A1 between tokens):
  // found by tests/fuzz/fuzz_target_toml. Refuse both first, with the line.
  auto Bad = std::find_if(Text.begin(), Text.end(), [](char C) {
    return C == '\0' || static_cast<unsigned char>(C) >= 0x80;
  });
  if (Bad != Text.end())
    return makeError("{}:{}: byte 0x{:02x}: a target file is ASCII text", Path,
                     1 + std::count(Text.begin(), Bad, '\n'),
                     static_cast<unsigned char>(*Bad));
  return targetFromToml(toml::parse(Text, Path), Path);
}

llvm::Expected<TargetScan> scanTargets() {
  std::vector<std::string> Files;
  std::error_code EC;
  for (const auto &E : fs::directory_iterator(targetsDir(), EC))
    if (E.path().extension() == ".toml")
      Files.push_back(E.path().string());
  if (EC)
    return makeError("cannot read the targets directory {}: {}", targetsDir(),
                     EC.message());
  std::sort(Files.begin(), Files.end()); // messages in a stable order
  TargetScan S;
  std::map<std::string, std::vector<TargetInfo>> ByName;
  for (const std::string &F : Files) {
    auto T = loadTargetFile(F);
    if (!T) {
      S.Problems.push_back(llvm::toString(T.takeError()));
      continue;
    }
    ByName[T->Name].push_back(std::move(*T));
  }
  // By name (a file-name order would put host-avx512.toml before host.toml).
  for (auto &[Name, Defs] : ByName) {
    if (Defs.size() == 1) {
      S.Targets.push_back(std::move(Defs[0]));
      continue;
    }
    for (size_t I = 1; I < Defs.size(); ++I)
      S.Problems.push_back(fmt::format(
          "{}:{}: target name '{}' is already used by {}:{}; rename one of "
          "them",
          Defs[I].Path, Defs[I].NameLine, Name, Defs[0].Path,
          Defs[0].NameLine));
  }
  return S;
}

llvm::Expected<std::vector<TargetInfo>> loadAllTargets() {
  auto S = scanTargets();
  if (!S)
    return S.takeError();
  llvm::Error All = llvm::Error::success();
  for (const std::string &P : S->Problems)
    All = llvm::joinErrors(std::move(All), makeError("{}", P));
  if (All)
    return All;
  return std::move(S->Targets);
}

llvm::Expected<TargetInfo> loadTarget(const std::string &Name) {
  if (Name.ends_with(".toml") || Name.find('/') != std::string::npos) {
    std::error_code EC;
    if (!fs::is_regular_file(Name, EC))
      return makeError("target file '{}' does not exist", Name);
    return loadTargetFile(Name);
  }
  auto S = scanTargets();
  if (!S)
    return S.takeError();
  for (TargetInfo &T : S->Targets)
    if (T.Name == Name)
      return std::move(T);
  // Its own file is broken, or its name is taken twice: say so.
  std::string File = (fs::path(targetsDir()) / (Name + ".toml")).string();
  for (const std::string &P : S->Problems)
    if (P.starts_with(File + ":") ||
        P.find("target name '" + Name + "'") != std::string::npos)
      return makeError("{}", P);
  std::vector<std::string> Known;
  for (const TargetInfo &T : S->Targets)
    Known.push_back(T.Name);
  return makeError("unknown target '{}' (known targets: {})", Name,
                   fmt::join(Known, ", "));
}

} // namespace cuvil
