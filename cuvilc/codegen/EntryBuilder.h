//===- EntryBuilder.h - The model's entry points in LLVM IR ----*- C++ -*-===//
//
// Internal to codegen/: builds cuvil_<name>_init, _run_v and _run, the
// static arenas, the embedded blob and one function per node inside the
// kernel module (see ModelCodegen.cpp for the whole flow).
//
//===----------------------------------------------------------------------===//
#ifndef CUVIL_CODEGEN_ENTRYBUILDER_H
#define CUVIL_CODEGEN_ENTRYBUILDER_H

#include "codegen/CheckedCode.h"
#include "codegen/ModelCodegen.h"
#include "codegen/ProfileCode.h"
#include "lowering/KernelCall.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace cuvil {

/// Written into the model struct's state field by a successful init.
constexpr uint32_t ReadyMagic = 0x43555649; // "CUVI"

/// Builds the entry points of one model inside the kernel module.
class EntryBuilder {
public:
  EntryBuilder(llvm::Module &M, const Graph &G, const GraphLowering &L,
               const MemoryPlan &Plan, const TargetInfo &T,
               const CodegenOptions &Opts)
      : M(M), Ctx(M.getContext()), G(G), L(L), Plan(Plan), T(T), Opts(Opts),
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
    // --profile adds `uint64_t profile_runs, profile[STEPS][2]`.
    if (Opts.Profile) {
      Steps = cuvil::profileSteps(G, L, Plan);
      ProfileRunsField = static_cast<unsigned>(Fields.size());
      Fields.push_back(I64);
      Fields.push_back(llvm::ArrayType::get(llvm::ArrayType::get(I64, 2),
                                            profileRows(Steps.size())));
    }
    // A build for a range of a dimension adds `int64_t dims[1]`.
    if (Opts.Range) {
      DimsField = static_cast<unsigned>(Fields.size());
      Fields.push_back(llvm::ArrayType::get(I64, 1));
    }
    // Outputs whose shape a run-time branch picks add `uint8_t
    // output_arm[NUM_OUTPUTS]`: the branch the last run took for each.
    if (!Opts.ShapedOutputs.empty()) {
      OutputArmField = static_cast<unsigned>(Fields.size());
      Fields.push_back(
          llvm::ArrayType::get(llvm::Type::getInt8Ty(Ctx), G.outputs().size()));
    }
    // Last, the A/B weight slots (cuvil_slots_t of cuvil/slots.h).
    SlotsField = static_cast<unsigned>(Fields.size());
    Fields.push_back(slotsType());
    StateTy = llvm::StructType::create(Ctx, Fields,
                                       "struct.cuvil_" + Opts.ModelName + "_t");
  }

  llvm::Error build();
  /// The type of `cuvil_<name>_t`, the caller-owned model instance.
  llvm::StructType *stateType() const { return StateTy; }
  /// Entry points: kept external through internalisation.
  std::set<std::string> &exported() { return Exported; }
  /// --profile: the steps of the table, and the field of profile_runs.
  const std::vector<ProfileStep> &profileSteps() const { return Steps; }
  unsigned profileRunsField() const { return ProfileRunsField; }
  /// After build(): whether the run code reads input I at all.
  std::vector<bool> inputsRead() const {
    std::vector<bool> R;
    for (const llvm::Value *P : InputPtrs)
      R.push_back(!P->use_empty());
    return R;
  }
  /// After build(): the NOBITS section that stands for the embedded
  /// weights, which the finished object must have filled; empty when the
  /// module holds them (or they are external).
  const std::string &weightsPlaceholder() const { return Placeholder; }

