//===- UnaryOpsTest.cpp - Element-wise math and activation ops ------------===//
//
// Verification and lowering of the table-driven unary ops (UnaryMath.cpp,
// Activations.cpp): kernel names, attribute arguments and defaults, and the
// errors for what they cannot compile.
//
//===----------------------------------------------------------------------===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"

#include <gtest/gtest.h>

using namespace cuvil;

namespace {

struct Lowered {
  std::string Error;
  std::vector<KernelCall> Calls;
};

Lowered verifyAndLower(Node *N) {
  Lowered L;
  if (!N->def()) {
    L.Error = "no OpDef";
    return L;
  }
  if (auto E = N->def()->Verify(*N)) {
    L.Error = llvm::toString(std::move(E));
    return L;
  }
  if (auto E = N->def()->Lower(*N, L.Calls))
    L.Error = llvm::toString(std::move(E));
  return L;
}

Node *unaryNode(Graph &G, const std::string &Op, DType In = DType::F32,
                DType Out = DType::F32) {
  Value *X = G.addValue("x", In, {2, 3}, ValueKind::Input);
  Value *Y = G.addValue("y", Out, {2, 3}, ValueKind::Intermediate);
  return test::addOp(G, Op, "n", {X}, {Y}, 0);
}

/// The float parameters an activation's kernel takes after (x, y, n).
std::vector<float> activationParams(const KernelCall &C) {
  if (kabi::XYNAlphaGroup::contains(C.Kernel))
    return {kabi::XYNAlphaGroup::from(C).alpha};
  if (C.Kernel == kabi::SeluF32::Name) {
    auto K = kabi::SeluF32::from(C);
    return {K.alpha, K.gamma};
  }
  if (C.Kernel == kabi::HardSigmoidF32::Name) {
    auto K = kabi::HardSigmoidF32::from(C);
    return {K.alpha, K.beta};
  }
  ADD_FAILURE() << C.Kernel << " is not an activation with parameters";
  return {};
}

} // namespace

TEST(UnaryOps, EveryOpLowersToItsKernel) {
  const std::pair<const char *, const char *> Ops[] = {
      {"Abs", "cuvil_k_abs_f32"},
      {"Acos", "cuvil_k_acos_f32"},
      {"Acosh", "cuvil_k_acosh_f32"},
      {"Asin", "cuvil_k_asin_f32"},
      {"Asinh", "cuvil_k_asinh_f32"},
      {"Atan", "cuvil_k_atan_f32"},
      {"Atanh", "cuvil_k_atanh_f32"},
      {"Ceil", "cuvil_k_ceil_f32"},
      {"Cos", "cuvil_k_cos_f32"},
      {"Cosh", "cuvil_k_cosh_f32"},
      {"Erf", "cuvil_k_erf_f32"},
      {"Exp", "cuvil_k_exp_f32"},
      {"Floor", "cuvil_k_floor_f32"},
      {"HardSwish", "cuvil_k_hard_swish_f32"},
      {"Log", "cuvil_k_log_f32"},
      {"Neg", "cuvil_k_neg_f32"},
      {"Reciprocal", "cuvil_k_reciprocal_f32"},
      {"Round", "cuvil_k_round_f32"},
      {"Sign", "cuvil_k_sign_f32"},
      {"Sin", "cuvil_k_sin_f32"},
      {"Sinh", "cuvil_k_sinh_f32"},
      {"Softplus", "cuvil_k_softplus_f32"},
      {"Softsign", "cuvil_k_softsign_f32"},
      {"Sqrt", "cuvil_k_sqrt_f32"},
      {"Tan", "cuvil_k_tan_f32"},
  };
  for (const auto &[Op, Kernel] : Ops) {
    Graph G("g");
    Node *N = unaryNode(G, Op);
    Lowered L = verifyAndLower(N);
    ASSERT_EQ(L.Error, "") << Op;
    ASSERT_EQ(L.Calls.size(), 1u) << Op;
    EXPECT_EQ(L.Calls[0].Kernel, Kernel);
    EXPECT_EQ(kabi::XYNGroup::from(L.Calls[0]).n, 6) << Op;
    EXPECT_EQ(N->def()->place(), Placement::InPlace) << Op;
  }
}

