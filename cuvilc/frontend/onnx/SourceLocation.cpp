//===- SourceLocation.cpp -------------------------------------------------===//
#include "frontend/onnx/SourceLocation.h"

#include <cctype>
#include <optional>

namespace cuvil {

namespace {

struct Frame {
  std::string_view File, Line, Function;
};

/// "FILE(LINE): FUNCTION", or nullopt for any other line.
std::optional<Frame> parseFrame(std::string_view L) {
  size_t Colon = L.find("): ");
  if (Colon == std::string_view::npos)
    return std::nullopt;
  size_t Open = L.rfind('(', Colon);
  if (Open == std::string_view::npos || Open == 0 || Open + 1 == Colon)
    return std::nullopt;
  std::string_view Line = L.substr(Open + 1, Colon - Open - 1);
  for (char C : Line)
    if (!std::isdigit(static_cast<unsigned char>(C)))
      return std::nullopt;
  return Frame{L.substr(0, Open), Line, L.substr(Colon + 3)};
}

/// A file of the torch package itself (.../site-packages/torch/...).
bool insideTorch(std::string_view File) {
  return File.find("/torch/") != std::string_view::npos;
}

} // namespace

std::string sourceLocation(std::string_view DocString) {
  std::optional<Frame> Innermost, User;
  while (!DocString.empty() && !User) {
    size_t End = DocString.find('\n');
    std::string_view L = DocString.substr(0, End);
    DocString = End == std::string_view::npos ? std::string_view()
                                              : DocString.substr(End + 1);
    auto F = parseFrame(L);
    if (!F)
      continue;
    if (!Innermost)
      Innermost = F;
    if (!insideTorch(F->File))
      User = F;
  }
  const std::optional<Frame> &Pick = User ? User : Innermost;
  if (!Pick)
    return "";
  return std::string(Pick->File) + ":" + std::string(Pick->Line) + " (" +
         std::string(Pick->Function) + ")";
}

} // namespace cuvil
