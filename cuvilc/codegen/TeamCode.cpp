//===- TeamCode.cpp - Layers cut into shares for the cores ----------------===//
//
// A node with shares (--cores; NodeLowering::Shares) becomes
//
//   static void cuvil_<m>_n<step>_<node>_team(void *ctx, int64_t share) {
//     switch (share) { case 0: <share 0's node function>(ctx[...]); ... }
//   }
//
// and run_v stores the values of run_v the shares need (tensor pointers)
// into a context array on its stack and calls
// cuvil_team_run(team_fn, ctx, shares) of the runtime (cuvil/team.h), which
// runs the shares on the cores and returns once all are done. Each share is
// an ordinary node function, so shares of equal shape (and layers of equal
// shares) share code as nodes do.
//
//===----------------------------------------------------------------------===//
#include "codegen/EntryBuilder.h"

#include <llvm/IR/Module.h>

namespace cuvil {

llvm::Error
EntryBuilder::buildShares(const Node &N,
                          const std::vector<std::vector<KernelCall>> &Shares,
                          size_t Step) {
  const std::string Name = nodeFunctionName(N, Step);
  std::vector<std::pair<llvm::Function *, std::vector<llvm::Value *>>> Fns;
  std::vector<llvm::Value *> Context; // every share's run_v values, once
  for (size_t S = 0; S < Shares.size(); ++S) {
    std::vector<llvm::Value *> Params;
    auto F =
        nodeFunction(N, Shares[S], Name + "_s" + std::to_string(S), Params);
    if (!F)
      return F.takeError();
    for (llvm::Value *P : Params)
      if (std::find(Context.begin(), Context.end(), P) == Context.end())
        Context.push_back(P);
    Fns.emplace_back(*F, std::move(Params));
  }

  // void team_fn(void *ctx, int64_t share)
  auto *Fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(Ctx), {PtrTy, I64}, false),
      llvm::GlobalValue::InternalLinkage, Name + "_team", M);
  setCodeAttributes(Fn);
  Fn->addFnAttr(llvm::Attribute::NoInline);
  auto *Entry = llvm::BasicBlock::Create(Ctx, "entry", Fn);
  auto *Done = llvm::BasicBlock::Create(Ctx, "done", Fn);
  llvm::IRBuilder<> FB(Entry);
  std::vector<llvm::Value *> Loaded;
  for (size_t I = 0; I < Context.size(); ++I)
    Loaded.push_back(
        FB.CreateLoad(Context[I]->getType(),
                      FB.CreateConstInBoundsGEP1_64(PtrTy, Fn->getArg(0), I)));
  llvm::SwitchInst *Switch =
      FB.CreateSwitch(Fn->getArg(1), Done, static_cast<unsigned>(Fns.size()));
  for (size_t S = 0; S < Fns.size(); ++S) {
    auto &[F, Params] = Fns[S];
    if (!F)
      continue; // no work in this share
    auto *Case =
        llvm::BasicBlock::Create(Ctx, "share" + std::to_string(S), Fn, Done);
    Switch->addCase(
        llvm::ConstantInt::get(llvm::cast<llvm::IntegerType>(I64), S), Case);
    FB.SetInsertPoint(Case);
    std::vector<llvm::Value *> Args;
    for (llvm::Value *P : Params)
      Args.push_back(Loaded[static_cast<size_t>(
          std::find(Context.begin(), Context.end(), P) - Context.begin())]);
    FB.CreateCall(F, Args);
    FB.CreateBr(Done);
  }
  FB.SetInsertPoint(Done);
  FB.CreateRetVoid();

  // In run_v: the context array, live only around the team run (its
  // lifetime markers let the backend give every split layer's array the
  // same stack slot), then the team run.
  llvm::IRBuilder<> AB(&RunV->getEntryBlock(), RunV->getEntryBlock().begin());
  const size_t Slots = std::max<size_t>(Context.size(), 1);
  llvm::Type *ArrayTy = llvm::ArrayType::get(PtrTy, Slots);
  llvm::AllocaInst *Array = AB.CreateAlloca(ArrayTy, nullptr, "team.ctx");
  llvm::ConstantInt *Bytes =
      B.getInt64(M.getDataLayout().getTypeAllocSize(ArrayTy).getFixedValue());
  B.CreateLifetimeStart(Array, Bytes);
  for (size_t I = 0; I < Context.size(); ++I)
    B.CreateStore(Context[I], B.CreateConstInBoundsGEP1_64(PtrTy, Array, I));
  llvm::FunctionCallee TeamRun = M.getOrInsertFunction(
      "cuvil_team_run", llvm::FunctionType::get(llvm::Type::getVoidTy(Ctx),
                                                {PtrTy, PtrTy, I64}, false));
  B.CreateCall(TeamRun,
               {Fn, Array, llvm::ConstantInt::get(I64, Shares.size())});
  B.CreateLifetimeEnd(Array, Bytes);
  return llvm::Error::success();
}

} // namespace cuvil
