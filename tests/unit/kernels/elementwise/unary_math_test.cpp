//===- unary_math_test.cpp - Unary math kernels and their approximations --===//
//
// The trigonometric, inverse trigonometric and hyperbolic approximations of
// kernels/math.h (and log1p, expm1) swept against <cmath> in double
// precision; their special values; and every kernel of unary_math.c and
// activations.c on random data, in place, against a double-precision
// implementation of the ONNX operator.
//
//===----------------------------------------------------------------------===//
#include "cuvil/kernels.h"
#include "kernels/math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <functional>
#include <iomanip>
#include <limits>
#include <random>
#include <vector>

namespace {

constexpr float Inf = std::numeric_limits<float>::infinity();
constexpr float NaN = std::numeric_limits<float>::quiet_NaN();
constexpr double Pi = 3.14159265358979323846;

// One unit in the last place of the float nearest to V.
double ulp(double V) {
  V = std::abs(V);
  return V < FLT_MIN ? 0x1p-149 : std::ldexp(1.0, std::ilogb(V) - 23);
}

struct Errors {
  double MaxUlp = 0, MaxAbs = 0;
  float UlpAt = 0, AbsAt = 0;
};

// Errors of Fn against Ref at every Step-th float bit pattern within
// [Lo, Hi] (every binade sampled equally densely). Ulp errors count where
// the exact result is a normal float.
Errors sweep(float (*Fn)(float), double (*Ref)(double), float Lo, float Hi,
             uint64_t Step = 1021) {
  Errors E;
  for (uint64_t Bits = 0; Bits < (uint64_t(1) << 32); Bits += Step) {
    const float X = cuvil_f32_from_bits(uint32_t(Bits));
    if (!(X >= Lo && X <= Hi))
      continue;
    const double Want = Ref(double(X));
    const double Err = std::abs(double(Fn(X)) - Want);
    if (!(Err <= E.MaxAbs)) {
      E.MaxAbs = Err;
      E.AbsAt = X;
    }
    if (std::abs(Want) >= FLT_MIN && std::abs(Want) <= FLT_MAX &&
        !(Err / ulp(Want) <= E.MaxUlp)) {
      E.MaxUlp = Err / ulp(Want);
      E.UlpAt = X;
    }
  }
  return E;
}

void expectUlp(const char *Name, const Errors &E, double MaxUlp) {
  std::cout << Name << ": max " << E.MaxUlp << " ulp at " << std::hexfloat
            << E.UlpAt << std::defaultfloat << ", max abs " << E.MaxAbs << "\n";
  EXPECT_LE(E.MaxUlp, MaxUlp) << Name << " at x = " << std::hexfloat << E.UlpAt;
}

double sinD(double X) { return std::sin(X); }
double cosD(double X) { return std::cos(X); }
double tanD(double X) { return std::tan(X); }
double asinD(double X) { return std::asin(X); }
double acosD(double X) { return std::acos(X); }
double atanD(double X) { return std::atan(X); }
double sinhD(double X) { return std::sinh(X); }
double coshD(double X) { return std::cosh(X); }
double asinhD(double X) { return std::asinh(X); }
double acoshD(double X) { return std::acosh(X); }
double atanhD(double X) { return std::atanh(X); }
double log1pD(double X) { return std::log1p(X); }
double expm1D(double X) { return std::expm1(X); }

float sinF(float X) { return cuvil_sinf(X); }
float cosF(float X) { return cuvil_cosf(X); }
float tanF(float X) { return cuvil_tanf(X); }
float asinF(float X) { return cuvil_asinf(X); }
float acosF(float X) { return cuvil_acosf(X); }
float atanF(float X) { return cuvil_atanf(X); }
float sinhF(float X) { return cuvil_sinhf(X); }
float coshF(float X) { return cuvil_coshf(X); }
float asinhF(float X) { return cuvil_asinhf(X); }
float acoshF(float X) { return cuvil_acoshf(X); }
float atanhF(float X) { return cuvil_atanhf(X); }
float log1pF(float X) { return cuvil_log1pf(X); }
float expm1F(float X) { return cuvil_expm1f(X); }

//===----------------------------------------------------------------------===//
// Accuracy sweeps
//===----------------------------------------------------------------------===//

TEST(UnaryMath, SinCosAccuracy) {
  // The reduction is exact to float precision below 2^28 pi/2.
  expectUlp("sin", sweep(sinF, sinD, -4e8f, 4e8f), 2.0);
  expectUlp("cos", sweep(cosF, cosD, -4e8f, 4e8f), 2.0);
}

TEST(UnaryMath, TanAccuracy) {
  expectUlp("tan", sweep(tanF, tanD, -4e8f, 4e8f), 4.0);
}

TEST(UnaryMath, InverseTrigAccuracy) {
  expectUlp("asin", sweep(asinF, asinD, -1.0f, 1.0f), 2.5);
  expectUlp("acos", sweep(acosF, acosD, -1.0f, 1.0f), 1.5);
  expectUlp("atan", sweep(atanF, atanD, -Inf, Inf), 2.5);
}

TEST(UnaryMath, HyperbolicAccuracy) {
  // sinh and cosh overflow just past 89.41.
  expectUlp("sinh", sweep(sinhF, sinhD, -89.4f, 89.4f), 4.0);
  expectUlp("cosh", sweep(coshF, coshD, -89.4f, 89.4f), 3.5);
  expectUlp("asinh", sweep(asinhF, asinhD, -FLT_MAX, FLT_MAX), 3.0);
  expectUlp("acosh", sweep(acoshF, acoshD, 1.0f, FLT_MAX), 3.0);
  expectUlp("atanh", sweep(atanhF, atanhD, -1.0f, 1.0f), 3.5);
}

TEST(UnaryMath, Log1pExpm1Accuracy) {
  expectUlp("log1p", sweep(log1pF, log1pD, -1.0f, FLT_MAX), 3.0);
  // expm1 is -1 below -17.4 and overflows past 88.72.
  expectUlp("expm1", sweep(expm1F, expm1D, -104.0f, 88.7f), 3.0);
}

TEST(UnaryMath, SpecialValues) {
  for (float (*F)(float) : {sinF, cosF, tanF})
    for (float X : {Inf, -Inf, NaN})
      EXPECT_TRUE(std::isnan(F(X))) << X;
  EXPECT_EQ(cuvil_sinf(0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(cuvil_sinf(-0.0f)));
  EXPECT_TRUE(std::signbit(cuvil_tanf(-0.0f)));
  EXPECT_EQ(cuvil_cosf(0.0f), 1.0f);
  EXPECT_EQ(cuvil_sinf(1e-30f), 1e-30f);
  // Huge arguments are not reduced exactly, but stay in range.
  for (float X : {1e10f, -3e20f, FLT_MAX}) {
    EXPECT_LE(std::abs(cuvil_sinf(X)), 1.0f) << X;
    EXPECT_LE(std::abs(cuvil_cosf(X)), 1.0f) << X;
  }

  EXPECT_FLOAT_EQ(cuvil_asinf(1.0f), float(Pi / 2));
  EXPECT_FLOAT_EQ(cuvil_asinf(-1.0f), float(-Pi / 2));
  EXPECT_EQ(cuvil_acosf(1.0f), 0.0f);
  EXPECT_FLOAT_EQ(cuvil_acosf(-1.0f), float(Pi));
  EXPECT_TRUE(std::signbit(cuvil_asinf(-0.0f)));
  EXPECT_TRUE(std::signbit(cuvil_atanf(-0.0f)));
  EXPECT_FLOAT_EQ(cuvil_atanf(Inf), float(Pi / 2));
  EXPECT_FLOAT_EQ(cuvil_atanf(-Inf), float(-Pi / 2));
  for (float X : {1.0001f, -2.0f, Inf, -Inf, NaN}) {
    EXPECT_TRUE(std::isnan(cuvil_asinf(X))) << X;
    EXPECT_TRUE(std::isnan(cuvil_acosf(X))) << X;
  }
  EXPECT_TRUE(std::isnan(cuvil_atanf(NaN)));

  EXPECT_EQ(cuvil_sinhf(Inf), Inf);
  EXPECT_EQ(cuvil_sinhf(-Inf), -Inf);
  EXPECT_EQ(cuvil_sinhf(90.0f), Inf);
  EXPECT_LT(cuvil_sinhf(89.4f), Inf);
  EXPECT_TRUE(std::signbit(cuvil_sinhf(-0.0f)));
  EXPECT_EQ(cuvil_coshf(0.0f), 1.0f);
  EXPECT_EQ(cuvil_coshf(-Inf), Inf);
  EXPECT_EQ(cuvil_asinhf(Inf), Inf);
  EXPECT_EQ(cuvil_asinhf(-Inf), -Inf);
  EXPECT_TRUE(std::signbit(cuvil_asinhf(-0.0f)));
  EXPECT_EQ(cuvil_acoshf(1.0f), 0.0f);
  EXPECT_EQ(cuvil_acoshf(Inf), Inf);
  EXPECT_EQ(cuvil_atanhf(1.0f), Inf);
  EXPECT_EQ(cuvil_atanhf(-1.0f), -Inf);
  EXPECT_TRUE(std::signbit(cuvil_atanhf(-0.0f)));
  for (float X : {0.5f, -1.0f, -Inf})
    EXPECT_TRUE(std::isnan(cuvil_acoshf(X))) << X;
  for (float X : {1.5f, -1.5f, Inf})
    EXPECT_TRUE(std::isnan(cuvil_atanhf(X))) << X;
  for (float (*F)(float) : {sinhF, coshF, asinhF, acoshF, atanhF})
    EXPECT_TRUE(std::isnan(F(NaN)));

  EXPECT_EQ(cuvil_log1pf(Inf), Inf);
  EXPECT_EQ(cuvil_log1pf(-1.0f), -Inf);
  EXPECT_TRUE(std::isnan(cuvil_log1pf(-2.0f)));
  EXPECT_EQ(cuvil_log1pf(1e-30f), 1e-30f);
  EXPECT_EQ(cuvil_expm1f(Inf), Inf);
  EXPECT_EQ(cuvil_expm1f(-Inf), -1.0f);
  EXPECT_EQ(cuvil_expm1f(1e-30f), 1e-30f);
  EXPECT_TRUE(std::isnan(cuvil_expm1f(NaN)));
  EXPECT_TRUE(std::isnan(cuvil_log1pf(NaN)));
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

std::vector<float> randomFloats(size_t N, unsigned Seed, float Lo, float Hi) {
  std::mt19937 Rng(Seed);
  std::uniform_real_distribution<float> Dist(Lo, Hi);
  std::vector<float> V(N);
  for (float &E : V)
    E = Dist(Rng);
  return V;
}

using UnaryKernel = void (*)(const float *, float *, int64_t);

struct UnaryCase {
  const char *Name;
  UnaryKernel Kernel;
  std::function<double(double)> Ref;
  float Lo, Hi; // input range
};

void PrintTo(const UnaryCase &C, std::ostream *OS) { *OS << C.Name; }

class UnaryKernelTest : public testing::TestWithParam<UnaryCase> {};

// Runs the kernel in place on 1000 random inputs plus +-0, and compares
// with the double-precision reference (rtol 1e-6, atol 1e-7).
TEST_P(UnaryKernelTest, InPlaceMatchesReference) {
  const UnaryCase &C = GetParam();
  std::vector<float> X = randomFloats(1000, 7, C.Lo, C.Hi);
  X.push_back(C.Lo);
  X.push_back(C.Hi);
  std::vector<float> Y = X;
  C.Kernel(Y.data(), Y.data(), int64_t(Y.size()));
  for (size_t I = 0; I < X.size(); ++I) {
    const double Want = C.Ref(X[I]);
    EXPECT_NEAR(Y[I], Want, 1e-7 + 1e-6 * std::abs(Want))
        << C.Name << "(" << X[I] << ")";
  }
}

double sign(double X) { return X > 0 ? 1 : X < 0 ? -1 : X; }

const UnaryCase UnaryCases[] = {
    {"abs", cuvil_k_abs_f32, [](double X) { return std::abs(X); }, -5, 5},
    {"neg", cuvil_k_neg_f32, [](double X) { return -X; }, -5, 5},
    {"exp", cuvil_k_exp_f32, [](double X) { return std::exp(X); }, -20, 20},
    {"log", cuvil_k_log_f32, [](double X) { return std::log(X); }, 1e-3f, 1e3f},
    {"sqrt", cuvil_k_sqrt_f32, [](double X) { return std::sqrt(X); }, 0, 100},
    {"reciprocal", cuvil_k_reciprocal_f32, [](double X) { return 1 / X; }, 0.5f,
     10},
    {"floor", cuvil_k_floor_f32, [](double X) { return std::floor(X); }, -9, 9},
    {"ceil", cuvil_k_ceil_f32, [](double X) { return std::ceil(X); }, -9, 9},
    {"sign", cuvil_k_sign_f32, sign, -2, 2},
    {"sin", cuvil_k_sin_f32, sinD, -100, 100},
    {"cos", cuvil_k_cos_f32, cosD, -100, 100},
    {"tan", cuvil_k_tan_f32, tanD, -1.5f, 1.5f},
    {"asin", cuvil_k_asin_f32, asinD, -1, 1},
    {"acos", cuvil_k_acos_f32, acosD, -1, 1},
    {"atan", cuvil_k_atan_f32, atanD, -20, 20},
    {"sinh", cuvil_k_sinh_f32, sinhD, -10, 10},
    {"cosh", cuvil_k_cosh_f32, coshD, -10, 10},
    {"asinh", cuvil_k_asinh_f32, asinhD, -100, 100},
    {"acosh", cuvil_k_acosh_f32, acoshD, 1, 100},
    {"atanh", cuvil_k_atanh_f32, atanhD, -0.99f, 0.99f},
    {"erf", cuvil_k_erf_f32, [](double X) { return std::erf(X); }, -4, 4},
    {"hard_swish", cuvil_k_hard_swish_f32,
     [](double X) { return X * std::clamp(X / 6 + 0.5, 0.0, 1.0); }, -5, 5},
    {"softplus", cuvil_k_softplus_f32,
     [](double X) { return std::log1p(std::exp(X)); }, -30, 30},
    {"softsign", cuvil_k_softsign_f32,
     [](double X) { return X / (1 + std::abs(X)); }, -10, 10},
};

INSTANTIATE_TEST_SUITE_P(Kernels, UnaryKernelTest,
                         testing::ValuesIn(UnaryCases),
                         [](const auto &Info) { return Info.param.Name; });

TEST(UnaryKernels, RoundIsHalfToEven) {
  std::vector<float> X = {0.5f,  1.5f,        2.5f, -0.5f, -1.5f,
                          -2.5f, 0.49999997f, 1e9f, -3.7f, 2.2f};
  const std::vector<float> Want = {0.0f,  2.0f, 2.0f, -0.0f, -2.0f,
                                   -2.0f, 0.0f, 1e9f, -4.0f, 2.0f};
  cuvil_k_round_f32(X.data(), X.data(), int64_t(X.size()));
  for (size_t I = 0; I < X.size(); ++I)
    EXPECT_EQ(X[I], Want[I]) << I;
}

TEST(UnaryKernels, RoundingKeepsSpecialValues) {
  for (UnaryKernel K :
       {cuvil_k_floor_f32, cuvil_k_ceil_f32, cuvil_k_round_f32}) {
    std::vector<float> X = {Inf, -Inf, NaN, -0.0f};
    K(X.data(), X.data(), 4);
    EXPECT_EQ(X[0], Inf);
    EXPECT_EQ(X[1], -Inf);
    EXPECT_TRUE(std::isnan(X[2]));
    EXPECT_TRUE(std::signbit(X[3]));
  }
}

TEST(UnaryKernels, IsNaNIsInfNot) {
  const std::vector<float> X = {1.0f, NaN, Inf, -Inf, -0.0f, FLT_MAX};
  std::vector<uint8_t> Y(X.size(), 7);
  cuvil_k_isnan_f32(X.data(), Y.data(), int64_t(X.size()));
  EXPECT_EQ(Y, (std::vector<uint8_t>{0, 1, 0, 0, 0, 0}));
  cuvil_k_isinf_f32(X.data(), Y.data(), int64_t(X.size()), 1, 1);
  EXPECT_EQ(Y, (std::vector<uint8_t>{0, 0, 1, 1, 0, 0}));
  cuvil_k_isinf_f32(X.data(), Y.data(), int64_t(X.size()), 0, 1);
  EXPECT_EQ(Y, (std::vector<uint8_t>{0, 0, 1, 0, 0, 0}));
  cuvil_k_isinf_f32(X.data(), Y.data(), int64_t(X.size()), 1, 0);
  EXPECT_EQ(Y, (std::vector<uint8_t>{0, 0, 0, 1, 0, 0}));
  cuvil_k_isinf_f32(X.data(), Y.data(), int64_t(X.size()), 0, 0);
  EXPECT_EQ(Y, (std::vector<uint8_t>(X.size(), 0)));
  std::vector<uint8_t> B = {0, 1, 1, 0};
  cuvil_k_not_bool(B.data(), B.data(), 4);
  EXPECT_EQ(B, (std::vector<uint8_t>{1, 0, 0, 1}));
}

using ParamKernel = void (*)(const float *, float *, int64_t, float);

TEST(ActivationKernels, OneParameter) {
  struct Case {
    const char *Name;
    ParamKernel Kernel;
    float Alpha;
    std::function<double(double, double)> Ref;
  };
  const Case Cases[] = {
      {"leaky_relu", cuvil_k_leaky_relu_f32, 0.1f,
       [](double X, double A) { return X < 0 ? A * X : X; }},
      {"elu", cuvil_k_elu_f32, 2.0f,
       [](double X, double A) { return X < 0 ? A * std::expm1(X) : X; }},
      {"celu", cuvil_k_celu_f32, 1.5f,
       [](double X, double A) {
         return std::max(0.0, X) + std::min(0.0, A * std::expm1(X / A));
       }},
      {"celu_negative_alpha", cuvil_k_celu_f32, -0.5f,
       [](double X, double A) {
         return std::max(0.0, X) + std::min(0.0, A * std::expm1(X / A));
       }},
      {"thresholded_relu", cuvil_k_thresholded_relu_f32, 1.0f,
       [](double X, double A) { return X > A ? X : 0; }},
  };
  for (const Case &C : Cases) {
    std::vector<float> X = randomFloats(1000, 11, -4, 4);
    X.push_back(-1e-6f);
    X.push_back(1.0f);
    std::vector<float> Y = X;
    C.Kernel(Y.data(), Y.data(), int64_t(Y.size()), C.Alpha);
    for (size_t I = 0; I < X.size(); ++I) {
      const double Want = C.Ref(X[I], C.Alpha);
      EXPECT_NEAR(Y[I], Want, 1e-7 + 1e-6 * std::abs(Want))
          << C.Name << "(" << X[I] << ")";
    }
  }
}

TEST(ActivationKernels, TwoParameters) {
  std::vector<float> X = randomFloats(1000, 13, -6, 6);
  std::vector<float> Y = X;
  const float Alpha = 1.6732632f, Gamma = 1.0507010f;
  cuvil_k_selu_f32(Y.data(), Y.data(), int64_t(Y.size()), Alpha, Gamma);
  for (size_t I = 0; I < X.size(); ++I) {
    const double V = X[I];
    const double Want = V <= 0 ? Gamma * Alpha * std::expm1(V) : Gamma * V;
    EXPECT_NEAR(Y[I], Want, 1e-7 + 1e-6 * std::abs(Want)) << X[I];
  }
  Y = X;
  cuvil_k_hard_sigmoid_f32(Y.data(), Y.data(), int64_t(Y.size()), 0.2f, 0.5f);
  for (size_t I = 0; I < X.size(); ++I)
    EXPECT_NEAR(Y[I], std::clamp(0.2 * X[I] + 0.5, 0.0, 1.0), 1e-7) << X[I];
}

TEST(ActivationKernels, PReluBroadcastsSlopeInPlace) {
  // x: [2, 3, 4], slope: [3, 1] broadcast to it.
  std::vector<float> X = randomFloats(24, 17, -1, 1);
  const std::vector<float> Slope = {0.5f, -2.0f, 3.0f};
  std::vector<float> Y = X;
  const int64_t Shape[CUVIL_MAX_RANK] = {1, 1, 1, 2, 3, 4};
  const int64_t XStr[CUVIL_MAX_RANK] = {0, 0, 0, 12, 4, 1};
  const int64_t SStr[CUVIL_MAX_RANK] = {0, 0, 0, 0, 1, 0};
  cuvil_k_prelu_f32(Y.data(), Slope.data(), Y.data(), Shape, XStr, SStr);
  for (int64_t I = 0; I < 24; ++I) {
    const float S = Slope[(I / 4) % 3];
    EXPECT_EQ(Y[I], X[I] < 0 ? S * X[I] : X[I]) << I;
  }
}

} // namespace
