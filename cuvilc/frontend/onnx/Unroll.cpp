//===- Unroll.cpp - Scan and Loop as straight-line ONNX nodes -------------===//
//
// A Scan whose trip count is static (the scan axis of its inputs after
// shape inference) is rewritten, in the ModelProto, into plain ONNX nodes:
// per iteration a copy of the body with its values renamed, its scan inputs
// bound to Gather(x, t) slices and its state inputs to the previous
// iteration's state; the scan outputs are stacked with Unsqueeze + Concat
// and Identity nodes produce the Scan's own output names. Shape inference
// then runs again over the result and the importer sees only ops it knows.
// Scan-8's batch axis is one more loop around that. A Scan this does not
// handle (sequence_lens, unknown shapes, nested subgraphs, too many
// iterations) stays as is, and verification reports it.
//
// A Loop is unrolled the same way when its trip count M is known (a
// constant, or a value constant folding computed from shapes: the caller
// gives those, see unrollLoops) and its condition provably stays true (a
// `for` loop: no condition input, or a true one, and the body's condition
// output is its input or a true constant). Iteration t binds the body's
// iteration number to the constant t; its scan outputs are stacked along
// a new axis 0. A while loop, a run-time trip count or zero iterations
// stay as is, and verification says why.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Unroll.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace cuvil {
namespace {

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
        Opset(Opset), Out(Out) {}

  const std::string &why() const { return Why; }

protected:
  const onnx::TypeProto *typeOf(const std::string &Name) const;
  std::string fresh(const std::string &Hint) {
    return Prefix + "/unroll" + std::to_string(Counter++) + "/" + Hint;
  }
  onnx::NodeProto &node(const std::string &Op,
                        const std::vector<std::string> &Ins,
                        const std::vector<std::string> &Outs) {
    Out.emplace_back();
    onnx::NodeProto &N = Out.back();
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
  /// first) and receives the outputs' new names.
  void copyBody(const onnx::GraphProto &Body,
                std::map<std::string, std::string> &Names);
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
  /// Refuses bodies this does not copy (initializers, nested subgraphs).
  bool checkBody(const onnx::GraphProto &Body);
  bool decline(std::string Reason) {
    Why = std::move(Reason);
    return false;
  }

  onnx::GraphProto &G;
  std::string Prefix;
  int64_t Opset;
  std::vector<onnx::NodeProto> &Out;

private:
  int Counter = 0;
  std::string Why;
};

class ScanUnroller : public BodyUnroller {
public:
  ScanUnroller(onnx::GraphProto &G, const onnx::NodeProto &Scan, int Index,
               int64_t Opset, std::vector<onnx::NodeProto> &Out)
      : BodyUnroller(G, Scan, Index, Opset, Out), Scan(Scan) {}

  /// False if this Scan is not one the unroller handles (nothing emitted;
  /// why() says why).
  bool run();

private:
  /// One Scan-9 pass: returns the final states then the scan outputs.
  std::vector<std::string> scan(std::vector<std::string> States,
                                const std::vector<std::string> &Xs,
                                int64_t Batch);

