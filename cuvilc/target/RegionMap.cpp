//===- RegionMap.cpp - Target memory regions -> a firmware's names --------===//
#include "target/RegionMap.h"

#include "ir/Diagnostic.h"

#include <llvm/Support/MemoryBuffer.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace cuvil {

namespace {

bool isIdentStart(char C) {
  return std::isalpha(static_cast<unsigned char>(C)) || C == '_' || C == '.';
}
bool isIdentChar(char C) {
  return std::isalnum(static_cast<unsigned char>(C)) || C == '_' || C == '.' ||
         C == '$';
}

/// A token of a MEMORY block: a word (identifier or number with its
/// suffix) or one punctuation character.
struct Token {
  std::string Text;
  int64_t Line = 0;
};

/// The tokens of Text, comments (/* */) left out. Fails on an unterminated
/// comment.
llvm::Expected<std::vector<Token>> tokenize(std::string_view Text,
                                            const std::string &Path) {
  std::vector<Token> Out;
  int64_t Line = 1;
  for (size_t I = 0; I < Text.size();) {
    char C = Text[I];
    if (C == '\n') {
      ++Line;
      ++I;
    } else if (std::isspace(static_cast<unsigned char>(C))) {
      ++I;
    } else if (Text.substr(I, 2) == "/*") {
      size_t End = Text.find("*/", I + 2);
      if (End == std::string_view::npos)
        return makeError("{}:{}: unterminated comment", Path, Line);
      Line += std::count(Text.begin() + I, Text.begin() + End, '\n');
      I = End + 2;
    } else if (isIdentChar(C)) {
      size_t J = I;
      while (J < Text.size() && isIdentChar(Text[J]))
        ++J;
      Out.push_back({std::string(Text.substr(I, J - I)), Line});
      I = J;
    } else {
      Out.push_back({std::string(1, C), Line});
      ++I;
    }
  }
  return Out;
}

/// A linker-script number: decimal, 0x hex, leading-0 octal, with an
/// optional K, M or G suffix. Nullopt if Word is not one or overflows.
std::optional<uint64_t> parseNumber(const std::string &Word) {
  if (Word.empty() || !std::isdigit(static_cast<unsigned char>(Word[0])))
    return std::nullopt;
  std::string Digits = Word;
  uint64_t Scale = 1;
  char Last = static_cast<char>(std::toupper(Digits.back()));
  bool Hex = Digits.size() > 2 && Digits[0] == '0' &&
             (Digits[1] == 'x' || Digits[1] == 'X');
  // In a hex number a trailing digit is not a suffix (0x1 vs 1K).
  if ((Last == 'K' || Last == 'M' || Last == 'G') && !Hex) {
    Scale = Last == 'K' ? 1024ull : Last == 'M' ? 1024ull * 1024 : 1ull << 30;
    Digits.pop_back();
  }
  unsigned Base = 10;
  size_t Start = 0;
  if (Hex) {
    Base = 16;
    Start = 2;
  } else if (Digits.size() > 1 && Digits[0] == '0') {
    Base = 8;
    Start = 1;
  }
  if (Start >= Digits.size())
    return std::nullopt;
  uint64_t V = 0;
  for (size_t I = Start; I < Digits.size(); ++I) {
    char C = static_cast<char>(std::tolower(Digits[I]));
    unsigned D;
    if (C >= '0' && C <= '9')
      D = static_cast<unsigned>(C - '0');
    else if (C >= 'a' && C <= 'f')
      D = static_cast<unsigned>(C - 'a' + 10);
    else
      return std::nullopt;
    if (D >= Base || V > (UINT64_MAX - D) / Base)
      return std::nullopt;
    V = V * Base + D;
  }
  if (V > UINT64_MAX / Scale)
    return std::nullopt;
  return V * Scale;
}

/// Reads the tokens of one MEMORY block from Toks[I] (just after its '{').
class MemoryBlockParser {
public:
  MemoryBlockParser(const std::vector<Token> &Toks, size_t &I,
                    const std::string &Path)
      : Toks(Toks), I(I), Path(Path) {}

