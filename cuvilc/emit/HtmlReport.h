//===- HtmlReport.h - One self-contained HTML page of a build ---*- C++ -*-===//
//
// `cuvilc report` (docs/report.md): a summary of the build, the graph after
// fusion (one row per node, in execution order, with its ONNX origins,
// MACs, bytes moved, kernels and precision), the memory map (the target's
// regions, what the plan puts in each, every arena drawn as by `cuvilc plan
// --svg`) and, given a profile, a heat map of the layers and a list of
// bottlenecks. The page has no scripts and loads nothing: the CSS is
// inline and the pictures are inline SVG, so it reads the same offline and
// with JavaScript disabled. Every node row is <tr id="step-N"
// data-step="N" data-node="NAME">, every profile row <tr data-profile-step
// ...>: tests (and readers' tools) find each layer by them.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_EMIT_HTMLREPORT_H
#define CUVIL_EMIT_HTMLREPORT_H

#include "emit/Bottlenecks.h"
#include "emit/LayerFacts.h"
#include "emit/LayerProfile.h"
#include "ir/Graph.h"
#include "planner/MemoryPlan.h"
#include "target/TargetInfo.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cuvil {

struct HtmlReportInput {
  const Graph *G = nullptr;
  const MemoryPlan *Plan = nullptr;
  const TargetInfo *Target = nullptr;
  const std::vector<LayerFacts> *Layers = nullptr; ///< Of G, in order.
  std::string ModelFile; ///< As given on the command line.
  std::string Name;      ///< The C prefix (cuvil_NAME_run).
  /// The options that shape the compiled graph, as typed (may be empty).
  std::string Options;
  std::string WeightsRegion;
  uint64_t BlobBytes = 0;
  /// What the build warns of (spilled buffers, float islands), one line
  /// each, naming the node.
  std::vector<std::string> Warnings;
  /// With --profile-data: the file, its data and its analysis.
  std::string ProfileFile;
  const LayerProfile *Profile = nullptr;
  const ProfileAnalysis *Analysis = nullptr;
};

/// The page.
std::string writeHtmlReport(const HtmlReportInput &In);

/// The page's profile sections (HtmlProfile.cpp): the heat map and the
/// bottleneck list, or a note saying how to get a profile when In has none.
std::string htmlProfileSections(const HtmlReportInput &In);

/// Text for HTML character data and attribute values: any bytes made
/// printable, then &, <, >, " and ' as entities.
std::string html(std::string_view S);
/// 1234567 -> "1,234,567".
std::string grouped(int64_t N);
/// A number of bytes for people: "1.5 MiB (1,572,864 B)".
std::string bytesText(int64_t N);

} // namespace cuvil

#endif