  const onnx::NodeProto &Scan;
  const onnx::GraphProto *Body = nullptr;
  std::vector<int64_t> InAxes, InDirs, OutAxes, OutDirs;
  int64_t Steps = 0;
};

const onnx::TypeProto *BodyUnroller::typeOf(const std::string &Name) const {
  for (const auto *L : {&G.input(), &G.value_info(), &G.output()})
    for (const auto &VI : *L)
      if (VI.name() == Name)
        return &VI.type();
  return nullptr;
}

std::string BodyUnroller::constantInt(int64_t V, bool Vector, int Type) {
  std::string Name = fresh("c");
  auto &N = node("Constant", {}, {Name});
  auto *A = N.add_attribute();
  A->set_name("value");
  A->set_type(onnx::AttributeProto::TENSOR);
  A->mutable_t()->set_data_type(Type);
  if (Vector)
    A->mutable_t()->add_dims(1);
  if (Type == onnx::TensorProto::INT64)
    A->mutable_t()->add_int64_data(V);
  else
    A->mutable_t()->add_int32_data(static_cast<int32_t>(V)); // BOOL too
  return Name;
}

std::string BodyUnroller::gather(const std::string &X, int64_t T,
                                 int64_t Axis) {
  std::string Idx = constantInt(T, false);
  std::string Y = fresh("slice");
  auto &N = node("Gather", {X, Idx}, {Y});
  auto *A = N.add_attribute();
  A->set_name("axis");
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(Axis);
  return Y;
}

std::string BodyUnroller::stack(const std::vector<std::string> &Xs,
                                int64_t Axis) {
  std::vector<std::string> Parts;
  for (const auto &X : Xs) {
    std::string Y = fresh("part");
    if (Opset >= 13) {
      node("Unsqueeze", {X, constantInt(Axis, true)}, {Y});
    } else {
      auto *A = node("Unsqueeze", {X}, {Y}).add_attribute();
      A->set_name("axes");
      A->set_type(onnx::AttributeProto::INTS);
      A->add_ints(Axis);
    }
    Parts.push_back(Y);
  }
  std::string Y = fresh("stacked");
  auto *A = node("Concat", Parts, {Y}).add_attribute();
  A->set_name("axis");
  A->set_type(onnx::AttributeProto::INT);
  A->set_i(Axis);
  return Y;
}

void BodyUnroller::copyBody(const onnx::GraphProto &Body,
                            std::map<std::string, std::string> &Names) {
  for (const auto &BN : Body.node()) {
    Out.push_back(BN);
    onnx::NodeProto &N = Out.back();
    N.set_name(fresh(BN.name().empty() ? BN.op_type() : BN.name()));
    for (auto &In : *N.mutable_input())
      if (auto It = Names.find(In); It != Names.end())
        In = It->second;
    for (auto &O : *N.mutable_output())
      if (!O.empty())
        O = Names[O] = fresh(O);
  }
}

bool BodyUnroller::checkBody(const onnx::GraphProto &Body) {
  if (Body.initializer_size() != 0)
    return decline("a body with initializers is not supported");
  for (const auto &BN : Body.node())
    for (const auto &A : BN.attribute())
      if (A.type() == onnx::AttributeProto::GRAPH ||
          A.type() == onnx::AttributeProto::GRAPHS)
        return decline("a body with nested subgraphs is not supported");
  return true;
}

std::vector<std::string> ScanUnroller::scan(std::vector<std::string> States,
                                            const std::vector<std::string> &Xs,
                                            int64_t Batch) {
  size_t NumStates = States.size();
  size_t NumScanOuts = Body->output_size() - NumStates;
  std::vector<std::vector<std::string>> PerStep(NumScanOuts);
  for (int64_t Step = 0; Step < Steps; ++Step) {
    std::map<std::string, std::string> Names; // body name -> unrolled name
    for (size_t I = 0; I < NumStates; ++I)
      Names[Body->input(I).name()] = States[I];
    for (size_t I = 0; I < Xs.size(); ++I) {
      int64_t T = InDirs[I] ? Steps - 1 - Step : Step;
      // Scan-8 already took the batch axis away.
      Names[Body->input(NumStates + I).name()] =
          gather(Xs[I], T, Batch >= 0 ? 0 : InAxes[I]);
    }
    copyBody(*Body, Names);
    for (size_t I = 0; I < NumStates; ++I)
      States[I] = bound(Names, Body->output(I).name());
    for (size_t I = 0; I < NumScanOuts; ++I)
      PerStep[I].push_back(bound(Names, Body->output(NumStates + I).name()));
  }
  std::vector<std::string> Results = States;
  for (size_t I = 0; I < NumScanOuts; ++I) {
    if (OutDirs[I])
      std::reverse(PerStep[I].begin(), PerStep[I].end());
    Results.push_back(stack(PerStep[I], Batch >= 0 ? 0 : OutAxes[I]));
  }
  return Results;
}

bool ScanUnroller::run() {
  int64_t NumScanIns = -1;
  for (const auto &A : Scan.attribute()) {
    if (A.name() == "body")
      Body = &A.g();
    else if (A.name() == "num_scan_inputs")
      NumScanIns = A.i();
    else if (A.name() == "scan_input_axes")
      InAxes.assign(A.ints().begin(), A.ints().end());
    else if (A.name() == "scan_input_directions" || A.name() == "directions")
      InDirs.assign(A.ints().begin(), A.ints().end());
    else if (A.name() == "scan_output_axes")
      OutAxes.assign(A.ints().begin(), A.ints().end());
    else if (A.name() == "scan_output_directions")
      OutDirs.assign(A.ints().begin(), A.ints().end());
  }
  bool Batched = Opset < 9; // Scan-8: inputs start with sequence_lens
  std::vector<std::string> Ins(Scan.input().begin(), Scan.input().end());
  if (!Body || NumScanIns < 1 || Ins.empty())
    return decline("it has no body or no scan input");
  if (Batched) {
    if (!Ins[0].empty())
      return decline("the sequence_lens input is not supported");
    Ins.erase(Ins.begin());
  }
  int64_t NumStates = static_cast<int64_t>(Ins.size()) - NumScanIns;
  int64_t NumScanOuts = Body->output_size() - NumStates;
  if (NumStates < 0 || NumScanOuts < 0 ||
      Body->input_size() != static_cast<int>(Ins.size()) ||
      Scan.output_size() != Body->output_size())
    return decline("its inputs and outputs do not match its body's");
  if (!checkBody(*Body))
    return false;
  InAxes.resize(NumScanIns, 0);
  InDirs.resize(NumScanIns, 0);
  OutAxes.resize(NumScanOuts, 0);
  OutDirs.resize(NumScanOuts, 0);
  // Static trip count (and batch), from the first scan input's shape.
  const onnx::TypeProto *T = typeOf(Ins[NumStates]);
  if (!T || !T->has_tensor_type() || !T->tensor_type().has_shape())
    return decline("the shape of its scan input is unknown");
  const auto &Shape = T->tensor_type().shape();
  int64_t Rank = Shape.dim_size();
  // Negative axes count from the end of that input / of the stacked output.
  auto RankOf = [](const onnx::TypeProto *Ty) -> int64_t {
    return Ty && Ty->has_tensor_type() && Ty->tensor_type().has_shape()
               ? Ty->tensor_type().shape().dim_size()
               : -1;
  };
  for (int64_t I = 0; I < NumScanIns; ++I)
    if (InAxes[I] < 0)
      InAxes[I] += RankOf(typeOf(Ins[NumStates + I]));
  for (int64_t I = 0; I < NumScanOuts; ++I)
    if (OutAxes[I] < 0)
      OutAxes[I] += RankOf(&Body->output(NumStates + I).type()) + 1;
  for (int64_t Ax : InAxes)
    if (Ax < 0)
      return decline("a negative scan input axis of unknown rank");
  for (int64_t Ax : OutAxes)
    if (Ax < 0)
      return decline("a negative scan output axis of unknown rank");
  int64_t ScanAxis = Batched ? 1 : InAxes[0];
  if (ScanAxis < 0 || ScanAxis >= Rank ||
      !Shape.dim(ScanAxis).has_dim_value() ||
      (Batched && !Shape.dim(0).has_dim_value()))
    return decline("its trip count is not static");
  Steps = Shape.dim(ScanAxis).dim_value();
  int64_t BatchSize = Batched ? Shape.dim(0).dim_value() : 1;
  if (Steps < 1 || BatchSize < 1 ||
      Steps * BatchSize * (Body->node_size() + 4) > MaxCopies)
    return decline("unrolling it would take more than " +
                   std::to_string(MaxCopies) +
                   " nodes; that is not "
                   "supported");

  std::vector<std::string> States(Ins.begin(), Ins.begin() + NumStates);
  std::vector<std::string> Xs(Ins.begin() + NumStates, Ins.end());
  std::vector<std::string> Results;
  if (!Batched) {
    Results = scan(States, Xs, -1);
  } else {
    std::vector<std::vector<std::string>> PerBatch(Scan.output_size());
    for (int64_t B = 0; B < BatchSize; ++B) {
      std::vector<std::string> S, X;
      for (const auto &V : States)
        S.push_back(gather(V, B, 0));
      for (const auto &V : Xs)
        X.push_back(gather(V, B, 0));
      auto R = scan(S, X, B);
      for (size_t I = 0; I < R.size(); ++I)
        PerBatch[I].push_back(R[I]);
    }
    for (const auto &Parts : PerBatch)
      Results.push_back(stack(Parts, 0));
  }
  nameOutputs(Scan, Results);
  return true;
}

class LoopUnroller : public BodyUnroller {
public:
  LoopUnroller(onnx::GraphProto &G, const onnx::NodeProto &Loop, int Index,
               int64_t Opset, std::vector<onnx::NodeProto> &Out,
               const std::map<std::string, int64_t> &Known)
      : BodyUnroller(G, Loop, Index, Opset, Out), Loop(Loop), Known(Known) {}

