//===- EntryBuilder.cpp - The model's entry points in LLVM IR -------------===//
#include "codegen/EntryBuilder.h"

#include "ir/Diagnostic.h"

#include <algorithm>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace cuvil {

namespace {

/// Module assembly that defines the global symbol Name as Bytes bytes at
/// Align in a NOBITS section of its own (Flags: "aw" for an arena, "a" for
/// the weights' placeholder), then More, then returns to .text. The object
/// carries no bytes for it.
std::string nobitsSymbol(const std::string &Section, const char *Flags,
                         int64_t Align, const std::string &Name, int64_t Bytes,
                         const std::string &More = "") {
  return fmt::format("  .section {0},\"{1}\",%nobits\n"
                     "  .balign {2}\n"
                     "  .globl {3}\n"
                     "  .type {3},%object\n"
                     "  .size {3}, {4}\n"
                     "{3}:\n"
                     "  .zero {4}\n"
                     "{5}"
                     "  .text",
                     Section, Flags, Align, Name, Bytes, More);
}

} // namespace

llvm::Function *
EntryBuilder::newFunction(const std::string &Name, llvm::Type *Ret,
                          const std::vector<llvm::Type *> &Params) {
  auto *FT = llvm::FunctionType::get(Ret, Params, false);
  auto *F =
      llvm::Function::Create(FT, llvm::GlobalValue::ExternalLinkage, Name, M);
  setCodeAttributes(F);
  if (!T.PIC)
    F->setDSOLocal(true);
  Exported.insert(Name);
  return F;
}

void EntryBuilder::setCodeAttributes(llvm::Function *F) {
  // Match the kernels' target and builtin attributes (as clang wrote them),
  // or the inliner refuses to inline them.
  const llvm::Function *Ref = M.getFunction("cuvil_k_copy");
  for (const char *A :
       {"target-cpu", "target-features", "tune-cpu", "no-builtins"}) {
    if (Ref && Ref->hasFnAttribute(A))
      F->addFnAttr(Ref->getFnAttribute(A));
  }
  if (!F->hasFnAttribute("target-cpu"))
    F->addFnAttr("target-cpu", T.CPU);
  F->addFnAttr(llvm::Attribute::NoUnwind);
}