TEST(UnaryOps, ActivationAttributesAndDefaults) {
  struct Case {
    const char *Op;
    std::vector<std::pair<std::string, float>> Attrs;
    std::vector<float> Want;
  };
  const Case Cases[] = {
      {"LeakyRelu", {}, {0.01f}},
      {"LeakyRelu", {{"alpha", 0.25f}}, {0.25f}},
      {"Elu", {}, {1.0f}},
      {"Celu", {{"alpha", 2.0f}}, {2.0f}},
      {"Selu", {}, {1.67326319217681884765625f, 1.05070102214813232421875f}},
      {"Selu", {{"gamma", 3.0f}}, {1.67326319217681884765625f, 3.0f}},
      {"HardSigmoid", {}, {0.2f, 0.5f}},
      {"HardSigmoid", {{"alpha", 0.5f}, {"beta", 0.6f}}, {0.5f, 0.6f}},
      {"ThresholdedRelu", {}, {1.0f}},
  };
  for (const Case &C : Cases) {
    Graph G("g");
    Node *N = unaryNode(G, C.Op);
    for (const auto &[Name, V] : C.Attrs)
      N->setAttr(Name, V);
    Lowered L = verifyAndLower(N);
    ASSERT_EQ(L.Error, "") << C.Op;
    std::vector<float> Params = activationParams(L.Calls.at(0));
    ASSERT_EQ(Params.size(), C.Want.size()) << C.Op;
    for (size_t I = 0; I < C.Want.size(); ++I)
      EXPECT_EQ(Params[I], C.Want[I]) << C.Op << " parameter " << I;
  }
}

TEST(UnaryOps, BoolResultsAndNot) {
  Graph G("g");
  Node *IsInf = unaryNode(G, "IsInf", DType::F32, DType::Bool);
  IsInf->setAttr("detect_positive", int64_t(0));
  Lowered L = verifyAndLower(IsInf);
  ASSERT_EQ(L.Error, "");
  EXPECT_EQ(L.Calls[0].Kernel, "cuvil_k_isinf_f32");
  auto K = kabi::IsinfF32::from(L.Calls[0]);
  EXPECT_EQ(K.detect_negative, 1); // the default
  EXPECT_EQ(K.detect_positive, 0);
  EXPECT_EQ(IsInf->def()->place(), Placement::Fresh);

  Graph G2("g2");
  L = verifyAndLower(unaryNode(G2, "IsNaN", DType::F32, DType::Bool));
  ASSERT_EQ(L.Error, "");
  EXPECT_EQ(L.Calls[0].Kernel, "cuvil_k_isnan_f32");

  Graph G3("g3");
  L = verifyAndLower(unaryNode(G3, "Not", DType::Bool, DType::Bool));
  ASSERT_EQ(L.Error, "");
  EXPECT_EQ(L.Calls[0].Kernel, "cuvil_k_not_bool");
}

TEST(UnaryOps, UnsupportedTypesAndAttributesNameTheNode) {
  struct Case {
    const char *Op;
    DType In, Out;
    const char *Attr; // set to an int 1, or "alpha0" for alpha = 0
    const char *Want;
  };
  const Case Cases[] = {
      {"Abs", DType::I32, DType::I32, nullptr,
       "node 'n' (Abs): input 'x' has element type i32; only f32 is "
       "supported"},
      {"Not", DType::F32, DType::F32, nullptr,
       "node 'n' (Not): input 'x' has element type f32; only bool is "
       "supported"},
      {"IsNaN", DType::F32, DType::F32, nullptr,
       "node 'n' (IsNaN): output 'y' has element type f32; only bool is "
       "supported"},
      {"LeakyRelu", DType::F32, DType::F32, "alpha",
       "node 'n' (LeakyRelu): attribute 'alpha' must be a float"},
      {"Celu", DType::F32, DType::F32, "alpha0",
       "node 'n' (Celu): alpha must not be 0"},
  };
  for (const Case &C : Cases) {
    Graph G("g");
    Node *N = unaryNode(G, C.Op, C.In, C.Out);
    if (C.Attr && std::string(C.Attr) == "alpha0")
      N->setAttr("alpha", 0.0f);
    else if (C.Attr)
      N->setAttr(C.Attr, int64_t(1));
    EXPECT_EQ(verifyAndLower(N).Error, C.Want);
  }
  Graph G("g");
  Node *N = unaryNode(G, "IsInf", DType::F32, DType::Bool);
  N->setAttr("detect_negative", 0.5f);
  EXPECT_EQ(verifyAndLower(N).Error,
            "node 'n' (IsInf): attribute 'detect_negative' must be an integer");
}

