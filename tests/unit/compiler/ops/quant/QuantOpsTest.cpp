//===- QuantOpsTest.cpp - Quantization ops: verify and lower --------------===//
#include "TestGraphs.h"
#include "lowering/KernelAbi.h"

#include <gtest/gtest.h>

#include <cuvil/kernels.h>

using namespace cuvil;
using test::verifyMessage;

namespace {

Value *val(Graph &G, const std::string &Name, DType T,
           std::vector<int64_t> Shape) {
  return G.addValue(Name, T, std::move(Shape), ValueKind::Input);
}

} // namespace

TEST(QuantOps, QuantizeLinearPerAxisSplitsAroundTheAxis) {
  Graph G("g");
  Value *X = val(G, "x", DType::F32, {2, 3, 4, 5});
  Value *S = val(G, "s", DType::F32, {4});
  Value *Z = val(G, "z", DType::I8, {4});
  Value *Y = G.addValue("y", DType::I8, {2, 3, 4, 5}, ValueKind::Intermediate);
  Node *N = test::addOp(G, "QuantizeLinear", "q", {X, S, Z}, {Y}, 0);
  N->setAttr("axis", int64_t(-2));
  EXPECT_EQ(verifyMessage(*N), "");
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N->def()->Lower(*N, Calls)));
  ASSERT_EQ(Calls.size(), 1u);
  EXPECT_EQ(Calls[0].Kernel, "cuvil_k_quantize_f32");
  auto K = kabi::QuantizeF32::from(Calls[0]);
  EXPECT_EQ(K.outer, 6);
  EXPECT_EQ(K.axis_dim, 4);
  EXPECT_EQ(K.inner, 5);
  EXPECT_EQ(K.y_type, CUVIL_Q_I8);
}

TEST(QuantOps, RejectsWhatTheKernelsCannotCompute) {
  Graph G("g");
  Value *X = val(G, "x", DType::F32, {2, 3});
  Value *S3 = val(G, "s3", DType::F32, {3});
  Value *S2 = val(G, "s2", DType::F32, {2});
  Value *Z = val(G, "z", DType::U8, {});
  Value *Y16 = G.addValue("y16", DType::U16, {2, 3}, ValueKind::Intermediate);
  // A value has one producer: each node gets its own output.
  auto Y = [&](const char *Name) {
    return G.addValue(Name, DType::U8, {2, 3}, ValueKind::Intermediate);
  };

  // 16-bit output.
  Node *A = test::addOp(G, "QuantizeLinear", "a", {X, S3, nullptr}, {Y16}, 0);
  EXPECT_NE(verifyMessage(*A).find("not supported"), std::string::npos);
  // Blocked quantization.
  Node *B =
      test::addOp(G, "QuantizeLinear", "b", {X, S3, nullptr}, {Y("yb")}, 1);
  B->setAttr("block_size", int64_t(2));
  EXPECT_NE(verifyMessage(*B).find("block_size=2"), std::string::npos);
  // Per-axis scale that does not match the axis.
  Node *C =
      test::addOp(G, "QuantizeLinear", "c", {X, S2, nullptr}, {Y("yc")}, 2);
  EXPECT_NE(verifyMessage(*C).find("only one value or one per"),
            std::string::npos);
  // Per-axis scale with a per-tensor zero point.
  Node *D = test::addOp(G, "QuantizeLinear", "d", {X, S3, Z}, {Y("yd")}, 3);
  EXPECT_NE(verifyMessage(*D).find("differ in shape"), std::string::npos);
}

TEST(QuantOps, QLinearMatMulTakesPerColumnB) {
  Graph G("g");
  Value *A = val(G, "a", DType::U8, {2, 4});
  Value *B = val(G, "b", DType::I8, {4, 3});
  Value *One = val(G, "one", DType::F32, {});
  Value *AZ = val(G, "az", DType::U8, {});
  Value *BS = val(G, "bs", DType::F32, {3});
  Value *BZ = val(G, "bz", DType::I8, {3});
  Value *YZ = val(G, "yz", DType::U8, {});
  Value *Y = G.addValue("y", DType::U8, {2, 3}, ValueKind::Intermediate);
  Node *N = test::addOp(G, "QLinearMatMul", "m",
                        {A, One, AZ, B, BS, BZ, One, YZ}, {Y}, 0);
  EXPECT_EQ(verifyMessage(*N), "");
  std::vector<KernelCall> Calls;
  ASSERT_FALSE(bool(N->def()->Lower(*N, Calls)));
  ASSERT_EQ(Calls.size(), 1u);
  EXPECT_EQ(Calls[0].Kernel, "cuvil_k_qlinear_matmul");
  EXPECT_EQ(Calls[0].Args.back().I, 1);
  EXPECT_EQ(N->def()->Macs(*N), 2 * 3 * 4);
}
