//===- rnn_test.cpp - The recurrent kernel (RNN, GRU, LSTM) ---------------===//
//
// cuvil_k_recurrent_f32 against a double-precision reference written here
// from the ONNX equations, one gate at a time with whole matrices, over the
// paths the backend tests do not reach: both directions, per-row sequence
// lengths, batch-major layout, peepholes, clip, linear_before_reset,
// input_forget and non-default activations.
//
//===----------------------------------------------------------------------===//
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

enum Cell { RnnCell = 0, GruCell = 1, LstmCell = 2 };
enum Act { Relu = 0, Tanh = 1, Sigmoid = 2, HardSigmoid = 7, Softsign = 9 };

double act(int A, double V) {
  switch (A) {
  case Relu: return V > 0 ? V : 0;
  case Tanh: return std::tanh(V);
  case Sigmoid: return 1 / (1 + std::exp(-V));
  case HardSigmoid: return std::fmin(1.0, std::fmax(0.0, 0.2 * V + 0.5));
  default: return V / (1 + std::fabs(V));
  }
}

struct Case {
  Cell C = RnnCell;
  int64_t T = 3, N = 2, I = 3, H = 4, D = 1;
  bool Reverse = false, Layout = false, Bias = true, Init = false;
  bool Peep = false, InputForget = false, LinearBeforeReset = false;
  std::vector<int32_t> Lens; ///< Empty: every row has T steps.
  std::vector<int> Acts;     ///< Per direction; empty: the defaults.
  float Clip = 0;
};

int64_t gates(Cell C) { return C == LstmCell ? 4 : C == GruCell ? 3 : 1; }
int64_t numActs(Cell C) { return C == LstmCell ? 3 : C == GruCell ? 2 : 1; }

struct Tensors {
  std::vector<float> X, W, R, B, H0, C0, P;
};

Tensors randomInputs(const Case &K, std::mt19937 &Rng) {
  std::normal_distribution<float> Nd(0.0f, 0.5f);
  auto Fill = [&](size_t Count) {
    std::vector<float> V(Count);
    for (float &F : V)
      F = Nd(Rng);
    return V;
  };
  int64_t GH = gates(K.C) * K.H;
  Tensors S;
  S.X = Fill(K.T * K.N * K.I);
  S.W = Fill(K.D * GH * K.I);
  S.R = Fill(K.D * GH * K.H);
  if (K.Bias)
    S.B = Fill(K.D * 2 * GH);
  if (K.Init) {
    S.H0 = Fill(K.D * K.N * K.H);
    S.C0 = Fill(K.D * K.N * K.H);
  }
  if (K.Peep)
    S.P = Fill(K.D * 3 * K.H);
  return S;
}

/// Y, Y_h, Y_c (in the case's layout), computed in double.
struct Outputs {
  std::vector<double> Y, Yh, Yc;
};

