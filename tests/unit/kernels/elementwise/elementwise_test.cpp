//===- elementwise_test.cpp - Element-wise kernels
//-------------------------===//
//
// Broadcast binary ops, activations and the per-channel affine against
// double-precision references.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"
#include "kernels/math.h"

#include <cfloat>

using namespace kernel_test;

namespace {

//===----------------------------------------------------------------------===//
// Element-wise
//===----------------------------------------------------------------------===//

enum class BinaryOp { Add, Sub, Mul, Div };

struct BroadcastCase {
  const char *Name;
  Shape A, B;
};

using BinaryKernel = void (*)(const float *, const float *, float *,
                              const int64_t *, const int64_t *,
                              const int64_t *);

BinaryKernel binaryKernel(BinaryOp Op) {
  switch (Op) {
  case BinaryOp::Add: return cuvil_k_add_f32;
  case BinaryOp::Sub: return cuvil_k_sub_f32;
  case BinaryOp::Mul: return cuvil_k_mul_f32;
  case BinaryOp::Div: return cuvil_k_div_f32;
  }
  return nullptr;
}

double applyBinary(BinaryOp Op, double A, double B) {
  switch (Op) {
  case BinaryOp::Add: return A + B;
  case BinaryOp::Sub: return A - B;
  case BinaryOp::Mul: return A * B;
  case BinaryOp::Div: return A / B;
  }
  return 0;
}

// The kernel's strides of an operand padded to In against the output shape
// Out: dense, and 0 where the operand is broadcast.
Padded broadcastStrides(const Padded &In, const Padded &Out) {
  const Shape Dense = denseStrides(Shape(In.begin(), In.end()));
  Padded Str;
  for (int64_t D = 0; D < CUVIL_MAX_RANK; ++D)
    Str[D] = In[D] == 1 && Out[D] != 1 ? 0 : Dense[D];
  return Str;
}

// Divisors away from 0: magnitudes in [0.5, 2], alternating signs.
std::vector<float> divisors(int64_t N, unsigned Seed) {
  std::vector<float> V = randomFloats(N, Seed, 0.5f, 2.0f);
  for (size_t I = 1; I < V.size(); I += 2)
    V[I] = -V[I];
  return V;
}

class BinaryTest
    : public testing::TestWithParam<std::tuple<BinaryOp, BroadcastCase>> {};

TEST_P(BinaryTest, MatchesReference) {
  const auto &[Op, P] = GetParam();
  const Padded AShape = padLeft(P.A, 1), BShape = padLeft(P.B, 1);
  Padded YShape;
  for (int64_t D = 0; D < CUVIL_MAX_RANK; ++D)
    YShape[D] = std::max(AShape[D], BShape[D]);
  const Shape YDims(YShape.begin(), YShape.end());
  const auto A = randomFloats(numElements(P.A), 14);
  const auto B = Op == BinaryOp::Div ? divisors(numElements(P.B), 15)
                                     : randomFloats(numElements(P.B), 15);
  std::vector<float> Y(numElements(YDims), NaN);
  binaryKernel(Op)(A.data(), B.data(), Y.data(), YShape.data(),
                   broadcastStrides(AShape, YShape).data(),
                   broadcastStrides(BShape, YShape).data());

  // Numpy broadcasting, index by index.
  const Shape YStr = denseStrides(YDims);
  const Shape AStr = denseStrides(Shape(AShape.begin(), AShape.end()));
  const Shape BStr = denseStrides(Shape(BShape.begin(), BShape.end()));
  std::vector<double> Want;
  for (int64_t L = 0; L < numElements(YDims); ++L) {
    int64_t AI = 0, BI = 0;
    for (int64_t D = 0; D < CUVIL_MAX_RANK; ++D) {
      const int64_t Idx = L / YStr[D] % YShape[D];
      AI += (AShape[D] == 1 ? 0 : Idx) * AStr[D];
      BI += (BShape[D] == 1 ? 0 : Idx) * BStr[D];
    }
    Want.push_back(applyBinary(Op, A[AI], B[BI]));
  }
  // One correctly rounded float operation per element.
  EXPECT_TRUE(allClose(Y, Want, 1e-7, 0.0));
}

std::string binaryName(
    const testing::TestParamInfo<std::tuple<BinaryOp, BroadcastCase>> &Info) {
  static const char *const Ops[] = {"Add", "Sub", "Mul", "Div"};
  return std::string(Ops[int(std::get<0>(Info.param))]) +
         std::get<1>(Info.param).Name;
}

const BroadcastCase BroadcastCases[] = {
    {"SameShape", {2, 3, 4, 5}, {2, 3, 4, 5}},
    {"Row", {2, 3, 4, 5}, {5}},
    {"Scalar", {3, 7}, {}},
    {"ScalarFirst", {}, {4, 6}},
    {"PerChannel", {1, 3, 1, 1}, {2, 3, 4, 5}},
    {"BothSides", {2, 1, 4, 1}, {3, 1, 5}},
    {"Rank6", {2, 1, 3, 2, 3, 1}, {2, 2, 1, 2, 3, 4}},
};
INSTANTIATE_TEST_SUITE_P(
    Kernels, BinaryTest,
    testing::Combine(testing::Values(BinaryOp::Add, BinaryOp::Sub,
                                     BinaryOp::Mul, BinaryOp::Div),
                     testing::ValuesIn(BroadcastCases)),
    binaryName);

TEST(Binary, InPlaceOnDenseOperand) {
  const Padded Out = padLeft({3, 8}, 1), BShape = padLeft({8}, 1);
  const auto A = randomFloats(24, 16), B = randomFloats(8, 17);
  std::vector<float> Y = A;
  cuvil_k_sub_f32(Y.data(), B.data(), Y.data(), Out.data(),
                  broadcastStrides(Out, Out).data(),
                  broadcastStrides(BShape, Out).data());
  std::vector<double> Want;
  for (int64_t I = 0; I < 24; ++I)
    Want.push_back(double(A[I]) - B[I % 8]);
  EXPECT_TRUE(allClose(Y, Want, 1e-7, 0.0));
}

// Random values, a fine grid over the interesting range, and edge values.
std::vector<float> activationInputs() {
  std::vector<float> X = randomFloats(4096, 18, -30.0f, 30.0f);
  for (float V = -12.0f; V <= 12.0f; V += 1.0f / 64)
    X.push_back(V);
  for (float V : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.0f, -88.0f, 100.0f, -100.0f,
                  Inf, -Inf, NaN})
    X.push_back(V);
  return X;
}