  /// False if this Loop is not one the unroller handles (nothing emitted;
  /// why() says why).
  bool run();

private:
  /// Whether body value Name is true at every iteration: the condition
  /// input itself (true on entry), a true constant, or an Identity / Cast
  /// of one.
  bool staysTrue(const std::string &Name, int Depth = 0) const;

  const onnx::NodeProto &Loop;
  const std::map<std::string, int64_t> &Known;
  const onnx::GraphProto *Body = nullptr;
};

bool LoopUnroller::staysTrue(const std::string &Name, int Depth) const {
  if (Name == Body->input(1).name())
    return true;
  if (auto It = Known.find(Name); It != Known.end())
    return It->second != 0;
  if (Depth > 8)
    return false;
  for (const auto &BN : Body->node()) {
    if (BN.output_size() == 0 || BN.output(0) != Name)
      continue;
    if ((BN.op_type() == "Identity" || BN.op_type() == "Cast") &&
        BN.input_size() == 1)
      return staysTrue(BN.input(0), Depth + 1);
    if (BN.op_type() != "Constant")
      return false;
    for (const auto &A : BN.attribute()) {
      if (A.name() != "value" || A.t().dims_size() > 1)
        continue;
      const auto &T = A.t();
      if (T.data_type() == onnx::TensorProto::BOOL && T.int32_data_size() == 1)
        return T.int32_data(0) != 0;
      if (T.data_type() == onnx::TensorProto::BOOL && T.raw_data().size() == 1)
        return T.raw_data()[0] != 0;
    }
    return false;
  }
  return false;
}

bool LoopUnroller::run() {
  for (const auto &A : Loop.attribute())
    if (A.name() == "body")
      Body = &A.g();
  if (!Body || Loop.input_size() < 2 || Body->input_size() < 2 ||
      Body->output_size() < 1)
    return decline("it has no body, or not the inputs a Loop has");
  size_t NumStates = Loop.input_size() - 2;
  if (Body->input_size() != static_cast<int>(NumStates) + 2 ||
      Body->output_size() < static_cast<int>(NumStates) + 1 ||
      Loop.output_size() != Body->output_size() - 1)
    return decline("its inputs and outputs do not match its body's");
  size_t NumScanOuts = Body->output_size() - 1 - NumStates;
  if (!checkBody(*Body))
    return false;
  const std::string &M = Loop.input(0);
  auto Trips = M.empty() ? Known.end() : Known.find(M);
  if (Trips == Known.end())
    return decline(M.empty() ? "a Loop without a trip count (a while loop) "
                               "is not supported"
                             : "its trip count is computed at run time (a "
                               "value --dim or constants do not fix)");
  const std::string &Cond = Loop.input(1);
  if (!Cond.empty()) {
    auto C = Known.find(Cond);
    if (C == Known.end())
      return decline("its condition is computed at run time");
    if (C->second == 0)
      return decline("it runs zero times (its condition is false)");
  }
  if (!staysTrue(Body->output(0).name()))
    return decline("its body computes its condition (a while loop): only a "
                   "loop whose condition stays true is supported");
  int64_t Steps = Trips->second;
  if (Steps < 1)
    return decline("it runs zero times (trip count " + std::to_string(Steps) +
                   ")");
  if (Steps * (Body->node_size() + 4) > MaxCopies)
    return decline("unrolling it would take more than " +
                   std::to_string(MaxCopies) + " nodes; that is not supported");

  std::vector<std::string> States(Loop.input().begin() + 2, Loop.input().end());
  std::vector<std::vector<std::string>> PerStep(NumScanOuts);
  std::string True = constantInt(1, false, onnx::TensorProto::BOOL);
  for (int64_t Step = 0; Step < Steps; ++Step) {
    std::map<std::string, std::string> Names;
    Names[Body->input(0).name()] = constantInt(Step, false);
    Names[Body->input(1).name()] = True;
    for (size_t I = 0; I < NumStates; ++I)
      Names[Body->input(2 + I).name()] = States[I];
    copyBody(*Body, Names);
    for (size_t I = 0; I < NumStates; ++I)
      States[I] = bound(Names, Body->output(1 + I).name());
    for (size_t I = 0; I < NumScanOuts; ++I)
      PerStep[I].push_back(
          bound(Names, Body->output(1 + NumStates + I).name()));
  }
  std::vector<std::string> Results = States;
  for (const auto &Parts : PerStep)
    Results.push_back(stack(Parts, 0));
  nameOutputs(Loop, Results);
  return true;
}

} // namespace