void EntryBuilder::buildInit() {
  // int cuvil_<name>_init(cuvil_<name>_t *m, void *const *arenas,
  //                       const void *weights, unsigned long size)
  llvm::Function *F = newFunction(sym("init"), I32, {PtrTy, PtrTy, PtrTy, I64});
  Init = F;
  auto *Entry = llvm::BasicBlock::Create(Ctx, "entry", F);
  auto *Fail = llvm::BasicBlock::Create(Ctx, "fail", F);
  B.SetInsertPoint(Fail);
  llvm::PHINode *Code = B.CreatePHI(I32, 4, "status");
  B.CreateRet(Code);

  B.SetInsertPoint(Entry);
  llvm::Value *State = F->getArg(0), *UserArenas = F->getArg(1),
              *UserBlob = F->getArg(2), *UserSize = F->getArg(3);
  auto Check = [&](llvm::Value *Bad, int Status, const char *Next) {
    auto *Cont = llvm::BasicBlock::Create(Ctx, Next, F);
    Code->addIncoming(llvm::ConstantInt::getSigned(I32, Status),
                      B.GetInsertBlock());
    B.CreateCondBr(Bad, Fail, Cont);
    B.SetInsertPoint(Cont);
  };
  Check(B.CreateIsNull(State), StatusNullArgument, "arenas");
  // Arena A: arenas[A] when the caller gives one, else the static arena.
  std::vector<llvm::Value *> ArenaPtrs;
  for (size_t A = 0; A < NumArenas; ++A) {
    auto *Given = llvm::BasicBlock::Create(Ctx, "arena.given", F);
    auto *Join = llvm::BasicBlock::Create(Ctx, "arena.join", F);
    llvm::BasicBlock *From = B.GetInsertBlock();
    B.CreateCondBr(B.CreateIsNull(UserArenas), Join, Given);
    B.SetInsertPoint(Given);
    llvm::Value *Slot =
        B.CreateLoad(PtrTy, B.CreateConstInBoundsGEP1_64(PtrTy, UserArenas, A));
    llvm::Value *Pick = B.CreateSelect(B.CreateIsNull(Slot), Arenas[A], Slot);
    B.CreateBr(Join);
    B.SetInsertPoint(Join);
    llvm::PHINode *Ptr = B.CreatePHI(PtrTy, 2, "arena");
    Ptr->addIncoming(Arenas[A], From);
    Ptr->addIncoming(Pick, Given);
    llvm::Value *Misaligned = B.CreateICmpNE(
        B.CreateAnd(B.CreatePtrToInt(Ptr, I64), Plan.Alignment - 1),
        llvm::ConstantInt::get(I64, 0));
    Check(Misaligned, StatusArenaMisaligned, "arena.ok");
    ArenaPtrs.push_back(Ptr);
  }
  // Each arena's byte range [start, end): none may run past the end of the
  // address space.
  std::vector<std::pair<llvm::Value *, llvm::Value *>> Ranges;
  for (size_t A = 0; A < NumArenas; ++A) {
    int64_t Bytes = A < Plan.Arenas.size() ? Plan.Arenas[A].Size : 0;
    llvm::Value *Start = B.CreatePtrToInt(ArenaPtrs[A], I64);
    llvm::Value *End = B.CreateAdd(Start, llvm::ConstantInt::get(I64, Bytes));
    Check(B.CreateICmpULT(End, Start), StatusArenaRange, "arena.range.ok");
    Ranges.emplace_back(Start, End);
  }
  auto [BlobPtr, BlobSize] = blobOrEmbedded(UserBlob, UserSize);
  if (!Blob)
    Check(B.CreateIsNull(UserBlob), StatusNoWeights, "weights.given");
  // The caller's blob: aligned like the data block in it, big enough for
  // this model's weights (data vector, its length, root offset and
  // identifier), and apart from every arena.
  llvm::Value *BlobStart = B.CreatePtrToInt(BlobPtr, I64);
  Check(B.CreateICmpNE(B.CreateAnd(BlobStart, Plan.Alignment - 1),
                       llvm::ConstantInt::get(I64, 0)),
        StatusBlobAlign, "weights.aligned");
  if (Opts.WeightsDataSize > 0)
    Check(B.CreateICmpULT(
              BlobSize, llvm::ConstantInt::get(I64, Opts.WeightsDataSize + 12)),
          StatusBlobShort, "weights.size.ok");
  llvm::Value *BlobEnd = B.CreateAdd(BlobStart, BlobSize);
  BlobEnd = B.CreateSelect(B.CreateICmpULT(BlobEnd, BlobStart),
                           llvm::ConstantInt::get(I64, UINT64_MAX), BlobEnd);
  Ranges.emplace_back(BlobStart, BlobEnd);
  auto Overlap = [&](size_t X, size_t Y) {
    return B.CreateAnd(B.CreateICmpULT(Ranges[X].first, Ranges[Y].second),
                       B.CreateICmpULT(Ranges[Y].first, Ranges[X].second));
  };
  for (size_t X = 0; X < NumArenas; ++X)
    for (size_t Y = X + 1; Y < Ranges.size(); ++Y)
      Check(Overlap(X, Y), StatusArenaOverlap, "apart");
  // Verify the blob once; generated code then addresses data + offset.
  llvm::Function *Open = M.getFunction("cuvil_blob_open");
  assert(Open && "kernel bitcode lacks cuvil_blob_open");
  // In the entry block: a stack slot elsewhere is a dynamic allocation.
  llvm::IRBuilder<> EntryB(Entry, Entry->begin());
  llvm::Value *DataSlot = EntryB.CreateAlloca(PtrTy, nullptr, "data");
  llvm::Value *Rc = B.CreateCall(
      Open, {BlobPtr, BlobSize, llvm::ConstantInt::get(I64, Opts.StructureHash),
             llvm::ConstantInt::get(I64, Plan.Alignment),
             llvm::ConstantInt::get(I64, Opts.WeightsDataSize),
             llvm::ConstantInt::get(I32, 0), DataSlot});
  auto *Store = llvm::BasicBlock::Create(Ctx, "store", F);
  Code->addIncoming(Rc, B.GetInsertBlock());
  B.CreateCondBr(B.CreateICmpNE(Rc, llvm::ConstantInt::get(I32, 0)), Fail,
                 Store);
  B.SetInsertPoint(Store);
  B.CreateStore(B.CreateLoad(PtrTy, DataSlot),
                B.CreateStructGEP(StateTy, State, 0));
  for (size_t A = 0; A < NumArenas; ++A)
    B.CreateStore(ArenaPtrs[A], arenaSlot(State, A));
  if (Opts.Range) // runs are for the largest value until set_dims
    B.CreateStore(llvm::ConstantInt::get(I64, Opts.Range->Hi), dimSlot(State));
  // Slot 0 holds the blob, and is active.
  B.CreateCall(M.getFunction("cuvil_slots_reset"),
               {slots(State), BlobPtr, BlobSize});
  if (Opts.Checked)
    B.CreateStore(llvm::ConstantInt::getSigned(I32, -1),
                  B.CreateStructGEP(StateTy, State, 3));
  if (Profile) { // no runs yet: the table starts at zero
    llvm::Value *Runs = B.CreateStructGEP(StateTy, State, ProfileRunsField);
    B.CreateStore(llvm::ConstantInt::get(I64, 0), Runs);
    llvm::Value *Table =
        B.CreateStructGEP(StateTy, State, ProfileRunsField + 1);
    B.CreateMemSet(Table, B.getInt8(0),
                   M.getDataLayout().getTypeAllocSize(
                       StateTy->getElementType(ProfileRunsField + 1)),
                   llvm::MaybeAlign(8));
  }
  B.CreateStore(llvm::ConstantInt::get(I32, ReadyMagic),
                B.CreateStructGEP(StateTy, State, 1));
  B.CreateRet(llvm::ConstantInt::get(I32, StatusOk));
}