template <typename F>
std::vector<double> mapDouble(const std::vector<float> &X, F Fn) {
  std::vector<double> Y;
  for (float V : X)
    Y.push_back(Fn(double(V)));
  return Y;
}

TEST(Activation, Relu) {
  const auto X = activationInputs();
  std::vector<float> Y(X.size());
  cuvil_k_relu_f32(X.data(), Y.data(), int64_t(X.size()));
  EXPECT_TRUE(allClose(
      Y, mapDouble(X, [](double V) { return V < 0 ? 0.0 : V; }), 0, 0));
}

TEST(Activation, ClipInPlace) {
  const auto X = activationInputs();
  std::vector<float> Y = X;
  cuvil_k_clip_f32(Y.data(), Y.data(), int64_t(Y.size()), -0.5f, 6.0f);
  // NaN passes through the clamp.
  EXPECT_TRUE(allClose(Y,
                       mapDouble(X,
                                 [](double V) {
                                   return std::isnan(V)
                                              ? V
                                              : std::clamp(V, -0.5, 6.0);
                                 }),
                       0, 0));
}

TEST(Activation, Sigmoid) {
  const auto X = activationInputs();
  std::vector<float> Y(X.size());
  cuvil_k_sigmoid_f32(X.data(), Y.data(), int64_t(X.size()));
  EXPECT_TRUE(
      allClose(Y, mapDouble(X, [](double V) { return 1 / (1 + std::exp(-V)); }),
               0, 1e-6));
}

TEST(Activation, TanhInPlace) {
  const auto X = activationInputs();
  std::vector<float> Y = X;
  cuvil_k_tanh_f32(Y.data(), Y.data(), int64_t(Y.size()));
  EXPECT_TRUE(allClose(Y, mapDouble(X, [](double V) { return std::tanh(V); }),
                       0, 1e-6));
}

TEST(ChannelAffine, MatchesReference) {
  const int64_t N = 2, C = 3, HW = 10;
  const auto X = randomFloats(N * C * HW, 19), Scale = randomFloats(C, 20),
             Bias = randomFloats(C, 21);
  std::vector<float> Y = X;
  cuvil_k_channel_affine_f32(Y.data(), Scale.data(), Bias.data(), Y.data(), N,
                             C, HW);
  std::vector<double> Want;
  for (int64_t I = 0; I < N * C * HW; ++I) {
    const int64_t Ch = I / HW % C;
    Want.push_back(double(X[I]) * Scale[Ch] + Bias[Ch]);
  }
  EXPECT_TRUE(allClose(Y, Want, 1e-6, 1e-7));
}

} // namespace
