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
// a new axis 0.
//
// A Loop that may stop before M (its body computes its condition, a while
// loop bounded by M, or its condition input is a run-time value) unrolls
// to M guarded iterations: iteration t is an If on "still running", whose
// then branch is the body's copy and whose else branch passes the state
// through and keeps the condition false. Lowering then runs only the
// iterations taken (ops/BranchGuards.cpp); each If copies the state. Such
// a loop may not have scan outputs: their length would be known only at
// run time. A run-time trip count, zero iterations, or a loop past the
// node limit stay as is, and verification says why.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Unroll.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
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
    if (BN.op_type() == "Constant" && BN.input_size() == 0 &&
        BN.output_size() == 1) {
      auto [It, New] = Hoisted.try_emplace(BN.output(0));
      if (New) {
        onnx::NodeProto C = BN;
        C.set_name(fresh(BN.name().empty() ? "Constant" : BN.name()));
        C.set_output(0, It->second = fresh(BN.output(0)));
        Top->push_back(std::move(C));
      }
      Names[BN.output(0)] = It->second;
      continue;
    }
    Out->push_back(BN);
    rename(Out->back(), Names);
  }
}

void BodyUnroller::rename(onnx::NodeProto &N,
                          std::map<std::string, std::string> &Names) {
  N.set_name(fresh(N.name().empty() ? N.op_type() : N.name()));
  for (auto &In : *N.mutable_input())
    In = bound(Names, In);
  // A branch (checkBody allows only subgraphs without formal inputs) reads
  // the body's values and gets fresh names of its own: each copy is
  // inlined into the one graph.
  for (auto &A : *N.mutable_attribute()) {
    if (A.type() != onnx::AttributeProto::GRAPH)
      continue;
    onnx::GraphProto &Sub = *A.mutable_g();
    Sub.clear_value_info();
    for (auto &SN : *Sub.mutable_node())
      rename(SN, Names);
    for (auto &VI : *Sub.mutable_output())
      VI.set_name(bound(Names, VI.name()));
  }
  for (auto &O : *N.mutable_output())
    if (!O.empty())
      O = Names[O] = fresh(O);
}

