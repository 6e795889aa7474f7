//===- IRPrinter.cpp - The textual IR: Graph::print
//------------------------===//
//
// The text reads back with ir/IRParser.h (print -> parse -> print is the
// identity). One statement per line; `//` starts a comment:
//
//   graph NAME [opset N]                       N: the nodes' usual opset
//   input %x: f32[1x3x8x8]                     dims: N, ? (unknown), * (rank)
//   const %w: f32[4x3x3x3] = DATA
//   %y: f32[1x4x8x8] = Conv@13(%x, %w, <none>) {pads=[1,1,1,1]} name=c  # c#0
//   return %y
//
// Names are bare ([A-Za-z0-9_.:/-]) or quoted strings ("a b"; escapes are
// \" \\ \n \t \xNN). A node: its outputs (an optional output the model left out
// before a present one is <none>, so each keeps its ONNX position), the
// operator (prefixed by its domain outside the standard one, or a quoted
// string when not a plain identifier; @N when its opset differs from the
// graph's), the inputs (<none> for an omitted optional one), the attributes
// (int 3, float 0.5 / 1.0 / 1e-05 / inf / nan: shortest text that reads
// back exactly, string "s", lists [1,2] [0.5,1.0] ["a","b"], empty lists
// [] (ints) floats[] strings[]), name=NAME when the node's name is not its
// first origin's (or, without origin, its first output's), and after `#`
// its origin: the ONNX nodes NAME#INDEX it came from.
//
// Constant DATA:
//   dense<V>            every element V (a splat);
//   dense<[V, V, ...]>  the elements in row-major order (ints, floats as
//                       above, bool 0/1); at most 16 are printed this way;
//   hex<"00ff...">      the little-endian bytes, two hex digits each (larger
//                       constants with IRPrintOptions::FullData, f16/bf16,
//                       and floats whose text would not read back, e.g. NaN
//                       payloads);
//   elided<"fnv1a64:H, B bytes">  what --dump-ir prints for the larger
//                       constants by default: the parser refuses it;
//   fill<SEED>          (hand-written only) deterministic pseudo-random
//                       data: floats in [-1, 1), ints in [-8, 8), bool 0/1.
//
//===----------------------------------------------------------------------===//
#include "ir/Graph.h"
#include "ir/IRSyntax.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <llvm/Support/ConvertUTF.h>
#include <map>
#include <optional>
#include <type_traits>

