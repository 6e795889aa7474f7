//===- WeightSlots.cpp - A/B weight slots of the entry points -------------===//
//
// cuvil_<name>_init_ab, _switch_weights, _active_slot and _active_sha256:
// thin model-specific wrappers around runtime-baremetal/lib/slots.c, which
// keeps the slots in the cuvil_slots_t at the end of the instance; and
// init_signed / switch_weights_signed, which first check the blob's
// signature with the firmware's key (cuvil_blob_verify_signature).
//
//===----------------------------------------------------------------------===//
#include "codegen/EntryBuilder.h"

namespace cuvil {

void EntryBuilder::requireReady(llvm::Function *F, llvm::Value *State,
                                llvm::Value *IfNull, llvm::Value *IfNotReady) {
  auto *NullBlock = llvm::BasicBlock::Create(Ctx, "null", F);
  auto *NotReady = llvm::BasicBlock::Create(Ctx, "not.ready", F);
  auto *Check = llvm::BasicBlock::Create(Ctx, "check", F);
  auto *Ready = llvm::BasicBlock::Create(Ctx, "ready", F);
  B.CreateCondBr(B.CreateIsNull(State), NullBlock, Check);
  B.SetInsertPoint(NullBlock);
  B.CreateRet(IfNull);
  B.SetInsertPoint(NotReady);
  B.CreateRet(IfNotReady);
  B.SetInsertPoint(Check);
  llvm::Value *Magic = B.CreateLoad(I32, B.CreateStructGEP(StateTy, State, 1));
  B.CreateCondBr(B.CreateICmpEQ(Magic, B.getInt32(ReadyMagic)), Ready,
                 NotReady);
  B.SetInsertPoint(Ready);
}

std::pair<llvm::Value *, llvm::Value *>
EntryBuilder::blobOrEmbedded(llvm::Value *Ptr, llvm::Value *Size) {
  if (!Blob)
    return {Ptr, Size};
  llvm::Value *UseEmbedded = B.CreateIsNull(Ptr);
  return {B.CreateSelect(UseEmbedded, Blob, Ptr),
          B.CreateSelect(UseEmbedded,
                         llvm::ConstantInt::get(I64, Opts.EmbeddedBlob.size()),
                         Size)};
}

void EntryBuilder::buildWeightSlots() {
  auto Status = [&](int S) { return llvm::ConstantInt::getSigned(I32, S); };

  // int init_ab(m, arenas, primary, primary_size, fallback, fallback_size):
  // init with the primary blob; if that fails, with the fallback, and the
  // slots record why the primary was refused.
  {
    llvm::Function *F = newFunction(sym("init_ab"), I32,
                                    {PtrTy, PtrTy, PtrTy, I64, PtrTy, I64});
    B.SetInsertPoint(llvm::BasicBlock::Create(Ctx, "entry", F));
    auto *Done = llvm::BasicBlock::Create(Ctx, "primary.ok", F);
    auto *Fallback = llvm::BasicBlock::Create(Ctx, "fallback", F);
    auto *Failed = llvm::BasicBlock::Create(Ctx, "fallback.refused", F);
    auto *Took = llvm::BasicBlock::Create(Ctx, "fallback.ok", F);
    llvm::Value *State = F->getArg(0), *Arenas = F->getArg(1);
    llvm::Value *Why =
        B.CreateCall(Init, {State, Arenas, F->getArg(2), F->getArg(3)});
    B.CreateCondBr(B.CreateICmpEQ(Why, Status(StatusOk)), Done, Fallback);
    B.SetInsertPoint(Done);
    B.CreateRet(Status(StatusOk));
    B.SetInsertPoint(Fallback);
    llvm::Value *Rc =
        B.CreateCall(Init, {State, Arenas, F->getArg(4), F->getArg(5)});
    B.CreateCondBr(B.CreateICmpEQ(Rc, Status(StatusOk)), Took, Failed);
    B.SetInsertPoint(Failed);
    B.CreateRet(Rc);
    B.SetInsertPoint(Took);
    B.CreateCall(M.getFunction("cuvil_slots_fell_back"),
                 {slots(State), F->getArg(2), F->getArg(3), Why});
    B.CreateRet(Status(StatusOk));
  }

  // int switch_weights(m, weights, weights_size): NULL is the embedded
  // blob, where there is one.
  {
    llvm::Function *F =
        newFunction(sym("switch_weights"), I32, {PtrTy, PtrTy, I64});
    auto *Entry = llvm::BasicBlock::Create(Ctx, "entry", F);
    B.SetInsertPoint(Entry);
    llvm::Value *State = F->getArg(0);
    requireReady(F, State, Status(StatusNullArgument),
                 Status(StatusNotInitialized));
    auto [BlobPtr, BlobSize] = blobOrEmbedded(F->getArg(1), F->getArg(2));
    // cuvil_slots_model_t: what this model needs of a blob.
    std::vector<llvm::Constant *> Sizes;
    for (size_t A = 0; A < NumArenas; ++A)
      Sizes.push_back(llvm::ConstantInt::get(
          I64, A < Plan.Arenas.size() ? Plan.Arenas[A].Size : 0));
    auto *SizesTy = llvm::ArrayType::get(I64, NumArenas);
    auto *ArenaBytes = new llvm::GlobalVariable(
        M, SizesTy, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(SizesTy, Sizes), sym("arena_bytes"));
    auto *ModelTy =
        llvm::StructType::get(Ctx, {I64, I64, I64, PtrTy, PtrTy, I32});
    llvm::IRBuilder<> EntryB(Entry, Entry->begin());
    llvm::Value *Model = EntryB.CreateAlloca(ModelTy, nullptr, "model");
    llvm::Value *Fields[] = {llvm::ConstantInt::get(I64, Opts.StructureHash),
                             llvm::ConstantInt::get(I64, Plan.Alignment),
                             llvm::ConstantInt::get(I64, Opts.WeightsDataSize),
                             arenaSlot(State, 0),
                             ArenaBytes,
                             B.getInt32(static_cast<uint32_t>(NumArenas))};
    for (unsigned I = 0; I < std::size(Fields); ++I)
      B.CreateStore(Fields[I], B.CreateStructGEP(ModelTy, Model, I));
    B.CreateRet(
        B.CreateCall(M.getFunction("cuvil_slots_switch"),
                     {slots(State), B.CreateStructGEP(StateTy, State, 0), Model,
                      BlobPtr, BlobSize}));
  }

  // int switch_weights_signed(m, weights, weights_size, key, key_len) and
  // int init_signed(m, arenas, weights, weights_size, key, key_len): the
  // blob (NULL: the embedded one) must be signed with the key, then
  // switch_weights / init take it. An external-weights build given no blob
  // leaves the refusal to init (CUVIL_ERR_NO_WEIGHTS).
  llvm::Function *Verify = M.getFunction("cuvil_blob_verify_signature");
  assert(Verify && "kernel bitcode lacks cuvil_blob_verify_signature");
  llvm::Function *Switch = M.getFunction(sym("switch_weights"));
  for (bool IsInit : {false, true}) {
    std::vector<llvm::Type *> Params = {PtrTy, PtrTy, I64, PtrTy, I64};
    if (IsInit)
      Params.insert(Params.begin() + 1, PtrTy); // the arenas
    llvm::Function *F = newFunction(
        sym(IsInit ? "init_signed" : "switch_weights_signed"), I32, Params);
    unsigned W = IsInit ? 2 : 1; // the blob's argument
    B.SetInsertPoint(llvm::BasicBlock::Create(Ctx, "entry", F));
    auto *Check = llvm::BasicBlock::Create(Ctx, "check", F);
    auto *Take = llvm::BasicBlock::Create(Ctx, "take", F);
    auto *Refused = llvm::BasicBlock::Create(Ctx, "refused", F);
    auto [BlobPtr, BlobSize] = blobOrEmbedded(F->getArg(W), F->getArg(W + 1));
    B.CreateCondBr(B.CreateIsNull(BlobPtr), Take, Check);
    B.SetInsertPoint(Check);
    llvm::Value *Rc = B.CreateCall(
        Verify, {BlobPtr, BlobSize, F->getArg(W + 2), F->getArg(W + 3)});
    B.CreateCondBr(B.CreateICmpEQ(Rc, Status(StatusOk)), Take, Refused);
    B.SetInsertPoint(Refused);
    B.CreateRet(Rc);
    B.SetInsertPoint(Take);
    std::vector<llvm::Value *> Args;
    for (unsigned I = 0; I < W + 2; ++I)
      Args.push_back(F->getArg(I));
    B.CreateRet(B.CreateCall(IsInit ? Init : Switch, Args));
  }

  // int active_slot(m): 0 or 1.
  {
    llvm::Function *F = newFunction(sym("active_slot"), I32, {PtrTy});
    B.SetInsertPoint(llvm::BasicBlock::Create(Ctx, "entry", F));
    llvm::Value *State = F->getArg(0);
    requireReady(F, State, Status(StatusNullArgument),
                 Status(StatusNotInitialized));
    B.CreateRet(
        B.CreateLoad(I32, B.CreateStructGEP(slotsType(), slots(State), 3)));
  }

  // const uint8_t *active_sha256(m): NULL before a successful init.
  {
    llvm::Function *F = newFunction(sym("active_sha256"), PtrTy, {PtrTy});
    B.SetInsertPoint(llvm::BasicBlock::Create(Ctx, "entry", F));
    llvm::Value *State = F->getArg(0);
    llvm::Value *Null = llvm::ConstantPointerNull::get(PtrTy);
    requireReady(F, State, Null, Null);
    B.CreateRet(
        B.CreateCall(M.getFunction("cuvil_slots_sha256"), {slots(State)}));
  }
}

} // namespace cuvil
