//===- NodeCode.cpp - Each node's kernel calls in LLVM IR -----------------===//
//
// The part of EntryBuilder that turns a node's kernel calls (its
// lowering) into a function of its own, which run_v calls: the calls'
// arguments as LLVM values (tensor addresses from the memory plan,
// constants, and in a build for a range of a dimension the formulas of
// DimCode.cpp), and the node functions shared between equal nodes.
//
//===----------------------------------------------------------------------===//
#include "codegen/EntryBuilder.h"

#include "ir/Diagnostic.h"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

namespace cuvil {

llvm::Value *EntryBuilder::pointerTo(const Value *V, int64_t Extra) {
  const Location &L = Plan.at(V);
  llvm::Value *Base = nullptr;
  switch (L.B) {
  case Base::Arena: Base = ArenaBases[L.Index]; break;
  case Base::Weights: Base = WeightsBase; break;
  case Base::Input: Base = InputPtrs[L.Index]; break;
  case Base::Output: Base = OutputPtrs[L.Index]; break;
  }
  int64_t Off = L.Offset + Extra;
  if (Off == 0)
    return Base;
  // Reused within the block it was computed in (run_v's steps follow one
  // another in one block; elsewhere a new one keeps dominance simple).
  llvm::Instruction *&Known = Addresses[{Base, Off}];
  if (Known && Known->getParent() == B.GetInsertBlock())
    return Known;
  llvm::Value *P = B.CreateInBoundsGEP(llvm::Type::getInt8Ty(Ctx), Base,
                                       llvm::ConstantInt::get(I64, Off));
  if (auto *I = llvm::dyn_cast<llvm::Instruction>(P))
    Known = I;
  return P;
}

llvm::Expected<llvm::Value *> EntryBuilder::argument(const KernelArg &A,
                                                     llvm::Type *Want,
                                                     const Node &N,
                                                     const std::string &K) {
  using Kind = KernelArg::Kind;
  bool WantPtr = Want->isPointerTy();
  bool Ok = (A.K == Kind::Int && Want->isIntegerTy()) ||
            (A.K == Kind::Float && Want->isFloatTy()) ||
            (A.K != Kind::Int && A.K != Kind::Float && WantPtr);
  if (!Ok)
    return nodeError(N,
                     "internal error: argument kind does not match the "
                     "signature of kernel {}",
                     K);
  if (Opts.Checked && A.K == Kind::Tensor)
    if (auto E = checkOperandRegion(G, Plan, N, A.V, A.ByteOffset))
      return E;
  if (!A.Dyn.empty())
    return dynamicArgument(A, Want);
  switch (A.K) {
  case Kind::Tensor: return pointerTo(A.V, A.ByteOffset);
  case Kind::Null: return llvm::ConstantPointerNull::get(PtrTy);
  case Kind::Int:
    return llvm::ConstantInt::getSigned(llvm::cast<llvm::IntegerType>(Want),
                                        A.I);
  case Kind::Float: return llvm::ConstantFP::get(F32, A.F);
  case Kind::IntArray: {
    // One constant per distinct array, so that equal nodes stay equal.
    auto [Slot, New] = IntArrays.try_emplace(A.Array, nullptr);
    if (!New)
      return Slot->second;
    auto *Init = llvm::ConstantDataArray::get(
        Ctx, llvm::ArrayRef(reinterpret_cast<const uint64_t *>(A.Array.data()),
                            A.Array.size()));
    auto *GV = new llvm::GlobalVariable(
        M, Init->getType(), true, llvm::GlobalValue::PrivateLinkage, Init,
        sym("dims." + std::to_string(ArrayCount++)));
    GV->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    GV->setAlignment(llvm::Align(8));
    Slot->second = GV;
    return GV;
  }
  }
  return nullptr;
}

/// One node's kernel calls, in a function of their own that run_v calls
/// with the node's tensor pointers (every argument that is not a
/// constant). The kernels are inlined into it and specialise on the
/// constants; the function itself is never inlined into run_v, so each
/// layer is optimised and register-allocated alone (its code does not
/// depend on its neighbours), and layers of equal shape compile to equal
/// functions, which the optimiser then merges.
llvm::Error EntryBuilder::buildNode(const Node &N,
                                    const std::vector<KernelCall> &Calls,
                                    size_t Step) {
  std::vector<llvm::Value *> Params; // run_v's values the calls need
  auto F = nodeFunction(N, Calls, nodeFunctionName(N, Step), Params);
  if (!F)
    return F.takeError();
  if (*F)
    B.CreateCall(*F, Params);
  return llvm::Error::success();
}

llvm::Expected<llvm::Function *>
EntryBuilder::nodeFunction(const Node &N, const std::vector<KernelCall> &Calls,
                           const std::string &Name,
                           std::vector<llvm::Value *> &Params) {
  LoweredCalls Lowered;
  if (auto E = lowerCalls(N, Calls, Lowered, Params))
    return E;
  if (Lowered.empty())
    return nullptr;
  NodeKey Key;
  for (const auto &[K, Args] : Lowered) {
    Key.push_back({K, SIZE_MAX});
    for (llvm::Value *A : Args)
      Key.push_back(
          llvm::isa<llvm::Constant>(A)
              ? std::make_pair(static_cast<const void *>(A), size_t(0))
              : std::make_pair(
                    nullptr, size_t(std::find(Params.begin(), Params.end(), A) -
                                    Params.begin())));
  }
  if (auto It = NodeFunctions.find(Key); It != NodeFunctions.end())
    return It->second;

  std::vector<llvm::Type *> Types;
  for (llvm::Value *P : Params)
    Types.push_back(P->getType());
  auto *F = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(Ctx), Types, false),
      llvm::GlobalValue::InternalLinkage, Name, M);
  setCodeAttributes(F);
  F->addFnAttr(llvm::Attribute::NoInline);
  llvm::IRBuilder<> FB(llvm::BasicBlock::Create(Ctx, "entry", F));
  std::vector<llvm::Value *> Args;
  for (llvm::Argument &A : F->args())
    Args.push_back(&A);
  emitCalls(FB, std::move(Lowered), Params, Args);
  FB.CreateRetVoid();
  NodeFunctions.emplace(std::move(Key), F);
  return F;
}