  llvm::Error parse(std::vector<ScriptRegion> &Out) {
    while (true) {
      if (I >= Toks.size())
        return makeError("{}: MEMORY block without its closing '}}'", Path);
      if (Toks[I].Text == "}") {
        ++I;
        return llvm::Error::success();
      }
      ScriptRegion R;
      R.Line = Toks[I].Line;
      R.Name = Toks[I].Text;
      if (!isIdentStart(R.Name[0]))
        return error(Toks[I], "expected a region name");
      ++I;
      if (at("(")) { // attributes: (rwx), (!w)...
        while (I < Toks.size() && Toks[I].Text != ")")
          ++I;
        ++I;
      }
      if (auto E = expect(":"))
        return E;
      if (auto E = keyword({"ORIGIN", "org", "o"}))
        return E;
      auto Origin = expression();
      if (!Origin)
        return Origin.takeError();
      if (at(","))
        ++I;
      if (auto E = keyword({"LENGTH", "len", "l"}))
        return E;
      auto Length = expression();
      if (!Length)
        return Length.takeError();
      R.Origin = *Origin;
      R.Length = *Length;
      Out.push_back(std::move(R));
    }
  }

private:
  const std::vector<Token> &Toks;
  size_t &I;
  const std::string &Path;

  bool at(std::string_view S) const {
    return I < Toks.size() && Toks[I].Text == S;
  }
  const Token &here() const {
    static const Token End{"end of file", 0};
    return I < Toks.size() ? Toks[I] : End;
  }
  llvm::Error error(const Token &T, std::string_view What) const {
    return makeError("{}:{}: MEMORY: {} (at '{}')", Path, T.Line, What, T.Text);
  }
  llvm::Error expect(std::string_view S) {
    if (!at(S))
      return error(here(), fmt::format("expected '{}'", S));
    ++I;
    return llvm::Error::success();
  }
  /// One of Names (ORIGIN or its abbreviations), then '='.
  llvm::Error keyword(std::initializer_list<std::string_view> Names) {
    const Token &T = here();
    if (std::find(Names.begin(), Names.end(), T.Text) == Names.end())
      return error(T, fmt::format("expected {}", *Names.begin()));
    ++I;
    return expect("=");
  }
  /// Numbers joined by + and -: what MEMORY blocks use in practice.
  llvm::Expected<uint64_t> expression() {
    uint64_t V = 0;
    bool Negative = false;
    while (true) {
      const Token &T = here();
      std::optional<uint64_t> N = parseNumber(T.Text);
      if (!N)
        return error(T, "cuvil reads numbers (with K, M or G) joined by + "
                        "and - here, not symbols or functions; give the "
                        "region names with --region-map instead");
      ++I;
      if (Negative ? *N > V : V > UINT64_MAX - *N)
        return error(T, "the value is out of range");
      V = Negative ? V - *N : V + *N;
      if (at("+") || at("-")) {
        Negative = at("-");
        ++I;
        continue;
      }
      return V;
    }
  }
};

bool isLinkerIdentifier(const std::string &S) {
  return !S.empty() &&
         (std::isalpha(static_cast<unsigned char>(S[0])) || S[0] == '_') &&
         std::all_of(S.begin(), S.end(), [](char C) {
           return std::isalnum(static_cast<unsigned char>(C)) || C == '_';
         });
}

} // namespace

llvm::Expected<std::vector<ScriptRegion>>
parseMemoryRegions(std::string_view Text, const std::string &Path) {
  auto Toks = tokenize(Text, Path);
  if (!Toks)
    return Toks.takeError();
  std::vector<ScriptRegion> Out;
  for (size_t I = 0; I < Toks->size();) {
    if ((*Toks)[I].Text == "MEMORY" && I + 1 < Toks->size() &&
        (*Toks)[I + 1].Text == "{") {
      I += 2;
      if (auto E = MemoryBlockParser(*Toks, I, Path).parse(Out))
        return E;
    } else {
      ++I;
    }
  }
  if (Out.empty())
    return makeError("{}: no MEMORY block with regions", Path);
  std::set<std::string> Seen;
  for (const ScriptRegion &R : Out)
    if (!Seen.insert(R.Name).second)
      return makeError("{}:{}: MEMORY region '{}' is declared twice", Path,
                       R.Line, R.Name);
  return Out;
}

std::string RegionMap::describe() const {
  std::vector<std::string> Parts;
  for (const auto &[Target, Firmware] : ToFirmware)
    Parts.push_back(Target + "=" + Firmware);
  return fmt::format("{}", fmt::join(Parts, ", "));
}

