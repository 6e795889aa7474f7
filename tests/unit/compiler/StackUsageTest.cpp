//===- StackUsageTest.cpp - Stack bounds of the entry points
//---------------===//
#include "codegen/StackUsage.h"
#include "TestGraphs.h"
#include "codegen/ModelCodegen.h"
#include "passes/Pass.h"

#include <gtest/gtest.h>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/SourceMgr.h>
#include <set>

using namespace cuvil;

namespace {

std::unique_ptr<llvm::Module> parse(llvm::LLVMContext &Ctx, const char *IR) {
  llvm::SMDiagnostic Err;
  auto M = llvm::parseAssemblyString(IR, Err, Ctx);
  EXPECT_TRUE(M) << Err.getMessage().str();
  return M;
}

// run -> a -> c and run -> b; c uses llvm.memset, so may call memset.
const char *Chain = R"(
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
define void @memset(ptr %p, i32 %v, i64 %n) { ret void }
define void @c(ptr %p) {
  call void @llvm.memset.p0.i64(ptr %p, i8 0, i64 100, i1 false)
  ret void
}
define void @a(ptr %p) { call void @c(ptr %p) ret void }
define void @b() { ret void }
define void @run(ptr %p) {
  call void @a(ptr %p)
  call void @b()
  ret void
}
)";

TEST(StackUsage, DeepestChainOfFramesAndReturnAddresses) {
  llvm::LLVMContext Ctx;
  auto M = parse(Ctx, Chain);
  FrameSizes F = {{"run", 16}, {"a", 32}, {"b", 200}, {"c", 48}, {"memset", 8}};
  StackBound S = stackBound(*M, "run", F, 0, {"memset"});
  ASSERT_TRUE(S.Known) << S.Reason;
  // Any function may call the helper: run+b+memset = 224 beats
  // run+a+c+memset = 104.
  EXPECT_EQ(S.Bytes, 224u);
  EXPECT_EQ(S.Path, (std::vector<std::string>{"run", "b", "memset"}));
  F["b"] = 8;
  S = stackBound(*M, "run", F, 0, {"memset"});
  EXPECT_EQ(S.Bytes, 104u);
  EXPECT_EQ(S.Path, (std::vector<std::string>{"run", "a", "c", "memset"}));
  // x86: each call pushes 8 bytes.
  S = stackBound(*M, "run", F, 8, {"memset"});
  EXPECT_EQ(S.Bytes, 104u + 4 * 8);
}

TEST(StackUsage, OverAlignedLocalsCountTheirRealignment) {
  llvm::LLVMContext Ctx;
  auto M = parse(Ctx, R"(
target datalayout = "e-m:e-i8:8:32-i16:16:32-i64:64-i128:128-n32:64-S128"
define void @f() {
  %a = alloca [64 x i8], align 64
  store i8 0, ptr %a
  ret void
}
define void @g() {
  %a = alloca [64 x i8], align 16
  store i8 0, ptr %a
  ret void
}
)");
  // Realigning a 16-byte-aligned stack to 64 and rounding the frame up.
  EXPECT_EQ(stackBound(*M, "f", {{"f", 128}}, 0, {}).Bytes, 128u + 128);
  EXPECT_EQ(stackBound(*M, "g", {{"g", 64}}, 0, {}).Bytes, 64u);
}

TEST(StackUsage, MissingFrameIsNoBound) {
  llvm::LLVMContext Ctx;
  auto M = parse(Ctx, Chain);
  StackBound S = stackBound(*M, "run", {{"run", 16}, {"a", 8}}, 0, {});
  EXPECT_FALSE(S.Known);
  EXPECT_NE(S.Reason.find("no frame size"), std::string::npos) << S.Reason;
}

TEST(StackUsage, RecursionIndirectCallsAndDynamicAllocasAreRefused) {
  llvm::LLVMContext Ctx;
  auto M = parse(Ctx, R"(
define void @self(i32 %n) { call void @other(i32 %n) ret void }
define void @other(i32 %n) { call void @self(i32 %n) ret void }
define void @rec() { call void @self(i32 1) ret void }
define void @ind(ptr %f) { call void %f() ret void }
define void @dyn(i64 %n) {
  %p = alloca i8, i64 %n
  store i8 0, ptr %p
  ret void
}
define void @calls_dyn(i64 %n) { call void @dyn(i64 %n) ret void }
declare void @extern()
define void @calls_extern() { call void @extern() ret void }
)");
  FrameSizes F = {{"self", 16},        {"other", 16}, {"rec", 16},
                  {"ind", 16},         {"dyn", 16},   {"calls_dyn", 16},
                  {"calls_extern", 16}};
  StackBound S = stackBound(*M, "rec", F, 0, {});
  EXPECT_FALSE(S.Known);
  EXPECT_NE(S.Reason.find("recursive"), std::string::npos) << S.Reason;
  S = stackBound(*M, "ind", F, 0, {});
  EXPECT_FALSE(S.Known);
  EXPECT_NE(S.Reason.find("indirect call"), std::string::npos) << S.Reason;
  S = stackBound(*M, "calls_dyn", F, 0, {});
  EXPECT_FALSE(S.Known);
  EXPECT_NE(S.Reason.find("variable amount of stack"), std::string::npos)
      << S.Reason;
  S = stackBound(*M, "calls_extern", F, 0, {});
  EXPECT_FALSE(S.Known);
  EXPECT_NE(S.Reason.find("not defined"), std::string::npos) << S.Reason;
}

