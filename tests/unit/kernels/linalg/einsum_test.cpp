//===- einsum_test.cpp - Einsum kernels against a double reference --------===//
//
// cuvil_k_einsum_{f32,f64} on contractions written as letter equations
// (matrix products, transposes, diagonals, traces, broadcasting, three and
// four operands, empty sums), and cuvil_k_einsum_bmm_f32 with every
// transposition and a broadcast batch dimension, each against a
// straightforward double-precision loop over every label.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include <map>

namespace {

using namespace kernel_test;

constexpr int64_t MaxL = CUVIL_EINSUM_MAX_LABELS;

/// The kernel arguments of an explicit letter equation ("ij,jk->ik") on
/// operands of the given shapes: output labels first, then the summed ones
/// in order of appearance; a repeated letter adds its strides, and a
/// dimension of 1 under a longer label broadcasts (stride 0).
struct Contraction {
  int64_t NumOut = 0;
  std::vector<int64_t> Extent;  // per label
  std::vector<int64_t> Strides; // CUVIL_EINSUM_MAX_INPUTS x MaxL
  Shape OutShape;

  Contraction(const std::vector<std::string> &Terms, const std::string &Out,
              const std::vector<Shape> &Shapes)
      : Strides(CUVIL_EINSUM_MAX_INPUTS * MaxL, 0) {
    std::map<char, int64_t> Id;
    std::map<char, int64_t> Size;
    for (size_t P = 0; P < Terms.size(); ++P)
      for (size_t D = 0; D < Terms[P].size(); ++D)
        Size[Terms[P][D]] = std::max(Size[Terms[P][D]], Shapes[P][D]);
    std::string Order = Out;
    for (const std::string &T : Terms)
      for (char C : T)
        if (Order.find(C) == std::string::npos)
          Order += C;
    for (char C : Order) {
      Id[C] = static_cast<int64_t>(Extent.size());
      Extent.push_back(Size[C]);
    }
    NumOut = static_cast<int64_t>(Out.size());
    for (char C : Out)
      OutShape.push_back(Size[C]);
    for (size_t P = 0; P < Terms.size(); ++P) {
      Shape Dense = denseStrides(Shapes[P]);
      for (size_t D = 0; D < Terms[P].size(); ++D)
        if (Shapes[P][D] == Size[Terms[P][D]])
          Strides[P * MaxL + Id[Terms[P][D]]] += Dense[D];
    }
  }
  int64_t numLabels() const { return static_cast<int64_t>(Extent.size()); }

