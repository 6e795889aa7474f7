//===- EntryBuilder.h - The model's entry points in LLVM IR -----*- C++ -*-===//
//
// Internal to codegen: adds a model's arenas, weight blob, init, run_v, run
// and one function per node to the module that holds the kernel bitcode
// (see ModelCodegen.cpp for the whole flow).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_ENTRYBUILDER_H
#define CUVIL_CODEGEN_ENTRYBUILDER_H

#include "codegen/CheckedCode.h"
#include "codegen/ModelCodegen.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <set>
#include <string>
#include <vector>

namespace cuvil {

/// Builds the entry points of one model inside the kernel module.
class EntryBuilder {
public:
  EntryBuilder(llvm::Module &M, const Graph &G, const MemoryPlan &Plan,
               const TargetInfo &T, const CodegenOptions &Opts)
      : M(M), Ctx(M.getContext()), G(G), Plan(Plan), T(T), Opts(Opts),
        B(Ctx) {
    PtrTy = llvm::PointerType::get(Ctx, 0);
    I64 = llvm::Type::getInt64Ty(Ctx);
    I32 = llvm::Type::getInt32Ty(Ctx);
    F32 = llvm::Type::getFloatTy(Ctx);
    // Mirrors `cuvil_<name>_t` in the generated header.
    NumArenas = std::max<size_t>(Plan.Arenas.size(), 1);
    // --checked adds `int32_t bounds_step`: the step whose check failed.
    std::vector<llvm::Type *> Fields = {PtrTy, I32,
                                        llvm::ArrayType::get(PtrTy, NumArenas)};
    if (Opts.Checked)
      Fields.push_back(I32);
    StateTy = llvm::StructType::create(Ctx, Fields,
                                       "struct.cuvil_" + Opts.ModelName + "_t");
  }

  llvm::Error build();
  /// Entry points: kept external through internalisation.
  std::set<std::string> &exported() { return Exported; }
  /// After build(): whether the run code reads input I at all.
  std::vector<bool> inputsRead() const {
    std::vector<bool> R;
    for (const llvm::Value *P : InputPtrs)
      R.push_back(!P->use_empty());
    return R;
  }

private:
  std::string sym(const std::string &Suffix) const {
    return "cuvil_" + Opts.ModelName + "_" + Suffix;
  }
  llvm::Function *newFunction(const std::string &Name, llvm::Type *Ret,
                              std::vector<llvm::Type *> Params);
  void setCodeAttributes(llvm::Function *F);
  llvm::Error buildNode(const Node &N, size_t Step);
  llvm::Error checkOperand(const Node &N, const Value *V, int64_t Extra);
  void paintGuards(unsigned NodeIndex);
  void checkGuards(unsigned NodeIndex, size_t Step);
  void buildInit();
  llvm::Error buildRunV();
  void buildRun();
  llvm::Value *pointerTo(const Value *V, int64_t ExtraOffset);
  llvm::Expected<llvm::Value *> argument(const KernelArg &A,
                                         llvm::Type *Expected,
                                         const Node &N, const std::string &K);

  llvm::Module &M;
  llvm::LLVMContext &Ctx;
  const Graph &G;
  const MemoryPlan &Plan;
  const TargetInfo &T;
  const CodegenOptions &Opts;
  llvm::IRBuilder<> B;
  llvm::PointerType *PtrTy;
  llvm::Type *I64, *I32, *F32;
  llvm::StructType *StateTy;
  size_t NumArenas;
  std::vector<llvm::GlobalVariable *> Arenas;
  llvm::GlobalVariable *Blob = nullptr;
  llvm::Function *RunV = nullptr;
  std::set<std::string> Exported;
  /// Address of arena slot A in the state struct.
  llvm::Value *arenaSlot(llvm::Value *State, size_t A) {
    return B.CreateInBoundsGEP(StateTy, State,
                               {B.getInt32(0), B.getInt32(2), B.getInt32(A)});
  }

  // Bases inside run_v.
  std::vector<llvm::Value *> ArenaBases;
  llvm::Value *WeightsBase = nullptr;
  std::vector<llvm::Value *> InputPtrs, OutputPtrs;
  unsigned ArrayCount = 0;

  // --checked: the guard gaps, the helpers that paint and check them, and
  // run_v's exit for a failed check (a phi of the step).
  std::vector<Guard> Guards;
  llvm::Function *GuardPaint = nullptr, *GuardCheck = nullptr;
  llvm::BasicBlock *BoundsFail = nullptr;
  llvm::PHINode *FailedStep = nullptr;
  std::vector<std::string> StepNames;
};

} // namespace cuvil

#endif