llvm::Error EntryBuilder::buildRunV() {
  // int cuvil_<name>_run_v(cuvil_<name>_t *m, const void *const *inputs,
  //                        void *const *outputs)
  RunV = newFunction(sym("run_v"), I32, {PtrTy, PtrTy, PtrTy});
  auto *Entry = llvm::BasicBlock::Create(Ctx, "entry", RunV);
  auto *Bad = llvm::BasicBlock::Create(Ctx, "not.ready", RunV);
  auto *Body = llvm::BasicBlock::Create(Ctx, "body", RunV);
  B.SetInsertPoint(Bad);
  B.CreateRet(llvm::ConstantInt::getSigned(I32, StatusNotInitialized));

  B.SetInsertPoint(Entry);
  llvm::Value *State = RunV->getArg(0);
  auto *Check = llvm::BasicBlock::Create(Ctx, "check", RunV, Body);
  B.CreateCondBr(B.CreateIsNull(State), Bad, Check);
  B.SetInsertPoint(Check);
  llvm::Value *Ready =
      B.CreateICmpEQ(B.CreateLoad(I32, B.CreateStructGEP(StateTy, State, 1)),
                     llvm::ConstantInt::get(I32, ReadyMagic));
  B.CreateCondBr(Ready, Body, Bad);

  B.SetInsertPoint(Body);
  for (size_t A = 0; A < NumArenas; ++A)
    ArenaBases.push_back(
        B.CreateLoad(PtrTy, arenaSlot(State, A), "arena" + std::to_string(A)));
  WeightsBase =
      B.CreateLoad(PtrTy, B.CreateStructGEP(StateTy, State, 0), "weights");
  for (unsigned I = 0; I < G.inputs().size(); ++I)
    InputPtrs.push_back(B.CreateLoad(
        PtrTy, B.CreateConstInBoundsGEP1_64(PtrTy, RunV->getArg(1), I),
        "in" + std::to_string(I)));
  for (unsigned I = 0; I < G.outputs().size(); ++I)
    OutputPtrs.push_back(B.CreateLoad(
        PtrTy, B.CreateConstInBoundsGEP1_64(PtrTy, RunV->getArg(2), I),
        "out" + std::to_string(I)));

  if (Opts.Range) {
    // The dimension's value for this run: refused outside the range the
    // arenas were planned for (the caller may have written the field).
    llvm::Value *D = B.CreateLoad(I64, dimSlot(State), "dim");
    llvm::Value *K =
        B.CreateSub(D, llvm::ConstantInt::get(I64, Opts.Range->Lo), "dim.k");
    auto *Out = llvm::BasicBlock::Create(Ctx, "dim.out.of.range", RunV);
    auto *In = llvm::BasicBlock::Create(Ctx, "dim.ok", RunV);
    B.CreateCondBr(
        B.CreateICmpUGT(
            K, llvm::ConstantInt::get(I64, Opts.Range->Hi - Opts.Range->Lo)),
        Out, In);
    B.SetInsertPoint(Out);
    B.CreateRet(llvm::ConstantInt::getSigned(I32, StatusDimRange));
    B.SetInsertPoint(In);
    DimK = K;
  }
  if (Opts.Checked) {
    llvm::Value *StepField = B.CreateStructGEP(StateTy, State, 3);
    B.CreateStore(llvm::ConstantInt::getSigned(I32, -1), StepField);
    Guards = std::make_unique<GuardChecks>(M, RunV, sym(""), Plan, ArenaBases,
                                           StepField);
    setCodeAttributes(Guards->paintFunction());
    setCodeAttributes(Guards->checkFunction());
  }
  if (Profile)
    Profile->start(B, State);
  size_t Step = 0;
  for (unsigned S = 0; S < G.nodes().size(); ++S) {
    const Node &N = *G.nodes()[S];
    if (Opts.Checked)
      Guards->paint(B, S);
    if (!L[S].HasCode)
      continue; // a view: no code
    llvm::BasicBlock *Join = branchOn(L[S].RunsWhen);
    if (auto E = L[S].Shares.empty() ? buildNode(N, L[S].Calls, Step)
                                     : buildShares(N, L[S].Shares, Step))
      return E;
    if (!Opts.ShapedOutputs.empty())
      recordArms(N, State);
    if (Join) {
      B.CreateBr(Join);
      B.SetInsertPoint(Join);
    }
    if (L[S].Exit)
      exitIf(*L[S].Exit);
    if (Opts.Checked) {
      StepNames.push_back(N.name());
      Guards->check(B, S, Step);
    }
    if (Profile)
      Profile->record(B, Step);
    ++Step;
  }
  buildStepTables();
  // Outputs that no node writes directly (see MemoryPlan::OutputCopies).
  llvm::Function *Copy = M.getFunction("cuvil_k_copy");
  assert(Copy && "kernel bitcode lacks cuvil_k_copy");
  for (size_t C = 0; C < Plan.OutputCopies.size(); ++C) {
    const auto &[I, V] = Plan.OutputCopies[C];
    llvm::Value *Bytes = Opts.Range
                             ? formulaValue(Opts.Range->CopyBytes[C])
                             : llvm::ConstantInt::get(I64, V->byteSize());
    B.CreateCall(Copy, {pointerTo(V, 0), OutputPtrs[I], Bytes});
  }
  if (Profile) {
    if (!Plan.OutputCopies.empty())
      Profile->record(B, Step);
    Profile->finish(B);
  }
  B.CreateRet(llvm::ConstantInt::get(I32, StatusOk));
  return llvm::Error::success();
}