bool unrollLoops(onnx::ModelProto &M,
                 std::map<std::string, std::string> &Declined,
                 const std::map<std::string, int64_t> &Known) {
  int64_t Opset = 0;
  for (const auto &O : M.opset_import())
    if (O.domain().empty() || O.domain() == "ai.onnx")
      Opset = O.version();
  onnx::GraphProto &G = *M.mutable_graph();
  bool Changed = false;
  std::vector<onnx::NodeProto> Nodes;
  int Index = 0;
  for (const auto &N : G.node()) {
    ++Index;
    bool Standard = N.domain().empty() || N.domain() == "ai.onnx";
    if (!Standard || (N.op_type() != "Scan" && N.op_type() != "Loop")) {
      Nodes.push_back(N);
      continue;
    }
    std::vector<onnx::NodeProto> Unrolled;
    bool Done;
    std::string Why;
    if (N.op_type() == "Scan") {
      ScanUnroller U(G, N, Index - 1, Opset, Unrolled);
      Done = U.run();
      Why = U.why();
    } else {
      LoopUnroller U(G, N, Index - 1, Opset, Unrolled, Known);
      Done = U.run();
      Why = U.why();
    }
    if (!Done) {
      if (N.output_size() > 0)
        Declined[N.output(0)] = Why;
      Nodes.push_back(N);
      continue;
    }
    Nodes.insert(Nodes.end(), Unrolled.begin(), Unrolled.end());
    Changed = true;
  }
  if (!Changed)
    return false;
  G.clear_node();
  for (auto &N : Nodes)
    *G.add_node() = std::move(N);
  return true;
}

} // namespace cuvil
