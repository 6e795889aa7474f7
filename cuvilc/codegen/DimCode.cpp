//===- DimCode.cpp - Entry points of a build for a range of a dimension ---===//
//
// A model built with `--dim seq=LO..HI` runs any length in the range: its
// kernel arguments that vary with the dimension are computed at run time
// from their formulas (KernelArg::Dyn), and the instance keeps the value
// for the next run. This file builds what the caller uses for that:
//
//   int cuvil_<name>_set_dims(cuvil_<name>_t *m, const int64_t *dims)
//   int cuvil_<name>_input_shape(const cuvil_<name>_t *m, unsigned i,
//                                int64_t *shape)   (and output_shape)
//   unsigned long cuvil_<name>_input_bytes(const cuvil_<name>_t *m,
//                                          unsigned i)   (and output_bytes)
//
// and the formulas' values inside run_v.
//
// A model whose If gives a graph output different shapes in its branches
// (under a run-time condition) has output_shape and output_bytes too: run
// records the branch it took for each such output in the instance
// (output_arm), and they give the shape of that branch.
//
//===----------------------------------------------------------------------===//
#include "codegen/EntryBuilder.h"

#include <algorithm>

namespace cuvil {

llvm::Value *EntryBuilder::evaluate(llvm::IRBuilder<> &FB, const DimFormula &F,
                                    llvm::Value *K) {
  if (!F.Table.empty()) {
    llvm::GlobalVariable *&GV = FormulaTables[F];
    if (!GV) {
      auto *Init = llvm::ConstantDataArray::get(
          Ctx,
          llvm::ArrayRef(reinterpret_cast<const uint64_t *>(F.Table.data()),
                         F.Table.size()));
      GV = new llvm::GlobalVariable(M, Init->getType(), true,
                                    llvm::GlobalValue::PrivateLinkage, Init,
                                    sym("dim.table"));
      GV->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
      GV->setAlignment(llvm::Align(8));
    }
    return FB.CreateLoad(
        I64, FB.CreateInBoundsGEP(GV->getValueType(), GV, {FB.getInt64(0), K}));
  }
  // V0 + D1*k + D2*(k*(k-1)/2): k*(k-1) is even, so the shift is exact.
  llvm::Value *V = FB.getInt64(F.V0);
  if (F.D1)
    V = FB.CreateAdd(V, FB.CreateMul(K, FB.getInt64(F.D1)));
  if (F.D2) {
    llvm::Value *Pairs = FB.CreateLShr(
        FB.CreateMul(K, FB.CreateSub(K, FB.getInt64(1))), FB.getInt64(1));
    V = FB.CreateAdd(V, FB.CreateMul(Pairs, FB.getInt64(F.D2)));
  }
  return V;
}

llvm::Value *EntryBuilder::formulaValue(const DimFormula &F) {
  assert(DimK && "a formula outside run_v");
  llvm::Value *&V = FormulaValues[{F, B.GetInsertBlock()}];
  if (!V)
    V = evaluate(B, F, DimK);
  return V;
}

llvm::Value *EntryBuilder::dynamicArgument(const KernelArg &A,
                                           llvm::Type *Want) {
  using Kind = KernelArg::Kind;
  if (A.K == Kind::Int)
    return B.CreateSExtOrTrunc(formulaValue(A.Dyn[0]), Want);
  if (A.K == Kind::Tensor)
    return B.CreateInBoundsGEP(B.getInt8Ty(), pointerTo(A.V, 0),
                               formulaValue(A.Dyn[0]));
  // IntArray: a stack array of run_v (allocated in its entry block, so it
  // is part of the fixed frame), filled where the call is.
  assert(A.K == Kind::IntArray && A.Dyn.size() == A.Array.size());
  llvm::IRBuilder<> EntryB(&RunV->getEntryBlock(),
                           RunV->getEntryBlock().begin());
  auto *Ty = llvm::ArrayType::get(I64, A.Array.size());
  llvm::Value *Arr = EntryB.CreateAlloca(Ty, nullptr, "dims.dyn");
  for (size_t I = 0; I < A.Array.size(); ++I)
    B.CreateStore(formulaValue(A.Dyn[I]),
                  B.CreateConstInBoundsGEP2_64(Ty, Arr, 0, I));
  return Arr;
}

llvm::SwitchInst *EntryBuilder::tensorQuery(llvm::IRBuilder<> &FB,
                                            llvm::Function *F, bool IsShape,
                                            size_t Count) {
  auto Status = [&](int S) { return llvm::ConstantInt::getSigned(I32, S); };
  FB.SetInsertPoint(llvm::BasicBlock::Create(Ctx, "entry", F));
  auto *Bad = llvm::BasicBlock::Create(Ctx, "bad", F);
  auto *Given = llvm::BasicBlock::Create(Ctx, "given", F);
  llvm::Value *Null = FB.CreateIsNull(F->getArg(0));
  if (IsShape)
    Null = FB.CreateOr(Null, FB.CreateIsNull(F->getArg(2)));
  FB.CreateCondBr(Null, Bad, Given);
  FB.SetInsertPoint(Bad);
  if (IsShape)
    FB.CreateRet(Status(StatusNullArgument));
  else
    FB.CreateRet(FB.getInt64(0));
  FB.SetInsertPoint(Given);
  auto *NoSuch = llvm::BasicBlock::Create(Ctx, "no.such", F);
  llvm::SwitchInst *Sw =
      FB.CreateSwitch(F->getArg(1), NoSuch, static_cast<unsigned>(Count));
  FB.SetInsertPoint(NoSuch);
  if (IsShape)
    FB.CreateRet(Status(StatusIndex));
  else
    FB.CreateRet(FB.getInt64(0));
  return Sw;
}

void EntryBuilder::buildDims() {
  const DimRangeCode &R = *Opts.Range;
  auto Status = [&](int S) { return llvm::ConstantInt::getSigned(I32, S); };

  // int set_dims(m, dims): dims[0] within [Lo, Hi], else DIM_RANGE and the
  // instance keeps its value.
  {
    llvm::Function *F = newFunction(sym("set_dims"), I32, {PtrTy, PtrTy});
    B.SetInsertPoint(llvm::BasicBlock::Create(Ctx, "entry", F));
    auto *Null = llvm::BasicBlock::Create(Ctx, "null", F);
    auto *Given = llvm::BasicBlock::Create(Ctx, "given", F);
    auto *Out = llvm::BasicBlock::Create(Ctx, "out.of.range", F);
    auto *Set = llvm::BasicBlock::Create(Ctx, "set", F);
    llvm::Value *State = F->getArg(0), *Dims = F->getArg(1);
    B.CreateCondBr(B.CreateOr(B.CreateIsNull(State), B.CreateIsNull(Dims)),
                   Null, Given);
    B.SetInsertPoint(Null);
    B.CreateRet(Status(StatusNullArgument));
    B.SetInsertPoint(Given);
    llvm::Value *D = B.CreateLoad(I64, Dims);
    llvm::Value *K = B.CreateSub(D, B.getInt64(R.Lo));
    B.CreateCondBr(B.CreateICmpUGT(K, B.getInt64(R.Hi - R.Lo)), Out, Set);
    B.SetInsertPoint(Out);
    B.CreateRet(Status(StatusDimRange));
    B.SetInsertPoint(Set);
    B.CreateStore(D, dimSlot(State));
    B.CreateRet(Status(StatusOk));
  }

  // For the inputs and the outputs: shape(m, i, shape) writes tensor i's
  // dimensions at the instance's value and returns its rank; bytes(m, i)
  // returns its size (0 for a bad index or instance).
  auto Queries = [&](const char *Kind,
                     const std::vector<std::vector<DimFormula>> &Shapes,
                     const std::vector<DimFormula> &Bytes) {
    llvm::Function *Shape = newFunction(sym(std::string(Kind) + "_shape"), I32,
                                        {PtrTy, I32, PtrTy});
    llvm::Function *Size =
        newFunction(sym(std::string(Kind) + "_bytes"), I64, {PtrTy, I32});
    for (llvm::Function *F : {Shape, Size}) {
      bool IsShape = F == Shape;
      llvm::SwitchInst *Sw = tensorQuery(B, F, IsShape, Bytes.size());
      for (size_t I = 0; I < Bytes.size(); ++I) {
        auto *Case = llvm::BasicBlock::Create(Ctx, "tensor", F);
        Sw->addCase(B.getInt32(static_cast<uint32_t>(I)), Case);
        B.SetInsertPoint(Case);
        llvm::Value *K = B.CreateSub(B.CreateLoad(I64, dimSlot(F->getArg(0))),
                                     B.getInt64(R.Lo));
        if (!IsShape) {
          B.CreateRet(evaluate(B, Bytes[I], K));
          continue;
        }
        for (size_t D = 0; D < Shapes[I].size(); ++D)
          B.CreateStore(evaluate(B, Shapes[I][D], K),
                        B.CreateConstInBoundsGEP1_64(I64, F->getArg(2), D));
        B.CreateRet(B.getInt32(static_cast<uint32_t>(Shapes[I].size())));
      }
    }
  };
  Queries("input", R.InputShapes, R.InputBytes);
  Queries("output", R.OutputShapes, R.OutputBytes);
}

void EntryBuilder::recordArms(const Node &N, llvm::Value *State) {
  for (const BranchShapedOutput &O : Opts.ShapedOutputs)
    if (G.outputs()[O.Output]->producer() == &N)
      B.CreateStore(B.CreateLoad(B.getInt8Ty(), pointerTo(O.Cond, 0)),
                    armSlot(B, State, O.Output));
}

void EntryBuilder::buildShapedOutputs() {
  // shape(m, i, shape) writes output i's dimensions after the last run and
  // returns its rank; bytes(m, i) returns its size (0 for a bad index or
  // instance). Outputs of one shape give it.
  llvm::Function *Shape =
      newFunction(sym("output_shape"), I32, {PtrTy, I32, PtrTy});
  llvm::Function *Size = newFunction(sym("output_bytes"), I64, {PtrTy, I32});
  for (llvm::Function *F : {Shape, Size}) {
    bool IsShape = F == Shape;
    llvm::IRBuilder<> FB(Ctx);
    llvm::SwitchInst *Sw = tensorQuery(FB, F, IsShape, G.outputs().size());
    llvm::Value *State = F->getArg(0);
    // Returns a shape (writing it) or a byte count.
    auto Answer = [&](const std::vector<int64_t> &S, int64_t Bytes) {
      if (!IsShape) {
        FB.CreateRet(FB.getInt64(Bytes));
        return;
      }
      for (size_t D = 0; D < S.size(); ++D)
        FB.CreateStore(FB.getInt64(S[D]),
                       FB.CreateConstInBoundsGEP1_64(I64, F->getArg(2), D));
      FB.CreateRet(FB.getInt32(static_cast<uint32_t>(S.size())));
    };
    for (size_t I = 0; I < G.outputs().size(); ++I) {
      auto *Case = llvm::BasicBlock::Create(Ctx, "output", F);
      Sw->addCase(FB.getInt32(static_cast<uint32_t>(I)), Case);
      FB.SetInsertPoint(Case);
      auto It = std::find_if(
          Opts.ShapedOutputs.begin(), Opts.ShapedOutputs.end(),
          [&](const BranchShapedOutput &O) { return O.Output == I; });
      if (It == Opts.ShapedOutputs.end()) {
        const Value *V = G.outputs()[I];
        Answer(V->shape(), V->byteSize());
        continue;
      }
      auto *Then = llvm::BasicBlock::Create(Ctx, "then", F);
      auto *Else = llvm::BasicBlock::Create(Ctx, "else", F);
      llvm::Value *Arm = FB.CreateLoad(FB.getInt8Ty(), armSlot(FB, State, I));
      FB.CreateCondBr(FB.CreateICmpNE(Arm, FB.getInt8(0)), Then, Else);
      FB.SetInsertPoint(Then);
      Answer(It->ThenShape, It->ThenBytes);
      FB.SetInsertPoint(Else);
      Answer(It->ElseShape, It->ElseBytes);
    }
  }
}

} // namespace cuvil
