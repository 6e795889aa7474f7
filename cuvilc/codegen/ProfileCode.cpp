//===- ProfileCode.cpp - Per-step counters of --profile builds ------------===//
#include "codegen/ProfileCode.h"

#include "ir/Diagnostic.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/TargetParser/Triple.h>

namespace cuvil {

namespace {

/// How a target's counters are read.
enum class Clock { ArmPmu, RiscvCsr, Monotonic, None };

Clock clockOf(const TargetInfo &T) {
  llvm::Triple Tr(T.Triple);
  // A hosted target runs under an OS: its clock, not the PMU (which user
  // code may not read).
  if (Tr.getOS() != llvm::Triple::UnknownOS)
    return Clock::Monotonic;
  if (Tr.isAArch64())
    return Clock::ArmPmu;
  if (Tr.isRISCV64())
    return Clock::RiscvCsr;
  return Clock::None;
}

} // namespace

std::vector<ProfileStep> profileSteps(const Graph &G, const GraphLowering &L,
                                      const MemoryPlan &Plan) {
  std::vector<ProfileStep> Steps;
  for (size_t S = 0; S < G.nodes().size() && S < L.size(); ++S) {
    if (!L[S].HasCode)
      continue;
    const Node &N = *G.nodes()[S];
    Steps.push_back({N.name(), N.opType(), N.origin().Names, S});
  }
  if (!Plan.OutputCopies.empty())
    Steps.push_back({OutputCopiesStep, "Copy", {}, ProfileStep::NoNode});
  return Steps;
}

llvm::Expected<std::array<std::string, 2>>
profileCounters(const TargetInfo &T) {
  switch (clockOf(T)) {
  case Clock::ArmPmu:
  case Clock::RiscvCsr:
    return std::array<std::string, 2>{"cycles", "instructions"};
  case Clock::Monotonic: return std::array<std::string, 2>{"nanoseconds", ""};
  case Clock::None: break;
  }
  return makeError("--profile: cuvil cannot read counters on target '{}' "
                   "(triple {}): it knows the Arm PMU (AArch64), the RISC-V "
                   "cycle and instret CSRs (RV64) and CLOCK_MONOTONIC on a "
                   "hosted OS",
                   T.Name, T.Triple);
}

ProfileCode::ProfileCode(llvm::Module &M, const TargetInfo &T,
                         llvm::StructType *StateTy, unsigned RunsField)
    : M(M), T(T), StateTy(StateTy), RunsField(RunsField) {}

ProfileCode::Reading ProfileCode::read(llvm::IRBuilder<> &B) {
  llvm::Type *I64 = B.getInt64Ty();
  auto Pair = [&](const char *Asm) {
    // One asm statement for both counters: they are read back to back.
    auto *Ty = llvm::StructType::get(I64, I64);
    auto *IA = llvm::InlineAsm::get(llvm::FunctionType::get(Ty, false), Asm,
                                    "=r,=r", /*hasSideEffects=*/true);
    llvm::Value *R = B.CreateCall(IA, {});
    return Reading{B.CreateExtractValue(R, 0), B.CreateExtractValue(R, 1)};
  };
  switch (clockOf(T)) {
  case Clock::ArmPmu:
    // The isb keeps the reads after the step's instructions. Event
    // counter 0 is 32 bits wide on the A78 (PMUv3p1): record() subtracts
    // in 32 bits.
    return Pair("isb\n\tmrs $0, pmccntr_el0\n\tmrs $1, pmevcntr0_el0");
  case Clock::RiscvCsr: return Pair("rdcycle $0\n\trdinstret $1");
  case Clock::Monotonic: {
    // int clock_gettime(clockid_t, struct timespec *), CLOCK_MONOTONIC = 1
    // (Linux); struct timespec is two longs on the LP64 hosts cuvil has.
    llvm::Type *I32 = B.getInt32Ty();
    llvm::PointerType *PtrTy = B.getPtrTy();
    llvm::FunctionCallee Get = M.getOrInsertFunction(
        "clock_gettime", llvm::FunctionType::get(I32, {I32, PtrTy}, false));
    auto *TsTy = llvm::StructType::get(I64, I64);
    if (!Timespec) { // one stack slot for every read of this run_v
      llvm::Function *F = B.GetInsertBlock()->getParent();
      llvm::IRBuilder<> EntryB(&F->getEntryBlock(), F->getEntryBlock().begin());
      Timespec = EntryB.CreateAlloca(TsTy, nullptr, "ts");
    }
    llvm::Value *Ts = Timespec;
    B.CreateCall(Get, {B.getInt32(1), Ts});
    llvm::Value *Sec = B.CreateLoad(I64, B.CreateStructGEP(TsTy, Ts, 0));
    llvm::Value *Nsec = B.CreateLoad(I64, B.CreateStructGEP(TsTy, Ts, 1));
    return Reading{B.CreateAdd(B.CreateMul(Sec, B.getInt64(1000000000)), Nsec),
                   B.getInt64(0)};
  }
  case Clock::None: break;
  }
  llvm_unreachable("profileCounters() refuses such a target first");
}

void ProfileCode::start(llvm::IRBuilder<> &B, llvm::Value *S) {
  State = S;
  Last = read(B);
}

void ProfileCode::record(llvm::IRBuilder<> &B, size_t Step) {
  Reading Now = read(B);
  llvm::Type *I64 = B.getInt64Ty();
  for (unsigned C = 0; C < 2; ++C) {
    llvm::Value *Delta = B.CreateSub(Now[C], Last[C]);
    if (C == 1 && clockOf(T) == Clock::ArmPmu) // a 32-bit event counter
      Delta = B.CreateZExt(B.CreateTrunc(Delta, B.getInt32Ty()), I64);
    llvm::Value *Slot =
        B.CreateInBoundsGEP(StateTy, State,
                            {B.getInt32(0), B.getInt32(RunsField + 1),
                             B.getInt64(Step), B.getInt64(C)});
    B.CreateStore(B.CreateAdd(B.CreateLoad(I64, Slot), Delta), Slot);
  }
  Last = Now;
}

void ProfileCode::finish(llvm::IRBuilder<> &B) {
  llvm::Value *Runs = B.CreateStructGEP(StateTy, State, RunsField);
  llvm::Type *I64 = B.getInt64Ty();
  B.CreateStore(B.CreateAdd(B.CreateLoad(I64, Runs), B.getInt64(1)), Runs);
}

} // namespace cuvil