std::string RegionMap::firmwareName(const std::string &Region) const {
  auto It = ToFirmware.find(Region);
  return It == ToFirmware.end() ? Region : It->second;
}

std::string RegionMap::targetName(const TargetInfo &T,
                                  const std::string &Name) const {
  if (T.region(Name))
    return Name;
  std::string Found;
  for (const auto &[Target, Firmware] : ToFirmware)
    if (Firmware == Name) {
      if (!Found.empty())
        return ""; // two target regions in one firmware region
      Found = Target;
    }
  return Found;
}

llvm::Expected<RegionMap> parseRegionMap(const std::vector<std::string> &Pairs,
                                         const TargetInfo &T) {
  RegionMap M;
  M.Source = "--region-map";
  for (const std::string &P : Pairs) {
    size_t Eq = P.find('=');
    std::string From = P.substr(0, Eq);
    std::string To = Eq == std::string::npos ? "" : P.substr(Eq + 1);
    if (Eq == std::string::npos || From.empty() || To.empty())
      return makeError("--region-map: '{}' is not TARGET_REGION="
                       "FIRMWARE_REGION (e.g. DDR=RAM)",
                       P);
    if (!T.region(From))
      return makeError("--region-map: target '{}' has no memory region '{}' "
                       "(its regions: {})",
                       T.Name, From, fmt::join(T.regionNames(), ", "));
    if (!isLinkerIdentifier(To))
      return makeError("--region-map: '{}' is not a linker-script region "
                       "name (letters, digits and _, not starting with a "
                       "digit)",
                       To);
    if (!M.ToFirmware.emplace(From, To).second)
      return makeError("--region-map: region '{}' is mapped twice", From);
  }
  return M;
}

llvm::Expected<RegionMap> regionMapFromScript(const std::string &Path,
                                              TargetInfo &T) {
  auto Buf = llvm::MemoryBuffer::getFile(Path, /*IsText=*/true);
  if (!Buf)
    return makeError("--regions-from: cannot read '{}': {}", Path,
                     Buf.getError().message());
  auto Script = parseMemoryRegions((*Buf)->getBuffer(), Path);
  if (!Script)
    return Script.takeError();
  RegionMap M;
  M.Source = Path;
  M.Script = std::move(*Script);
  const uint64_t A = static_cast<uint64_t>(T.DmaAlign);
  for (MemoryRegion &R : T.Regions) {
    // The firmware region sharing the most bytes with R.
    const uint64_t RBegin = static_cast<uint64_t>(R.Origin);
    const uint64_t REnd = RBegin + static_cast<uint64_t>(R.Length);
    const ScriptRegion *Best = nullptr;
    uint64_t BestBegin = 0, BestEnd = 0;
    for (const ScriptRegion &S : M.Script) {
      uint64_t SEnd =
          S.Length > UINT64_MAX - S.Origin ? UINT64_MAX : S.Origin + S.Length;
      // Inside both, aligned like every arena and blob.
      uint64_t B = (std::max(RBegin, S.Origin) + A - 1) / A * A;
      uint64_t E = std::min(REnd, SEnd) / A * A;
      if (E > B && (!Best || E - B > BestEnd - BestBegin)) {
        Best = &S;
        BestBegin = B;
        BestEnd = E;
      }
    }
    if (!Best)
      continue;
    M.ToFirmware.emplace(R.Name, Best->Name);
    R.Origin = static_cast<int64_t>(BestBegin);
    R.Length = static_cast<int64_t>(BestEnd - BestBegin);
  }
  return M;
}

std::string unmappedMessage(const RegionMap &M, const TargetInfo &T,
                            const std::string &Region) {
  std::vector<std::string> Have;
  for (const ScriptRegion &S : M.Script)
    Have.push_back(fmt::format("{} 0x{:x}+0x{:x}", S.Name, S.Origin, S.Length));
  const MemoryRegion *R = T.region(Region);
  return fmt::format(
      "{}: no MEMORY region overlaps target region '{}' (0x{:x}+0x{:x}); "
      "the script declares {}; choose another region or name it with "
      "--region-map",
      M.Source, Region, R ? R->Origin : 0, R ? R->Length : 0,
      fmt::join(Have, ", "));
}

} // namespace cuvil
