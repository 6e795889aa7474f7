//===- PlanSvg.cpp - A picture of one arena over time ---------------------===//
//
// Layout, in pixels: the title and a legend line on top; the plot below
// them, with address 0 at the bottom and one column per execution step;
// byte ticks on the left, the arena-size and lower-bound lines labelled on
// the right; step numbers and node names (rotated) under the plot. Text is
// monospace, so label widths can be estimated and labels that do not fit
// in their rectangle are shortened or left to the tooltip.
//
//===----------------------------------------------------------------------===//
#include "emit/PlanSvg.h"

#include "ir/DType.h"
#include "ir/Escape.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iterator>

namespace cuvil {

namespace {

constexpr double FontSize = 10;    ///< Labels, ticks, tooltips' targets.
constexpr double CharWidth = 6.05; ///< Advance of a monospace glyph.
constexpr double LineHeight = 12;
constexpr double PlotHeight = 420;
constexpr double PlotWidthGoal = 960;
constexpr double MinStepWidth = 6, MaxStepWidth = 64;
constexpr double Left = 80, Right = 170, Top = 58;
constexpr size_t MaxNodeNameChars = 28;

/// Number of characters (UTF-8 code points) of printable text.
size_t charCount(const std::string &S) {
  return static_cast<size_t>(std::count_if(S.begin(), S.end(), [](char C) {
    return (static_cast<unsigned char>(C) & 0xC0) != 0x80;
  }));
}

/// The first N characters of printable text, with an ellipsis if cut.
std::string truncateChars(const std::string &S, size_t N) {
  if (charCount(S) <= N)
    return S;
  if (N == 0)
    return "";
  size_t Seen = 0, I = 0;
  for (; I < S.size(); ++I)
    if ((static_cast<unsigned char>(S[I]) & 0xC0) != 0x80 && Seen++ == N - 1)
      break;
  // I is the first byte of character N: keep N - 1 characters and "…".
  return S.substr(0, I) + "\xE2\x80\xA6";
}

double textWidth(const std::string &Printable) {
  return static_cast<double>(charCount(Printable)) * CharWidth;
}

/// "512 B", "1.5 KiB", "48 KiB", "2 MiB".
std::string formatBytes(int64_t B) {
  auto Scaled = [](double V, const char *Unit) {
    std::string S = fmt::format("{:.1f}", V);
    if (S.size() > 2 && S.compare(S.size() - 2, 2, ".0") == 0)
      S.resize(S.size() - 2);
    return S + " " + Unit;
  };
  if (B < 1024)
    return fmt::format("{} B", B);
  if (B < 1024 * 1024)
    return Scaled(static_cast<double>(B) / 1024, "KiB");
  return Scaled(static_cast<double>(B) / (1024 * 1024), "MiB");
}

/// A coordinate: one decimal is plenty and keeps the file small.
std::string px(double V) { return fmt::format("{:.1f}", V); }

/// A light fill colour derived from the name alone (FNV-1a), so a tensor
/// keeps its colour from build to build; black text stays readable on it.
std::string fillColour(const std::string &Name) {
  uint64_t H = 1469598103934665603ull;
  for (unsigned char C : Name)
    H = (H ^ C) * 1099511628211ull;
  double Hue = static_cast<double>(H % 360);
  double Sat = 0.45 + static_cast<double>((H >> 16) % 30) / 100;
  double Light = 0.74 + static_cast<double>((H >> 32) % 10) / 100;
  // HSL -> RGB.
  double Chroma = (1 - std::fabs(2 * Light - 1)) * Sat;
  double HPrime = Hue / 60;
  double X = Chroma * (1 - std::fabs(std::fmod(HPrime, 2) - 1));
  double R = 0, G = 0, B = 0;
  switch (static_cast<int>(HPrime)) {
  case 0: R = Chroma, G = X; break;
  case 1: R = X, G = Chroma; break;
  case 2: G = Chroma, B = X; break;
  case 3: G = X, B = Chroma; break;
  case 4: R = X, B = Chroma; break;
  default: R = Chroma, B = X; break;
  }
  double M = Light - Chroma / 2;
  auto Byte = [&](double V) {
    return static_cast<unsigned>(
        std::lround(std::clamp(V + M, 0.0, 1.0) * 255));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", Byte(R), Byte(G), Byte(B));
}

std::string onnxNames(const Node &N) {
  if (N.origin().Names.empty())
    return printable(N.name());
  std::vector<std::string> Names;
  for (const std::string &S : N.origin().Names)
    Names.push_back(printable(S));
  return fmt::format("{}", fmt::join(Names, ", "));
}

/// The smallest of 1, 2, 5, 10, 20, 50... steps whose labels of Width
/// pixels do not overlap at StepWidth pixels per step.
unsigned labelEvery(double Width, double StepWidth) {
  for (unsigned K = 1;; K *= 10)
    for (unsigned M : {1u, 2u, 5u})
      if (K * M * StepWidth >= Width)
        return K * M;
}

class SvgWriter {
public:
  SvgWriter(const Graph &G, const MemoryPlan &Plan, unsigned Arena)
      : G(G), Plan(Plan), A(Plan.Arenas[Arena]), ArenaIndex(Arena), Live(G) {}
  std::string write(const std::string &Title);

private:
  template <typename... Args>
  void emit(fmt::format_string<Args...> F, Args &&...As) {
    fmt::format_to(std::back_inserter(Out), F, std::forward<Args>(As)...);
    Out += '\n';
  }
  double x(double Step) const { return Left + Step * StepWidth; }
  double y(double Offset) const {
    return Top + PlotHeight - Offset * PlotHeight / YMax;
  }
  void layout(const std::string &Title);
  void writeLegend(const std::string &Title);
  void writeSteps();
  void writeAxes();
  void writeBuffer(const ArenaBuffer &B);
  void writeLimits();
  std::string bufferTooltip(const ArenaBuffer &B) const;
  std::string valueLine(const Value &V, int64_t Offset) const;
  int64_t offsetOf(const Value &V, const ArenaBuffer &B) const {
    auto It = Plan.Locations.find(V.id());
    return It == Plan.Locations.end() ? B.Offset : It->second.Offset;
  }
  std::string stepName(unsigned Step) const {
    return Step < G.nodes().size() ? printable(G.nodes()[Step]->name()) : "";
  }

  const Graph &G;
  const MemoryPlan &Plan;
  const ArenaPlan &A;
  unsigned ArenaIndex;
  ValueSteps Live;
  std::string Out;
  unsigned Steps = 1;
  double StepWidth = MaxStepWidth, YMax = 1, Width = 0, Height = 0;
  size_t NameChars = 0;
  std::string Legend;
};

void SvgWriter::layout(const std::string &Title) {
  Steps = std::max<unsigned>(1, static_cast<unsigned>(G.nodes().size()));
  int64_t Highest = std::max(A.Size, A.LowerBound);
  for (const ArenaBuffer &B : Plan.Buffers)
    if (B.Arena == ArenaIndex) {
      Steps = std::max(Steps, B.Last + 1);
      Highest = std::max(Highest, B.Offset + B.Size);
    }
  YMax = static_cast<double>(std::max<int64_t>({Highest, Plan.Alignment, 1}));
  StepWidth = std::clamp(PlotWidthGoal / Steps, MinStepWidth, MaxStepWidth);
  for (const auto &N : G.nodes())
    NameChars = std::max(NameChars, charCount(printable(N->name())));
  NameChars = std::min(NameChars, MaxNodeNameChars);
  Legend = fmt::format("region {} | arena {} B{} | lower bound {} B | ratio "
                       "{:.3f} | strategy {} | schedule {}",
                       printable(A.Region), A.Size,
                       A.Size < 1024 ? "" : " (" + formatBytes(A.Size) + ")",
                       A.LowerBound, A.ratio(), printable(A.Strategy),
                       printable(Plan.Schedule));
  if (A.SameBankPairs >= 0)
    Legend += fmt::format(" | same-bank pairs {} -> {}", A.SameBankPairsBefore,
                          A.SameBankPairs);
  // The title is in a 14-pixel font: 1.4 times as wide per character.
  double TextRight =
      Left + 16 +
      std::max(textWidth(Legend), 1.4 * textWidth(printable(Title)));
  Width = std::max(Left + Steps * StepWidth + Right, TextRight);
  Height = Top + PlotHeight + 34 + NameChars * CharWidth + 12;
}

void SvgWriter::writeLegend(const std::string &Title) {
  emit(R"(<text x="{}" y="22" font-size="14" font-weight="bold">{}</text>)",
       px(Left), xmlText(Title));
  emit(R"(<text x="{}" y="40">{}</text>)", px(Left), xmlEscape(Legend));
}

/// One column per step, shaded alternately; its tooltip names the node.
void SvgWriter::writeSteps() {
  emit(R"(<g stroke="none">)");
  for (unsigned S = 0; S < Steps; ++S) {
    std::string Tip = fmt::format("step {}", S);
    if (S < G.nodes().size()) {
      const Node &N = *G.nodes()[S];
      Tip += fmt::format(": {} ({})\nONNX: {}", printable(N.name()),
                         printable(N.opType()), onnxNames(N));
    }
    emit(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}">)"
         R"(<title>{}</title></rect>)",
         px(x(S)), px(Top), px(StepWidth), px(PlotHeight),
         S % 2 ? "#f2f2f2" : "#fafafa", xmlEscape(Tip));
  }
  emit("</g>");
}

void SvgWriter::writeAxes() {
  double Bottom = Top + PlotHeight, PlotRight = x(Steps);
  // Byte offsets: a power-of-two tick step giving at most eight ticks.
  int64_t Tick = 1;
  while (static_cast<double>(Tick) * 8 < YMax)
    Tick *= 2;
  emit(R"(<g stroke="#d0d0d0" stroke-width="0.5">)");
  for (int64_t T = Tick; static_cast<double>(T) <= YMax; T += Tick)
    emit(R"(<line x1="{}" y1="{}" x2="{}" y2="{}"/>)", px(Left), px(y(T)),
         px(PlotRight), px(y(T)));
  emit("</g>");
  emit(R"(<g text-anchor="end">)");
  for (int64_t T = 0; static_cast<double>(T) <= YMax; T += Tick)
    emit(R"(<text x="{}" y="{}">{}</text>)", px(Left - 6), px(y(T) + 3.5),
         formatBytes(T));
  emit("</g>");
  emit(R"svg(<text transform="translate(14,{}) rotate(-90)" )svg"
       R"svg(text-anchor="middle">byte offset</text>)svg",
       px(Top + PlotHeight / 2));

  // Steps: numbers, then node names reading upwards, where they fit.
  unsigned NumberEvery =
      labelEvery(textWidth(std::to_string(Steps - 1)) + 4, StepWidth);
  unsigned NameEvery = labelEvery(LineHeight, StepWidth);
  emit(R"(<g stroke="#000" stroke-width="1">)");
  emit(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}"/>)", px(Left), px(Bottom),
       px(PlotRight));
  emit(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}"/>)", px(Left), px(Top),
       px(Bottom));
  for (unsigned S = 0; S < Steps; S += NumberEvery)
    emit(R"(<line x1="{0}" y1="{1}" x2="{0}" y2="{2}"/>)", px(x(S + 0.5)),
         px(Bottom), px(Bottom + 4));
  emit("</g>");
  emit(R"(<g text-anchor="middle">)");
  for (unsigned S = 0; S < Steps; S += NumberEvery)
    emit(R"(<text x="{}" y="{}">{}</text>)", px(x(S + 0.5)), px(Bottom + 15),
         S);
  emit("</g>");
  emit(R"(<g text-anchor="end" fill="#333">)");
  for (unsigned S = 0; S < Steps && S < G.nodes().size(); S += NameEvery) {
    double X = x(S + 0.5) + 3.5, Y = Bottom + 24;
    emit(R"svg(<text transform="translate({},{}) rotate(-90)">{}</text>)svg",
         px(X), px(Y), xmlEscape(truncateChars(stepName(S), NameChars)));
  }
  emit("</g>");
  emit(R"(<text x="{}" y="{}" text-anchor="end">step</text>)", px(Left - 6),
       px(Bottom + 15));
}

std::string SvgWriter::valueLine(const Value &V, int64_t Offset) const {
  auto [First, Last] = Live.of(V);
  std::string L =
      fmt::format("{} {}[{}]: {} bytes at 0x{:x}, steps {}..{}",
                  printable(V.name()), dtypeName(V.dtype()),
                  fmt::join(V.shape(), "x"), V.byteSize(), Offset, First, Last);
  if (const Node *P = V.producer())
    L += fmt::format(", from {} ({}; ONNX: {})", printable(P->name()),
                     printable(P->opType()), onnxNames(*P));
  return L;
}

std::string SvgWriter::bufferTooltip(const ArenaBuffer &B) const {
  std::string Tip = fmt::format(
      "buffer {}: {} bytes ({} aligned) at 0x{:x}..0x{:x}, steps {}..{}",
      printable(B.Root->name()), B.Bytes, B.Size, B.Offset,
      B.Offset + B.Size - 1, B.First, B.Last);
  if (B.Last < G.nodes().size())
    Tip += fmt::format(" ({} .. {})", stepName(B.First), stepName(B.Last));
  for (const Value *V : B.Values)
    Tip += "\n  " + valueLine(*V, offsetOf(*V, B));
  return Tip;
}

void SvgWriter::writeBuffer(const ArenaBuffer &B) {
  double X = x(B.First), W = (B.Last + 1 - B.First) * StepWidth;
  double Y = y(static_cast<double>(B.Offset + B.Size));
  double H = std::max(1.0, y(static_cast<double>(B.Offset)) - Y);
  std::string Name = printable(B.Root->name());
  emit("<g>");
  emit("<title>{}</title>", xmlEscape(bufferTooltip(B)));
  emit(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="{}" )"
       R"(stroke="#333" stroke-width="0.6"/>)",
       px(X), px(Y), px(W), px(H), fillColour(B.Root->name()));
  // Values in a part of the buffer: dashed outlines, each with a tooltip
  // (transparent fill, so the whole area answers the pointer).
  for (const Value *V : B.Values) {
    int64_t Off = offsetOf(*V, B);
    if (V == B.Root || (Off == B.Offset && V->byteSize() >= B.Bytes))
      continue;
    auto [First, Last] = Live.of(*V);
    double VY = y(static_cast<double>(Off + V->byteSize()));
    double VH = std::max(1.0, y(static_cast<double>(Off)) - VY);
    emit(R"(<g><title>{}</title><rect x="{}" y="{}" width="{}" height="{}" )"
         R"(fill="#000" fill-opacity="0" stroke="#333" stroke-width="0.6" )"
         R"(stroke-dasharray="3 2"/></g>)",
         xmlEscape(valueLine(*V, Off)), px(x(First) + 1), px(VY),
         px((Last + 1 - First) * StepWidth - 2), px(VH));
  }

  // Label: "name size" on one line, name over size on two, or the name
  // alone, shortened if need be; nothing if even that does not fit.
  std::vector<std::string> Lines;
  double Room = W - 6;
  size_t Fit = Room > 0 ? static_cast<size_t>(Room / CharWidth) : 0;
  std::string Size = formatBytes(B.Bytes);
  std::string OneLine = Name + " " + Size;
  if (H >= 2 * LineHeight + 2 && textWidth(Name) <= Room &&
      textWidth(Size) <= Room && textWidth(OneLine) > Room)
    Lines = {Name, Size};
  else if (H >= LineHeight && textWidth(OneLine) <= Room)
    Lines = {OneLine};
  else if (H >= LineHeight && Fit >= 4)
    Lines = {truncateChars(Name, Fit)};
  double Baseline =
      Y + H / 2 - static_cast<double>(Lines.size()) * LineHeight / 2 + 9.5;
  for (const std::string &L : Lines) {
    emit(R"(<text x="{}" y="{}">{}</text>)", px(X + 3), px(Baseline),
         xmlEscape(L));
    Baseline += LineHeight;
  }
  emit("</g>");
}

/// The arena size (solid) and the lower bound (dashed), labelled on the
/// right; the lower-bound label moves down when the lines are close, and
/// its dashes are drawn last so that they show on a ratio of 1.
void SvgWriter::writeLimits() {
  double X1 = Left, X2 = x(Steps);
  double YSize = y(static_cast<double>(A.Size));
  double YBound = y(static_cast<double>(A.LowerBound));
  emit(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#000" )"
       R"(stroke-width="1.5"/>)",
       px(X1), px(YSize), px(X2 + 4));
  emit(R"(<line x1="{0}" y1="{1}" x2="{2}" y2="{1}" stroke="#c00000" )"
       R"(stroke-width="1.2" stroke-dasharray="6 4"/>)",
       px(X1), px(YBound), px(X2 + 4));
  emit(R"(<text x="{}" y="{}">arena {}</text>)", px(X2 + 8), px(YSize + 3.5),
       formatBytes(A.Size));
  double LabelY = std::max(YBound + 3.5, YSize + 3.5 + LineHeight);
  emit(R"(<text x="{}" y="{}" fill="#c00000">lower bound {}</text>)",
       px(X2 + 8), px(LabelY), formatBytes(A.LowerBound));
}

std::string SvgWriter::write(const std::string &Title) {
  layout(Title);
  emit(R"(<?xml version="1.0" encoding="UTF-8"?>)");
  emit(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" )"
       R"(viewBox="0 0 {0} {1}" font-family="monospace" font-size="{2}">)",
       px(Width), px(Height), FontSize);
  emit("<title>{}</title>", xmlText(Title));
  emit(R"(<rect width="100%" height="100%" fill="#fff"/>)");
  writeLegend(Title);
  writeSteps();
  writeAxes();
  for (const ArenaBuffer &B : Plan.Buffers)
    if (B.Arena == ArenaIndex)
      writeBuffer(B);
  writeLimits();
  emit("</svg>");
  return std::move(Out);
}

} // namespace

ValueSteps::ValueSteps(const Graph &G) : G(G) {
  for (unsigned I = 0; I < G.nodes().size(); ++I)
    StepOf[G.nodes()[I]->id()] = I;
}

std::pair<unsigned, unsigned> ValueSteps::of(const Value &V) const {
  auto StepOfNode = [&](const Node *N) {
    auto It = StepOf.find(N->id());
    assert(It != StepOf.end() && "node not in the graph");
    return It->second;
  };
  unsigned First = V.producer() ? StepOfNode(V.producer()) : 0;
  unsigned Last = First;
  for (const Node *U : V.users())
    Last = std::max(Last, StepOfNode(U));
  if (G.isGraphOutput(&V) && !G.nodes().empty())
    Last = static_cast<unsigned>(G.nodes().size() - 1);
  return {First, Last};
}

std::string writePlanSvg(const Graph &G, const MemoryPlan &Plan, unsigned Arena,
                         const std::string &Title) {
  assert(Arena < Plan.Arenas.size() && "no such arena");
  return SvgWriter(G, Plan, Arena).write(Title);
}

} // namespace cuvil