namespace cuvil {

namespace {

std::string quotedName(std::string_view S) {
  const auto *Begin = reinterpret_cast<const llvm::UTF8 *>(S.data());
  bool Utf8 = llvm::isLegalUTF8String(&Begin, Begin + S.size());
  std::string Out = "\"";
  for (unsigned char C : S) {
    if (C == '"' || C == '\\')
      Out += {'\\', static_cast<char>(C)};
    else if (C == '\n')
      Out += "\\n";
    else if (C == '\t')
      Out += "\\t";
    else if (C < 0x20 || C == 0x7f || (C >= 0x80 && !Utf8))
      Out += fmt::format("\\x{:02x}", C);
    else
      Out += static_cast<char>(C);
  }
  return Out + "\"";
}

std::string nameText(std::string_view S) {
  bool Bare = !S.empty() && S.back() != ':' &&
              std::all_of(S.begin(), S.end(), isBareNameChar);
  return Bare ? std::string(S) : quotedName(S);
}

/// Shortest text that reads back as X; always with a '.', an exponent or
/// a letter, so that it does not read as an integer.
template <typename T> std::string floatText(T X) {
  std::string S = fmt::format("{}", X);
  if (S.find_first_not_of("-0123456789") == std::string::npos)
    S += ".0";
  return S;
}

// Bit for bit: -0.0 must not read back as 0.0.
template <typename T> bool readsBack(const std::string &S, T X) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  T Y = sizeof(T) == 4 ? std::strtof(S.c_str(), nullptr)
                       : std::strtod(S.c_str(), nullptr);
  return std::bit_cast<Bits>(X) == std::bit_cast<Bits>(Y);
}

template <typename T> T load(const uint8_t *P) {
  T X;
  std::memcpy(&X, P, sizeof(T));
  return X;
}

/// Text of one element of type Ty at P, or nothing when no text reads
/// back exactly (f16, bf16, NaN payloads, bool bytes other than 0 and 1).
std::optional<std::string> elementText(DType Ty, const uint8_t *P) {
  switch (Ty) {
  case DType::F32: {
    std::string S = floatText(load<float>(P));
    return readsBack(S, load<float>(P)) ? std::optional(S) : std::nullopt;
  }
  case DType::F64: {
    std::string S = floatText(load<double>(P));
    return readsBack(S, load<double>(P)) ? std::optional(S) : std::nullopt;
  }
  case DType::F16:
  case DType::BF16: return std::nullopt;
  case DType::I8: return std::to_string(load<int8_t>(P));
  case DType::U8: return std::to_string(load<uint8_t>(P));
  case DType::I16: return std::to_string(load<int16_t>(P));
  case DType::U16: return std::to_string(load<uint16_t>(P));
  case DType::I32: return std::to_string(load<int32_t>(P));
  case DType::U32: return std::to_string(load<uint32_t>(P));
  case DType::I64: return std::to_string(load<int64_t>(P));
  case DType::U64: return std::to_string(load<uint64_t>(P));
  case DType::Bool:
    return *P <= 1 ? std::optional(std::to_string(*P)) : std::nullopt;
  }
  return std::nullopt;
}

uint64_t fnv1a(const std::vector<uint8_t> &D) {
  uint64_t H = 0xcbf29ce484222325ull;
  for (uint8_t B : D)
    H = (H ^ B) * 0x100000001b3ull;
  return H;
}

std::string constantText(const Value &V, bool FullData) {
  const std::vector<uint8_t> &D = V.data();
  size_t Size = dtypeSize(V.dtype());
  int64_t Count = V.numElements();
  bool Whole = D.size() == static_cast<size_t>(Count) * Size;
  std::vector<std::string> Elems;
  bool Splat = Whole && Count > 0;
  for (int64_t I = 0; Splat && I < Count; ++I)
    Splat = std::memcmp(D.data(), D.data() + I * Size, Size) == 0;
  int64_t Shown = Splat ? 1 : Count;
  for (int64_t I = 0; Whole && Shown <= InlineElements && I < Shown; ++I) {
    auto T = elementText(V.dtype(), D.data() + I * Size);
    if (!T)
      break;
    Elems.push_back(*T);
  }
  if (Whole && static_cast<int64_t>(Elems.size()) == Shown &&
      Shown <= InlineElements)
    return Splat ? fmt::format("dense<{}>", Elems[0])
                 : fmt::format("dense<[{}]>", fmt::join(Elems, ", "));
  if (!FullData && D.size() > static_cast<size_t>(InlineElements) * Size)
    return fmt::format("elided<\"fnv1a64:{:016x}, {} bytes\">", fnv1a(D),
                       D.size());
  std::string Hex;
  Hex.reserve(D.size() * 2);
  for (uint8_t B : D)
    Hex += fmt::format("{:02x}", B);
  return fmt::format("hex<\"{}\">", Hex);
}

template <typename T> std::string listText(const std::vector<T> &X) {
  std::vector<std::string> Items;
  for (const T &E : X) {
    if constexpr (std::is_same_v<T, std::string>)
      Items.push_back(quotedName(E));
    else if constexpr (std::is_same_v<T, float>)
      Items.push_back(floatText(E));
    else
      Items.push_back(std::to_string(E));
  }
  return fmt::format("[{}]", fmt::join(Items, ","));
}

std::string attrText(const AttrValue &A) {
  return std::visit(
      [](const auto &X) -> std::string {
        using T = std::decay_t<decltype(X)>;
        if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(X);
        else if constexpr (std::is_same_v<T, float>)
          return floatText(X);
        else if constexpr (std::is_same_v<T, std::string>)
          return quotedName(X);
        else if constexpr (std::is_same_v<T, std::vector<float>>)
          return (X.empty() ? "floats" : "") + listText(X);
        else if constexpr (std::is_same_v<T, std::vector<std::string>>)
          return (X.empty() ? "strings" : "") + listText(X);
        else
          return listText(X);
      },
      A);
}

/// The opset most nodes have (the smallest of equally common ones).
int64_t usualOpset(const Graph &G) {
  std::map<int64_t, size_t> Count;
  for (const auto &N : G.nodes())
    ++Count[N->opset()];
  int64_t Best = 0;
  size_t BestCount = 0;
  for (auto [Opset, C] : Count)
    if (C > BestCount) {
      Best = Opset;
      BestCount = C;
    }
  return Best;
}

/// Whether the domain prefix Dom.OpType reads back as these two parts.
bool plainOperator(std::string_view Dom, std::string_view OpType) {
  auto Plain = [](std::string_view S, bool Dots) {
    return !S.empty() && S.front() != '.' && S.back() != '.' &&
           std::all_of(S.begin(), S.end(), [&](char C) {
             return isOpNameChar(C) && (Dots || C != '.');
           });
  };
  return Plain(OpType, false) && (Dom.empty() || Plain(Dom, true));
}

std::string nodeText(const Node &N, int64_t Opset, const IRPrintOptions &O) {
  std::vector<std::string> Outs, Ins, As;
  unsigned Next = 0;
  for (size_t I = 0; I < N.outputs().size(); ++I) {
    for (; Next < N.outputPos(I); ++Next)
      Outs.push_back("<none>");
    const Value *V = N.output(I);
    Outs.push_back(fmt::format("%{}: {}", nameText(V->name()), typeText(V)));
    Next = N.outputPos(I) + 1;
  }
  for (const Value *V : N.inputs())
    Ins.push_back(V ? fmt::format("%{}", nameText(V->name())) : "<none>");
  std::string Dom;
  auto DomIt = N.attrs().find(std::string(DomainAttr));
  if (DomIt != N.attrs().end())
    if (auto *S = std::get_if<std::string>(&DomIt->second))
      Dom = *S;
  std::string_view Type = N.opType();
  bool Internal =
      Dom.empty() && Type.substr(0, InternalPrefix.size()) == InternalPrefix;
  bool Plain =
      Internal
          ? plainOperator(InternalPrefix.substr(0, InternalPrefix.size() - 1),
                          Type.substr(InternalPrefix.size()))
          : plainOperator(Dom, Type);
  for (const auto &[K, A] : N.attrs())
    if (!(Plain && !Dom.empty() && K == DomainAttr))
      As.push_back(fmt::format("{}={}", nameText(K), attrText(A)));
  std::string Op = !Plain        ? quotedName(N.opType())
                   : Dom.empty() ? N.opType()
                                 : Dom + "." + N.opType();
  if (N.opset() != Opset)
    Op += fmt::format("@{}", N.opset());
  std::string S = "  ";
  if (!Outs.empty())
    S += fmt::format("{} = ", fmt::join(Outs, ", "));
  S += fmt::format("{}({})", Op, fmt::join(Ins, ", "));
  if (!As.empty())
    S += fmt::format(" {{{}}}", fmt::join(As, ", "));
  if (N.name() !=
      defaultNodeName(N.origin(),
                      N.outputs().empty() ? N.opType() : N.output(0)->name()))
    S += fmt::format(" name={}", nameText(N.name()));
  std::vector<std::string> Orig;
  for (size_t I = 0; I < N.origin().Names.size(); ++I)
    Orig.push_back(fmt::format("{}#{}", nameText(N.origin().Names[I]),
                               N.origin().Indices[I]));
  if (!Orig.empty())
    S += fmt::format("  # {}", fmt::join(Orig, ", "));
  if (std::string Note = O.NodeNote ? O.NodeNote(N) : ""; !Note.empty())
    S += "  // " + Note;
  return S + "\n";
}

} // namespace

