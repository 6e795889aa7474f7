//===- BranchGuardsTest.cpp - Only the taken branch of an If runs ---------===//
#include "ir/IRParser.h"
#include "ops/LowerGraph.h"
#include "ops/OpRegistry.h"
#include "planner/Schedule.h"

#include <gtest/gtest.h>

using namespace cuvil;

namespace {

/// "c1=1 c2=0": the conditions node Name of G runs under, outermost first.
std::string runsWhen(const Graph &G, const GraphLowering &L,
                     const std::string &Name) {
  for (size_t S = 0; S < G.nodes().size(); ++S) {
    if (G.nodes()[S]->name() != Name)
      continue;
    std::string Text;
    for (const RunCondition &C : L[S].RunsWhen)
      Text += (Text.empty() ? "" : " ") + C.Cond->name() + "=" +
              (C.When ? "1" : "0");
    return Text;
  }
  return "(no node " + Name + ")";
}

} // namespace

// An If inside the else branch of another: each node of a branch runs
// under its If's condition, nested ones under both (outer first); what
// both branches read, what the graph returns and the Ifs' own copies run
// always.
TEST(BranchGuards, NodesOfOneBranchRunOnlyWhenItIsTaken) {
  const char *Text = R"(graph g opset 14
  input %x: f32[4]
  input %c1: bool[]
  input %c2: bool[]
  %shared: f32[4] = Relu(%x)  # shared#0
  %a: f32[4] = Neg(%shared)  # a#1
  %a2: f32[4] = Abs(%a)  # a2#2
  %b1: f32[4] = Exp(%shared)  # b1#3
  %b2: f32[4] = Sigmoid(%shared)  # b2#4
  %b: f32[4] = If(%c2, %b1, %b2) {then_branch=[1,1], else_branch=[2,1]}  # b#5
  %seen: f32[4] = Tanh(%x)  # seen#6
  %y: f32[4] = If(%c1, %a2, %b) {then_branch=[1,1], else_branch=[2,1]}  # y#7
  %z: f32[4] = If(%c1, %seen, %seen) {then_branch=[1,1], else_branch=[2,1]}  # z#8
  return %y, %z, %a
)";
  auto G = parseIR(Text, lookupOpInDomain, "t.cir");
  ASSERT_TRUE(static_cast<bool>(G)) << llvm::toString(G.takeError());
  auto L = lowerGraph(**G);
  ASSERT_TRUE(static_cast<bool>(L)) << llvm::toString(L.takeError());
  EXPECT_EQ(runsWhen(**G, *L, "shared"), "");
  // a is also a graph output: computed whatever the branch.
  EXPECT_EQ(runsWhen(**G, *L, "a"), "");
  EXPECT_EQ(runsWhen(**G, *L, "a2"), "c1=1");
  EXPECT_EQ(runsWhen(**G, *L, "b1"), "c1=0 c2=1");
  EXPECT_EQ(runsWhen(**G, *L, "b2"), "c1=0 c2=0");
  EXPECT_EQ(runsWhen(**G, *L, "b"), "c1=0");
  // Both branches of z return it.
  EXPECT_EQ(runsWhen(**G, *L, "seen"), "");
  EXPECT_EQ(runsWhen(**G, *L, "y"), "");
  EXPECT_EQ(runsWhen(**G, *L, "z"), "");
}

// The condition may come after the branches in the model's order (any
// topological order is valid ONNX): every candidate schedule computes it
// before the nodes it guards, and those nodes get their guard.
TEST(BranchGuards, SchedulesComputeTheConditionFirst) {
  const char *Text = R"(graph g opset 14
  input %x: f32[4]
  input %sr: i64[]
  const %rate: i64[] = dense<16000>
  %a: f32[4] = Neg(%x)  # a#0
  %a2: f32[4] = Abs(%a)  # a2#1
  %b: f32[4] = Exp(%x)  # b#2
  %b2: f32[4] = Sigmoid(%b)  # b2#3
  %eq: bool[] = Equal(%sr, %rate)  # eq#4
  %y: f32[4] = If(%eq, %a2, %b2) {then_branch=[1,1], else_branch=[2,1]}  # y#5
  return %y
)";
  auto G = parseIR(Text, lookupOpInDomain, "t.cir");
  ASSERT_TRUE(static_cast<bool>(G)) << llvm::toString(G.takeError());
  for (const Schedule &S : candidateSchedules(**G)) {
    SCOPED_TRACE(S.Name);
    (*G)->reorderNodes(S.Order);
    auto L = lowerGraph(**G);
    ASSERT_TRUE(static_cast<bool>(L)) << llvm::toString(L.takeError());
    std::string Order;
    for (const auto &N : (*G)->nodes())
      Order += N->name() + " ";
    EXPECT_EQ(Order.find("eq"), 0u) << Order;
    EXPECT_EQ(runsWhen(**G, *L, "a2"), "eq=1");
    EXPECT_EQ(runsWhen(**G, *L, "b2"), "eq=0");
  }
}
