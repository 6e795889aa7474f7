//===- UnrollBody.h - What unrolling a Scan or a Loop shares ----*- C++ -*-===//
//
// Internal to the ONNX importer's unrolling (Unroll.cpp for Scan and the
// driver, UnrollLoop.cpp for Loop): fresh names, the nodes emitted, and
// copies of a body with its values renamed.
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_FRONTEND_ONNX_UNROLLBODY_H
#define CUVIL_FRONTEND_ONNX_UNROLLBODY_H

#include "frontend/onnx/Unroll.h"

#include <cstdint>
#include <map>
#include <onnx/onnx_pb.h>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cuvil::unroll {

/// Largest number of nodes one Scan or Loop may unroll to.
constexpr int64_t MaxCopies = 1024;

/// What unrolling a Scan or a Loop shares: fresh names, the nodes it
/// emits, and copies of the body.
class BodyUnroller {
public:
  /// What it emits is named after the node (or its Index in the graph).
  BodyUnroller(onnx::GraphProto &G, const onnx::NodeProto &Node, int Index,
               int64_t Opset, std::vector<onnx::NodeProto> &Out)
      : G(G), Prefix(Node.name().empty()
                         ? Node.op_type() + "_" + std::to_string(Index)
                         : Node.name()),
        Opset(Opset), Out(&Out), Top(&Out) {}

  const std::string &why() const { return Why; }

protected:
  const onnx::TypeProto *typeOf(const std::string &Name) const;
  std::string fresh(const std::string &Hint) {
    return Prefix + "/unroll" + std::to_string(Counter++) + "/" + Hint;
  }
  onnx::NodeProto &node(const std::string &Op,
                        const std::vector<std::string> &Ins,
                        const std::vector<std::string> &Outs) {
    Out->emplace_back();
    onnx::NodeProto &N = Out->back();
    N.set_op_type(Op);
    N.set_name(fresh(Op));
    for (auto &I : Ins)
      N.add_input(I);
    for (auto &O : Outs)
      N.add_output(O);
    return N;
  }
  /// A Constant of ONNX element type Type holding V: a scalar, or [1].
  std::string constantInt(int64_t V, bool Vector,
                          int Type = onnx::TensorProto::INT64);
  /// X with index T taken along Axis (the axis disappears).
  std::string gather(const std::string &X, int64_t T, int64_t Axis);
  /// Xs (one per step, in order) stacked along a new axis Axis.
  std::string stack(const std::vector<std::string> &Xs, int64_t Axis);
  /// Emits one copy of Body's nodes, their values renamed; Names maps the
  /// body's names to the unrolled ones (the caller binds the body's inputs
  /// first) and receives the outputs' new names. The body's Constants are
  /// emitted once, into the graph before the first copy, for every copy to
  /// read: one weight each, however many iterations.
  void copyBody(const onnx::GraphProto &Body,
                std::map<std::string, std::string> &Names);
  /// Node N of a copy: fresh names for it and its outputs (into Names),
  /// its inputs and those of its branches' nodes renamed by Names.
  void rename(onnx::NodeProto &N, std::map<std::string, std::string> &Names);
  /// The unrolled name of body value Name (an outer value keeps its own).
  static std::string bound(const std::map<std::string, std::string> &Names,
                           const std::string &Name) {
    auto It = Names.find(Name);
    return It == Names.end() ? Name : It->second;
  }
  /// Identity nodes giving node N's outputs their values Results (one per
  /// output; those N leaves out are skipped).
  void nameOutputs(const onnx::NodeProto &N,
                   const std::vector<std::string> &Results) {
    for (int I = 0; I < N.output_size(); ++I)
      if (!N.output(I).empty())
        node("Identity", {Results[I]}, {N.output(I)});
  }
  /// Refuses bodies this does not copy: initializers, nested subgraphs
  /// other than branches (If's, without formal inputs).
  bool checkBody(const onnx::GraphProto &Body);
  bool decline(std::string Reason) {
    Why = std::move(Reason);
    return false;
  }

  /// Where the nodes go from now on (a branch's own list, then back):
  /// returns where they went before.
  std::vector<onnx::NodeProto> *emitInto(std::vector<onnx::NodeProto> *To) {
    return std::exchange(Out, To);
  }

  onnx::GraphProto &G;
  std::string Prefix;
  int64_t Opset;
  std::vector<onnx::NodeProto> *Out;
  /// The graph's own node list, where the hoisted Constants go.
  std::vector<onnx::NodeProto> *Top;

private:
  int Counter = 0;
  /// The body's Constants emitted so far: body name -> unrolled name.
  std::map<std::string, std::string> Hoisted;
  std::string Why;
};

/// Unrolls Loop node N of G (its Index-th node) into Out (UnrollLoop.cpp):
/// false, with Why, if it is not one the unroller handles. Bound: the
/// user's bound on its iterations (--loop-bound), if any; when the loop is
/// unrolled to it, Check says what run must test.
bool unrollLoop(onnx::GraphProto &G, const onnx::NodeProto &N, int Index,
                int64_t Opset, std::vector<onnx::NodeProto> &Out,
                const std::map<std::string, int64_t> &Known,
                std::optional<int64_t> Bound,
                std::optional<LoopBoundCheck> &Check, std::string &Why);

} // namespace cuvil::unroll

#endif
