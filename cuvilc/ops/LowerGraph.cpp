//===- LowerGraph.cpp - Every node of a graph to kernel calls -------------===//
#include "ops/LowerGraph.h"

#include "ir/Diagnostic.h"
#include "lowering/KernelAbiSupport.h"
#include "ops/BranchGuards.h"
#include "ops/OpRegistry.h"
#include "ops/custom/CustomOp.h"
#include "ops/sequence/Optional.h"

namespace cuvil {

llvm::Expected<GraphLowering> lowerGraph(const Graph &G, int64_t Cores) {
  GraphLowering L(G.nodes().size());
  for (size_t S = 0; S < G.nodes().size(); ++S) {
    const Node &N = *G.nodes()[S];
    if (!N.def()->Lower)
      continue; // a view: no code
    L[S].HasCode = true;
    if (auto E = N.def()->Lower(N, L[S].Calls))
      return E;
    if (N.def()->Exit)
      L[S].Exit = N.def()->Exit(N);
    // Every call must fit a prototype of cuvil/kernels.h; a declared op's
    // kernel is the firmware's, typed by its --custom-ops declaration.
    if (customOpOf(N.def()))
      continue;
    for (const KernelCall &C : L[S].Calls)
      if (auto E = kabi::checkKernelCall(C))
        return nodeError(N, "{}", llvm::toString(std::move(E)));
    if (Cores > 1 && N.def()->Split)
      N.def()->Split(N, L[S].Calls, Cores, L[S].Shares);
    for (const auto &Share : L[S].Shares)
      for (const KernelCall &C : Share)
        if (auto E = kabi::checkKernelCall(C))
          return nodeError(N, "internal error: a share of the node: {}",
                           llvm::toString(std::move(E)));
  }
  guardBranches(G, L);
  if (auto E = checkOptionalReads(G, L))
    return E;
  return L;
}

} // namespace cuvil