bool BodyUnroller::checkBody(const onnx::GraphProto &Body) {
  if (Body.initializer_size() != 0)
    return decline("a body with initializers is not supported");
  for (const auto &BN : Body.node())
    for (const auto &A : BN.attribute()) {
      if (A.type() == onnx::AttributeProto::GRAPHS ||
          (A.type() == onnx::AttributeProto::GRAPH &&
           (A.g().input_size() != 0 || A.g().initializer_size() != 0)))
        return decline("a body with a nested Loop or Scan, or a subgraph "
                       "with initializers, is not supported");
      if (A.type() == onnx::AttributeProto::GRAPH && !checkBody(A.g()))
        return false;
    }
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
  /// The most iterations body value Name, as the body's condition, lets
  /// the loop run: it is false once a counter reaches a constant (an And
  /// of terms, one of them `counter < K`; PyTorch exports `for i in
  /// range(K)` with a `break` so, with an unbounded trip count).
  std::optional<int64_t> counterBound(const std::string &Name,
                                      int Depth = 0) const;
  /// Body value Name at iteration t as Base + Step * t: the iteration
  /// number, a state that starts at a constant and adds one each
  /// iteration, or one of those plus or minus a constant.
  std::optional<std::pair<int64_t, int64_t>> affine(const std::string &Name,
                                                    int Depth = 0) const;
  /// The int64 or int32 scalar constant Name (a constant of the graph or
  /// of the body).
  std::optional<int64_t> constant(const std::string &Name) const;
  /// The body node computing Name, if any.
  const onnx::NodeProto *producer(const std::string &Name) const;
  /// Steps iterations, each an If on whether the loop still runs (Cond,
  /// "" for true, before the first): returns the final states.
  /// With a trip count known only at run time (Trips, else ""), each
  /// iteration t also needs t < Trips.
  std::vector<std::string> guarded(int64_t Steps, std::string Cond,
                                   const std::string &Trips,
                                   std::vector<std::string> States);
  /// A branch graph of the nodes Nodes whose outputs are Results, typed
  /// as the body's outputs 0 (the condition) and 1.. (the states).
  onnx::GraphProto branchGraph(const std::string &Name,
                               std::vector<onnx::NodeProto> Nodes,
                               const std::vector<std::string> &Results) const;

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

const onnx::NodeProto *LoopUnroller::producer(const std::string &Name) const {
  for (const auto &BN : Body->node())
    for (const auto &O : BN.output())
      if (O == Name)
        return &BN;
  return nullptr;
}

std::optional<int64_t> LoopUnroller::constant(const std::string &Name) const {
  if (auto It = Known.find(Name); It != Known.end())
    return It->second;
  auto Scalar = [](const onnx::TensorProto &T) -> std::optional<int64_t> {
    if (T.dims_size() > 1 || (T.dims_size() == 1 && T.dims(0) != 1))
      return std::nullopt;
    if (T.data_type() == onnx::TensorProto::INT64) {
      if (T.int64_data_size() == 1)
        return T.int64_data(0);
      if (T.raw_data().size() == 8) {
        int64_t V;
        std::memcpy(&V, T.raw_data().data(), 8);
        return V;
      }
    }
    if (T.data_type() == onnx::TensorProto::INT32) {
      if (T.int32_data_size() == 1)
        return T.int32_data(0);
      if (T.raw_data().size() == 4) {
        int32_t V;
        std::memcpy(&V, T.raw_data().data(), 4);
        return V;
      }
    }
    return std::nullopt;
  };
  for (const auto *Nodes : {&Body->node(), &G.node()})
    for (const auto &N : *Nodes)
      if (N.op_type() == "Constant" && N.output_size() == 1 &&
          N.output(0) == Name)
        for (const auto &A : N.attribute())
          if (A.name() == "value")
            return Scalar(A.t());
  // An initializer that is also a graph input is a default the caller may
  // replace: not a constant.
  for (const auto &In : G.input())
    if (In.name() == Name)
      return std::nullopt;
  for (const auto &T : G.initializer())
    if (T.name() == Name)
      return Scalar(T);
  return std::nullopt;
}

std::optional<std::pair<int64_t, int64_t>>
LoopUnroller::affine(const std::string &Name, int Depth) const {
  if (Name == Body->input(0).name())
    return std::pair<int64_t, int64_t>{0, 1};
  if (Depth > 8)
    return std::nullopt;
  for (int I = 2; I < Body->input_size(); ++I) {
    if (Body->input(I).name() != Name)
      continue;
    // A state: its initial value, and a next value of Name + constant.
    auto Init = constant(Loop.input(I));
    const onnx::NodeProto *Next = producer(Body->output(I - 1).name());
    if (!Init || !Next || Next->op_type() != "Add" || Next->input_size() != 2)
      return std::nullopt;
    for (int Side = 0; Side < 2; ++Side)
      if (Next->input(Side) == Name)
        if (auto Step = constant(Next->input(1 - Side)))
          return std::pair{*Init, *Step};
    return std::nullopt;
  }
  const onnx::NodeProto *P = producer(Name);
  if (!P)
    return std::nullopt;
  if ((P->op_type() == "Identity" || P->op_type() == "Cast") &&
      P->input_size() == 1)
    return affine(P->input(0), Depth + 1);
  if ((P->op_type() != "Add" && P->op_type() != "Sub") || P->input_size() != 2)
    return std::nullopt;
  for (int Side = 0; Side < 2; ++Side) {
    if (P->op_type() == "Sub" && Side == 1)
      break; // constant - counter counts down
    auto C = constant(P->input(1 - Side));
    auto X = C ? affine(P->input(Side), Depth + 1) : std::nullopt;
    int64_t Base;
    if (X &&
        !(P->op_type() == "Sub" ? __builtin_sub_overflow(X->first, *C, &Base)
                                : __builtin_add_overflow(X->first, *C, &Base)))
      return std::pair{Base, X->second};
  }
  return std::nullopt;
}

std::optional<int64_t> LoopUnroller::counterBound(const std::string &Name,
                                                  int Depth) const {
  const onnx::NodeProto *P = Depth > 8 ? nullptr : producer(Name);
  if (!P || P->input_size() < 1)
    return std::nullopt;
  const std::string &Op = P->op_type();
  if ((Op == "Identity" || Op == "Cast") && P->input_size() == 1)
    return counterBound(P->input(0), Depth + 1);
  if (Op == "And" && P->input_size() == 2) {
    auto A = counterBound(P->input(0), Depth + 1);
    auto B = counterBound(P->input(1), Depth + 1);
    if (A && B)
      return std::min(*A, *B);
    return A ? A : B;
  }
  // counter < K (Less, or Greater with the sides swapped; LessOrEqual is
  // counter < K + 1).
  bool Swap = Op == "Greater" || Op == "GreaterOrEqual";
  if ((Op != "Less" && Op != "LessOrEqual" && !Swap) || P->input_size() != 2)
    return std::nullopt;
  auto Counter = affine(P->input(Swap ? 1 : 0));
  auto Limit = constant(P->input(Swap ? 0 : 1));
  if (!Counter || !Limit || Counter->second <= 0)
    return std::nullopt;
  // (A model's constants may be anything: no step below may overflow.)
  int64_t K, Span;
  if (__builtin_add_overflow(*Limit,
                             Op == "LessOrEqual" || Op == "GreaterOrEqual", &K))
    return std::nullopt;
  auto [Base, Step] = *Counter;
  // The loop goes on after iteration t while Base + Step * t < K: it runs
  // up to the first t where that fails, that one included.
  if (Base >= K)
    return 1;
  if (__builtin_sub_overflow(K, Base, &Span) || Span / Step >= MaxCopies)
    return std::nullopt; // far beyond what unrolls
  return Span / Step + (Span % Step != 0) + 1;
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
  // The trip count M: known, or a run-time value (the iterations then also
  // check t < M) under a bound the body's condition gives.
  const std::string &M = Loop.input(0);
  std::optional<int64_t> TripCount = M.empty() ? std::nullopt : constant(M);
  std::optional<int64_t> Counted = counterBound(Body->output(0).name());
  // (value_or: GCC 12 takes the optionals' payloads for maybe uninitialised.)
  bool Trips = TripCount.has_value();
  int64_t Steps = TripCount.value_or(0), Bound = Counted.value_or(0);
  if (!Trips && !Counted)
    return decline(M.empty() ? "a Loop without a trip count (a while loop) "
                               "whose condition no counter bounds is not "
                               "supported"
                             : "its trip count is computed at run time (a "
                               "value --dim or constants do not fix), and no "
                               "counter in its condition bounds it");
  std::string RunTrips = Trips ? "" : M;
  // The condition on entry: "" when it is true at compile time.
  std::string Cond = Loop.input(1);
  if (!Cond.empty()) {
    auto C = Known.find(Cond);
    if (C != Known.end() && C->second == 0)
      return decline("it runs zero times (its condition is false)");
    if (C != Known.end())
      Cond.clear();
  }
  if (Counted)
    Steps = Trips ? std::min(Steps, Bound) : Bound;
  if (Steps < 1)
    return decline("it runs zero times (trip count " + std::to_string(Steps) +
                   ")");
  bool MayStop =
      !Cond.empty() || !RunTrips.empty() || !staysTrue(Body->output(0).name());
  if (MayStop && NumScanOuts > 0)
    return decline(
        "it may stop before its trip count (its body computes its "
        "condition, or the condition or trip count is a run-time value), "
        "and its scan outputs would then have a length known only at run "
        "time: a loop that may stop early is supported without scan outputs");
  if (Steps > MaxCopies ||
      Steps * (Body->node_size() + (MayStop ? 2 * NumStates + 8 : 4)) >
          MaxCopies)
    return decline("unrolling it would take more than " +
                   std::to_string(MaxCopies) + " nodes; that is not supported");

  std::vector<std::string> States(Loop.input().begin() + 2, Loop.input().end());
  if (MayStop) {
    nameOutputs(Loop, guarded(Steps, Cond, RunTrips, std::move(States)));
    return true;
  }
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

std::vector<std::string>
LoopUnroller::guarded(int64_t Steps, std::string Cond, const std::string &Trips,
                      std::vector<std::string> States) {
  std::string False = constantInt(0, false, onnx::TensorProto::BOOL);
  std::string True = constantInt(1, false, onnx::TensorProto::BOOL);
  if (Cond.empty())
    Cond = True;
  for (int64_t Step = 0; Step < Steps; ++Step) {
    if (!Trips.empty()) {
      std::string Below = fresh("below_trips"), Both = fresh("running");
      node("Less", {constantInt(Step, false), Trips}, {Below});
      node("And", {Cond, Below}, {Both});
      Cond = Both;
    }
    // Then: the body's copy; its condition input is true (it runs).
    std::vector<onnx::NodeProto> Then, Else;
    auto *Outer = emitInto(&Then);
    std::map<std::string, std::string> Names;
    Names[Body->input(0).name()] = constantInt(Step, false);
    Names[Body->input(1).name()] = True;
    for (size_t I = 0; I < States.size(); ++I)
      Names[Body->input(2 + I).name()] = States[I];
    copyBody(*Body, Names);
    std::vector<std::string> ThenOut, ElseOut, Outs;
    for (size_t I = 0; I <= States.size(); ++I) {
      ThenOut.push_back(fresh("ran"));
      node("Identity", {bound(Names, Body->output(I).name())},
           {ThenOut.back()});
    }
    // Else: stopped; the state passes through.
    emitInto(&Else);
    for (size_t I = 0; I <= States.size(); ++I) {
      ElseOut.push_back(fresh("kept"));
      node("Identity", {I == 0 ? False : States[I - 1]}, {ElseOut.back()});
    }
    emitInto(Outer);
    for (size_t I = 0; I <= States.size(); ++I)
      Outs.push_back(fresh(I == 0 ? "running" : "state"));
    auto &If = node("If", {Cond}, Outs);
    for (auto [Attr, Nodes, Results] :
         {std::tuple{"then_branch", &Then, &ThenOut},
          std::tuple{"else_branch", &Else, &ElseOut}}) {
      auto *A = If.add_attribute();
      A->set_name(Attr);
      A->set_type(onnx::AttributeProto::GRAPH);
      *A->mutable_g() =
          branchGraph(If.name() + "/" + Attr, std::move(*Nodes), *Results);
    }
    Cond = Outs[0];
    for (size_t I = 0; I < States.size(); ++I)
      States[I] = Outs[1 + I];
  }
  return States;
}

onnx::GraphProto
LoopUnroller::branchGraph(const std::string &Name,
                          std::vector<onnx::NodeProto> Nodes,
                          const std::vector<std::string> &Results) const {
  onnx::GraphProto B;
  B.set_name(Name);
  for (auto &N : Nodes)
    *B.add_node() = std::move(N);
  for (size_t I = 0; I < Results.size(); ++I) {
    auto *VI = B.add_output();
    VI->set_name(Results[I]);
    *VI->mutable_type() = Body->output(I).type();
  }
  return B;
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
