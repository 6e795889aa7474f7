//===- SplitCodegen.cpp - Generate a model's object in parts --------------===//
#include "codegen/SplitCodegen.h"

#include "codegen/Backend.h"
#include "codegen/ObjectMerge.h"
#include "codegen/Steps.h"
#include "codegen/Workers.h"
#include "ir/Diagnostic.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>

namespace cuvil {

namespace {

/// At most this many parts; fewer when the model has fewer steps. A fixed
/// number, so that the object does not depend on the machine's cores. Each
/// part's process deletes the other parts' code from its copy of the module
/// (restrictToPart), and so writes to most of the memory it shares with
/// its parent: with 8 parts the deletions took 0.57 of the 2.0 CPU-seconds
/// of MobileNetV2's code generation (perf, a78); 4 parts delete three
/// modules' worth instead of seven.
constexpr unsigned MaxParts = 4;

/// Below this many instructions the module is generated whole: cutting
/// and merging would cost more than the workers save.
constexpr size_t MinSplitInstructions = 20000;

size_t instructionsOf(const llvm::GlobalValue *V) {
  const auto *F = llvm::dyn_cast<llvm::Function>(V);
  return F ? F->getInstructionCount() : 0;
}

/// Which part defines each of M's definitions, and which internal ones the
/// other parts use.
struct Cut {
  unsigned Parts = 1;
  std::map<const llvm::GlobalValue *, unsigned> Owner;
  std::vector<size_t> Load; ///< Instructions per part.
  std::vector<llvm::GlobalValue *> Shared;
};

Cut cutModule(llvm::Module &M, const StepFilter &isStep) {
  Cut C;
  std::vector<llvm::Function *> Steps;
  for (llvm::Function &F : M)
    if (isStep(F))
      Steps.push_back(&F);
  C.Parts = static_cast<unsigned>(std::min<size_t>(MaxParts, Steps.size()));
  C.Load.assign(C.Parts, 0);
  // Steps by size, the largest first, each to the least loaded part.
  std::vector<size_t> BySize(Steps.size());
  std::iota(BySize.begin(), BySize.end(), 0);
  std::stable_sort(BySize.begin(), BySize.end(), [&](size_t A, size_t B) {
    return instructionsOf(Steps[A]) > instructionsOf(Steps[B]);
  });
  std::map<const llvm::GlobalValue *, uint32_t> UsedBy; // bit per part
  for (size_t I : BySize) {
    const unsigned P = static_cast<unsigned>(
        std::min_element(C.Load.begin(), C.Load.end()) - C.Load.begin());
    C.Owner[Steps[I]] = P;
    for (const llvm::GlobalValue *V : closureOf(*Steps[I], isStep).Values) {
      UsedBy[V] |= 1u << P;
      C.Load[P] += instructionsOf(V);
    }
  }
  // The first part: what the entry points and the data reach, and
  // whatever no step reaches.
  std::set<const llvm::GlobalValue *> First;
  for (llvm::GlobalValue &GV : M.global_values())
    if (!GV.isDeclaration() && !(llvm::isa<llvm::Function>(GV) &&
                                 isStep(llvm::cast<llvm::Function>(GV))))
      if (!GV.hasLocalLinkage() || !UsedBy.count(&GV))
        for (const llvm::GlobalValue *V : closureOf(GV, isStep).Values)
          First.insert(V);
  for (llvm::GlobalValue &GV : M.global_values()) {
    if (GV.isDeclaration() || C.Owner.count(&GV))
      continue;
    auto It = UsedBy.find(&GV);
    const uint32_t Users = It == UsedBy.end() ? 0 : It->second;
    unsigned P = 0;
    if (!First.count(&GV) && Users && !(Users & (Users - 1)))
      P = static_cast<unsigned>(__builtin_ctz(Users));
    C.Owner[&GV] = P;
    // Used by a part other than its own: shared.
    if (GV.hasLocalLinkage() && (Users & ~(1u << P)))
      C.Shared.push_back(&GV);
  }
  for (llvm::Function *S : Steps)
    C.Shared.push_back(S); // called from the entry points and team functions
  return C;
}

/// Makes M part P of itself, in place: its own definitions stay as they
/// are, every other becomes a declaration, or goes when nothing in the
/// part uses it. Code generation depends on the order of a value's uses,
/// which a copy of the module (CloneModule) does not keep: in place, each
/// function is generated exactly as it would be in the whole module. The
/// module assembly (the arenas), llvm.used and the like, and the
/// identification strings are the first part's.
void restrictToPart(llvm::Module &M, const Cut &C, unsigned P) {
  auto Owned = [&](const llvm::GlobalValue &GV) {
    auto It = C.Owner.find(&GV);
    return It != C.Owner.end() && It->second == P;
  };
  if (P != 0) {
    M.setModuleInlineAsm("");
    if (llvm::NamedMDNode *Ident = M.getNamedMetadata("llvm.ident"))
      M.eraseNamedMetadata(Ident);
    for (auto It = M.global_begin(); It != M.global_end();) {
      llvm::GlobalVariable &G = *It++;
      if (G.getName().starts_with("llvm."))
        G.eraseFromParent();
    }
  }
  std::vector<llvm::GlobalValue *> Others;
  for (llvm::Function &F : M)
    if (!F.isDeclaration() && !Owned(F)) {
      F.deleteBody();
      Others.push_back(&F);
    }
  for (llvm::GlobalVariable &G : M.globals())
    if (!G.isDeclaration() && !Owned(G)) {
      G.setInitializer(nullptr);
      Others.push_back(&G);
    }
  for (llvm::GlobalValue *GV : Others) {
    if (GV->use_empty()) {
      GV->eraseFromParent();
      continue;
    }
    // Used here, defined by another part: shared, so already external.
    GV->setLinkage(llvm::GlobalValue::ExternalLinkage);
  }
}

void appendU64(std::string &Out, uint64_t V) {
  Out.append(reinterpret_cast<const char *>(&V), sizeof V);
}

/// A part's result from a worker: its object, then its frame sizes.
std::string encode(const std::string &Object, const FrameSizes &Frames) {
  std::string Out;
  appendU64(Out, Object.size());
  Out += Object;
  for (const auto &[Name, Bytes] : Frames) {
    appendU64(Out, Name.size());
    Out += Name;
    appendU64(Out, Bytes);
  }
  return Out;
}

llvm::Error decode(llvm::StringRef In, std::string &Object,
                   FrameSizes &Frames) {
  auto Take = [&](uint64_t &V) {
    if (In.size() < sizeof V)
      return false;
    std::memcpy(&V, In.data(), sizeof V);
    In = In.drop_front(sizeof V);
    return true;
  };
  uint64_t Size = 0;
  if (!Take(Size) || Size > In.size())
    return makeError("internal error: a malformed code generator record");
  Object = In.take_front(Size).str();
  In = In.drop_front(Size);
  while (!In.empty()) {
    uint64_t NameSize = 0, Bytes = 0;
    if (!Take(NameSize) || NameSize > In.size())
      return makeError("internal error: a malformed code generator record");
    std::string Name = In.take_front(NameSize).str();
    In = In.drop_front(NameSize);
    if (!Take(Bytes))
      return makeError("internal error: a malformed code generator record");
    Frames[Name] = Bytes;
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error emitObjectSplit(llvm::Module &M, llvm::TargetMachine &TM,
                            unsigned Jobs, llvm::StringRef StepPrefix,
                            const std::string &TargetName, std::string &Object,
                            FrameSizes &Frames) {
  const StepFilter isStep{StepPrefix.str()};
  size_t Instructions = 0;
  for (const llvm::Function &F : M)
    Instructions += F.getInstructionCount();
  Cut C;
  // Aliases would have to follow their aliasees into the parts; cuvil's
  // modules have none, and one that had would be generated whole.
  if (Instructions >= MinSplitInstructions && M.alias_empty() &&
      M.ifunc_empty())
    C = cutModule(M, isStep);
  if (C.Parts < 2)
    return emitFile(M, TM, llvm::CodeGenFileType::ObjectFile, TargetName,
                    Object, &Frames);

  std::set<std::string> Localize;
  struct Linkage {
    llvm::GlobalValue *GV;
    llvm::GlobalValue::LinkageTypes Type;
    llvm::GlobalValue::VisibilityTypes Visibility;
    bool DSOLocal;
  };
  std::vector<Linkage> Before;
  for (llvm::GlobalValue *GV : C.Shared) {
    Before.push_back(
        {GV, GV->getLinkage(), GV->getVisibility(), GV->isDSOLocal()});
    if (!GV->hasName())
      GV->setName("cuvil.shared");
    GV->setLinkage(llvm::GlobalValue::ExternalLinkage);
    GV->setVisibility(llvm::GlobalValue::HiddenVisibility);
    GV->setDSOLocal(true);
    Localize.insert(GV->getName().str());
  }

  std::vector<std::string> Objects(C.Parts);
  std::vector<FrameSizes> PartFrames(C.Parts);
  auto Run = [&](uint32_t P) {
    restrictToPart(M, C, P);
    std::string Obj;
    FrameSizes F;
    if (auto E = emitFile(M, TM, llvm::CodeGenFileType::ObjectFile, TargetName,
                          Obj, &F)) {
      llvm::consumeError(std::move(E));
      return std::string(); // no object: the result is refused below
    }
    return encode(Obj, F);
  };
  auto Receive = [&](uint32_t P, llvm::StringRef Bytes) -> llvm::Error {
    if (P >= C.Parts || Bytes.empty())
      return makeError("internal error: code generation failed in a part");
    return decode(Bytes, Objects[P], PartFrames[P]);
  };
  std::vector<uint32_t> Order(C.Parts);
  std::iota(Order.begin(), Order.end(), 0);
  std::stable_sort(Order.begin(), Order.end(), [&](uint32_t A, uint32_t B) {
    return C.Load[A] > C.Load[B];
  });
  if (auto E = runTasksForked(Jobs, Order, Run, Receive)) {
    // No processes to be had (or one failed): the module, untouched here,
    // is generated whole, as a small one is. An internal failure then
    // shows itself in this process.
    llvm::consumeError(std::move(E));
    for (const Linkage &L : Before) {
      L.GV->setLinkage(L.Type);
      L.GV->setVisibility(L.Visibility);
      L.GV->setDSOLocal(L.DSOLocal);
    }
    return emitFile(M, TM, llvm::CodeGenFileType::ObjectFile, TargetName,
                    Object, &Frames);
  }
  for (const FrameSizes &F : PartFrames)
    Frames.insert(F.begin(), F.end());
  auto Merged = mergeObjects(Objects, Localize);
  if (!Merged)
    return Merged.takeError();
  Object = std::move(*Merged);
  return llvm::Error::success();
}

} // namespace cuvil