void EntryBuilder::exitIf(const RunExit &X) {
  llvm::Function *F = B.GetInsertBlock()->getParent();
  auto *Stop = llvm::BasicBlock::Create(Ctx, "run.stop", F);
  auto *Go = llvm::BasicBlock::Create(Ctx, "run.go", F);
  llvm::Value *Byte = B.CreateLoad(B.getInt8Ty(), pointerTo(X.Cond, 0));
  B.CreateCondBr(B.CreateICmpNE(Byte, B.getInt8(0)), Stop, Go);
  B.SetInsertPoint(Stop);
  B.CreateRet(llvm::ConstantInt::getSigned(I32, X.Status));
  B.SetInsertPoint(Go);
}

llvm::BasicBlock *
EntryBuilder::branchOn(const std::vector<RunCondition> &RunsWhen) {
  if (RunsWhen.empty())
    return nullptr;
  llvm::Function *F = B.GetInsertBlock()->getParent();
  auto *Join = llvm::BasicBlock::Create(Ctx, "branch.join", F);
  for (const RunCondition &C : RunsWhen) {
    llvm::Value *Byte = B.CreateLoad(B.getInt8Ty(), pointerTo(C.Cond, 0));
    llvm::Value *Zero = B.getInt8(0);
    llvm::Value *Holds =
        C.When ? B.CreateICmpNE(Byte, Zero) : B.CreateICmpEQ(Byte, Zero);
    auto *Next = llvm::BasicBlock::Create(Ctx, "branch.taken", F, Join);
    B.CreateCondBr(Holds, Next, Join);
    B.SetInsertPoint(Next);
  }
  return Join;
}

