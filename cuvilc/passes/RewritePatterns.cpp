//===- RewritePatterns.cpp - Patterns of nodes into cheaper forms ---------===//
//
// Each op whose record has a Rewrite hook roots a pattern (the exact GELU
// through Erf, a MatMul by a constant matrix): the hook replaces the
// pattern with its cheaper form (ops/OpRegistry.h). Hooks append the nodes
// they create at the end of the graph; the pass then puts every node after
// the producers of its inputs, keeping the order of the rest.
//
//===----------------------------------------------------------------------===//
#include "ops/OpRegistry.h"
#include "passes/Pass.h"

#include <unordered_set>

namespace cuvil {
namespace {

/// The nodes in an order where each follows its inputs' producers: the
/// current order, with a node that comes too late moved just before its
/// first user (its own producers before it). Iterative, for long chains.
std::vector<Node *> dependencyOrder(const Graph &G) {
  std::vector<Node *> Order;
  std::unordered_set<const Node *> Placed;
  std::vector<std::pair<Node *, size_t>> Stack; // node, next input to visit
  for (const auto &Root : G.nodes()) {
    if (Placed.count(Root.get()))
      continue;
    Stack.push_back({Root.get(), 0});
    while (!Stack.empty()) {
      auto &[N, Next] = Stack.back();
      if (Next < N->numInputs()) {
        const Value *V = N->input(Next++);
        Node *P = V ? V->producer() : nullptr;
        if (P && !Placed.count(P))
          Stack.push_back({P, 0});
        continue;
      }
      if (Placed.insert(N).second)
        Order.push_back(N);
      Stack.pop_back();
    }
  }
  return Order;
}

} // namespace

llvm::Error rewritePatterns(Graph &G) {
  std::vector<Node *> Roots;
  for (const auto &N : G.nodes())
    if (N->def() && N->def()->Rewrite)
      Roots.push_back(N.get());
  // A hook erases only its root and nodes without a hook, so every root
  // not yet visited is still in the graph.
  bool Changed = false;
  for (Node *N : Roots)
    Changed |= N->def()->Rewrite(G, *N) != nullptr;
  if (Changed) {
    G.reorderNodes(dependencyOrder(G));
    G.eraseDeadValues();
  }
  return llvm::Error::success();
}

} // namespace cuvil
