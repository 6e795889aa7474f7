//===- CheckedCode.cpp - Bounds checks of --checked builds ----------------===//
#include "codegen/CheckedCode.h"

#include "codegen/ModelCodegen.h"
#include "ir/Diagnostic.h"

#include <llvm/IR/IRBuilder.h>

namespace cuvil {

std::vector<Guard> guardsOf(const MemoryPlan &Plan) {
  std::vector<Guard> Gs;
  for (const ArenaBuffer &B : Plan.Buffers)
    if (B.Size > B.Bytes)
      Gs.push_back(
          {B.Arena, B.Offset + B.Bytes, B.Size - B.Bytes, B.First, B.Last});
  return Gs;
}

namespace {

llvm::Function *newInternal(llvm::Module &M, const std::string &Name,
                            llvm::Type *Ret) {
  llvm::LLVMContext &Ctx = M.getContext();
  auto *FT = llvm::FunctionType::get(
      Ret, {llvm::PointerType::get(Ctx, 0), llvm::Type::getInt64Ty(Ctx)},
      false);
  auto *F =
      llvm::Function::Create(FT, llvm::GlobalValue::InternalLinkage, Name, M);
  // One copy, called from every step: keeps run_v small.
  F->addFnAttr(llvm::Attribute::NoInline);
  F->addFnAttr(llvm::Attribute::NoUnwind);
  return F;
}

} // namespace

llvm::Function *buildGuardPaint(llvm::Module &M, const std::string &Name) {
  llvm::LLVMContext &Ctx = M.getContext();
  llvm::Function *F = newInternal(M, Name, llvm::Type::getVoidTy(Ctx));
  llvm::IRBuilder<> B(llvm::BasicBlock::Create(Ctx, "entry", F));
  B.CreateMemSet(F->getArg(0), B.getInt8(GuardCanary), F->getArg(1),
                 llvm::MaybeAlign(1));
  B.CreateRetVoid();
  return F;
}

llvm::Function *buildGuardCheck(llvm::Module &M, const std::string &Name) {
  llvm::LLVMContext &Ctx = M.getContext();
  llvm::Function *F = newInternal(M, Name, llvm::Type::getInt1Ty(Ctx));
  auto *Entry = llvm::BasicBlock::Create(Ctx, "entry", F);
  auto *Loop = llvm::BasicBlock::Create(Ctx, "loop", F);
  auto *Body = llvm::BasicBlock::Create(Ctx, "body", F);
  auto *Intact = llvm::BasicBlock::Create(Ctx, "intact", F);
  auto *Broken = llvm::BasicBlock::Create(Ctx, "broken", F);
  llvm::IRBuilder<> B(Entry);
  llvm::Type *I64 = B.getInt64Ty();
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *I = B.CreatePHI(I64, 2, "i");
  I->addIncoming(B.getInt64(0), Entry);
  B.CreateCondBr(B.CreateICmpEQ(I, F->getArg(1)), Intact, Body);
  B.SetInsertPoint(Body);
  llvm::Value *Byte =
      B.CreateLoad(B.getInt8Ty(), B.CreateGEP(B.getInt8Ty(), F->getArg(0), I));
  I->addIncoming(B.CreateAdd(I, B.getInt64(1)), Body);
  B.CreateCondBr(B.CreateICmpEQ(Byte, B.getInt8(GuardCanary)), Loop, Broken);
  B.SetInsertPoint(Intact);
  B.CreateRet(B.getTrue());
  B.SetInsertPoint(Broken);
  B.CreateRet(B.getFalse());
  return F;
}

llvm::Function *buildStepName(llvm::Module &M, const std::string &Name,
                              const std::vector<std::string> &Names) {
  llvm::LLVMContext &Ctx = M.getContext();
  llvm::PointerType *PtrTy = llvm::PointerType::get(Ctx, 0);
  std::vector<llvm::Constant *> Strings;
  for (size_t I = 0; I <= Names.size(); ++I) {
    // The last entry, "", answers steps out of range.
    auto *Init = llvm::ConstantDataArray::getString(
        Ctx, I < Names.size() ? Names[I] : "", true);
    auto *GV = new llvm::GlobalVariable(M, Init->getType(), true,
                                        llvm::GlobalValue::PrivateLinkage, Init,
                                        Name + ".str");
    GV->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    Strings.push_back(GV);
  }
  auto *TableTy = llvm::ArrayType::get(PtrTy, Strings.size());
  auto *Table = new llvm::GlobalVariable(
      M, TableTy, true, llvm::GlobalValue::PrivateLinkage,
      llvm::ConstantArray::get(TableTy, Strings), Name + ".table");

  llvm::Type *I32 = llvm::Type::getInt32Ty(Ctx);
  auto *F = llvm::Function::Create(llvm::FunctionType::get(PtrTy, {I32}, false),
                                   llvm::GlobalValue::ExternalLinkage, Name, M);
  F->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> B(llvm::BasicBlock::Create(Ctx, "entry", F));
  // Unsigned compare: a negative step is out of range too.
  llvm::Value *Index =
      B.CreateSelect(B.CreateICmpULT(F->getArg(0), B.getInt32(Names.size())),
                     F->getArg(0), B.getInt32(Names.size()));
  llvm::Value *Slot = B.CreateInBoundsGEP(
      TableTy, Table, {B.getInt32(0), B.CreateZExt(Index, B.getInt64Ty())});
  B.CreateRet(B.CreateLoad(PtrTy, Slot));
  return F;
}

GuardChecks::GuardChecks(llvm::Module &M, llvm::Function *RunV,
                         const std::string &Prefix, const MemoryPlan &Plan,
                         std::vector<llvm::Value *> ArenaBases,
                         llvm::Value *StepField)
    : Guards(guardsOf(Plan)), ArenaBases(std::move(ArenaBases)), RunV(RunV) {
  Paint = buildGuardPaint(M, Prefix + "guard_paint");
  Check = buildGuardCheck(M, Prefix + "guard_check");
  llvm::LLVMContext &Ctx = M.getContext();
  Fail = llvm::BasicBlock::Create(Ctx, "bounds.fail", RunV);
  llvm::IRBuilder<> B(Fail);
  FailedStep = B.CreatePHI(B.getInt32Ty(), 4, "step");
  B.CreateStore(FailedStep, StepField);
  B.CreateRet(llvm::ConstantInt::getSigned(B.getInt32Ty(), StatusBounds));
}

void GuardChecks::paint(llvm::IRBuilder<> &B, unsigned NodeIndex) {
  for (const Guard &Gd : Guards)
    if (Gd.First == NodeIndex)
      B.CreateCall(Paint,
                   {B.CreateInBoundsGEP(B.getInt8Ty(), ArenaBases[Gd.Arena],
                                        B.getInt64(Gd.Offset)),
                    B.getInt64(Gd.Bytes)});
}

void GuardChecks::check(llvm::IRBuilder<> &B, unsigned NodeIndex, size_t Step) {
  for (const Guard &Gd : Guards) {
    if (Gd.First > NodeIndex || Gd.Last < NodeIndex)
      continue;
    llvm::Value *Ok = B.CreateCall(
        Check, {B.CreateInBoundsGEP(B.getInt8Ty(), ArenaBases[Gd.Arena],
                                    B.getInt64(Gd.Offset)),
                B.getInt64(Gd.Bytes)});
    auto *Next = llvm::BasicBlock::Create(B.getContext(), "checked", RunV);
    FailedStep->addIncoming(B.getInt32(static_cast<uint32_t>(Step)),
                            B.GetInsertBlock());
    B.CreateCondBr(Ok, Next, Fail);
    B.SetInsertPoint(Next);
  }
}

llvm::Error checkOperandRegion(const Graph &G, const MemoryPlan &Plan,
                               const Node &N, const Value *V, int64_t Extra) {
  const Location &L = Plan.at(V);
  int64_t Region = 0;
  switch (L.B) {
  case Base::Arena: Region = Plan.Arenas[L.Index].Size; break;
  case Base::Weights: Region = Plan.WeightsSize; break;
  case Base::Input: Region = G.inputs()[L.Index]->byteSize(); break;
  case Base::Output: Region = G.outputs()[L.Index]->byteSize(); break;
  }
  int64_t Start = L.Offset + Extra, End = L.Offset + V->byteSize();
  if (L.Offset < 0 || Start < L.Offset || Start > End || End > Region)
    return nodeError(N,
                     "internal error: --checked: operand '{}' at bytes "
                     "[{}, {}) (access from {}) lies outside its region "
                     "of {} bytes",
                     V->name(), L.Offset, End, Start, Region);
  return llvm::Error::success();
}

} // namespace cuvil
