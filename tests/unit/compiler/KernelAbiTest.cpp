//===- KernelAbiTest.cpp - The typed kernel ABI against the kernels -------===//
//
// The ABI generated from cuvil/kernels.h must match what the kernel
// libraries really define (every target's embedded bitcode), and lowering
// real models must only call kernels the ABI declares.
//
//===----------------------------------------------------------------------===//
#include "lowering/KernelAbi.h"
#include "codegen/KernelLibrary.h"
#include "driver/Driver.h"
#include "ops/LowerGraph.h"
#include "passes/Pass.h"

#include <gtest/gtest.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Module.h>

#include <cstring>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <sstream>

using namespace cuvil;

namespace {

/// The kernel bitcode of each embedded library, read lazily (declarations
/// and signatures only).
class Libraries {
public:
  llvm::Module &get(llvm::StringRef Target) {
    auto &M = Modules[Target.str()];
    if (!M) {
      auto Bitcode = kernelBitcode(Target);
      EXPECT_TRUE(Bitcode.has_value()) << Target.str();
      auto Lazy = llvm::getLazyBitcodeModule(
          llvm::MemoryBufferRef(*Bitcode, Target), Ctx);
      EXPECT_TRUE(bool(Lazy)) << llvm::toString(Lazy.takeError());
      M = std::move(*Lazy);
    }
    return *M;
  }

private:
  llvm::LLVMContext Ctx;
  std::map<std::string, std::unique_ptr<llvm::Module>> Modules;
};

/// Why F does not have the parameters Params ('p', 'i', 'f' per
/// parameter), or "" when it does.
std::string mismatch(const llvm::Function &F, llvm::StringRef Params) {
  if (F.arg_size() != Params.size())
    return fmt::format("{} parameters, the ABI declares {}", F.arg_size(),
                       Params.size());
  for (size_t I = 0; I < Params.size(); ++I) {
    llvm::Type *T = F.getArg(I)->getType();
    bool Ok = Params[I] == 'p'   ? T->isPointerTy()
              : Params[I] == 'i' ? T->isIntegerTy(64)
                                 : T->isFloatTy();
    if (!Ok)
      return fmt::format("parameter {} is not of kind '{}'", I, Params[I]);
  }
  return "";
}

TEST(KernelAbi, EveryKernelResolvesInEveryLibrary) {
  Libraries L;
  ASSERT_FALSE(kernelLibraries().empty());
  ASSERT_GT(kabi::kernelSignatures().size(), 500u);
  for (llvm::StringRef Target : kernelLibraries()) {
    llvm::Module &M = L.get(Target);
    for (const kabi::KernelSignature &S : kabi::kernelSignatures()) {
      const llvm::Function *F = M.getFunction(S.Name);
      if (!F || F->isDeclaration()) {
        ADD_FAILURE() << Target.str() << ": kernel " << S.Name
                      << " is not defined";
        continue;
      }
      EXPECT_EQ(mismatch(*F, S.Params), "")
          << Target.str() << ": kernel " << S.Name;
    }
  }
}

TEST(KernelAbi, ModelsLowerToDeclaredKernels) {
  Libraries L;
  size_t Checked = 0;
  for (const char *Model :
       {"conv_variants", "dwsep", "fire", "inception", "matmul", "pools",
        "shape_ops", "standalone_bn", "activations", "broadcast"}) {
    for (llvm::StringRef Target : {"a78", "u74-mc", "host"}) {
      SCOPED_TRACE(fmt::format("{} for {}", Model, Target.str()));
      PipelineOptions PO; // packed kernels as `cuvilc build` chooses them
      PO.PackPanel = kernelConstant(Target, "cuvil_k_pack_mr").value_or(0);
      std::ostringstream Log;
      auto G =
          loadModel(fmt::format("{}/{}.onnx", CUVIL_TEST_MODELS_DIR, Model), {},
                    {}, Log, PO);
      ASSERT_TRUE(bool(G)) << llvm::toString(G.takeError());
      auto Lowered = lowerGraph(**G); // checks each call against the ABI
      ASSERT_TRUE(bool(Lowered)) << llvm::toString(Lowered.takeError());
      for (const NodeLowering &NL : *Lowered)
        for (const KernelCall &C : NL.Calls) {
          const kabi::KernelSignature *S = kabi::findKernel(C.Kernel);
          ASSERT_NE(S, nullptr) << C.Kernel;
          const llvm::Function *F = L.get(Target).getFunction(C.Kernel);
          ASSERT_NE(F, nullptr) << C.Kernel;
          EXPECT_EQ(mismatch(*F, S->Params), "") << C.Kernel;
          ++Checked;
        }
    }
  }
  EXPECT_GT(Checked, 100u);
}

TEST(KernelAbi, BuildersAndDecoders) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {1, 4}, ValueKind::Input);
  Value *Y = G.addValue("y", DType::F32, {1, 4}, ValueKind::Intermediate);
  KernelCall C = kabi::ClipF32{.x = X, .y = Y, .n = 4, .lo = 0, .hi = 6}.call();
  EXPECT_EQ(C.Kernel, "cuvil_k_clip_f32");
  ASSERT_EQ(C.Args.size(), 5u);
  EXPECT_FALSE(bool(kabi::checkKernelCall(C)));
  kabi::ClipF32 D = kabi::ClipF32::from(C);
  EXPECT_EQ(D.x.V, X);
  EXPECT_EQ(D.y.V, Y);
  EXPECT_EQ(D.n, 4);
  EXPECT_EQ(D.hi, 6.0f);

  // A group: the kernel is chosen by name.
  KernelCall U =
      kabi::XYNGroup{.Kernel = "cuvil_k_exp_f32", .x = X, .y = Y, .n = 4}
          .call();
  EXPECT_EQ(kabi::ExpF32::from(U).n, 4);
  EXPECT_TRUE(kabi::XYNGroup::contains("cuvil_k_cast_f32_i64"));
  EXPECT_FALSE(kabi::XYNGroup::contains("cuvil_k_conv2d_f32"));

  // Absent optional operands are null pointers.
  KernelCall Gemm = kabi::GemmF32{.a = X, .b = X, .c = nullptr, .y = Y}.call();
  EXPECT_EQ(kabi::GemmF32::from(Gemm).c.K, KernelArg::Kind::Null);
  // What does not fit a prototype is reported.
  Gemm.Args.pop_back();
  EXPECT_EQ(llvm::toString(kabi::checkKernelCall(Gemm)),
            "internal error: kernel cuvil_k_gemm_f32 takes 15 arguments, "
            "lowering passed 14");
  C.Kernel = "cuvil_k_no_such_kernel";
  EXPECT_EQ(llvm::toString(kabi::checkKernelCall(C)),
            "internal error: kernel cuvil_k_no_such_kernel is not declared in "
            "cuvil/kernels.h");
}

} // namespace
