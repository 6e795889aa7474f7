//===- SplitOptimize.cpp - Optimise a model's steps in parallel -----------===//
#include "codegen/SplitOptimize.h"

#include "codegen/Backend.h"
#include "codegen/Steps.h"
#include "codegen/Workers.h"
#include "ir/Diagnostic.h"
#include "ir/StageTimer.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/Constants.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace cuvil {

namespace {

/// Below this many instructions (before optimisation) in the steps and
/// what they reach, the model goes through the optimiser whole: copying
/// each step into a module of its own and linking it back costs more
/// than the workers save.
constexpr size_t MinSplitInstructions = 20000;

/// Steps optimised together, in a module of their own, with everything
/// internal their code reaches. Steps that share an out-of-line kernel
/// helper are one unit, so that the optimiser sees all the helper's
/// callers, as it does in the whole module.
struct Unit {
  std::vector<const llvm::Function *> Steps;
  std::set<const llvm::GlobalValue *> Values;
  size_t Instructions = 0; ///< Of its functions; the scheduling estimate.
};

/// The unit optimised. Its steps are external there, so that the optimiser
/// keeps them; other steps, the entry points and the data are
/// declarations.
std::unique_ptr<llvm::Module> optimizeUnit(const llvm::Module &M, const Unit &U,
                                           llvm::TargetMachine &TM) {
  llvm::ValueToValueMapTy VMap;
  std::unique_ptr<llvm::Module> Part =
      llvm::CloneModule(M, VMap, [&](const llvm::GlobalValue *GV) {
        return U.Values.count(GV) != 0;
      });
  Part->setModuleInlineAsm(""); // the arenas stay in the model's module
  for (const llvm::Function *Step : U.Steps)
    llvm::cast<llvm::Function>(VMap[Step])
        ->setLinkage(llvm::GlobalValue::ExternalLinkage);
  optimizeModule(*Part, TM);
  return Part;
}

/// A unit's result from a worker: its bitcode, with the use-list order
/// kept, so that it reads back as the module this process would have had.
std::string bitcodeOf(const llvm::Module &Part) {
  std::string Bitcode;
  llvm::raw_string_ostream OS(Bitcode);
  llvm::WriteBitcodeToFile(Part, OS, /*ShouldPreserveUseListOrder=*/true);
  OS.flush();
  return Bitcode;
}

/// The units, and the order workers take them in.
struct UnitQueue {
  std::vector<Unit> Units;     ///< In the module order of their first steps.
  std::vector<uint32_t> Order; ///< Costliest first.
  std::vector<std::string> StepNames;
  size_t Instructions = 0;
};

UnitQueue queueUnits(const llvm::Module &M, const StepFilter &isStep) {
  std::vector<const llvm::Function *> Steps;
  std::vector<StepClosure> Closures;
  for (const llvm::Function &F : M)
    if (isStep(F)) {
      Steps.push_back(&F);
      Closures.push_back(closureOf(F, isStep));
    }
  // Steps sharing a helper join the unit of the first step that uses it.
  std::vector<size_t> Parent(Steps.size());
  for (size_t I = 0; I < Parent.size(); ++I)
    Parent[I] = I;
  auto Find = [&](size_t I) {
    while (Parent[I] != I)
      I = Parent[I] = Parent[Parent[I]];
    return I;
  };
  std::map<const llvm::Function *, size_t> HelperStep;
  for (size_t I = 0; I < Steps.size(); ++I)
    for (const llvm::Function *H : Closures[I].Helpers) {
      auto [It, New] = HelperStep.emplace(H, I);
      if (!New) {
        size_t A = Find(It->second), B = Find(I);
        Parent[std::max(A, B)] = std::min(A, B);
      }
    }
  UnitQueue Q;
  std::map<size_t, size_t> UnitOf; // root step -> unit
  for (size_t I = 0; I < Steps.size(); ++I) {
    auto [It, New] = UnitOf.emplace(Find(I), Q.Units.size());
    if (New)
      Q.Units.emplace_back();
    Unit &U = Q.Units[It->second];
    U.Steps.push_back(Steps[I]);
    U.Values.insert(Closures[I].Values.begin(), Closures[I].Values.end());
    Q.StepNames.push_back(Steps[I]->getName().str());
  }
  for (Unit &U : Q.Units) {
    for (const llvm::GlobalValue *V : U.Values)
      if (const auto *F = llvm::dyn_cast<llvm::Function>(V))
        U.Instructions += F->getInstructionCount();
    Q.Instructions += U.Instructions;
  }
  for (uint32_t I = 0; I < Q.Units.size(); ++I)
    Q.Order.push_back(I);
  std::stable_sort(Q.Order.begin(), Q.Order.end(), [&](uint32_t A, uint32_t B) {
    return Q.Units[A].Instructions > Q.Units[B].Instructions;
  });
  return Q;
}

} // namespace

llvm::Error optimizeModuleSplit(llvm::Module &M, llvm::TargetMachine &TM,
                                unsigned Jobs, llvm::StringRef StepPrefix,
                                StageTimer *Timer) {
  // Steps of equal shape are merged first, so each is optimised once.
  mergeIdenticalFunctions(M);
  const UnitQueue Q = queueUnits(M, StepFilter{StepPrefix.str()});
  if (Q.Units.size() < 2 || Q.Instructions < MinSplitInstructions) {
    optimizeModule(M, TM);
    return llvm::Error::success();
  }
  std::vector<std::unique_ptr<llvm::Module>> Parts(Q.Units.size());
  TaskFns Fns;
  auto RunHere = [&](uint32_t U) {
    Parts[U] = optimizeUnit(M, Q.Units[U], TM);
  };
  auto RunInWorker = [&](uint32_t U) {
    return bitcodeOf(*optimizeUnit(M, Q.Units[U], TM));
  };
  auto Receive = [&](uint32_t U, llvm::StringRef Bitcode) -> llvm::Error {
    if (U >= Parts.size())
      return makeError("internal error: a malformed optimiser record");
    auto Part = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(Bitcode, "optimised-step"), M.getContext());
    if (!Part)
      return Part.takeError();
    Parts[U] = std::move(*Part);
    return llvm::Error::success();
  };
  Fns.RunHere = RunHere;
  Fns.RunInWorker = RunInWorker;
  Fns.Receive = Receive;
  if (auto E = runTasks(Jobs, Q.Order, Fns))
    return E;

  beginStage(Timer, "llvm-link-steps");
  // What is left (entry points, the blob reader) is optimised with the
  // steps as declarations; then each step's code takes its declaration's
  // place, in step order, and becomes internal again.
  for (const std::string &N : Q.StepNames)
    M.getFunction(N)->deleteBody();
  optimizeModule(M, TM);
  for (std::unique_ptr<llvm::Module> &Part : Parts) {
    if (!Part)
      return makeError("internal error: a unit of steps was not optimised");
    if (llvm::Linker::linkModules(M, std::move(Part)))
      return makeError("internal error: cannot link an optimised step back");
  }
  for (const std::string &N : Q.StepNames)
    if (llvm::Function *F = M.getFunction(N))
      F->setLinkage(llvm::GlobalValue::InternalLinkage);
  // Steps that only the optimiser made identical share one body too.
  finishSplitModule(M);
  return llvm::Error::success();
}

} // namespace cuvil