Outputs reference(const Case &K, const Tensors &S, const std::vector<int> &A) {
  const int64_t H = K.H, GH = gates(K.C) * H;
  Outputs O;
  O.Y.assign(K.T * K.D * K.N * H, 0.0);
  O.Yh.assign(K.D * K.N * H, 0.0);
  O.Yc = O.Yh;
  auto XAt = [&](int64_t T, int64_t N) {
    return &S.X[(K.Layout ? N * K.T + T : T * K.N + N) * K.I];
  };
  auto StateAt = [&](int64_t D, int64_t N) {
    return (K.Layout ? N * K.D + D : D * K.N + N) * H;
  };
  auto YAt = [&](int64_t T, int64_t D, int64_t N) {
    return (K.Layout ? (N * K.T + T) * K.D + D : (T * K.D + D) * K.N + N) * H;
  };
  auto Clip = [&](double V) {
    return K.Clip > 0 ? std::fmin(K.Clip, std::fmax(-K.Clip, V)) : V;
  };
  for (int64_t D = 0; D < K.D; ++D) {
    const float *W = &S.W[D * GH * K.I], *R = &S.R[D * GH * H];
    const int *F = &A[D * numActs(K.C)];
    // Row G of W . x + bias Wb (and of R . h + Rb).
    auto WX = [&](int64_t G, const float *X) {
      double S0 = K.Bias ? S.B[D * 2 * GH + G] : 0;
      for (int64_t J = 0; J < K.I; ++J)
        S0 += double(W[G * K.I + J]) * X[J];
      return S0;
    };
    auto RH = [&](int64_t G, const std::vector<double> &V) {
      double S0 = K.Bias ? S.B[D * 2 * GH + GH + G] : 0;
      for (int64_t J = 0; J < H; ++J)
        S0 += double(R[G * H + J]) * V[J];
      return S0;
    };
    bool Back = K.D == 2 ? D == 1 : K.Reverse;
    for (int64_t N = 0; N < K.N; ++N) {
      std::vector<double> Hs(H, 0.0), Cs(H, 0.0);
      if (K.Init)
        for (int64_t J = 0; J < H; ++J) {
          Hs[J] = S.H0[StateAt(D, N) + J];
          Cs[J] = S.C0[StateAt(D, N) + J];
        }
      int64_t L = K.Lens.empty() ? K.T : K.Lens[N];
      for (int64_t Step = 0; Step < L; ++Step) {
        int64_t T = Back ? L - 1 - Step : Step;
        const float *X = XAt(T, N);
        std::vector<double> Next(H);
        if (K.C == RnnCell) {
          for (int64_t J = 0; J < H; ++J)
            Next[J] = act(F[0], Clip(WX(J, X) + RH(J, Hs)));
        } else if (K.C == GruCell) {
          std::vector<double> Z(H), Rg(H), RHs(H);
          for (int64_t J = 0; J < H; ++J) {
            Z[J] = act(F[0], Clip(WX(J, X) + RH(J, Hs)));
            Rg[J] = act(F[0], Clip(WX(H + J, X) + RH(H + J, Hs)));
            RHs[J] = Rg[J] * Hs[J];
          }
          for (int64_t J = 0; J < H; ++J) {
            double Pre = K.LinearBeforeReset
                             ? WX(2 * H + J, X) + Rg[J] * RH(2 * H + J, Hs)
                             : WX(2 * H + J, X) + RH(2 * H + J, RHs);
            double Cand = act(F[1], Clip(Pre));
            Next[J] = (1 - Z[J]) * Cand + Z[J] * Hs[J];
          }
        } else {
          const float *P = K.Peep ? &S.P[D * 3 * H] : nullptr;
          for (int64_t J = 0; J < H; ++J) {
            double C0 = Cs[J];
            double Ig =
                act(F[0], Clip(WX(J, X) + RH(J, Hs) + (P ? P[J] * C0 : 0)));
            double Fg =
                K.InputForget
                    ? 1 - Ig
                    : act(F[0], Clip(WX(2 * H + J, X) + RH(2 * H + J, Hs) +
                                     (P ? P[2 * H + J] * C0 : 0)));
            double Cand = act(F[1], Clip(WX(3 * H + J, X) + RH(3 * H + J, Hs)));
            Cs[J] = Fg * C0 + Ig * Cand;
            double Og = act(F[0], Clip(WX(H + J, X) + RH(H + J, Hs) +
                                       (P ? P[H + J] * Cs[J] : 0)));
            Next[J] = Og * act(F[2], Cs[J]);
          }
        }
        Hs = Next;
        for (int64_t J = 0; J < H; ++J)
          O.Y[YAt(T, D, N) + J] = Hs[J];
      }
      for (int64_t J = 0; J < H; ++J) {
        O.Yh[StateAt(D, N) + J] = Hs[J];
        O.Yc[StateAt(D, N) + J] = Cs[J];
      }
    }
  }
  return O;
}

