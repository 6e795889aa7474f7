//===- UnrollLoop.cpp - Loop as straight-line or guarded ONNX nodes -------===//
//
// A Loop is unrolled like a Scan (Unroll.cpp) when its trip count M is
// known (a constant, or a value constant folding computed from shapes: the
// caller gives those, see unrollLoops) and its condition provably stays
// true (a `for` loop: no condition input, or a true one, and the body's
// condition output is its input or a true constant). Iteration t binds the
// body's iteration number to the constant t; its scan outputs are stacked
// along a new axis 0.
//
// A Loop that may stop earlier (its body computes its condition, its
// condition input is a run-time value, or its trip count is one) unrolls
// to guarded iterations, as many as a compile-time bound allows: M, or a
// counter in the body's condition (counterBound). Iteration t is an If on
// "still running", whose then branch is the body's copy and whose else
// branch passes the state through and keeps the condition false; with a
// run-time trip count, running also needs t < M. Lowering then runs only
// the iterations taken (ops/BranchGuards.cpp); each If copies the state.
// Such a loop may not have scan outputs: their length would be known only
// at run time. Where neither gives a bound (a run-time trip count, a while
// loop), or the user wants a smaller one, the user's bound K
// (`--loop-bound NODE=K`) does: K guarded iterations, and a LoopBoundCheck
// of "it would run once more", which makes run stop with
// CUVIL_ERR_LOOP_BOUND. A loop without a bound, zero iterations, or a loop
// past the node limit stay as is, and verification says why.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/TensorProto.h"
#include "frontend/onnx/UnrollBody.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <optional>
#include <tuple>

namespace cuvil::unroll {
namespace {

class LoopUnroller : public BodyUnroller {
public:
  LoopUnroller(onnx::GraphProto &G, const onnx::NodeProto &Loop, int Index,
               int64_t Opset, std::vector<onnx::NodeProto> &Out,
               const std::map<std::string, int64_t> &Known,
               std::optional<int64_t> UserBound)
      : BodyUnroller(G, Loop, Index, Opset, Out), Loop(Loop), Known(Known),
        UserBound(UserBound) {}

  /// False if this Loop is not one the unroller handles (nothing emitted;
  /// why() says why).
  bool run();
  /// After run(): what run must check when the loop was unrolled to the
  /// user's bound.
  std::optional<LoopBoundCheck> Check;

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
  /// Emits iteration Step's copy of the body, its iteration number Step,
  /// its condition input True (the constant) and its state inputs States;
  /// returns the body's names as the copy binds them.
  std::map<std::string, std::string>
  iteration(int64_t Step, const std::string &True,
            const std::vector<std::string> &States);
  /// Steps iterations, each an If on whether the loop still runs (Cond,
  /// "" for true, before the first): returns the final states, and in
  /// Running whether the loop would run once more. With a trip count known
  /// only at run time (Trips, else ""), each iteration t also needs
  /// t < Trips.
  std::vector<std::string> guarded(int64_t Steps, std::string Cond,
                                   const std::string &Trips,
                                   std::vector<std::string> States,
                                   std::string &Running);
  /// A branch graph of the nodes Nodes whose outputs are Results, typed
  /// as the body's outputs 0 (the condition) and 1.. (the states).
  onnx::GraphProto branchGraph(const std::string &Name,
                               std::vector<onnx::NodeProto> Nodes,
                               const std::vector<std::string> &Results) const;

