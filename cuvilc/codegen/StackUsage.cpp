//===- StackUsage.cpp - Worst-case stack depth of the entry points --------===//
#include "codegen/StackUsage.h"

#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace cuvil {

bool FrameSizeCollector::isAnalysisRemarkEnabled(
    llvm::StringRef PassName) const {
  return PassName == "prologepilog";
}

bool FrameSizeCollector::handleDiagnostics(const llvm::DiagnosticInfo &DI) {
  const auto *R = llvm::dyn_cast<llvm::DiagnosticInfoOptimizationBase>(&DI);
  if (!R || R->getPassName() != "prologepilog" ||
      R->getRemarkName() != "StackSize")
    return false; // not ours: LLVM prints it as it would have
  std::string Function;
  uint64_t Bytes = 0;
  bool HaveBytes = false;
  for (const auto &A : R->getArgs()) {
    if (A.Key == "Function")
      Function = A.Val;
    else if (A.Key == "NumStackBytes")
      HaveBytes = !llvm::StringRef(A.Val).getAsInteger(10, Bytes);
  }
  if (!Function.empty() && HaveBytes)
    Out[Function] = Bytes;
  return true;
}

namespace {

/// What one function calls, or why its stack cannot be bounded.
struct CallInfo {
  std::vector<const llvm::Function *> Callees;
  std::string Problem;
  /// A local aligned beyond the stack's alignment makes the prologue
  /// realign the stack pointer, by up to that alignment, and round the
  /// frame up to it: bytes the frame size leaves out.
  uint64_t RealignBytes = 0;
  /// Stack of runtime functions the function calls (outside the object).
  uint64_t RuntimeBytes = 0;
  /// The most bytes of arguments one of its calls passes on the stack
  /// beyond the registers of the x86-64 SysV convention (6 integer or
  /// pointer, 8 floating-point): x86 may push them (call-frame
  /// optimisation), below the frame size LLVM reports. A step function
  /// reads one pointer per tensor, often more than 6.
  uint64_t PushedArgBytes = 0;
  /// Whether the backend may make it call the helpers (memcpy...).
  bool CallsHelpers = false;
};

/// Bytes of Call's arguments past the x86-64 SysV argument registers.
uint64_t stackArgBytes(const llvm::CallBase &Call) {
  unsigned Ints = 0, Floats = 0;
  for (const llvm::Value *A : Call.args())
    ++(A->getType()->isFloatingPointTy() || A->getType()->isVectorTy() ? Floats
                                                                       : Ints);
  uint64_t Bytes =
      8 * ((Ints > 6 ? Ints - 6 : 0) + (Floats > 8 ? Floats - 8 : 0));
  return (Bytes + 15) / 16 * 16; // the stack stays 16-byte aligned at calls
}

/// cuvil_team_run (runtime-baremetal/lib/team.c) calls its first argument
/// on the caller's stack, below a frame of at most this many bytes
/// (CUVIL_TEAM_RUN_STACK_BYTES of cuvil/team.h).
constexpr const char *TeamRun = "cuvil_team_run";
constexpr uint64_t TeamRunStackBytes = 256;

bool isMemIntrinsic(const llvm::Function &F) {
  switch (F.getIntrinsicID()) {
  case llvm::Intrinsic::memcpy:
  case llvm::Intrinsic::memmove:
  case llvm::Intrinsic::memset: return true;
  default: return false;
  }
}

CallInfo callsOf(const llvm::Function &F,
                 const std::vector<const llvm::Function *> &Helpers) {
  CallInfo CI;
  bool IsHelper =
      std::find(Helpers.begin(), Helpers.end(), &F) != Helpers.end();
  bool UsesMemIntrinsics = false;
  const llvm::DataLayout &DL = F.getParent()->getDataLayout();
  for (const llvm::BasicBlock &BB : F)
    for (const llvm::Instruction &I : BB) {
      if (const auto *AI = llvm::dyn_cast<llvm::AllocaInst>(&I)) {
        if (!AI->isStaticAlloca() && CI.Problem.empty())
          CI.Problem = fmt::format("function '{}' allocates a variable "
                                   "amount of stack",
                                   F.getName().str());
        if (DL.exceedsNaturalStackAlignment(AI->getAlign()))
          CI.RealignBytes =
              std::max<uint64_t>(CI.RealignBytes, 2 * AI->getAlign().value());
        continue;
      }
      const auto *Call = llvm::dyn_cast<llvm::CallBase>(&I);
      if (!Call || Call->isInlineAsm())
        continue;
      CI.PushedArgBytes = std::max(CI.PushedArgBytes, stackArgBytes(*Call));
      const llvm::Value *Target = Call->getCalledOperand()->stripPointerCasts();
      if (const auto *GA = llvm::dyn_cast<llvm::GlobalAlias>(Target))
        Target = GA->getAliaseeObject();
      const auto *Callee = llvm::dyn_cast_or_null<llvm::Function>(Target);
      if (!Callee) {
        if (CI.Problem.empty())
          CI.Problem = fmt::format("function '{}' makes an indirect call",
                                   F.getName().str());
        continue;
      }
      if (Callee->isIntrinsic()) {
        UsesMemIntrinsics |= isMemIntrinsic(*Callee);
        continue;
      }
      if (Callee->isDeclaration() && Callee->getName() == TeamRun) {
        const auto *Fn = llvm::dyn_cast<llvm::Function>(
            Call->getArgOperand(0)->stripPointerCasts());
        if (!Fn) {
          if (CI.Problem.empty())
            CI.Problem = fmt::format("function '{}' passes {} an unknown "
                                     "function",
                                     F.getName().str(), TeamRun);
          continue;
        }
        CI.Callees.push_back(Fn);
        CI.RuntimeBytes = TeamRunStackBytes;
        continue;
      }
      CI.Callees.push_back(Callee);
    }
  // The backend may turn a memcpy/memset it does not expand into a call,
  // and copies of its own (byval arguments) into memcpy: assume any
  // function but the helpers themselves calls each of them.
  CI.CallsHelpers = !IsHelper || UsesMemIntrinsics;
  if (CI.CallsHelpers)
    for (const llvm::Function *H : Helpers)
      if (H != &F)
        CI.Callees.push_back(H);
  std::sort(CI.Callees.begin(), CI.Callees.end(),
            [](const llvm::Function *A, const llvm::Function *B) {
              return A->getName() < B->getName();
            });
  CI.Callees.erase(std::unique(CI.Callees.begin(), CI.Callees.end()),
                   CI.Callees.end());
  return CI;
}

} // namespace