void check(const Case &K) {
  std::mt19937 Rng(1234);
  Tensors S = randomInputs(K, Rng);
  std::vector<int> A = K.Acts;
  if (A.empty())
    for (int64_t D = 0; D < K.D; ++D)
      for (int64_t J = 0; J < numActs(K.C); ++J)
        A.push_back(K.C == RnnCell || J > 0 ? Tanh : Sigmoid);
  std::vector<int64_t> Codes(K.D * 9, 0);
  auto Bits = [](float F) {
    uint32_t U;
    std::memcpy(&U, &F, sizeof U);
    return int64_t(U);
  };
  for (int64_t D = 0; D < K.D; ++D)
    for (int64_t J = 0; J < numActs(K.C); ++J) {
      int Code = A[D * numActs(K.C) + J];
      Codes[D * 9 + J * 3] = Code;
      if (Code == HardSigmoid) { // alpha, beta: ONNX HardSigmoid's defaults
        Codes[D * 9 + J * 3 + 1] = Bits(0.2f);
        Codes[D * 9 + J * 3 + 2] = Bits(0.5f);
      }
    }
  std::vector<float> Y(K.T * K.D * K.N * K.H, -7.0f), Yh(K.D * K.N * K.H),
      Yc(Yh.size()), Work((gates(K.C) + 1) * K.H);
  auto Ptr = [](const std::vector<float> &V) {
    return V.empty() ? nullptr : V.data();
  };
  cuvil_k_recurrent_f32(
      S.X.data(), S.W.data(), S.R.data(), Ptr(S.B),
      K.Lens.empty() ? nullptr : K.Lens.data(), Ptr(S.H0),
      K.C == LstmCell ? Ptr(S.C0) : nullptr, Ptr(S.P), Y.data(), Yh.data(),
      K.C == LstmCell ? Yc.data() : nullptr, Work.data(), K.C, K.T, K.N, K.I,
      K.H, K.D, K.Reverse, K.Layout, Codes.data(), K.Clip, K.LinearBeforeReset,
      K.InputForget);
  Outputs O = reference(K, S, A);
  for (size_t I = 0; I < Y.size(); ++I)
    ASSERT_NEAR(Y[I], O.Y[I], 1e-5) << "Y[" << I << "]";
  for (size_t I = 0; I < Yh.size(); ++I)
    ASSERT_NEAR(Yh[I], O.Yh[I], 1e-5) << "Y_h[" << I << "]";
  if (K.C != LstmCell)
    return;
  for (size_t I = 0; I < Yc.size(); ++I)
    ASSERT_NEAR(Yc[I], O.Yc[I], 1e-5) << "Y_c[" << I << "]";
}

TEST(RecurrentKernel, RnnBidirectionalWithInitialState) {
  Case K;
  K.D = 2;
  K.Init = true;
  check(K);
}

TEST(RecurrentKernel, RnnReverseShortRowsZeroTheirTail) {
  Case K;
  K.Reverse = true;
  K.Lens = {3, 1};
  K.Acts = {Relu};
  K.Clip = 0.6f;
  check(K);
}

TEST(RecurrentKernel, GruResetBeforeAndAfterTheLinearMap) {
  for (bool Lbr : {false, true}) {
    Case K;
    K.C = GruCell;
    K.LinearBeforeReset = Lbr;
    K.D = 2;
    K.Layout = true;
    K.Lens = {2, 3};
    check(K);
  }
}

TEST(RecurrentKernel, GruWithoutBiasAndOtherActivations) {
  Case K;
  K.C = GruCell;
  K.Bias = false;
  K.Acts = {HardSigmoid, Softsign};
  check(K);
}

TEST(RecurrentKernel, LstmPeepholesBothDirectionsBatchMajor) {
  Case K;
  K.C = LstmCell;
  K.D = 2;
  K.Peep = true;
  K.Init = true;
  K.Layout = true;
  K.Lens = {3, 2};
  check(K);
}

TEST(RecurrentKernel, LstmInputForgetAndClip) {
  Case K;
  K.C = LstmCell;
  K.Reverse = true;
  K.InputForget = true;
  K.Clip = 0.5f;
  check(K);
}

} // namespace
