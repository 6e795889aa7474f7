//===- HtmlProfile.cpp - The report's heat map and bottleneck list --------===//
//
// The heat map's colours are inline styles, so that the page needs no
// script to show them; the bottleneck rules are written out on the page,
// next to their results.
//
//===----------------------------------------------------------------------===//
#include "emit/HtmlReport.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cuvil {

namespace {

/// From white (no time) to a saturated red (the row with the largest
/// share): lightness 97% down to 62%.
std::string heatStyle(double Share, double MaxShare) {
  double T = MaxShare > 0 ? Share / MaxShare : 0;
  return fmt::format("background-color: hsl(8, 85%, {:.0f}%)", 97 - 35 * T);
}

std::string number(double V) {
  if (V >= 1000 || V == static_cast<double>(static_cast<int64_t>(V)))
    return grouped(static_cast<int64_t>(V + 0.5));
  return fmt::format("{:.1f}", V);
}

/// One of what a counter counts: "cycles" -> "cycle".
std::string unitOf(const std::string &Counter) {
  std::string_view U = Counter;
  if (U.size() > 1 && U.back() == 's')
    U.remove_suffix(1);
  return html(U);
}

std::string rateText(const std::optional<double> &R) {
  if (!R)
    return "-";
  return fmt::format("{:.3g}", *R);
}

/// The row's node: a link to its row in the graph table.
std::string nodeCell(const ProfileRow &R) {
  if (!R.Layer)
    return fmt::format("<td class=\"code\">{}</td>", html(R.Step->Node));
  return fmt::format("<td class=\"code\"><a href=\"#step-{}\">{}</a></td>",
                     R.Layer->Step, html(R.Layer->Name));
}

std::string peakNote(const HtmlReportInput &In, const ProfileAnalysis &A) {
  const TargetInfo &T = *In.Target;
  if (!A.Cycles)
    return fmt::format(
        "The profile counts {} rather than cycles, so no fraction of the "
        "target's peak is given (the peak is stated per cycle).",
        html(A.Counter));
  if (T.PeakMacsF32 <= 0 && T.PeakMacsInt8 <= 0)
    return "The target file states no peak ([perf] in targets/" + html(T.Name) +
           ".toml), so no fraction of it is given.";
  return fmt::format(
      "Peak of one {} core, from the [perf] table of its target file: {} "
      "float32 MACs per cycle, {} int8 MACs per cycle; a layer is measured "
      "against the peak of the precision it computes in.",
      html(T.Name), T.PeakMacsF32, T.PeakMacsInt8);
}

std::string heatMap(const HtmlReportInput &In, const ProfileAnalysis &A) {
  const LayerProfile &P = *In.Profile;
  std::string Unit = unitOf(A.Counter);
  std::string S = fmt::format(
      "<section id=\"profile\">\n<h2>Profile</h2>\n<p class=\"note\">From "
      "<span class=\"code\">{}</span>{}{}: {}, counter <b>{}</b>. The "
      "whole inference: {} {}{}; the {} profiled steps sum to {} ({:.1f}% of "
      "it). Rows are shaded by their share of the total. {}</p>\n",
      html(In.ProfileFile), P.Model.empty() ? "" : ", model " + html(P.Model),
      P.Target.empty() ? "" : ", target " + html(P.Target),
      P.Runs == 1 ? std::string("1 run")
                  : fmt::format("{} runs, counts per run", P.Runs),
      html(A.Counter), number(A.Total), html(A.Counter),
      A.TotalMeasured ? " as the run measured it" : " (the steps' sum)",
      A.Rows.size(), number(A.StepSum),
      A.Total > 0 ? 100 * A.StepSum / A.Total : 100.0, peakNote(In, A));
  S += fmt::format(
      "<table id=\"heatmap\">\n<thead><tr><th class=\"num\">Step</th>"
      "<th>Node</th><th>Op</th><th class=\"num\">{}</th><th "
      "class=\"num\">Share</th><th class=\"num\">MACs</th><th "
      "class=\"num\">MACs/{}</th><th class=\"num\">Of peak</th></tr></thead>"
      "\n<tbody>\n",
      html(A.Counter), Unit);
  for (const ProfileRow &R : A.Rows) {
    int64_t Macs = R.Layer ? R.Layer->Macs : 0;
    std::string Op = R.Layer ? R.Layer->Op : R.Step->Op;
    // The graph's step, as in the graph table; the profile's own numbering
    // (code steps only) stays in the attribute.
    S += fmt::format(
        "<tr data-profile-step=\"{0}\" data-node=\"{1}\" style=\"{2}\">"
        "<td class=\"num\">{10}</td>{3}<td>{4}</td><td class=\"num\">{5}</td>"
        "<td class=\"num\">{6:.1f}%</td><td class=\"num\">{7}</td>"
        "<td class=\"num\">{8}</td><td class=\"num\">{9}</td></tr>\n",
        R.Step->Step, html(R.Step->Node), heatStyle(R.Share, A.MaxShare),
        nodeCell(R), html(Op), number(R.Count), 100 * R.Share, grouped(Macs),
        rateText(R.Rate),
        R.PeakFraction ? fmt::format("{:.1f}%", 100 * *R.PeakFraction)
                       : std::string("-"),
        R.Layer ? std::to_string(R.Layer->Step) : std::string("end"));
  }
  return S + "</tbody>\n</table>\n</section>\n";
}

std::string bottlenecks(const ProfileAnalysis &A) {
  std::string Unit = unitOf(A.Counter);
  std::string S = fmt::format(
      "<section id=\"bottlenecks\">\n<h2>Bottlenecks</h2>\n<p "
      "class=\"note\">These are heuristics, not measurements of the causes. "
      "Each layer's {0} are compared with what its MACs would cost at the "
      "model's median rate ({1} MACs per {2}, over the layers that have "
      "MACs); a layer without MACs is expected to cost nothing. Listed: up to "
      "{3} layers with the largest excess among those slower than {7:.0f}% "
      "of the median rate (or without MACs) whose excess is at least "
      "{4:.1f}% of the total. The reasons come from facts of the build: a "
      "reference kernel "
      "where a packed one exists (scalar path), kernels that only move bytes "
      "(layout copies), no MACs at all, at least {5} bytes moved per MAC "
      "(memory-bound), at most {6} output positions per channel (small "
      "spatial size).</p>\n",
      html(A.Counter), rateText(A.MedianRate), Unit, MaxBottlenecks,
      100 * MinExcessShare, MemoryBoundBytesPerMac, SmallSpatial,
      100 * SlowRateFraction);
  if (A.Bottlenecks.empty())
    return S + "<p>None: no layer is that much slower than its MACs' worth "
               "of time.</p>\n</section>\n";
  S += "<ol class=\"bottlenecks\">\n";
  for (const Bottleneck &B : A.Bottlenecks) {
    const ProfileRow &R = A.Rows[B.Row];
    std::vector<std::string> Reasons;
    for (const std::string &Why : B.Reasons)
      Reasons.push_back("<li>" + html(Why) + "</li>");
    S += fmt::format(
        "<li data-node=\"{}\"><b class=\"code\">{}</b> ({}): {} {} ({:.1f}% "
        "of the total), {} more than its MACs would take at the median "
        "rate.\n<ul>{}</ul></li>\n",
        html(R.Step->Node), html(R.Step->Node),
        html(R.Layer ? R.Layer->Op : R.Step->Op), number(R.Count),
        html(A.Counter), 100 * R.Share, number(B.Excess),
        fmt::join(Reasons, ""));
  }
  return S + "</ol>\n</section>\n";
}

} // namespace

std::string htmlProfileSections(const HtmlReportInput &In) {
  if (!In.Analysis || !In.Profile)
    return "<section id=\"profile\">\n<h2>Profile</h2>\n<p class=\"note\">No "
           "profile was given. Build and run the model with per-layer "
           "counters (<span class=\"code\">cuvilc run --profile</span>, see "
           "docs/profiling.md) and pass what it writes with <span "
           "class=\"code\">--profile-data FILE</span> for a heat map of the "
           "layers and a list of bottlenecks.</p>\n</section>\n";
  return heatMap(In, *In.Analysis) + bottlenecks(*In.Analysis);
}

} // namespace cuvil
