//===- UnrollTest.cpp - Loop bounds of the ONNX unroller ------------------===//
//
// unrollLoops on Loops built here: how many iterations a loop that may stop
// early unrolls to (one If per iteration), from its trip count or from a
// counter in its condition, and which loops it refuses, with constants
// that would overflow the bound's arithmetic among them.
//
//===----------------------------------------------------------------------===//
#include "frontend/onnx/Unroll.h"

#include <gtest/gtest.h>

#include <climits>
#include <optional>
#include <string>
#include <vector>

namespace cuvil {
namespace {

onnx::NodeProto *addNode(onnx::GraphProto &G, const std::string &Op,
                         const std::vector<std::string> &Ins,
                         const std::vector<std::string> &Outs) {
  auto *N = G.add_node();
  N->set_op_type(Op);
  N->set_name(Outs.empty() ? Op : Outs[0]);
  for (const auto &I : Ins)
    N->add_input(I);
  for (const auto &O : Outs)
    N->add_output(O);
  return N;
}

void addConstant(onnx::GraphProto &G, const std::string &Name, int64_t V) {
  auto *A = addNode(G, "Constant", {}, {Name})->add_attribute();
  A->set_name("value");
  A->set_type(onnx::AttributeProto::TENSOR);
  A->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  A->mutable_t()->add_int64_data(V);
}

void addScalarInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> &L,
                   const std::string &Name, int Type) {
  auto *VI = L.Add();
  VI->set_name(Name);
  VI->mutable_type()->mutable_tensor_type()->set_elem_type(Type);
  VI->mutable_type()->mutable_tensor_type()->mutable_shape();
}

/// How the body's condition is computed from i (the iteration number) and
/// c (a counter state: starts at CounterInit, adds CounterStep).
struct LoopCase {
  std::optional<int64_t> Trips = std::nullopt; // constant, or none (while)
  int64_t CounterInit = 0, CounterStep = 1;
  std::string Op = "Less"; // of the condition
  bool OnCounter = false;  // compare c' (else i + Offset)
  int64_t Offset = 0, Limit = 4;
  bool Swap = false; // Op(Limit, x) rather than Op(x, Limit)
};

/// A model whose only node is the Loop of Case, with a float state s
/// (s' = s + 1) and the counter state c.
onnx::ModelProto loopModel(const LoopCase &Case) {
  onnx::ModelProto M;
  M.set_ir_version(7);
  M.add_opset_import()->set_version(13);
  onnx::GraphProto &G = *M.mutable_graph();
  G.set_name("loops");
  addScalarInfo(*G.mutable_input(), "s0", onnx::TensorProto::FLOAT);
  addScalarInfo(*G.mutable_output(), "s_final", onnx::TensorProto::FLOAT);
  if (Case.Trips)
    addConstant(G, "m", *Case.Trips);
  addConstant(G, "c0", Case.CounterInit);

  onnx::GraphProto B;
  B.set_name("body");
  addScalarInfo(*B.mutable_input(), "i", onnx::TensorProto::INT64);
  addScalarInfo(*B.mutable_input(), "cond", onnx::TensorProto::BOOL);
  addScalarInfo(*B.mutable_input(), "s", onnx::TensorProto::FLOAT);
  addScalarInfo(*B.mutable_input(), "c", onnx::TensorProto::INT64);
  auto *One = addNode(B, "Constant", {}, {"one"})->add_attribute();
  One->set_name("value");
  One->set_type(onnx::AttributeProto::TENSOR);
  One->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  One->mutable_t()->add_float_data(1.0f);
  addNode(B, "Add", {"s", "one"}, {"s_next"});
  addConstant(B, "step", Case.CounterStep);
  addNode(B, "Add", {"c", "step"}, {"c_next"});
  addConstant(B, "offset", Case.Offset);
  addNode(B, "Add", {"i", "offset"}, {"i_off"});
  addConstant(B, "limit", Case.Limit);
  std::string X = Case.OnCounter ? "c_next" : "i_off";
  addNode(B, Case.Op,
          Case.Swap ? std::vector<std::string>{"limit", X}
                    : std::vector<std::string>{X, "limit"},
          {"go"});
  addScalarInfo(*B.mutable_output(), "go", onnx::TensorProto::BOOL);
  addScalarInfo(*B.mutable_output(), "s_next", onnx::TensorProto::FLOAT);
  addScalarInfo(*B.mutable_output(), "c_next", onnx::TensorProto::INT64);

  auto *L = addNode(G, "Loop", {Case.Trips ? "m" : "", "", "s0", "c0"},
                    {"s_final", "c_final"});
  L->set_name("loop");
  auto *A = L->add_attribute();
  A->set_name("body");
  A->set_type(onnx::AttributeProto::GRAPH);
  *A->mutable_g() = B;
  return M;
}

/// The number of iterations unrollLoops gives Case's Loop (its If nodes),
/// or -1 when it declines it (Why then says why). Bound: the user's bound
/// on the loop (--loop-bound), if any; Checks gets the run-time checks.
int64_t iterations(const LoopCase &Case, std::string *Why = nullptr,
                   std::optional<int64_t> Bound = std::nullopt,
                   std::vector<LoopBoundCheck> *Checks = nullptr) {
  onnx::ModelProto M = loopModel(Case);
  std::map<std::string, std::string> Declined;
  std::map<std::string, int64_t> Bounds;
  if (Bound)
    Bounds["loop"] = *Bound;
  std::vector<LoopBoundCheck> Found;
  if (!Checks)
    Checks = &Found;
  if (!unrollLoops(M, Declined, {}, Bounds, *Checks)) {
    if (Why && !Declined.empty())
      *Why = Declined.begin()->second;
    return -1;
  }
  int64_t Ifs = 0;
  for (const auto &N : M.graph().node())
    Ifs += N.op_type() == "If";
  return Ifs;
}

TEST(Unroll, WhileLoopRunsUpToItsCounterBound) {
  // i < 4 after iteration i: iterations 0..4.
  EXPECT_EQ(iterations({}), 5);
  // i + 1 < 8 (PyTorch's `for i in range(8)` with a break): 8.
  EXPECT_EQ(iterations({.Offset = 1, .Limit = 8}), 8);
  // i <= 4 is i < 5: 6; 4 > i is i < 4: 5.
  EXPECT_EQ(iterations({.Op = "LessOrEqual"}), 6);
  EXPECT_EQ(iterations({.Op = "Greater", .Swap = true}), 5);
  // c' = 2, 4, 6, 8 with c' < 7: 4 iterations; from 10: 1 (the first
  // iteration always runs).
  EXPECT_EQ(iterations({.CounterStep = 2, .OnCounter = true, .Limit = 7}), 4);
  EXPECT_EQ(iterations({.CounterInit = 10, .OnCounter = true, .Limit = 7}), 1);
}

TEST(Unroll, TheSmallerOfTripCountAndCounterBoundCounts) {
  EXPECT_EQ(iterations({.Trips = 3}), 3);
  EXPECT_EQ(iterations({.Trips = INT64_MAX, .Offset = 1, .Limit = 8}), 8);
}

TEST(Unroll, LoopsWithoutABoundAreDeclinedWithTheReason) {
  std::string Why;
  // A counter that counts down, or does not move, bounds nothing.
  EXPECT_EQ(
      iterations({.CounterStep = -1, .OnCounter = true, .Limit = 7}, &Why), -1);
  EXPECT_NE(Why.find("no counter bounds"), std::string::npos) << Why;
  EXPECT_EQ(iterations({.CounterStep = 0, .OnCounter = true}), -1);
  EXPECT_EQ(iterations({.Op = "Equal"}), -1);
  // A bound beyond what unrolls.
  EXPECT_EQ(iterations({.Limit = 1 << 20}), -1);
}

TEST(Unroll, TheUsersBoundUnrollsALoopWithoutOneAndIsChecked) {
  // A while loop on i == 4 (no counter bound, no trip count): declined with
  // the option named; with --loop-bound loop=6, 6 iterations and a check
  // of the loop's two outputs.
  std::string Why;
  EXPECT_EQ(iterations({.Op = "Equal"}, &Why), -1);
  EXPECT_NE(Why.find("--loop-bound loop=K"), std::string::npos) << Why;
  std::vector<LoopBoundCheck> Checks;
  EXPECT_EQ(iterations({.Op = "Equal"}, nullptr, 6, &Checks), 6);
  ASSERT_EQ(Checks.size(), 1u);
  EXPECT_EQ(Checks[0].Loop, "loop");
  EXPECT_EQ(Checks[0].Bound, 6);
  EXPECT_EQ(Checks[0].Outputs,
            (std::vector<std::string>{"s_final", "c_final"}));
  EXPECT_FALSE(Checks[0].Exceeded.empty());
  // PyTorch's unbounded trip count (INT64_MAX) with such a condition: the
  // hint too, and the bound unrolls it.
  Why.clear();
  EXPECT_EQ(iterations({.Trips = INT64_MAX, .Op = "Equal"}, &Why), -1);
  EXPECT_NE(Why.find("--loop-bound loop=K"), std::string::npos) << Why;
  EXPECT_EQ(iterations({.Trips = INT64_MAX, .Op = "Equal"}, nullptr, 3), 3);
  // A bound at or above the loop's own changes nothing and needs no check.
  Checks.clear();
  EXPECT_EQ(iterations({}, nullptr, 9, &Checks), 5);
  EXPECT_TRUE(Checks.empty());
  // Below it: the user's bound, checked.
  EXPECT_EQ(iterations({}, nullptr, 2, &Checks), 2);
  EXPECT_EQ(Checks.size(), 1u);
}

TEST(Unroll, ConstantsAtTheEdgesOfInt64DoNotOverflow) {
  // Each of these would overflow a naive bound computation; UBSan (the
  // sanitized tree) reports one that does.
  EXPECT_EQ(iterations({.Op = "LessOrEqual", .Limit = INT64_MAX}), -1);
  EXPECT_EQ(iterations({.Offset = INT64_MAX, .Limit = 8}), 1);
  EXPECT_EQ(iterations({.Offset = INT64_MIN, .Limit = INT64_MAX}), -1);
  EXPECT_EQ(iterations({.CounterInit = INT64_MIN,
                        .CounterStep = INT64_MAX,
                        .OnCounter = true,
                        .Limit = INT64_MAX}),
            -1);
  // c' = 0, then INT64_MAX: 2 iterations.
  EXPECT_EQ(iterations({.CounterInit = INT64_MIN + 1,
                        .CounterStep = INT64_MAX,
                        .OnCounter = true,
                        .Limit = 5}),
            2);
}

} // namespace
} // namespace cuvil