StackBound stackBound(const llvm::Module &M, const std::string &Entry,
                      const FrameSizes &Frames, unsigned ReturnAddressBytes,
                      const std::vector<std::string> &HelperNames,
                      unsigned RedZoneBytes, const OutsideBounds &Outside) {
  StackBound R;
  const llvm::Function *Root = M.getFunction(Entry);
  if (!Root || Root->isDeclaration()) {
    R.Reason = fmt::format("no function '{}' in the module", Entry);
    return R;
  }
  std::vector<const llvm::Function *> Helpers;
  // The deepest helper defined outside: every function that may call the
  // helpers may call it.
  const StackBound *OutsideHelper = nullptr;
  for (const std::string &H : HelperNames) {
    if (const llvm::Function *F = M.getFunction(H); F && !F->isDeclaration()) {
      Helpers.push_back(F);
      continue;
    }
    auto It = Outside.find(H);
    if (It == Outside.end())
      continue;
    if (!It->second.Known) {
      R.Reason = It->second.Reason;
      return R;
    }
    if (!OutsideHelper || It->second.Bytes > OutsideHelper->Bytes)
      OutsideHelper = &It->second;
  }

  // Depth-first over the call graph with an explicit stack (no recursion
  // on the program's size); a function met again while on the stack is a
  // cycle: recursion, whose depth has no static bound.
  enum class State { OnStack, Done };
  struct Result {
    uint64_t Depth = 0;
    const llvm::Function *Deepest = nullptr; ///< The callee on the path.
    /// The rest of the path when it leaves the module (an outside bound's).
    const std::vector<std::string> *OutsidePath = nullptr;
  };
  std::map<const llvm::Function *, State> Seen;
  std::map<const llvm::Function *, Result> Results;
  std::map<const llvm::Function *, CallInfo> Calls;
  struct Frame {
    const llvm::Function *F;
    size_t Next = 0; ///< Next callee to visit.
  };
  std::vector<Frame> Work = {{Root}};
  Seen[Root] = State::OnStack;
  while (!Work.empty()) {
    Frame &Top = Work.back();
    const llvm::Function *F = Top.F;
    auto [It, New] = Calls.try_emplace(F);
    if (New) {
      const std::string Caller =
          Work.size() > 1 ? Work[Work.size() - 2].F->getName().str() : Entry;
      auto Out =
          F->isDeclaration() ? Outside.find(F->getName().str()) : Outside.end();
      if (Out != Outside.end()) {
        if (!Out->second.Known) {
          R.Reason = fmt::format("'{}' calls '{}': {}", Caller,
                                 F->getName().str(), Out->second.Reason);
          return R;
        }
        Results[F] = {Out->second.Bytes, nullptr, &Out->second.Path};
        Seen[F] = State::Done;
        Work.pop_back();
        continue;
      }
      if (F->isDeclaration()) {
        R.Reason = fmt::format("'{}' calls '{}', which is not defined in the "
                               "object",
                               Caller, F->getName().str());
        return R;
      }
      It->second = callsOf(*F, Helpers);
      if (!It->second.Problem.empty()) {
        R.Reason = It->second.Problem;
        return R;
      }
      if (!Frames.count(F->getName().str())) {
        R.Reason = fmt::format("no frame size was emitted for function '{}'",
                               F->getName().str());
        return R;
      }
    }
    const CallInfo &CI = It->second;
    if (Top.Next < CI.Callees.size()) {
      const llvm::Function *C = CI.Callees[Top.Next++];
      auto S = Seen.find(C);
      if (S == Seen.end()) {
        Seen[C] = State::OnStack;
        Work.push_back({C});
      } else if (S->second == State::OnStack) {
        R.Reason = fmt::format("function '{}' is recursive (through '{}')",
                               C->getName().str(), F->getName().str());
        return R;
      }
      continue;
    }
    Result Res;
    for (const llvm::Function *C : CI.Callees)
      if (!Res.Deepest || Results[C].Depth > Res.Depth) {
        Res.Depth = Results[C].Depth;
        Res.Deepest = C;
      }
    if (CI.CallsHelpers && OutsideHelper &&
        (!Res.Deepest || OutsideHelper->Bytes > Res.Depth))
      Res = {OutsideHelper->Bytes, nullptr, &OutsideHelper->Path};
    // Pushed arguments exist where calls push them (x86, whose calls also
    // push the return address).
    Res.Depth += Frames.at(F->getName().str()) + ReturnAddressBytes +
                 CI.RealignBytes + CI.RuntimeBytes +
                 (ReturnAddressBytes ? CI.PushedArgBytes : 0) +
                 (CI.Callees.empty() ? RedZoneBytes : 0);
    Results[F] = Res;
    Seen[F] = State::Done;
    Work.pop_back();
  }
  R.Known = true;
  R.Bytes = Results[Root].Depth;
  const Result *Last = nullptr;
  for (const llvm::Function *F = Root; F; F = Last->Deepest) {
    Last = &Results[F];
    if (!Last->OutsidePath || !F->isDeclaration())
      R.Path.push_back(F->getName().str());
  }
  if (Last->OutsidePath)
    R.Path.insert(R.Path.end(), Last->OutsidePath->begin(),
                  Last->OutsidePath->end());
  return R;
}

StackBound entryStackBound(const llvm::Module &M, const std::string &Triple,
                           const std::string &Entry, const FrameSizes &Frames,
                           const std::vector<std::string> &Helpers,
                           const OutsideBounds &Outside) {
  bool X86 = llvm::Triple(Triple).isX86();
  return stackBound(M, Entry, Frames, X86 ? 8 : 0, Helpers, X86 ? 128 : 0,
                    Outside);
}

} // namespace cuvil