  const onnx::NodeProto &Loop;
  const std::map<std::string, int64_t> &Known;
  std::optional<int64_t> UserBound;
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
    bool I64 = T.data_type() == onnx::TensorProto::INT64;
    if ((!I64 && T.data_type() != onnx::TensorProto::INT32) ||
        T.dims_size() > 1 || (T.dims_size() == 1 && T.dims(0) != 1))
      return std::nullopt;
    auto Bytes = tensorBytes(T, I64 ? DType::I64 : DType::I32, 1);
    if (!Bytes) {
      llvm::consumeError(Bytes.takeError());
      return std::nullopt;
    }
    if (I64) {
      int64_t V;
      std::memcpy(&V, Bytes->data(), sizeof V);
      return V;
    }
    int32_t V;
    std::memcpy(&V, Bytes->data(), sizeof V);
    return V;
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
  // (Plain values rather than optionals: GCC 12 takes their payloads for
  // maybe uninitialised.)
  int64_t TripCount = INT64_MAX, Counted = INT64_MAX;
  bool Trips = false, HasCounter = false;
  if (auto C = M.empty() ? std::nullopt : constant(M))
    std::tie(TripCount, Trips) = std::pair{*C, true};
  if (auto C = counterBound(Body->output(0).name()))
    std::tie(Counted, HasCounter) = std::pair{*C, true};
  if (!Trips && !HasCounter && !UserBound)
    return decline(
        (M.empty() ? "a Loop without a trip count (a while loop) whose "
                     "condition no counter bounds is not supported"
                   : "its trip count is computed at run time (a value --dim "
                     "or constants do not fix), and no counter in its "
                     "condition bounds it") +
        std::string(Loop.name().empty()
                        ? ""
                        : "; give it a bound with --loop-bound " + Loop.name() +
                              "=K (run then stops with "
                              "CUVIL_ERR_LOOP_BOUND if it would run more)"));
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
  int64_t Steps = std::min(TripCount, Counted);
  if (Steps < 1)
    return decline("it runs zero times (trip count " + std::to_string(Steps) +
                   ")");
  bool MayStop =
      !Cond.empty() || !RunTrips.empty() || !staysTrue(Body->output(0).name());
  // The user's bound, where it is below the model's own: the iterations
  // past it must be refused at run time.
  bool UserLimited = UserBound && *UserBound < Steps;
  if (!MayStop && !Trips && !HasCounter)
    return decline("it never stops (no trip count, and its condition stays "
                   "true)");
  if (UserLimited && !MayStop)
    return decline("it always runs " + std::to_string(Steps) +
                   " iterations, more than its --loop-bound " +
                   std::to_string(*UserBound));
  if (UserLimited)
    Steps = *UserBound;
  if (MayStop && NumScanOuts > 0)
    return decline(
        "it may stop before its trip count (its body computes its "
        "condition, or the condition or trip count is a run-time value), "
        "and its scan outputs would then have a length known only at run "
        "time: a loop that may stop early is supported without scan outputs");
  if (Steps > MaxCopies ||
      Steps * (Body->node_size() + (MayStop ? 2 * NumStates + 8 : 4)) >
          MaxCopies) {
    // A loop that may stop early under a huge trip count (PyTorch writes
    // INT64_MAX for a `for` loop with a `break` or a `while` loop) or
    // counter bound can run under the smaller one the user gives.
    std::string Hint =
        MayStop && !UserLimited && !Loop.name().empty()
            ? "; it may stop early: give it a smaller bound with "
              "--loop-bound " +
                  Loop.name() +
                  "=K (run then stops with CUVIL_ERR_LOOP_BOUND if it would "
                  "run more)"
            : "";
    return decline("unrolling its " + std::to_string(Steps) +
                   " iterations would take more than " +
                   std::to_string(MaxCopies) + " nodes; that is not supported" +
                   Hint);
  }

  std::vector<std::string> States(Loop.input().begin() + 2, Loop.input().end());
  if (MayStop) {
    std::string Running;
    auto Final = guarded(Steps, Cond, RunTrips, std::move(States), Running);
    if (UserLimited) {
      // One more iteration would run: the condition still holds, and with
      // a run-time trip count, Steps < M.
      if (!RunTrips.empty()) {
        std::string Below = fresh("below_trips"), More = fresh("exceeded");
        node("Less", {constantInt(Steps, false), RunTrips}, {Below});
        node("And", {Running, Below}, {More});
        Running = More;
      }
      Check = LoopBoundCheck{Loop.name(),
                             Steps,
                             Running,
                             {Loop.output().begin(), Loop.output().end()}};
    }
    nameOutputs(Loop, Final);
    return true;
  }
  std::vector<std::vector<std::string>> PerStep(NumScanOuts);
  std::string True = constantInt(1, false, onnx::TensorProto::BOOL);
  for (int64_t Step = 0; Step < Steps; ++Step) {
    auto Names = iteration(Step, True, States);
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

std::map<std::string, std::string>
LoopUnroller::iteration(int64_t Step, const std::string &True,
                        const std::vector<std::string> &States) {
  std::map<std::string, std::string> Names;
  Names[Body->input(0).name()] = constantInt(Step, false);
  Names[Body->input(1).name()] = True;
  for (size_t I = 0; I < States.size(); ++I)
    Names[Body->input(2 + I).name()] = States[I];
  copyBody(*Body, Names);
  return Names;
}

std::vector<std::string> LoopUnroller::guarded(int64_t Steps, std::string Cond,
                                               const std::string &Trips,
                                               std::vector<std::string> States,
                                               std::string &Running) {
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
    auto Names = iteration(Step, True, States);
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
  Running = Cond;
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

bool unrollLoop(onnx::GraphProto &G, const onnx::NodeProto &N, int Index,
                int64_t Opset, std::vector<onnx::NodeProto> &Out,
                const std::map<std::string, int64_t> &Known,
                std::optional<int64_t> Bound,
                std::optional<LoopBoundCheck> &Check, std::string &Why) {
  LoopUnroller U(G, N, Index, Opset, Out, Known, Bound);
  bool Done = U.run();
  Why = U.why();
  Check = std::move(U.Check);
  return Done;
}

} // namespace cuvil::unroll