std::string typeText(const Value *V) {
  std::vector<std::string> Dims;
  for (int64_t D : V->shape())
    Dims.push_back(D == UnknownDim    ? "?"
                   : D == UnknownRank ? "*"
                                      : std::to_string(D));
  return fmt::format("{}[{}]", dtypeName(V->dtype()), fmt::join(Dims, "x"));
}

std::string defaultNodeName(const Origin &O, const std::string &Fallback) {
  return O.Names.empty() ? Fallback : O.Names[0];
}

std::string Graph::print(const IRPrintOptions &O) const {
  int64_t Opset = usualOpset(*this);
  std::string S = fmt::format("graph {}", nameText(Name));
  if (Opset != 0)
    S += fmt::format(" opset {}", Opset);
  S += "\n";
  for (const Value *V : Inputs)
    S += fmt::format("  input %{}: {}\n", nameText(V->name()), typeText(V));
  for (const auto &V : Values)
    if (V->isConstant() && (!V->users().empty() || isGraphOutput(V.get())))
      S += fmt::format("  const %{}: {} = {}\n", nameText(V->name()),
                       typeText(V.get()), constantText(*V, O.FullData));
  for (const auto &N : Nodes)
    S += nodeText(*N, Opset, O);
  std::vector<std::string> Outs;
  for (const Value *V : Outputs)
    Outs.push_back(fmt::format("%{}", nameText(V->name())));
  S += fmt::format("  return {}\n", fmt::join(Outs, ", "));
  return S;
}

} // namespace cuvil