TEST(UnaryOps, PReluBroadcastsTheSlope) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {2, 3, 4}, ValueKind::Input);
  Value *S = test::constF32(G, "slope", {3, 1}, {0.1f, 0.2f, 0.3f});
  Value *Y = test::tensor(G, "y", {2, 3, 4});
  Node *N = test::addOp(G, "PRelu", "p", {X, S}, {Y}, 0);
  Lowered L = verifyAndLower(N);
  ASSERT_EQ(L.Error, "");
  const KernelCall &C = L.Calls.at(0);
  EXPECT_EQ(C.Kernel, "cuvil_k_prelu_f32");
  auto K = kabi::PreluF32::from(C);
  EXPECT_EQ(K.x.V, X);
  EXPECT_EQ(K.slope.V, S);
  EXPECT_EQ(K.y.V, Y);
  // The slope walks dimension 1 and is broadcast over 0 and 2.
  const auto &Shape = K.shape.Array, &SStr = K.slope_str.Array;
  int64_t Elements = 1;
  for (size_t D = 0; D < Shape.size(); ++D) {
    Elements *= Shape[D];
    if (Shape[D] == 2 || Shape[D] == 4) {
      EXPECT_EQ(SStr[D], 0) << D;
    } else if (Shape[D] == 3) {
      EXPECT_EQ(SStr[D], 1) << D;
    }
  }
  EXPECT_EQ(Elements, 24);

  Graph G2("g2");
  X = G2.addValue("x", DType::F32, {2, 3}, ValueKind::Input);
  S = test::constF32(G2, "slope", {4}, {1, 2, 3, 4});
  Y = test::tensor(G2, "y", {2, 3});
  N = test::addOp(G2, "PRelu", "p", {X, S}, {Y}, 0);
  std::string Msg = verifyAndLower(N).Error;
  EXPECT_NE(Msg.find("node 'p' (PRelu)"), std::string::npos) << Msg;
}

TEST(UnaryOps, PReluBeforeOpset7AppliesA1DSlopePerChannel) {
  Graph G("g");
  Value *X = G.addValue("x", DType::F32, {2, 3, 4, 5}, ValueKind::Input);
  Value *S = test::constF32(G, "slope", {3}, {0.1f, 0.2f, 0.3f});
  Value *Y = test::tensor(G, "y", {2, 3, 4, 5});
  Node *N = test::addOp(G, "PRelu", "p", {X, S}, {Y}, 0);
  N->setOpset(6);
  Lowered L = verifyAndLower(N);
  ASSERT_EQ(L.Error, "");
  auto K = kabi::PreluF32::from(L.Calls.at(0));
  EXPECT_EQ(K.shape.Array, (std::vector<int64_t>{1, 1, 1, 2, 3, 20}));
  EXPECT_EQ(K.x_str.Array, (std::vector<int64_t>{0, 0, 0, 60, 20, 1}));
  EXPECT_EQ(K.slope_str.Array, (std::vector<int64_t>{0, 0, 0, 0, 1, 0}));
  // From opset 7 on, the same slope broadcasts numpy-style: against the
  // last dimension (5), which it does not match.
  N->setOpset(7);
  EXPECT_NE(verifyAndLower(N).Error, "");
}