private:
  std::string sym(const std::string &Suffix) const {
    return "cuvil_" + Opts.ModelName + "_" + Suffix;
  }
  llvm::Function *newFunction(const std::string &Name, llvm::Type *Ret,
                              const std::vector<llvm::Type *> &Params);
  void setCodeAttributes(llvm::Function *F);
  llvm::Error buildNode(const Node &N, const std::vector<KernelCall> &Calls,
                        size_t Step);
  /// The function computing Calls (named Name unless an equal one exists),
  /// taking Params, the values of run_v the calls need, which it fills;
  /// null when the calls are no work at all.
  llvm::Expected<llvm::Function *>
  nodeFunction(const Node &N, const std::vector<KernelCall> &Calls,
               const std::string &Name, std::vector<llvm::Value *> &Params);
  /// A node cut into shares for the cores (TeamCode.cpp).
  llvm::Error buildShares(const Node &N,
                          const std::vector<std::vector<KernelCall>> &Shares,
                          size_t Step);
  /// Kernel calls as LLVM functions and arguments.
  using LoweredCalls =
      std::vector<std::pair<llvm::Function *, std::vector<llvm::Value *>>>;
  /// Appends Calls' functions and arguments to Lowered, and each argument
  /// that is not a constant (a value of run_v) to Params once; skips the
  /// copies the planner made unnecessary.
  llvm::Error lowerCalls(const Node &N, const std::vector<KernelCall> &Calls,
                         LoweredCalls &Lowered,
                         std::vector<llvm::Value *> &Params);
  /// Emits Calls at FB, each of run_v's values Params[I] replaced by
  /// Values[I]; the kernels are inlined.
  void emitCalls(llvm::IRBuilder<> &FB, LoweredCalls Calls,
                 const std::vector<llvm::Value *> &Params,
                 llvm::ArrayRef<llvm::Value *> Values);
  std::string nodeFunctionName(const Node &N, size_t Step) const;
  /// Branches to a new block where all of RunsWhen hold (a node of one
  /// branch of an If) and returns the block after it, where the builder
  /// goes once the node's code is in; null (no branch) when RunsWhen is
  /// empty.
  llvm::BasicBlock *branchOn(const std::vector<RunCondition> &RunsWhen);
  /// Leaves B where run goes on when X's condition is false; when it is
  /// true, run_v returns X's status.
  void exitIf(const RunExit &X);
  void buildInit();
  /// init_ab, switch_weights, active_slot, active_sha256 (WeightSlots.cpp).
  void buildWeightSlots();
  llvm::StructType *slotsType() {
    return llvm::StructType::get(Ctx, {llvm::ArrayType::get(PtrTy, 2),
                                       llvm::ArrayType::get(I64, 2),
                                       llvm::ArrayType::get(I32, 2), I32});
  }
  /// The caller's blob and size, or the embedded blob's where Ptr is
  /// null and the model has one.
  std::pair<llvm::Value *, llvm::Value *> blobOrEmbedded(llvm::Value *Ptr,
                                                         llvm::Value *Size);
  /// Address of the instance's cuvil_slots_t.
  llvm::Value *slots(llvm::Value *State) {
    return B.CreateStructGEP(StateTy, State, SlotsField);
  }
  /// Leaves B in the block after checks that State is non-null (else F
  /// returns IfNull) and initialised (else IfNotReady).
  void requireReady(llvm::Function *F, llvm::Value *State, llvm::Value *IfNull,
                    llvm::Value *IfNotReady);
  llvm::Error buildRunV();
  void buildRun();
  llvm::Value *pointerTo(const Value *V, int64_t ExtraOffset);
  /// A build for a range of a dimension (DimCode.cpp): set_dims, the
  /// shape and size queries, and the formulas' values.
  void buildDims();
  /// F at k = d - Lo (K, an i64), emitted at FB.
  llvm::Value *evaluate(llvm::IRBuilder<> &FB, const DimFormula &F,
                        llvm::Value *K);
  /// Inside run_v: F at the run's k (DimK), one value per formula and block.
  llvm::Value *formulaValue(const DimFormula &F);
  /// Inside run_v: argument A whose integers vary with the dimension.
  llvm::Value *dynamicArgument(const KernelArg &A, llvm::Type *Want);
  /// The dims field of the instance.
  llvm::Value *dimSlot(llvm::Value *State) {
    return B.CreateInBoundsGEP(
        StateTy, State, {B.getInt32(0), B.getInt32(DimsField), B.getInt32(0)});
  }
  /// Output I's byte of the output_arm field, at FB's insertion point.
  llvm::Value *armSlot(llvm::IRBuilder<> &FB, llvm::Value *State, size_t I) {
    return FB.CreateInBoundsGEP(StateTy, State,
                                {FB.getInt32(0), FB.getInt32(OutputArmField),
                                 FB.getInt32(static_cast<uint32_t>(I))});
  }
  /// The start of F, a tensor query shape(m, i, shape) or bytes(m, i): the
  /// null checks (CUVIL_ERR_NULL, or 0 bytes), then a switch on i, its
  /// default CUVIL_ERR_INDEX (0 bytes), to which the caller adds a case
  /// per tensor.
  llvm::SwitchInst *tensorQuery(llvm::IRBuilder<> &FB, llvm::Function *F,
                                bool IsShape, size_t Count);
  /// output_shape and output_bytes for Opts.ShapedOutputs (DimCode.cpp).
  void buildShapedOutputs();
  /// In run_v, after node N: records the branch of each output N gives
  /// whose shape the branch picks.
  void recordArms(const Node &N, llvm::Value *State);
  llvm::Expected<llvm::Value *> argument(const KernelArg &A,
                                         llvm::Type *Expected, const Node &N,
                                         const std::string &K);

  llvm::Module &M;
  llvm::LLVMContext &Ctx;
  const Graph &G;
  const GraphLowering &L;
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
  std::string Placeholder;
  llvm::Function *RunV = nullptr;
  std::set<std::string> Exported;
  /// The declarations of Opts.FirmwareKernels.
  std::set<const llvm::Function *> FirmwareKernels;
  llvm::Error declareFirmwareKernels();
  /// Address of arena slot A in the state struct.
  llvm::Value *arenaSlot(llvm::Value *State, size_t A) {
    return B.CreateInBoundsGEP(StateTy, State,
                               {B.getInt32(0), B.getInt32(2), B.getInt32(A)});
  }

  // Bases inside run_v.
  std::vector<llvm::Value *> ArenaBases;
  llvm::Value *WeightsBase = nullptr;
  std::vector<llvm::Value *> InputPtrs, OutputPtrs;
  /// pointerTo's addresses by (base, offset): one value per address, so
  /// that a step whose operands share storage (an in-place kernel) gets
  /// one pointer for them, and the inlined kernel knows they are equal
  /// (the loop vectoriser otherwise guards against their overlap and, when
  /// they are equal, runs the scalar loop).
  std::map<std::pair<llvm::Value *, int64_t>, llvm::Instruction *> Addresses;
  unsigned ArrayCount = 0;
  /// A build for a range of a dimension: the field of dims, and inside
  /// run_v the run's k = d - Lo and the values computed from it.
  unsigned DimsField = 0;
  llvm::Value *DimK = nullptr;
  std::map<std::pair<DimFormula, llvm::BasicBlock *>, llvm::Value *>
      FormulaValues;
  std::map<DimFormula, llvm::GlobalVariable *> FormulaTables;

  // --checked: run_v's bounds checks, and each step's node name.
  std::unique_ptr<GuardChecks> Guards;
  std::vector<std::string> StepNames;
  /// --profile: the counter reads, and the table's steps.
  std::unique_ptr<ProfileCode> Profile;
  std::vector<ProfileStep> Steps;
  unsigned ProfileRunsField = 0;
  unsigned SlotsField = 0;
  /// The output_arm field (Opts.ShapedOutputs).
  unsigned OutputArmField = 0;
  llvm::Function *Init = nullptr;
  /// cuvil_<name>_step_name (--checked, --profile) and step_origins
  /// (--profile).
  void buildStepTables();
  /// Node functions by what they do: per kernel call, the kernel, then
  /// each argument as a constant or the index of the parameter it is.
  /// Equal nodes (a long chain of equal layers) share one function from
  /// the start instead of being optimised one by one and merged late.
  using NodeKey = std::vector<std::pair<const void *, size_t>>;
  std::map<NodeKey, llvm::Function *> NodeFunctions;
  /// The constant global holding each integer array argument.
  std::map<std::vector<int64_t>, llvm::GlobalVariable *> IntArrays;
};

} // namespace cuvil

#endif
