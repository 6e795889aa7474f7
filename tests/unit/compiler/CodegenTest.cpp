//===- CodegenTest.cpp - Objects for every target -------------------------===//
#include "TestGraphs.h"
#include "codegen/ModelCodegen.h"
#include "passes/Pass.h"

#include <gtest/gtest.h>
#include <llvm/Object/ELFObjectFile.h>
#include <llvm/Object/ObjectFile.h>

using namespace cuvil;

namespace {

struct Built {
  std::string Object;
  std::set<std::string> Defined, Undefined, Local;
  /// Function symbols defined more than once (the model's part and the
  /// support object's each bringing a copy of a helper).
  std::set<std::string> TwiceDefined;
  unsigned Machine = 0;
};

Built build(const std::string &Target, std::unique_ptr<Graph> G) {
  EXPECT_FALSE(bool(runPipeline(*G, {}, nullptr)));
  auto T = loadTarget(Target);
  EXPECT_TRUE(bool(T));
  auto P = planMemory(*G, {T->DmaAlign});
  EXPECT_TRUE(bool(P));
  CodegenOptions O;
  O.ModelName = "cbr";
  O.StructureHash = 42;
  O.WeightsDataSize = P->WeightsSize;
  O.EmbeddedBlob = test::zeroBlob();
  auto R = generateObject(*G, test::lowered(*G), *P, *T, O);
  EXPECT_TRUE(bool(R)) << llvm::toString(R.takeError());
  Built B;
  B.Object = R->Object;
  auto Obj = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(B.Object, "m.o"));
  EXPECT_TRUE(bool(Obj)) << llvm::toString(Obj.takeError());
  auto *ELF = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(Obj->get());
  EXPECT_NE(ELF, nullptr);
  B.Machine = ELF->getEMachine();
  std::set<std::string> Functions;
  for (const auto &Sym : (*Obj)->symbols()) {
    auto Flags = Sym.getFlags();
    auto Name = Sym.getName();
    if (!Flags || !Name || Name->empty())
      continue;
    auto Type = Sym.getType();
    if (Type && *Type == llvm::object::SymbolRef::ST_Function &&
        !(*Flags & llvm::object::SymbolRef::SF_Undefined) &&
        !Functions.insert(Name->str()).second)
      B.TwiceDefined.insert(Name->str());
    if (*Flags & llvm::object::SymbolRef::SF_Undefined)
      B.Undefined.insert(Name->str());
    else if (*Flags & llvm::object::SymbolRef::SF_Global)
      B.Defined.insert(Name->str());
    else
      B.Local.insert(Name->str());
  }
  return B;
}

Built build(const std::string &Target) {
  return build(Target, test::convBnRelu());
}

/// x[1,4,6,6] -> Relu(Conv 3x3 a) -> Relu(Conv 3x3 b) -> Conv 1x1 c: a and
/// b differ only in their weights.
std::unique_ptr<Graph> threeConvs() {
  auto G = std::make_unique<Graph>("three");
  Value *X = G->addValue("x", DType::F32, {1, 4, 6, 6}, ValueKind::Input);
  G->inputs().push_back(X);
  int Index = 0;
  auto Conv = [&](const std::string &Name, Value *In, int64_t K, bool Relu) {
    Value *W = test::constF32(*G, Name + ".w", {4, 4, K, K},
                              std::vector<float>(16 * K * K, 0.1f * Index));
    Value *C = test::tensor(*G, Name, {1, 4, 6, 6});
    Node *N = test::addOp(*G, "Conv", Name, {In, W}, {C}, Index++);
    N->setAttr("kernel_shape", std::vector<int64_t>{K, K});
    N->setAttr("pads", std::vector<int64_t>(4, K / 2));
    if (!Relu)
      return C;
    Value *R = test::tensor(*G, Name + "_relu", {1, 4, 6, 6});
    test::addOp(*G, "Relu", Name + "_relu", {C}, {R}, Index++);
    return R;
  };
  G->outputs().push_back(
      Conv("c", Conv("b", Conv("a", X, 3, true), 3, true), 1, false));
  return G;
}

} // namespace

// At namespace scope: the tests gtest derives from it have external linkage
// (in a unity batch, an anonymous base draws -Wsubobject-linkage).
class CodegenForTarget : public ::testing::TestWithParam<const char *> {};

TEST_P(CodegenForTarget, SelfContainedObjectWithTheApi) {
  Built B = build(GetParam());
  for (const char *S : {"cuvil_cbr_init", "cuvil_cbr_run", "cuvil_cbr_run_v",
                        "cuvil_cbr_arena_arena", "cuvil_cbr_weights"})
    EXPECT_TRUE(B.Defined.count(S)) << S;
  // No kernel leaks out, and nothing is left undefined.
  for (const std::string &S : B.Defined)
    EXPECT_EQ(S.rfind("cuvil_k_", 0), std::string::npos) << S;
  EXPECT_TRUE(B.Undefined.empty()) << "undefined: " << *B.Undefined.begin();
  // Each function once: support code the entry points reach is compiled
  // in the support object only (SupportObject.h).
  EXPECT_TRUE(B.TwiceDefined.empty())
      << "defined twice: " << *B.TwiceDefined.begin();
}

TEST_P(CodegenForTarget, ReproducibleBytes) {
  EXPECT_EQ(build(GetParam()).Object, build(GetParam()).Object);
}

INSTANTIATE_TEST_SUITE_P(AllTargets, CodegenForTarget,
                         ::testing::Values("host", "host-avx512", "a78",
                                           "u74-mc"),
                         [](const auto &Info) {
                           std::string N = Info.param;
                           std::replace(N.begin(), N.end(), '-', '_');
                           return N;
                         });

TEST(Codegen, MachinePerTarget) {
  EXPECT_EQ(build("host").Machine, llvm::ELF::EM_X86_64);
  EXPECT_EQ(build("a78").Machine, llvm::ELF::EM_AARCH64);
  EXPECT_EQ(build("u74-mc").Machine, llvm::ELF::EM_RISCV);
}

TEST(Codegen, OneLocalFunctionPerLayerSharedByEqualLayers) {
  Built B = build("u74-mc", threeConvs());
  // Layers a and b have the same shape and attributes: one function.
  EXPECT_EQ(B.Local.count("cuvil_cbr_n0_a") + B.Local.count("cuvil_cbr_n1_b"),
            1u);
  EXPECT_TRUE(B.Local.count("cuvil_cbr_n2_c"));
  for (const std::string &S : B.Defined)
    EXPECT_EQ(S.find("_n0_"), std::string::npos) << S;
}
