//===- LoopBounds.cpp - Loops the user bounds (--loop-bound) --------------===//
#include "frontend/onnx/LoopBounds.h"

#include "ir/Diagnostic.h"
#include "ops/OpRegistry.h"

#include <set>

namespace cuvil {

llvm::Error checkLoopBoundNames(const onnx::GraphProto &G,
                                const std::map<std::string, int64_t> &Bounds) {
  std::set<std::string> Loops;
  for (const auto &N : G.node())
    if (N.op_type() == "Loop" &&
        (N.domain().empty() || N.domain() == "ai.onnx"))
      Loops.insert(N.name());
  for (const auto &[Name, K] : Bounds) {
    if (Loops.count(Name))
      continue;
    std::string Known;
    for (const auto &L : Loops)
      Known += (Known.empty() ? "" : ", ") + ("'" + L + "'");
    return makeError("--loop-bound {}={}: the model's main graph has no Loop "
                     "node named '{}' ({})",
                     Name, K, Name,
                     Loops.empty() ? "it has no Loop" : "its Loops: " + Known);
  }
  return llvm::Error::success();
}

void addLoopBoundChecks(Graph &G,
                        std::unordered_map<std::string, Value *> &Values,
                        const std::vector<LoopBoundCheck> &Checks) {
  const OpDef *Def = lookupInternalOp("LoopBound");
  for (const LoopBoundCheck &C : Checks) {
    Value *Exceeded = Values.at(C.Exceeded);
    for (size_t O = 0; O < C.Outputs.size(); ++O) {
      const std::string &Out = C.Outputs[O];
      auto It = Values.find(Out);
      if (It == Values.end())
        continue;
      Value *State = It->second;
      State->setName(Out + "/unchecked");
      Value *Checked = G.addValue(Out, State->dtype(), State->shape(),
                                  ValueKind::Intermediate);
      G.replaceAllUses(State, Checked);
      Node *N =
          G.addNode(Def->Name, C.Loop + "/bound_check_" + std::to_string(O),
                    Def, {State, Exceeded}, {Checked});
      N->setAttr("loop", C.Loop);
      N->setAttr("bound", C.Bound);
      if (const Node *P = Exceeded->producer())
        N->origin() = P->origin();
      N->setOpset(1);
      It->second = Checked;
      // After the later of its inputs' producers (the graph's order is
      // its execution order).
      std::vector<Node *> Order;
      size_t After = 0;
      for (size_t I = 0; I + 1 < G.nodes().size(); ++I) {
        Node *X = G.nodes()[I].get();
        Order.push_back(X);
        if (X == State->producer() || X == Exceeded->producer())
          After = I + 1;
      }
      Order.insert(Order.begin() + static_cast<ptrdiff_t>(After), N);
      G.reorderNodes(Order);
    }
  }
}

} // namespace cuvil
