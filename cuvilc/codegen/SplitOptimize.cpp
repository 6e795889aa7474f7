//===- SplitOptimize.cpp - Optimise a model's steps in parallel -----------===//
#include "codegen/SplitOptimize.h"

#include "codegen/Backend.h"
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
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <sched.h>
#include <set>
#include <string>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace cuvil {

namespace {

/// Below this many instructions (before optimisation) in the steps and
/// what they reach, the model goes through the optimiser whole: copying
/// each step into a module of its own and linking it back costs more
/// than the workers save.
constexpr size_t MinSplitInstructions = 20000;

/// A step: one of the model's own functions (named with its prefix) that
/// the optimiser may work on alone. Layers' step functions and the team
/// functions are noinline and internal. The kernels' own out-of-line
/// helpers are not steps: each step's copy takes them along, so the
/// optimiser still sees all their callers.
struct StepFilter {
  std::string Prefix;
  bool operator()(const llvm::Function &F) const {
    return !F.isDeclaration() && F.hasLocalLinkage() &&
           F.hasFnAttribute(llvm::Attribute::NoInline) &&
           F.getName().starts_with(Prefix);
  }
};

/// What the copy of one step holds: the step, and every internal
/// function and variable its code refers to, through others, except other
/// steps (which stay declarations, linked to their own copies later).
struct StepClosure {
  std::set<const llvm::GlobalValue *> Values;
  /// The kernels' out-of-line (noinline) helpers among them.
  std::vector<const llvm::Function *> Helpers;
};

StepClosure closureOf(const llvm::Function &Step, const StepFilter &isStep) {
  StepClosure C;
  std::vector<const llvm::GlobalValue *> Work{&Step};
  std::set<const llvm::Constant *> SeenConstants;
  auto Visit = [&](const llvm::Value *V, auto &Self) -> void {
    if (const auto *GV = llvm::dyn_cast<llvm::GlobalValue>(V)) {
      const auto *F = llvm::dyn_cast<llvm::Function>(GV);
      if (GV->hasLocalLinkage() && !GV->isDeclaration() && !(F && isStep(*F)))
        if (C.Values.insert(GV).second)
          Work.push_back(GV);
      return;
    }
    if (const auto *K = llvm::dyn_cast<llvm::Constant>(V))
      if (SeenConstants.insert(K).second)
        for (const llvm::Value *Op : K->operands())
          Self(Op, Self);
  };
  C.Values.insert(&Step);
  while (!Work.empty()) {
    const llvm::GlobalValue *GV = Work.back();
    Work.pop_back();
    if (const auto *F = llvm::dyn_cast<llvm::Function>(GV)) {
      if (F != &Step && F->hasFnAttribute(llvm::Attribute::NoInline))
        C.Helpers.push_back(F);
      for (const llvm::BasicBlock &BB : *F)
        for (const llvm::Instruction &I : BB)
          for (const llvm::Value *Op : I.operands())
            Visit(Op, Visit);
    } else if (const auto *G = llvm::dyn_cast<llvm::GlobalVariable>(GV)) {
      if (G->hasInitializer())
        Visit(G->getInitializer(), Visit);
    }
  }
  return C;
}

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

void appendBytes(std::string &Out, const void *P, size_t N) {
  Out.append(static_cast<const char *>(P), N);
}

/// A worker's result record: the step's index, the bitcode's size, the
/// bitcode.
void appendRecord(std::string &Out, uint32_t Index, const llvm::Module &Part) {
  std::string Bitcode;
  llvm::raw_string_ostream OS(Bitcode);
  llvm::WriteBitcodeToFile(Part, OS, /*ShouldPreserveUseListOrder=*/true);
  OS.flush();
  const uint64_t Size = Bitcode.size();
  appendBytes(Out, &Index, sizeof Index);
  appendBytes(Out, &Size, sizeof Size);
  Out += Bitcode;
}

bool writeAll(int Fd, const std::string &Data) {
  size_t Done = 0;
  while (Done < Data.size()) {
    ssize_t N = write(Fd, Data.data() + Done, Data.size() - Done);
    if (N < 0 && errno == EINTR)
      continue;
    if (N <= 0)
      return false;
    Done += static_cast<size_t>(N);
  }
  return true;
}

llvm::Error readAll(int Fd, std::string &Out) {
  char Buf[1 << 16];
  for (;;) {
    ssize_t N = read(Fd, Buf, sizeof Buf);
    if (N == 0)
      return llvm::Error::success();
    if (N < 0) {
      if (errno == EINTR)
        continue;
      return makeError("internal error: reading an optimiser worker: {}",
                       std::strerror(errno));
    }
    Out.append(Buf, static_cast<size_t>(N));
  }
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

/// Takes units from the shared counter until none is left, and gives
/// each optimised one to Sink.
template <typename SinkT>
void work(const llvm::Module &M, llvm::TargetMachine &TM, const UnitQueue &Q,
          std::atomic<uint32_t> &Next, SinkT Sink) {
  for (;;) {
    const uint32_t I = Next.fetch_add(1);
    if (I >= Q.Order.size())
      return;
    const uint32_t U = Q.Order[I];
    Sink(U, optimizeUnit(M, Q.Units[U], TM));
  }
}

struct Worker {
  pid_t Pid;
  int Fd;
};

/// Reads worker W's records into Parts (in M's context) and reaps it.
llvm::Error collect(const Worker &W, llvm::LLVMContext &Ctx,
                    std::vector<std::unique_ptr<llvm::Module>> &Parts) {
  std::string Data;
  llvm::Error ReadErr = readAll(W.Fd, Data);
  close(W.Fd);
  int Status = 0;
  while (waitpid(W.Pid, &Status, 0) < 0 && errno == EINTR) {
  }
  if (ReadErr)
    return ReadErr;
  if (!WIFEXITED(Status) || WEXITSTATUS(Status) != 0)
    return makeError(
        "internal error: an optimiser worker {} {}",
        WIFSIGNALED(Status) ? "was killed by signal" : "exited with status",
        WIFSIGNALED(Status) ? WTERMSIG(Status) : WEXITSTATUS(Status));
  size_t At = 0;
  while (At < Data.size()) {
    uint32_t Index = 0;
    uint64_t Size = 0;
    if (Data.size() - At < sizeof Index + sizeof Size)
      return makeError("internal error: a truncated optimiser record");
    std::memcpy(&Index, Data.data() + At, sizeof Index);
    std::memcpy(&Size, Data.data() + At + sizeof Index, sizeof Size);
    At += sizeof Index + sizeof Size;
    if (Index >= Parts.size() || Size > Data.size() - At)
      return makeError("internal error: a malformed optimiser record");
    auto Part = llvm::parseBitcodeFile(
        llvm::MemoryBufferRef(llvm::StringRef(Data.data() + At, Size),
                              "optimised-step"),
        Ctx);
    if (!Part)
      return Part.takeError();
    Parts[Index] = std::move(*Part);
    At += Size;
  }
  return llvm::Error::success();
}

/// Starts up to Count workers on Q; each leaves by _exit after writing its
/// records. Fewer start if the system refuses a pipe or a process.
std::vector<Worker> startWorkers(unsigned Count, const llvm::Module &M,
                                 llvm::TargetMachine &TM, const UnitQueue &Q,
                                 std::atomic<uint32_t> &Next) {
  std::vector<Worker> Workers;
  std::fflush(nullptr); // workers leave by _exit, without flushing
  for (unsigned K = 0; K < Count; ++K) {
    int Fds[2];
    if (pipe(Fds) != 0)
      break;
    const pid_t Pid = fork();
    if (Pid < 0) {
      close(Fds[0]);
      close(Fds[1]);
      break;
    }
    if (Pid == 0) {
      close(Fds[0]);
      for (const Worker &W : Workers)
        close(W.Fd);
      std::string Records;
      work(M, TM, Q, Next, [&](uint32_t S, std::unique_ptr<llvm::Module> Part) {
        appendRecord(Records, S, *Part);
      });
      _exit(writeAll(Fds[1], Records) ? 0 : 2);
    }
    close(Fds[1]);
    Workers.push_back({Pid, Fds[0]});
  }
  return Workers;
}

} // namespace

unsigned defaultOptimizeJobs() {
  cpu_set_t Set;
  unsigned N = 1;
  if (sched_getaffinity(0, sizeof Set, &Set) == 0)
    N = static_cast<unsigned>(CPU_COUNT(&Set));
  return std::clamp(N, 1u, 8u);
}

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
  // The counter is shared with the workers: a page mapped before the fork.
  void *Page = mmap(nullptr, sizeof(std::atomic<uint32_t>),
                    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  std::atomic<uint32_t> Local{0};
  std::atomic<uint32_t> &Next =
      Page == MAP_FAILED ? Local : *new (Page) std::atomic<uint32_t>(0);
  std::vector<Worker> Workers;
  if (Page != MAP_FAILED && Jobs > 1)
    Workers = startWorkers(std::min<size_t>(Jobs, Q.Units.size()) - 1, M, TM, Q,
                           Next);
  std::vector<std::unique_ptr<llvm::Module>> Parts(Q.Units.size());
  work(M, TM, Q, Next, [&](uint32_t S, std::unique_ptr<llvm::Module> Part) {
    Parts[S] = std::move(Part);
  });
  llvm::Error Err = llvm::Error::success();
  for (const Worker &W : Workers)
    if (auto E = collect(W, M.getContext(), Parts))
      Err = llvm::joinErrors(std::move(Err), std::move(E));
  if (Page != MAP_FAILED)
    munmap(Page, sizeof(std::atomic<uint32_t>));
  if (Err)
    return Err;

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
