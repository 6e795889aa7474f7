//===- DeadVariantsTest.cpp - Variants no step runs are not optimised -----===//
#include "codegen/DeadVariants.h"
#include "codegen/Backend.h"
#include "target/TargetInfo.h"

#include <gtest/gtest.h>

#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/SourceMgr.h>

using namespace cuvil;

namespace {

// A kernel in the library's shape: `dispatch` (always inlined) picks a
// variant by the window stored in the shape struct. The step stores 3, so
// only @v3 can run; @v5 is dead once the step's branch folds. @r1 and @r2
// are chosen by a run-time value, so both stay. @step is called by the
// entry point and is never a candidate.
const char *Kernel = R"(
@sink = global i64 0
define internal void @v3(ptr %s) noinline {
  %k = load i64, ptr %s
  %m = mul i64 %k, 3
  store i64 %m, ptr @sink
  ret void
}
define internal void @v5(ptr %s) noinline {
  %k = load i64, ptr %s
  %m = mul i64 %k, 5
  store i64 %m, ptr @sink
  ret void
}
define internal void @r1() noinline {
  store i64 1, ptr @sink
  ret void
}
define internal void @r2() noinline {
  store i64 2, ptr @sink
  ret void
}
define internal void @dispatch(ptr %s) alwaysinline {
  %kp = getelementptr inbounds i8, ptr %s, i64 8
  %k = load i64, ptr %kp
  %is3 = icmp eq i64 %k, 3
  br i1 %is3, label %three, label %five
three:
  call void @v3(ptr %s)
  ret void
five:
  call void @v5(ptr %s)
  ret void
}
define internal void @step(i1 %flag) noinline {
  %s = alloca [2 x i64]
  store i64 7, ptr %s
  %kp = getelementptr inbounds i8, ptr %s, i64 8
  store i64 3, ptr %kp
  call void @dispatch(ptr %s)
  br i1 %flag, label %one, label %two
one:
  call void @r1()
  ret void
two:
  call void @r2()
  ret void
}
define void @run(i1 %flag) {
  call void @step(i1 %flag)
  ret void
}
)";

std::unique_ptr<llvm::Module> parse(llvm::LLVMContext &Ctx) {
  llvm::SMDiagnostic Err;
  auto M = llvm::parseAssemblyString(Kernel, Err, Ctx);
  EXPECT_TRUE(M) << Err.getMessage().str();
  return M;
}

bool optnone(const llvm::Module &M, const char *Name) {
  return M.getFunction(Name)->hasFnAttribute(llvm::Attribute::OptimizeNone);
}

TEST(DeadVariants, OnlyTheVariantsNoStepCanReachAreSkipped) {
  llvm::LLVMContext Ctx;
  auto M = parse(Ctx);
  ASSERT_TRUE(M);
  EXPECT_EQ(skipDeadVariants(*M), std::vector<std::string>{"v5"});
  EXPECT_TRUE(optnone(*M, "v5"));
  for (const char *Live : {"v3", "r1", "r2", "step", "dispatch"})
    EXPECT_FALSE(optnone(*M, Live)) << Live;
  // A module without candidates is left alone.
  llvm::LLVMContext Ctx2;
  llvm::SMDiagnostic Err;
  auto Plain = llvm::parseAssemblyString(
      "define internal void @s() noinline { ret void }\n"
      "define void @run() { call void @s() ret void }\n",
      Err, Ctx2);
  ASSERT_TRUE(Plain);
  EXPECT_TRUE(skipDeadVariants(*Plain).empty());
}

TEST(DeadVariants, OptimizeModuleDeletesTheSkippedAndOptimisesTheRest) {
  auto T = loadTarget("u74-mc");
  ASSERT_TRUE(bool(T)) << llvm::toString(T.takeError());
  auto TM = createTargetMachine(*T);
  ASSERT_TRUE(bool(TM)) << llvm::toString(TM.takeError());
  llvm::LLVMContext Ctx;
  auto M = parse(Ctx);
  ASSERT_TRUE(M);
  M->setDataLayout((*TM)->createDataLayout());
  optimizeModule(*M, **TM);
  // @v5 is gone; @v3 was inlined or optimised, never left optnone.
  EXPECT_EQ(M->getFunction("v5"), nullptr);
  for (const llvm::Function &F : *M)
    EXPECT_FALSE(F.hasFnAttribute(llvm::Attribute::OptimizeNone))
        << F.getName().str();
}

} // namespace