  /// y by a plain odometer over every label, in double.
  template <typename T>
  std::vector<double> reference(const std::vector<std::vector<T>> &X) const {
    std::vector<double> Y(numElements(OutShape), 0.0);
    int64_t Total = 1;
    for (int64_t E : Extent)
      Total *= E;
    std::vector<int64_t> Idx(Extent.size(), 0);
    for (int64_t T0 = 0; T0 < Total; ++T0) {
      int64_t Rest = T0, O = 0, OutStride = 1;
      for (size_t L = Extent.size(); L-- > 0;) {
        Idx[L] = Rest % Extent[L];
        Rest /= Extent[L];
      }
      for (int64_t L = NumOut; L-- > 0;) {
        O += Idx[L] * OutStride;
        OutStride *= Extent[L];
      }
      double Prod = 1.0;
      for (size_t P = 0; P < X.size(); ++P) {
        int64_t At = 0;
        for (size_t L = 0; L < Extent.size(); ++L)
          At += Idx[L] * Strides[P * MaxL + L];
        Prod *= X[P][At];
      }
      Y[O] += Prod;
    }
    return Y;
  }
};

struct EinsumCase {
  std::string Name;
  std::vector<std::string> Terms;
  std::string Out;
  std::vector<Shape> Shapes;
};

class EinsumKernel : public testing::TestWithParam<EinsumCase> {};

TEST_P(EinsumKernel, F32MatchesTheReference) {
  const EinsumCase &C = GetParam();
  Contraction K(C.Terms, C.Out, C.Shapes);
  std::vector<std::vector<float>> X;
  for (size_t P = 0; P < C.Shapes.size(); ++P)
    X.push_back(randomFloats(numElements(C.Shapes[P]), 11 + P));
  const float *Ptr[CUVIL_EINSUM_MAX_INPUTS] = {};
  for (size_t P = 0; P < X.size(); ++P)
    Ptr[P] = X[P].data();
  std::vector<float> Y(numElements(K.OutShape), NaN);
  cuvil_k_einsum_f32(Ptr[0], Ptr[1], Ptr[2], Ptr[3], Y.data(),
                     static_cast<int64_t>(X.size()), K.NumOut, K.numLabels(),
                     K.Extent.data(), K.Strides.data());
  EXPECT_TRUE(allClose(Y, K.reference(X), LinearRtol, LinearAtol));
}

TEST_P(EinsumKernel, F64MatchesTheReference) {
  const EinsumCase &C = GetParam();
  Contraction K(C.Terms, C.Out, C.Shapes);
  std::vector<std::vector<double>> X;
  for (size_t P = 0; P < C.Shapes.size(); ++P) {
    std::vector<float> F = randomFloats(numElements(C.Shapes[P]), 23 + P);
    X.emplace_back(F.begin(), F.end());
  }
  const double *Ptr[CUVIL_EINSUM_MAX_INPUTS] = {};
  for (size_t P = 0; P < X.size(); ++P)
    Ptr[P] = X[P].data();
  std::vector<double> Y(numElements(K.OutShape), 0.0);
  cuvil_k_einsum_f64(Ptr[0], Ptr[1], Ptr[2], Ptr[3], Y.data(),
                     static_cast<int64_t>(X.size()), K.NumOut, K.numLabels(),
                     K.Extent.data(), K.Strides.data());
  std::vector<double> Want = K.reference(X);
  ASSERT_EQ(Y.size(), Want.size());
  for (size_t I = 0; I < Y.size(); ++I)
    EXPECT_NEAR(Y[I], Want[I], 1e-12 * (1 + std::abs(Want[I]))) << "at " << I;
}

INSTANTIATE_TEST_SUITE_P(
    Equations, EinsumKernel,
    testing::Values(
        EinsumCase{"MatMul", {"ij", "jk"}, "ik", {{3, 5}, {5, 4}}},
        EinsumCase{
            "BatchMatMul", {"bij", "bjk"}, "bik", {{2, 3, 5}, {2, 5, 4}}},
        EinsumCase{"Attention",
                   {"bhqd", "bhkd"},
                   "bhqk",
                   {{2, 3, 4, 8}, {2, 3, 5, 8}}},
        EinsumCase{"Transpose", {"ijk"}, "kij", {{2, 3, 4}}},
        EinsumCase{"RowSum", {"ij"}, "i", {{3, 7}}},
        EinsumCase{"SumAll", {"ijk"}, "", {{2, 3, 4}}},
        EinsumCase{"InnerProduct", {"i", "i"}, "", {{9}, {9}}},
        EinsumCase{"OuterProduct", {"i", "j"}, "ij", {{3}, {4}}},
        EinsumCase{"Diagonal", {"ii"}, "i", {{5, 5}}},
        EinsumCase{"Trace", {"ii"}, "", {{6, 6}}},
        EinsumCase{"BatchDiagonal", {"bii"}, "bi", {{3, 4, 4}}},
        EinsumCase{"DiagonalOfThree", {"iij"}, "ji", {{3, 3, 2}}},
        EinsumCase{"Broadcast", {"bij", "bjk"}, "bik", {{1, 3, 5}, {4, 5, 2}}},
        EinsumCase{
            "Bilinear", {"bn", "anm", "bm"}, "ba", {{2, 3}, {4, 3, 5}, {2, 5}}},
        EinsumCase{"FourOperands",
                   {"ab", "bc", "cd", "de"},
                   "ae",
                   {{2, 3}, {3, 4}, {4, 2}, {2, 3}}},
        EinsumCase{
            "SummedMiddle", {"iaj", "jbi"}, "ab", {{3, 4, 5}, {5, 2, 3}}},
        EinsumCase{"EmptySum", {"ij", "jk"}, "ik", {{3, 0}, {0, 2}}},
        EinsumCase{"EmptyOutput", {"ij", "jk"}, "ik", {{0, 4}, {4, 2}}}),
    caseName<EinsumCase>);

TEST(EinsumKernel, EmptySumWritesZeros) {
  Contraction K({"ij", "jk"}, "ik", {{2, 0}, {0, 3}});
  std::vector<float> Y(6, NaN);
  cuvil_k_einsum_f32(nullptr, nullptr, nullptr, nullptr, Y.data(), 2, K.NumOut,
                     K.numLabels(), K.Extent.data(), K.Strides.data());
  for (float V : Y)
    EXPECT_EQ(V, 0.0f);
}

struct BmmCase {
  std::string Name;
  int64_t TransA, TransB;
};

class EinsumBmm : public testing::TestWithParam<BmmCase> {};

// [2, 3] batches of [M, K] x [K, N]; A's first batch dimension broadcasts.
TEST_P(EinsumBmm, EveryTranspositionMatchesTheReference) {
  const BmmCase &P = GetParam();
  const int64_t M = 3, N = 5, K = 4, B0 = 2, B1 = 3;
  std::vector<float> A = randomFloats(B1 * M * K, 5);
  std::vector<float> B = randomFloats(B0 * B1 * K * N, 6);
  const int64_t Batch[4] = {1, 1, B0, B1};
  const int64_t AStr[4] = {0, 0, 0, M * K};
  const int64_t BStr[4] = {0, 0, B1 * K * N, K * N};
  std::vector<float> Y(B0 * B1 * M * N, NaN);
  cuvil_k_einsum_bmm_f32(A.data(), B.data(), Y.data(), M, N, K, P.TransA,
                         P.TransB, Batch, AStr, BStr);
  std::vector<double> Want(Y.size(), 0.0);
  for (int64_t I0 = 0; I0 < B0; ++I0)
    for (int64_t I1 = 0; I1 < B1; ++I1)
      for (int64_t I = 0; I < M; ++I)
        for (int64_t J = 0; J < N; ++J) {
          double S = 0.0;
          for (int64_t Q = 0; Q < K; ++Q) {
            const float *Am = &A[I1 * M * K];
            const float *Bm = &B[(I0 * B1 + I1) * K * N];
            S += double(P.TransA ? Am[Q * M + I] : Am[I * K + Q]) *
                 double(P.TransB ? Bm[J * K + Q] : Bm[Q * N + J]);
          }
          Want[((I0 * B1 + I1) * M + I) * N + J] = S;
        }
  EXPECT_TRUE(allClose(Y, Want, LinearRtol, LinearAtol));
}

INSTANTIATE_TEST_SUITE_P(Transpositions, EinsumBmm,
                         testing::Values(BmmCase{"NN", 0, 0},
                                         BmmCase{"TN", 1, 0},
                                         BmmCase{"NT", 0, 1},
                                         BmmCase{"TT", 1, 1}),
                         caseName<BmmCase>);

} // namespace
