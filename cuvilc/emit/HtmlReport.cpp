//===- HtmlReport.cpp - One self-contained HTML page of a build -----------===//
//
// The page is built as one string, section by section. Every name that
// comes from the model goes through html(): models can name their nodes
// anything, "<script>" included.
//
//===----------------------------------------------------------------------===//
#include "emit/HtmlReport.h"

#include "emit/PlanSvg.h"
#include "emit/Report.h"
#include "ir/Escape.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <numeric>

namespace cuvil {

std::string html(std::string_view S) { return xmlText(S); }

std::string grouped(int64_t N) {
  std::string Digits = std::to_string(N < 0 ? -N : N), Out;
  for (size_t I = 0; I < Digits.size(); ++I) {
    if (I && (Digits.size() - I) % 3 == 0)
      Out += ',';
    Out += Digits[I];
  }
  return N < 0 ? "-" + Out : Out;
}

std::string bytesText(int64_t N) {
  if (N < 1024)
    return fmt::format("{} B", N);
  const char *Unit = "KiB";
  double V = N / 1024.0;
  if (V >= 1024) {
    V /= 1024;
    Unit = "MiB";
  }
  if (V >= 1024) {
    V /= 1024;
    Unit = "GiB";
  }
  return fmt::format("{:.1f} {} ({} B)", V, Unit, grouped(N));
}

namespace {

/// No external fonts or sheets: the browser's own sans-serif and
/// monospace faces.
constexpr const char *Style = R"(
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.5em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ccc; }
nav a { margin-right: 1em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left;
         vertical-align: top; }
th { background: #eee; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.code, span.code { font-family: monospace; }
tr.view td { color: #777; }
dl.summary { display: grid; grid-template-columns: max-content auto;
             gap: 2px 1em; }
dl.summary dt { font-weight: bold; }
dl.summary dd { margin: 0; }
figure.arena { overflow-x: auto; margin: 0.5em 0; border: 1px solid #ddd; }
p.note { color: #555; max-width: 60em; }
ol.bottlenecks li { margin-bottom: 0.6em; }
)";

double ratio(int64_t Size, int64_t Bound) {
  return Bound ? static_cast<double>(Size) / Bound : 1.0;
}

std::string summary(const HtmlReportInput &In) {
  const MemoryPlan &Plan = *In.Plan;
  const TargetInfo &T = *In.Target;
  int64_t Macs = 0;
  size_t WithCode = 0, Int8 = 0;
  for (const LayerFacts &F : *In.Layers) {
    Macs += F.Macs;
    WithCode += F.HasCode;
    Int8 += F.Int8;
  }
  std::string S = "<section id=\"summary\">\n<h2>Summary</h2>\n"
                  "<dl class=\"summary\">\n";
  auto Item = [&](std::string_view Term, const std::string &Def) {
    S += fmt::format("<dt>{}</dt><dd>{}</dd>\n", Term, Def);
  };
  Item("Model",
       fmt::format("<span class=\"code\">{}</span> (graph '{}', "
                   "entry points cuvil_{}_*)",
                   html(In.ModelFile), html(In.G->name()), html(In.Name)));
  Item("Target", fmt::format("{}: {}", html(T.Name), html(T.Description)));
  if (!In.Options.empty())
    Item("Build options",
         fmt::format("<span class=\"code\">{}</span>", html(In.Options)));
  Item("Total MACs",
       fmt::format("<span id=\"total-macs\">{}</span>", grouped(Macs)));
  Item("Arena",
       fmt::format("{} for a lower bound of {}: ratio {:.3f}",
                   bytesText(Plan.arenaSize()), bytesText(Plan.LowerBound),
                   ratio(Plan.arenaSize(), Plan.LowerBound)));
  Item("Weights", fmt::format("{} of data in {} tensors; blob {} in {}",
                              bytesText(Plan.WeightsSize), Plan.Weights.size(),
                              bytesText(static_cast<int64_t>(In.BlobBytes)),
                              html(In.WeightsRegion)));
  size_t Views = In.Layers->size() - WithCode;
  Item("Nodes", fmt::format("<span id=\"node-count\">{}</span> after fusion: "
                            "{} with code, {} view{}; {} compute in int8",
                            In.Layers->size(), WithCode, Views,
                            Views == 1 ? "" : "s", Int8));
  if (!In.Warnings.empty()) {
    std::string Items;
    for (const std::string &W : In.Warnings)
      Items += "<li>" + html(W) + "</li>";
    Item("Warnings", "<ul id=\"warnings\">" + Items + "</ul>");
  }
  return S + "</dl>\n</section>\n";
}

std::string graphTable(const HtmlReportInput &In) {
  std::string S =
      "<section id=\"graph\">\n<h2>Graph after fusion</h2>\n"
      "<p class=\"note\">One row per node, in execution order. ONNX origins: "
      "the nodes of the model that this node computes (a fused node has "
      "several). Bytes moved: the sizes of its inputs (weights included) and "
      "outputs, what it reads and writes at least once. Kernel: the runtime "
      "functions its code calls; a view reuses its input's bytes and has no "
      "code.</p>\n<table id=\"graph-table\">\n<thead><tr><th "
      "class=\"num\">Step</th><th>Node</th><th>Op</th><th>ONNX "
      "origins</th><th class=\"num\">MACs</th><th class=\"num\">Bytes "
      "moved</th><th>Kernel(s)</th><th>Precision</th></tr></thead>\n<tbody>\n";
  for (const LayerFacts &F : *In.Layers) {
    std::vector<std::string> Origins;
    for (const std::string &O : F.Origins)
      Origins.push_back(html(O));
    S += fmt::format(
        "<tr id=\"step-{0}\" data-step=\"{0}\" data-node=\"{1}\"{2}>"
        "<td class=\"num\">{0}</td><td class=\"code\">{1}</td><td>{3}</td>"
        "<td>{4}</td><td class=\"num\">{5}</td><td class=\"num\">{6}</td>"
        "<td class=\"code\">{7}</td><td>{8}</td></tr>\n",
        F.Step, html(F.Name), F.HasCode ? "" : " class=\"view\"", html(F.Op),
        fmt::join(Origins, ", "), grouped(F.Macs), grouped(F.BytesMoved),
        html(kernelText(F)), html(F.Precision));
  }
  return S + "</tbody>\n</table>\n</section>\n";
}

/// Per region of the target: what the build puts there.
std::map<std::string, std::vector<std::string>>
regionContents(const HtmlReportInput &In) {
  std::map<std::string, std::vector<std::string>> Holds;
  const MemoryPlan &Plan = *In.Plan;
  for (size_t I = 0; I < Plan.Arenas.size(); ++I) {
    const ArenaPlan &A = Plan.Arenas[I];
    size_t Buffers =
        std::count_if(Plan.Buffers.begin(), Plan.Buffers.end(),
                      [&](const ArenaBuffer &B) { return B.Arena == I; });
    Holds[A.Region].push_back(fmt::format(
        "<a href=\"#arena-{}\">activation arena</a>: {} in {} buffers (lower "
        "bound {}, ratio {:.3f}, strategy {})",
        html(A.Region), bytesText(A.Size), Buffers, bytesText(A.LowerBound),
        A.ratio(), html(A.Strategy)));
  }
  Holds[In.WeightsRegion].push_back(fmt::format(
      "weights: the blob, {}", bytesText(static_cast<int64_t>(In.BlobBytes))));
  return Holds;
}

/// The buffers of arena I, by offset: what lives where, and when.
std::string bufferTable(const HtmlReportInput &In, unsigned I) {
  const MemoryPlan &Plan = *In.Plan;
  ValueSteps Live(*In.G);
  std::string Rows;
  size_t Count = 0;
  for (const ArenaBuffer *B : buffersByAddress(Plan)) {
    if (B->Arena != I)
      continue;
    ++Count;
    for (const Value *V : B->Values) {
      auto [First, Last] = Live.of(*V);
      const Node *P = V->producer();
      Rows += fmt::format(
          "<tr><td class=\"num code\">0x{:08x}</td><td class=\"num\">{}</td>"
          "<td class=\"num\">{}..{}</td><td class=\"code\">{}{}</td>"
          "<td class=\"code\">{}</td></tr>\n",
          Plan.at(V).Offset, grouped(V->byteSize()), First, Last,
          V == B->Root ? "" : "+ ", html(V->name()),
          P ? html(P->name()) : std::string("(graph input)"));
    }
  }
  return fmt::format(
      "<details><summary>The {} buffers of this arena, by offset</summary>\n"
      "<table><thead><tr><th class=\"num\">Offset</th><th "
      "class=\"num\">Bytes</th><th class=\"num\">Steps</th><th>Tensor "
      "(+: stored in the buffer above)</th><th>Produced by</th></tr></thead>"
      "\n<tbody>\n{}</tbody></table></details>\n",
      Count, Rows);
}

std::string memoryMap(const HtmlReportInput &In) {
  const TargetInfo &T = *In.Target;
  const MemoryPlan &Plan = *In.Plan;
  std::string S =
      "<section id=\"memory\">\n<h2>Memory map</h2>\n"
      "<table id=\"regions\">\n<thead><tr><th>Region</th><th>Kind</th><th "
      "class=\"num\">Origin</th><th class=\"num\">Length</th><th>Access</th>"
      "<th class=\"num\">Banks</th><th>Holds</th></tr></thead>\n<tbody>\n";
  auto Holds = regionContents(In);
  for (const MemoryRegion &R : T.Regions) {
    std::string Banks = std::to_string(R.Banks);
    if (R.BankInterleave)
      Banks += fmt::format(", interleaved every {} B", R.BankInterleave);
    else if (R.BankSize)
      Banks += fmt::format(" of {}", bytesText(R.BankSize));
    auto It = Holds.find(R.Name);
    S += fmt::format(
        "<tr id=\"region-{0}\"><td class=\"code\">{0}</td><td>{1}</td>"
        "<td class=\"num code\">0x{2:08x}</td><td class=\"num\">{3}</td>"
        "<td>{4}</td><td class=\"num\">{5}</td><td>{6}</td></tr>\n",
        html(R.Name), html(R.Kind), R.Origin,
        bytesText(static_cast<int64_t>(R.Length)), html(R.Access), Banks,
        It == Holds.end() ? "nothing from this build"
                          : fmt::format("{}", fmt::join(It->second, "; ")));
  }
  S += "</tbody>\n</table>\n";
  if (Plan.Arenas.empty())
    S += "<p class=\"note\">No activation arena: every tensor of this model "
         "is an input, an output or a weight.</p>\n";
  std::string Model = In.G->name().empty() ? In.Name : In.G->name();
  for (unsigned I = 0; I < Plan.Arenas.size(); ++I) {
    const std::string &Region = Plan.Arenas[I].Region;
    std::string Svg =
        writePlanSvg(*In.G, Plan, I,
                     fmt::format("{} on {}: arena {}", Model, T.Name, Region));
    // Inline SVG in HTML: the XML declaration is not allowed there.
    if (Svg.starts_with("<?xml"))
      Svg.erase(0, Svg.find('\n') + 1);
    S += fmt::format("<h3>Arena in {0}</h3>\n<p class=\"note\">Steps along "
                     "x, byte offsets along y: one rectangle per buffer over "
                     "its live steps (a tooltip names its tensors).</p>\n"
                     "<figure class=\"arena\" id=\"arena-{0}\">\n{1}"
                     "</figure>\n",
                     html(Region), Svg);
    S += bufferTable(In, I);
  }
  return S + "</section>\n";
}

} // namespace

std::string writeHtmlReport(const HtmlReportInput &In) {
  std::string Title = fmt::format("cuvil report: {} on {}", html(In.Name),
                                  html(In.Target->Name));
  std::string S = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
      "charset=\"utf-8\">\n<title>{0}</title>\n<style>{1}</style>\n</head>\n"
      "<body>\n<h1>{0}</h1>\n<nav><a href=\"#summary\">Summary</a><a "
      "href=\"#graph\">Graph</a><a href=\"#memory\">Memory map</a><a "
      "href=\"#profile\">Profile</a>{2}</nav>\n",
      Title, Style,
      In.Analysis ? "<a href=\"#bottlenecks\">Bottlenecks</a>" : "");
  S += summary(In);
  S += graphTable(In);
  S += memoryMap(In);
  S += htmlProfileSections(In);
  return S + "</body>\n</html>\n";
}

} // namespace cuvil
