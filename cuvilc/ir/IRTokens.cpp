//===- IRTokens.cpp - The IR parser: tokens, errors, constant data --------===//
#include "ir/Escape.h"
#include "ir/IRParserImpl.h"
#include "ir/IRSyntax.h"

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace cuvil::irparser {

void Parser::skipSpace() {
  while (Pos < Src.size()) {
    char C = Src[Pos];
    if (C == ' ' || C == '\t' || C == '\n' || C == '\r') {
      ++Pos;
    } else if (Src.substr(Pos, 2) == "//") {
      size_t End = Src.find('\n', Pos);
      Pos = End == std::string_view::npos ? Src.size() : End;
    } else {
      return;
    }
  }
}

bool Parser::consumeWord(std::string_view W) {
  skipSpace();
  if (Src.substr(Pos, W.size()) != W ||
      (Pos + W.size() < Src.size() && isOpNameChar(Src[Pos + W.size()])))
    return false;
  Pos += W.size();
  return true;
}

bool Parser::fail(size_t At, std::string Msg) {
  if (!Error.empty())
    return false;
  size_t Line = 1, LineStart = 0;
  for (size_t I = 0; I < At && I < Src.size(); ++I)
    if (Src[I] == '\n') {
      ++Line;
      LineStart = I + 1;
    }
  Error = fmt::format("{}:{}:{}: {}", File, Line, At - LineStart + 1, Msg);
  return false;
}

bool Parser::expected(std::string_view What) {
  skipSpace();
  std::string Found = "the end of the input";
  if (Pos < Src.size()) {
    size_t End = Pos + 1;
    while (End < Src.size() && End < Pos + 20 && isBareNameChar(Src[End]) &&
           isBareNameChar(Src[Pos]))
      ++End;
    Found = fmt::format("'{}'", printable(Src.substr(Pos, End - Pos)));
  }
  return fail(Pos, fmt::format("expected {}, found {}", What, Found));
}

bool Parser::parseString(std::string &Out) {
  size_t Start = Pos;
  if (!consume('"'))
    return expected("a string");
  Out.clear();
  while (Pos < Src.size() && Src[Pos] != '"') {
    char C = Src[Pos++];
    if (C == '\n')
      return fail(Start, "unterminated string");
    if (C != '\\') {
      Out += C;
      continue;
    }
    char E = Pos < Src.size() ? Src[Pos++] : '\0';
    if (E == '"' || E == '\\') {
      Out += E;
    } else if (E == 'n') {
      Out += '\n';
    } else if (E == 't') {
      Out += '\t';
    } else if (E == 'x' && Pos + 2 <= Src.size() &&
               std::isxdigit(static_cast<unsigned char>(Src[Pos])) &&
               std::isxdigit(static_cast<unsigned char>(Src[Pos + 1]))) {
      Out += static_cast<char>(
          std::stoi(std::string(Src.substr(Pos, 2)), nullptr, 16));
      Pos += 2;
    } else {
      return fail(Pos - 2, "expected an escape (\\\" \\\\ \\n \\t \\xNN) in "
                           "the string");
    }
  }
  if (Pos >= Src.size())
    return fail(Start, "unterminated string");
  ++Pos;
  return true;
}

bool Parser::parseName(std::string &Out, std::string_view What) {
  if (peek() == '"')
    return parseString(Out);
  size_t Start = Pos;
  // A ':' belongs to the name only when more of the name follows it.
  while (Pos < Src.size() && isBareNameChar(Src[Pos]) &&
         (Src[Pos] != ':' ||
          (Pos + 1 < Src.size() && isBareNameChar(Src[Pos + 1]))))
    ++Pos;
  if (Pos == Start)
    return expected(What);
  Out = std::string(Src.substr(Start, Pos - Start));
  return true;
}

bool Parser::parseToken(std::string &Out) {
  skipSpace();
  size_t Start = Pos;
  while (Pos < Src.size() &&
         (std::isalnum(static_cast<unsigned char>(Src[Pos])) ||
          Src[Pos] == '.' || Src[Pos] == '+' || Src[Pos] == '-'))
    ++Pos;
  Out = std::string(Src.substr(Start, Pos - Start));
  return Pos != Start;
}

bool isInteger(const std::string &T) {
  size_t I = !T.empty() && (T[0] == '-' || T[0] == '+');
  return I < T.size() && T.find_first_not_of("0123456789", I) == T.npos;
}

bool Parser::parseInt(int64_t &Out, std::string_view What) {
  skipSpace();
  size_t At = Pos;
  std::string T;
  if (!parseToken(T) || !isInteger(T)) {
    Pos = At;
    return expected(What);
  }
  errno = 0;
  Out = std::strtoll(T.c_str(), nullptr, 10);
  return errno == 0 ||
         fail(At, fmt::format("{} '{}' is out of range", What, T));
}

template <typename T> static void append(std::vector<uint8_t> &Out, T X) {
  uint8_t B[sizeof(T)];
  std::memcpy(B, &X, sizeof(T));
  Out.insert(Out.end(), B, B + sizeof(T));
}

bool Parser::parseElement(DType Ty, std::vector<uint8_t> &Out) {
  skipSpace();
  size_t At = Pos;
  std::string T;
  parseToken(T);
  std::string_view TyName = dtypeName(Ty);
  auto Bad = [&] {
    Pos = At;
    return expected(fmt::format("a {} element", TyName));
  };
  char *End = nullptr;
  errno = 0;
  if (Ty == DType::F32 || Ty == DType::F64) {
    double D = Ty == DType::F32 ? std::strtof(T.c_str(), &End)
                                : std::strtod(T.c_str(), &End);
    if (T.empty() || *End)
      return Bad();
    Ty == DType::F32 ? append(Out, static_cast<float>(D)) : append(Out, D);
    return true;
  }
  if (Ty == DType::F16 || Ty == DType::BF16)
    return fail(At, fmt::format("{} data is written as hex<...>", TyName));
  if (Ty == DType::Bool && (T == "true" || T == "false"))
    T.assign(1, T == "true" ? '1' : '0');
  if (!isInteger(T))
    return Bad();
  bool Signed = TyName[0] == 'i';
  unsigned Bits = dtypeSize(Ty) * 8;
  if (Signed) {
    long long X = std::strtoll(T.c_str(), &End, 10);
    if (errno ||
        (Bits < 64 && (X < -(1ll << (Bits - 1)) || X >= (1ll << (Bits - 1)))))
      return fail(At, fmt::format("{} does not fit {}", T, TyName));
    Out.insert(Out.end(), reinterpret_cast<uint8_t *>(&X),
               reinterpret_cast<uint8_t *>(&X) + Bits / 8);
    return true;
  }
  unsigned long long X = std::strtoull(T.c_str(), &End, 10);
  unsigned long long Max = Ty == DType::Bool ? 1
                           : Bits == 64      ? ~0ull
                                             : (1ull << Bits) - 1;
  if (errno || T[0] == '-' || X > Max)
    return fail(At, fmt::format("{} does not fit {}", T, TyName));
  Out.insert(Out.end(), reinterpret_cast<uint8_t *>(&X),
             reinterpret_cast<uint8_t *>(&X) + Bits / 8);
  return true;
}

/// fill<SEED>: xorshift64* numbers scaled to each type's small range.
static bool fillData(DType Ty, int64_t Count, uint64_t Seed,
                     std::vector<uint8_t> &Out) {
  uint64_t S = Seed * 0x9e3779b97f4a7c15ull + 1;
  for (int64_t I = 0; I < Count; ++I) {
    S ^= S >> 12;
    S ^= S << 25;
    S ^= S >> 27;
    uint64_t R = S * 0x2545f4914f6cdd1dull;
    double Unit = static_cast<double>(R >> 40) / (1 << 24); // [0, 1)
    int64_t Small = static_cast<int64_t>(R >> 60) - 8;      // [-8, 8)
    switch (Ty) {
    case DType::F32: append(Out, static_cast<float>(Unit * 2 - 1)); break;
    case DType::F64: append(Out, Unit * 2 - 1); break;
    case DType::F16:
    case DType::BF16: return false;
    case DType::Bool: Out.push_back(static_cast<uint8_t>(R >> 63)); break;
    default:
      Out.insert(Out.end(), reinterpret_cast<uint8_t *>(&Small),
                 reinterpret_cast<uint8_t *>(&Small) + dtypeSize(Ty));
    }
  }
  return true;
}

bool Parser::parseData(Value &V) {
  skipSpace();
  size_t At = Pos;
  int64_t Count = V.numElements();
  std::vector<uint8_t> D;
  if (!V.hasStaticShape())
    return fail(At, fmt::format("constant %{} needs a static shape",
                                printable(V.name())));
  if (consumeWord("dense")) {
    if (!expect('<', "after 'dense'"))
      return false;
    if (consume('[')) {
      if (peek() != ']')
        do
          if (!parseElement(V.dtype(), D))
            return false;
        while (consume(','));
      if (!expect(']', "after the elements"))
        return false;
      if (D.size() != static_cast<size_t>(Count) * dtypeSize(V.dtype()))
        return fail(At, fmt::format("constant %{} has {} elements, its "
                                    "shape wants {}",
                                    printable(V.name()),
                                    D.size() / dtypeSize(V.dtype()), Count));
    } else {
      if (!parseElement(V.dtype(), D))
        return false;
      std::vector<uint8_t> One = D;
      for (int64_t I = 1; I < Count; ++I)
        D.insert(D.end(), One.begin(), One.end());
      if (Count == 0)
        D.clear();
    }
  } else if (consumeWord("hex")) {
    std::string Hex;
    if (!expect('<', "after 'hex'") || !parseString(Hex))
      return false;
    if (Hex.size() != static_cast<size_t>(V.byteSize()) * 2 ||
        Hex.find_first_not_of("0123456789abcdefABCDEF") != Hex.npos)
      return fail(At, fmt::format("constant %{} needs {} bytes as {} hex "
                                  "digits",
                                  printable(V.name()), V.byteSize(),
                                  V.byteSize() * 2));
    for (size_t I = 0; I < Hex.size(); I += 2)
      D.push_back(
          static_cast<uint8_t>(std::stoi(Hex.substr(I, 2), nullptr, 16)));
  } else if (consumeWord("fill")) {
    int64_t Seed;
    if (!expect('<', "after 'fill'") || !parseInt(Seed, "a seed"))
      return false;
    if (!fillData(V.dtype(), Count, Seed, D))
      return fail(At, "fill<> does not make f16 or bf16 data");
  } else if (consumeWord("elided")) {
    return fail(At, "the data of this constant was elided when it was "
                    "printed: print it with full data (cuvil-opt prints it; "
                    "cuvilc build --dump-ir-data)");
  } else {
    return expected("constant data (dense<...>, hex<...> or fill<...>)");
  }
  V.setData(std::move(D));
  return expect('>', "after the data");
}

} // namespace cuvil::irparser