std::string EntryBuilder::nodeFunctionName(const Node &N, size_t Step) const {
  // A local symbol per node: nm and profilers show the layers by name.
  // Any bytes in, [A-Za-z0-9_] out, and at most 200 of them (a 10 KB name
  // would otherwise be a 10 KB symbol).
  std::string Label = N.name().substr(0, 200);
  for (char &C : Label)
    if (!std::isalnum(static_cast<unsigned char>(C)))
      C = '_';
  return sym(fmt::format("n{}_{}", Step, Label));
}

void EntryBuilder::emitCalls(llvm::IRBuilder<> &FB, LoweredCalls Calls,
                             const std::vector<llvm::Value *> &Params,
                             llvm::ArrayRef<llvm::Value *> Values) {
  for (auto &[K, Args] : Calls) {
    for (llvm::Value *&A : Args)
      if (!llvm::isa<llvm::Constant>(A))
        A = Values[static_cast<size_t>(
            std::find(Params.begin(), Params.end(), A) - Params.begin())];
    // Inline every kernel so it specialises on its constants (the
    // firmware's own are only called).
    llvm::CallInst *Call = FB.CreateCall(K, Args);
    if (!FirmwareKernels.count(K))
      Call->addFnAttr(llvm::Attribute::AlwaysInline);
  }
}

llvm::Error EntryBuilder::lowerCalls(const Node &N,
                                     const std::vector<KernelCall> &Calls,
                                     LoweredCalls &Lowered,
                                     std::vector<llvm::Value *> &Params) {
  for (const KernelCall &C : Calls) {
    // A copy whose source the planner already put at its destination
    // (a Concat input computed into its slice) is no work at all.
    if (C.IsCopy && Plan.sameStorage(C.Args[0].V, C.Args[0].ByteOffset,
                                     C.Args[1].V, C.Args[1].ByteOffset))
      continue;
    llvm::Function *K = M.getFunction(C.Kernel);
    if (!K || (K->isDeclaration() && !FirmwareKernels.count(K)))
      return nodeError(N,
                       "internal error: kernel {} is missing from the "
                       "{} kernel library",
                       C.Kernel, T.Name);
    if (K->arg_size() != C.Args.size())
      return nodeError(N,
                       "internal error: kernel {} takes {} arguments, "
                       "lowering passed {}",
                       C.Kernel, K->arg_size(), C.Args.size());
    std::vector<llvm::Value *> Args;
    for (size_t I = 0; I < C.Args.size(); ++I) {
      auto A = argument(C.Args[I], K->getArg(I)->getType(), N, C.Kernel);
      if (!A)
        return A.takeError();
      Args.push_back(*A);
      if (!llvm::isa<llvm::Constant>(*A) &&
          std::find(Params.begin(), Params.end(), *A) == Params.end())
        Params.push_back(*A);
    }
    Lowered.emplace_back(K, std::move(Args));
  }
  return llvm::Error::success();
}

} // namespace cuvil
