//===- Escape.cpp ---------------------------------------------------------===//
#include "ir/Escape.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>
#include <iterator>
#include <llvm/Support/ConvertUTF.h>

namespace cuvil {

static bool isValidUtf8(std::string_view S) {
  const auto *Begin = reinterpret_cast<const llvm::UTF8 *>(S.data());
  // U+FFFE and U+FFFF are legal UTF-8 but not characters (XML refuses them).
  return llvm::isLegalUTF8String(&Begin, Begin + S.size()) &&
         S.find("\xEF\xBF\xBE") == std::string_view::npos &&
         S.find("\xEF\xBF\xBF") == std::string_view::npos;
}

std::string printable(std::string_view S) {
  bool Utf8 = isValidUtf8(S);
  std::string Out;
  Out.reserve(S.size());
  for (unsigned char C : S) {
    if (C < 0x20 || C == 0x7f || (C >= 0x80 && !Utf8))
      Out += fmt::format("\\x{:02x}", C);
    else
      Out += static_cast<char>(C);
  }
  return Out;
}

std::string cStringLiteral(std::string_view S) {
  std::string Out = "\"";
  Out.reserve(S.size() + 2);
  for (unsigned char C : S) {
    switch (C) {
    case '"': Out += "\\\""; break;
    case '\\': Out += "\\\\"; break;
    case '?': Out += "\\?"; break; // "??/" would be a trigraph
    case '\n': Out += "\\n"; break;
    case '\t': Out += "\\t"; break;
    default:
      if (C < 0x20 || C >= 0x7f)
        Out += fmt::format("\\{:03o}", C);
      else
        Out += static_cast<char>(C);
    }
  }
  return Out + "\"";
}

std::string cComment(std::string_view S, size_t MaxChars) {
  std::string P = printable(S);
  bool Cut = P.size() > MaxChars;
  if (Cut) {
    P.resize(MaxChars);
    // Do not end inside a UTF-8 sequence or a \xNN escape.
    while (!P.empty() && (static_cast<unsigned char>(P.back()) & 0xC0) == 0x80)
      P.pop_back();
    if (!P.empty() && static_cast<unsigned char>(P.back()) >= 0xC0)
      P.pop_back();
    size_t Esc = P.rfind("\\x");
    if (Esc != std::string::npos && Esc + 4 > P.size())
      P.resize(Esc);
  }
  std::string Out;
  Out.reserve(P.size() + 8);
  for (size_t I = 0; I < P.size(); ++I) {
    Out += P[I];
    // "*/" ends the comment, "/*" nests (a warning); a space between the two
    // characters defuses both. A trailing '*' or '/' could join the
    // comment's own delimiter, hence the check against the end too.
    bool Pair = I + 1 < P.size() && ((P[I] == '*' && P[I + 1] == '/') ||
                                     (P[I] == '/' && P[I + 1] == '*'));
    if (Pair || (I + 1 == P.size() && (P[I] == '*' || P[I] == '/')))
      Out += ' ';
  }
  if (Cut)
    Out += "...";
  return Out;
}

std::string cIdentifier(std::string_view S) {
  std::string Out;
  Out.reserve(S.size() + 1);
  for (unsigned char C : S)
    Out +=
        (std::isalnum(C) && C < 0x80) || C == '_' ? static_cast<char>(C) : '_';
  if (Out.empty() || std::isdigit(static_cast<unsigned char>(Out[0])))
    Out = "_" + Out;
  return Out;
}

bool isSafeCIdentifier(std::string_view Id) {
  // C11/C23 and C++20 keywords, alternative operator spellings, and the
  // macros and typedefs a generated header or its includer may rely on.
  static constexpr std::string_view Taken[] = {"_Alignas",
                                               "_Alignof",
                                               "_Atomic",
                                               "_BitInt",
                                               "_Bool",
                                               "_Complex",
                                               "_Decimal128",
                                               "_Decimal32",
                                               "_Decimal64",
                                               "_Generic",
                                               "_Imaginary",
                                               "_Noreturn",
                                               "_Static_assert",
                                               "_Thread_local",
                                               "alignas",
                                               "alignof",
                                               "and",
                                               "and_eq",
                                               "asm",
                                               "assert",
                                               "auto",
                                               "bitand",
                                               "bitor",
                                               "bool",
                                               "break",
                                               "case",
                                               "catch",
                                               "char",
                                               "char16_t",
                                               "char32_t",
                                               "char8_t",
                                               "class",
                                               "co_await",
                                               "co_return",
                                               "co_yield",
                                               "compl",
                                               "concept",
                                               "const",
                                               "const_cast",
                                               "consteval",
                                               "constexpr",
                                               "constinit",
                                               "continue",
                                               "decltype",
                                               "default",
                                               "defined",
                                               "delete",
                                               "do",
                                               "double",
                                               "dynamic_cast",
                                               "else",
                                               "enum",
                                               "errno",
                                               "explicit",
                                               "export",
                                               "extern",
                                               "false",
                                               "float",
                                               "for",
                                               "friend",
                                               "goto",
                                               "if",
                                               "inline",
                                               "int",
                                               "int16_t",
                                               "int32_t",
                                               "int64_t",
                                               "int8_t",
                                               "intptr_t",
                                               "long",
                                               "m",
                                               "mutable",
                                               "namespace",
                                               "new",
                                               "noexcept",
                                               "not",
                                               "not_eq",
                                               "nullptr",
                                               "offsetof",
                                               "operator",
                                               "or",
                                               "or_eq",
                                               "private",
                                               "protected",
                                               "ptrdiff_t",
                                               "public",
                                               "register",
                                               "reinterpret_cast",
                                               "requires",
                                               "restrict",
                                               "return",
                                               "short",
                                               "signed",
                                               "size_t",
                                               "sizeof",
                                               "static",
                                               "static_assert",
                                               "static_cast",
                                               "struct",
                                               "switch",
                                               "template",
                                               "this",
                                               "thread_local",
                                               "throw",
                                               "true",
                                               "try",
                                               "typedef",
                                               "typeid",
                                               "typename",
                                               "typeof",
                                               "typeof_unqual",
                                               "uint16_t",
                                               "uint32_t",
                                               "uint64_t",
                                               "uint8_t",
                                               "uintptr_t",
                                               "union",
                                               "unsigned",
                                               "using",
                                               "virtual",
                                               "void",
                                               "volatile",
                                               "wchar_t",
                                               "while",
                                               "xor",
                                               "xor_eq",
                                               "NULL",
                                               "EOF",
                                               "inputs",
                                               "outputs",
                                               "weights",
                                               "weights_size",
                                               "arenas",
                                               "main"};
  if (Id.empty() || Id.size() > 63 || cIdentifier(Id) != Id)
    return false;
  if (Id[0] == '_' && Id.size() > 1 &&
      (Id[1] == '_' || std::isupper(static_cast<unsigned char>(Id[1]))))
    return false;
  std::string Lower(Id);
  for (char &C : Lower)
    C = static_cast<char>(std::tolower(static_cast<unsigned char>(C)));
  if (Lower.rfind("cuvil", 0) == 0)
    return false;
  return std::find(std::begin(Taken), std::end(Taken), Id) == std::end(Taken);
}

std::string xmlEscape(std::string_view S) {
  std::string Out;
  for (char C : S) {
    switch (C) {
    case '&': Out += "&amp;"; break;
    case '<': Out += "&lt;"; break;
    case '>': Out += "&gt;"; break;
    case '"': Out += "&quot;"; break;
    case '\'': Out += "&apos;"; break;
    default: Out += C;
    }
  }
  return Out;
}

std::string xmlText(std::string_view S) { return xmlEscape(printable(S)); }

bool isLinkerScriptName(std::string_view S) {
  if (S.empty() || std::isdigit(static_cast<unsigned char>(S[0])))
    return false;
  return std::all_of(S.begin(), S.end(), [](char C) {
    unsigned char U = static_cast<unsigned char>(C);
    return (std::isalnum(U) && U < 0x80) || C == '_';
  });
}

} // namespace cuvil