void EntryBuilder::buildStepTables() {
  std::vector<std::pair<std::string, std::vector<std::string>>> Tables;
  if (Profile) {
    // The profile's steps (with the output copies), and the ONNX nodes
    // each runs.
    std::vector<std::string> Names, Origins;
    for (const ProfileStep &P : Steps) {
      Names.push_back(P.Name);
      Origins.push_back(fmt::format("{}", fmt::join(P.Origins, ",")));
    }
    Tables = {{"step_name", Names}, {"step_origins", Origins}};
  } else if (Opts.Checked) {
    Tables = {{"step_name", StepNames}};
  }
  for (const auto &[Suffix, Strings] : Tables) {
    llvm::Function *F = buildStepName(M, sym(Suffix), Strings);
    setCodeAttributes(F);
    if (!T.PIC)
      F->setDSOLocal(true);
    Exported.insert(F->getName().str());
  }
}

void EntryBuilder::buildRun() {
  // int cuvil_<name>_run(cuvil_<name>_t *m, const T *in0, ..., T *out0, ...)
  size_t NI = G.inputs().size(), NO = G.outputs().size();
  std::vector<llvm::Type *> Params(1 + NI + NO, PtrTy);
  llvm::Function *F = newFunction(sym("run"), I32, Params);
  B.SetInsertPoint(llvm::BasicBlock::Create(Ctx, "entry", F));
  auto Pack = [&](size_t First, size_t Count, const char *Name) {
    llvm::Value *Arr = B.CreateAlloca(
        llvm::ArrayType::get(PtrTy, std::max<size_t>(Count, 1)), nullptr, Name);
    for (size_t I = 0; I < Count; ++I)
      B.CreateStore(F->getArg(First + I),
                    B.CreateConstInBoundsGEP1_64(PtrTy, Arr, I));
    return Arr;
  };
  llvm::Value *Ins = Pack(1, NI, "inputs");
  llvm::Value *Outs = Pack(1 + NI, NO, "outputs");
  B.CreateRet(B.CreateCall(RunV, {F->getArg(0), Ins, Outs}));
}

llvm::Error EntryBuilder::declareFirmwareKernels() {
  for (const FirmwareKernel &FK : Opts.FirmwareKernels) {
    if (M.getNamedValue(FK.Name))
      return makeError("the kernel '{}' of a custom op clashes with a symbol "
                       "of cuvil's {} kernel library; rename it",
                       FK.Name, T.Name);
    std::vector<llvm::Type *> Params;
    for (FirmwareKernel::Param P : FK.Params)
      Params.push_back(P == FirmwareKernel::Param::Pointer ? PtrTy
                       : P == FirmwareKernel::Param::Int64 ? I64
                                                           : F32);
    auto *F = llvm::Function::Create(
        llvm::FunctionType::get(llvm::Type::getVoidTy(Ctx), Params, false),
        llvm::GlobalValue::ExternalLinkage, FK.Name, M);
    F->addFnAttr(llvm::Attribute::NoUnwind);
    if (!T.PIC)
      F->setDSOLocal(true);
    FirmwareKernels.insert(F);
  }
  return llvm::Error::success();
}