// The support code is compiled apart (SupportObject.h): the model
// declares its functions and the helpers, and their bounds come from
// outside, callees and path included.
TEST(StackUsage, FunctionsDefinedOutsideCostTheirBound) {
  llvm::LLVMContext Ctx;
  auto M = parse(Ctx, R"(
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)
declare void @memset(ptr, i32, i64)
declare void @open(ptr)
define void @init(ptr %p) { call void @open(ptr %p) ret void }
define void @run(ptr %p) {
  call void @llvm.memset.p0.i64(ptr %p, i8 0, i64 100, i1 false)
  ret void
}
)");
  FrameSizes F = {{"init", 16}, {"run", 32}};
  OutsideBounds Out;
  Out["open"] = {true, 300, "", {"open", "sha256"}};
  Out["memset"] = {true, 40, "", {"memset"}};
  StackBound S = stackBound(*M, "init", F, 0, {"memset"}, 0, Out);
  ASSERT_TRUE(S.Known) << S.Reason;
  EXPECT_EQ(S.Bytes, 16u + 300);
  EXPECT_EQ(S.Path, (std::vector<std::string>{"init", "open", "sha256"}));
  // run calls nothing in the IR, but the backend may call memset.
  S = stackBound(*M, "run", F, 0, {"memset"}, 0, Out);
  ASSERT_TRUE(S.Known) << S.Reason;
  EXPECT_EQ(S.Bytes, 32u + 40);
  EXPECT_EQ(S.Path, (std::vector<std::string>{"run", "memset"}));
  // A helper deeper than the outside callee is the deepest path.
  Out["memset"].Bytes = 400;
  S = stackBound(*M, "init", F, 0, {"memset"}, 0, Out);
  EXPECT_EQ(S.Bytes, 16u + 400);
  EXPECT_EQ(S.Path, (std::vector<std::string>{"init", "memset"}));
  // An outside function without a bound leaves the caller without one.
  Out["open"] = {false, 0, "function 'open' makes an indirect call", {}};
  S = stackBound(*M, "init", F, 0, {"memset"}, 0, Out);
  EXPECT_FALSE(S.Known);
  EXPECT_NE(S.Reason.find("'init' calls 'open': function 'open' makes an "
                          "indirect call"),
            std::string::npos)
      << S.Reason;
  // Without its bound it is an undefined function, as before.
  Out.erase("open");
  S = stackBound(*M, "init", F, 0, {"memset"}, 0, Out);
  EXPECT_FALSE(S.Known);
  EXPECT_NE(S.Reason.find("not defined"), std::string::npos) << S.Reason;
}

class StackOfTarget : public ::testing::TestWithParam<const char *> {};

TEST_P(StackOfTarget, GeneratedEntryPointsHaveBounds) {
  auto G = test::convBnRelu();
  ASSERT_FALSE(bool(runPipeline(*G, {}, nullptr)));
  auto T = loadTarget(GetParam());
  ASSERT_TRUE(bool(T));
  auto P = planMemory(*G, {T->DmaAlign});
  ASSERT_TRUE(bool(P));
  CodegenOptions O;
  O.ModelName = "cbr";
  O.StructureHash = 42;
  O.WeightsDataSize = P->WeightsSize;
  O.EmbeddedBlob = test::zeroBlob();
  auto R = generateObject(*G, test::lowered(*G), *P, *T, O);
  ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
  ASSERT_TRUE(R->RunStack.Known) << R->RunStack.Reason;
  ASSERT_TRUE(R->InitStack.Known) << R->InitStack.Reason;
  // run (run_v inlined into it or called) calls the layer's function.
  EXPECT_GT(R->RunStack.Bytes, 0u);
  ASSERT_GE(R->RunStack.Path.size(), 2u);
  EXPECT_EQ(R->RunStack.Path[0], "cuvil_cbr_run");
  // init's figure is the deepest of the entries that check a blob (the
  // signed ones verify an HMAC on top of what init does).
  const std::set<std::string> BlobEntries = {
      "cuvil_cbr_init", "cuvil_cbr_init_ab", "cuvil_cbr_init_signed",
      "cuvil_cbr_switch_weights", "cuvil_cbr_switch_weights_signed"};
  ASSERT_FALSE(R->InitStack.Path.empty());
  EXPECT_TRUE(BlobEntries.count(R->InitStack.Path[0])) << R->InitStack.Path[0];
}

INSTANTIATE_TEST_SUITE_P(AllTargets, StackOfTarget,
                         ::testing::Values("host", "a78", "u74-mc"));

} // namespace
