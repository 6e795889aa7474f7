//===- cuvil-opt.cpp - Runs named passes on textual IR --------------------===//
//
// cuvil-opt FILE.cir --passes=fold-batchnorm,fuse-activations [-o OUT]
// reads the textual IR (ir/IRParser.h; `-` is stdin), runs the passes in the
// order given, verifies the result and prints it (with full constant data,
// so that the output reads back). For pass tests (tests/lit/passes/) and for
// trying a pass on the IR `cuvilc build --dump-ir` printed.
// Exit codes: 0 success, 1 bad IR or a pass failed, 2 usage error.
//
//===----------------------------------------------------------------------===//
#include "ir/Escape.h"
#include "ir/IRParser.h"
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace {

using namespace cuvil;

std::string knownPasses() {
  std::string Known;
  for (const Pass &P : defaultPipeline())
    Known += (Known.empty() ? "" : ", ") + std::string(P.Name);
  return Known;
}

/// Prints every error joined in E (names in it may hold any bytes).
int report(llvm::Error E, const std::string &Prefix) {
  llvm::handleAllErrors(std::move(E), [&](const llvm::ErrorInfoBase &EI) {
    std::cerr << "cuvil-opt: error: " << Prefix << printable(EI.message())
              << "\n";
  });
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App App{"cuvil-opt: run cuvil's graph passes on textual IR (the "
               "format of cuvilc build --dump-ir; see docs/cuvil-opt.md) "
               "and print the result"};
  std::string Input, Output = "-", PassList;
  int64_t Panel = 0;
  bool VerifyOnly = false, Elide = false, ShowPlacement = false;
  App.add_option("input", Input, "IR file (.cir), or - for stdin")->required();
  App.add_option("--passes", PassList,
                 "Comma-separated passes to run in this order: " +
                     knownPasses());
  App.add_option("--pack-panel", Panel,
                 "Output channels per panel for pack-weights (the target "
                 "kernel library's cuvil_k_pack_mr; 0: no packing)")
      ->check(CLI::NonNegativeNumber);
  std::vector<int64_t> QPack;
  App.add_option("--qpack", QPack,
                 "MR,KR: the integer kernels' weight packing for lower-qdq "
                 "(cuvil_k_qpack_mr/_kr; default: plain, reference kernels)")
      ->delimiter(',')
      ->expected(2)
      ->check(CLI::PositiveNumber);
  bool QPackXUnsigned = false;
  App.add_flag("--qpack-x-unsigned", QPackXUnsigned,
               "With --qpack: the packed integer kernels take uint8 "
               "activations (cuvil_k_qpack_x_unsigned = 1), so int8 inputs "
               "are the ones whose correction the bias holds");
  App.add_flag("--verify-only", VerifyOnly,
               "Only parse and verify the IR (no passes, no output)");
  App.add_flag("--elide-constants", Elide,
               "Print constants of more than 16 elements as elided<hash> "
               "(shorter, but the output no longer parses)");
  App.add_flag("--show-placement", ShowPlacement,
               "Note after each node how its op places its output: view "
               "(no kernel), in-place, fresh, or unsupported");
  App.add_option("-o", Output, "Output file (default: stdout)");
  CLI11_PARSE(App, argc, argv);

  std::vector<const Pass *> Passes;
  std::stringstream Names(PassList);
  for (std::string Name; std::getline(Names, Name, ',');) {
    const auto &All = defaultPipeline();
    auto It = std::find_if(All.begin(), All.end(),
                           [&](const Pass &P) { return P.Name == Name; });
    if (It == All.end()) {
      std::cerr << "cuvil-opt: error: --passes: no pass is named '"
                << printable(Name) << "' (passes: " << knownPasses() << ")\n";
      return 2;
    }
    Passes.push_back(&*It);
  }
  if (VerifyOnly && !Passes.empty()) {
    std::cerr << "cuvil-opt: error: --verify-only runs no passes\n";
    return 2;
  }

  std::string Text;
  if (Input == "-") {
    Text.assign(std::istreambuf_iterator<char>(std::cin), {});
  } else {
    std::ifstream In(Input, std::ios::binary);
    if (!In) {
      std::cerr << "cuvil-opt: error: cannot read '" << printable(Input)
                << "'\n";
      return 1;
    }
    Text.assign(std::istreambuf_iterator<char>(In), {});
  }
  auto G = parseIR(Text, lookupOpInDomain, Input == "-" ? "<stdin>" : Input);
  if (!G)
    return report(G.takeError(), "");

  PipelineOptions Options;
  Options.PackPanel = Panel;
  if (QPack.size() == 2) {
    Options.QPackMr = QPack[0];
    Options.QPackKr = QPack[1];
    Options.QPackXUnsigned = QPackXUnsigned;
  }
  for (const Pass *P : Passes) {
    if (auto E = P->Run(**G, Options))
      return report(std::move(E), "pass " + std::string(P->Name) + ": ");
    // As in the pipeline: later passes rely on what these verify.
    if (P->VerifyAfter)
      if (auto E = verifyGraph(**G))
        return report(std::move(E), "after " + std::string(P->Name) + ": ");
  }
  if (auto E = verifyGraph(**G))
    return report(std::move(E), "");
  if (auto E = (*G)->checkTensorSizes())
    return report(std::move(E), "");
  if (VerifyOnly)
    return 0;

  IRPrintOptions PO;
  PO.FullData = !Elide;
  if (ShowPlacement)
    PO.NodeNote = [](const Node &N) -> std::string {
      if (!N.def())
        return "unsupported";
      switch (N.def()->place()) {
      case Placement::View: return "view";
      case Placement::InPlace: return "in-place";
      case Placement::Fresh: return "fresh";
      }
      return "";
    };
  std::string Out = (*G)->print(PO);
  if (Output == "-") {
    std::cout << Out;
    return 0;
  }
  std::ofstream F(Output, std::ios::binary);
  if (!(F << Out) || !F.flush()) {
    std::cerr << "cuvil-opt: error: cannot write '" << printable(Output)
              << "'\n";
    return 1;
  }
  return 0;
}