llvm::Error EntryBuilder::build() {
  if (L.size() != G.nodes().size())
    return makeError("internal error: the lowering holds {} nodes, graph "
                     "'{}' {}",
                     L.size(), G.name(), G.nodes().size());
  if (auto E = declareFirmwareKernels())
    return E;
  if (Opts.Profile) {
    if (auto C = profileCounters(T); !C)
      return C.takeError();
    Profile = std::make_unique<ProfileCode>(M, T, StateTy, ProfileRunsField);
  }
  // The static arenas, one per region. A global with an explicit section is
  // never placed in BSS by LLVM, so each arena is defined in module
  // assembly as a NOBITS section: the object carries no bytes for it, and
  // the linker-script fragment places it (NOLOAD) in its region. An
  // absolute symbol NAME_bytes states its size, for a system plan's
  // fragment (cuvilc link-plan) to check that the object is the one it
  // planned for.
  for (size_t A = 0; A < NumArenas; ++A) {
    std::string Region = A < Plan.Arenas.size() ? Plan.Arenas[A].Region : "RAM";
    int64_t Bytes = A < Plan.Arenas.size() ? Plan.Arenas[A].Size : 0;
    auto *Ty = llvm::ArrayType::get(llvm::Type::getInt8Ty(Ctx), Bytes);
    std::string Name = arenaSymbol(Opts.ModelName, Region);
    auto *GV = new llvm::GlobalVariable(
        M, Ty, false, llvm::GlobalValue::ExternalLinkage, nullptr, Name);
    GV->setAlignment(llvm::Align(Plan.Alignment));
    M.appendModuleInlineAsm(nobitsSymbol(
        fmt::format(".cuvil.{}.arena.{}", Opts.ModelName, Region), "aw",
        Plan.Alignment, Name, Bytes,
        Opts.ArenaSizeSymbols ? fmt::format("  .globl {0}_bytes\n"
                                            "  .set {0}_bytes, {1}\n",
                                            Name, Bytes)
                              : std::string()));
    Exported.insert(Name);
    Arenas.push_back(GV);
  }
  // The embedded weights. Their bytes are the object's bulk (MobileNetV2:
  // 14 MB), and nothing in the code depends on them: unless the module
  // itself is wanted (--emit llvm or asm), the section is a NOBITS
  // placeholder of their size, defined in module assembly as the arenas
  // are, and generateObject fills it once the object is whole
  // (fillNobitsSection). LLVM then never holds, emits or copies them.
  if (!Opts.EmbeddedBlob.empty()) {
    const std::string Section = ".cuvil." + Opts.ModelName + ".weights";
    const auto Bytes = static_cast<int64_t>(Opts.EmbeddedBlob.size());
    auto *Ty = llvm::ArrayType::get(llvm::Type::getInt8Ty(Ctx), Bytes);
    llvm::Constant *Init = nullptr;
    if (Opts.WantLLVMIR || Opts.WantAsm) {
      Init = llvm::ConstantDataArray::get(Ctx, Opts.EmbeddedBlob);
    } else {
      Placeholder = Section;
      M.appendModuleInlineAsm(
          nobitsSymbol(Section, "a", Plan.Alignment, sym("weights"), Bytes));
    }
    Blob = new llvm::GlobalVariable(
        M, Ty, true, llvm::GlobalValue::ExternalLinkage, Init, sym("weights"));
    Blob->setAlignment(llvm::Align(Plan.Alignment));
    if (Init)
      Blob->setSection(Section);
    Exported.insert(Blob->getName().str());
  }
  if (!T.PIC) {
    for (llvm::GlobalVariable *GV : Arenas)
      GV->setDSOLocal(true);
    if (Blob)
      Blob->setDSOLocal(true);
  }
  buildInit();
  buildWeightSlots();
  if (Opts.Range)
    buildDims();
  if (!Opts.ShapedOutputs.empty())
    buildShapedOutputs();
  if (auto E = buildRunV())
    return E;
  buildRun();
  return llvm::Error::success();
}

} // namespace cuvil
