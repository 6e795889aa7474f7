// The element-wise integer kernels in int32 lanes (kernels/opt/
// qelementwise.c) against the reference kernels, bit for bit, and both
// against the sum computed here in double (exact for these magnitudes) and
// rounded half to even with std::nearbyint. Cases: every pair of input and
// output types, zero points at both ends of their range, multipliers and
// shifts across the lanes form's range and beyond it (where the kernel
// hands over to the reference), exact ties (power-of-two ratios), clamps
// narrower than the type, sizes around a vector's length, and the sum
// written over either input.
#include "cuvil/kernels.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace {

struct AddCase {
  int64_t AType, BType, YType, AZp, BZp, YZp;
  int64_t AMult, BMult, Shift, YLo, YHi;
};

int64_t lo8(int64_t T) { return T == CUVIL_Q_U8 ? 0 : -128; }
int64_t hi8(int64_t T) { return T == CUVIL_Q_U8 ? 255 : 127; }
int64_t val8(uint8_t Byte, int64_t T) {
  return T == CUVIL_Q_U8 ? Byte : static_cast<int8_t>(Byte);
}

/// The expected byte of element i: the rational sum rounded half to even.
uint8_t expected(const AddCase &C, uint8_t A, uint8_t B) {
  const double V = static_cast<double>((val8(A, C.AType) - C.AZp) * C.AMult +
                                       (val8(B, C.BType) - C.BZp) * C.BMult);
  double Q = std::nearbyint(std::ldexp(V, -static_cast<int>(C.Shift))) + C.YZp;
  Q = std::min<double>(std::max<double>(Q, C.YLo), C.YHi);
  return static_cast<uint8_t>(static_cast<int64_t>(Q));
}

enum class Where { Apart, OverA, OverB };

/// Runs both kernels on n random bytes per input and compares.
void check(const AddCase &C, int64_t N, Where W, unsigned Seed) {
  std::mt19937 Rng(Seed);
  std::uniform_int_distribution<int> Byte(0, 255);
  std::vector<uint8_t> A(N), B(N);
  for (int64_t I = 0; I < N; ++I) {
    A[I] = static_cast<uint8_t>(Byte(Rng));
    B[I] = static_cast<uint8_t>(Byte(Rng));
  }
  auto Run = [&](bool Lanes) {
    std::vector<uint8_t> AIn = A, BIn = B, Y(N, 0xA5);
    uint8_t *Out = W == Where::OverA   ? AIn.data()
                   : W == Where::OverB ? BIn.data()
                                       : Y.data();
    (Lanes ? cuvil_k_qadd_lanes_s8 : cuvil_k_qadd_s8)(
        AIn.data(), BIn.data(), Out, N, C.AType, C.BType, C.YType, C.AZp, C.BZp,
        C.AMult, C.BMult, C.Shift, C.YZp, C.YLo, C.YHi);
    return std::vector<uint8_t>(Out, Out + N);
  };
  const std::vector<uint8_t> Ref = Run(false), Got = Run(true);
  for (int64_t I = 0; I < N; ++I) {
    ASSERT_EQ(Ref[I], expected(C, A[I], B[I]))
        << "reference, element " << I << " of " << N;
    ASSERT_EQ(Got[I], Ref[I])
        << "lanes, element " << I << " of " << N << " (a " << int(A[I])
        << ", b " << int(B[I]) << ", shift " << C.Shift << ")";
  }
}

TEST(QAddLanes, MatchesReferenceOverTypesZeroPointsAndScales) {
  std::mt19937 Rng(20261206);
  const int64_t Sizes[] = {1, 3, 15, 16, 17, 31, 64, 100, 1000, 4099};
  int Cases = 0;
  for (int64_t AT : {CUVIL_Q_U8, CUVIL_Q_I8})
    for (int64_t BT : {CUVIL_Q_U8, CUVIL_Q_I8})
      for (int64_t YT : {CUVIL_Q_U8, CUVIL_Q_I8})
        for (int Variant = 0; Variant < 6; ++Variant) {
          AddCase C;
          C.AType = AT;
          C.BType = BT;
          C.YType = YT;
          // Zero points at the ends of the range, then random.
          auto Zp = [&](int64_t T) {
            if (Variant == 0)
              return lo8(T);
            if (Variant == 1)
              return hi8(T);
            return std::uniform_int_distribution<int64_t>(lo8(T), hi8(T))(Rng);
          };
          C.AZp = Zp(AT);
          C.BZp = Zp(BT);
          C.YZp = Zp(YT);
          // Shifts over the lanes form's range, multipliers up to its
          // bound (the larger one normalised, as lower-qdq makes them).
          C.Shift = 1 + Variant * (CUVIL_QADD_LANES_SHIFT_MAX - 1) / 5;
          const int64_t Lim = int64_t{1} << CUVIL_QADD_LANES_BITS;
          C.AMult =
              std::uniform_int_distribution<int64_t>(Lim / 2, Lim - 1)(Rng);
          C.BMult = std::uniform_int_distribution<int64_t>(0, Lim - 1)(Rng);
          if (Variant % 2)
            std::swap(C.AMult, C.BMult);
          C.YLo = lo8(YT);
          C.YHi = hi8(YT);
          if (Variant == 4) { // a Relu after the sum: [zp, max], narrower
            C.YLo = C.YZp;
            C.YHi = std::max(C.YZp, hi8(YT) - 7);
          }
          for (Where W : {Where::Apart, Where::OverA, Where::OverB})
            check(C, Sizes[(Cases + static_cast<int>(W)) % 10], W,
                  static_cast<unsigned>(Cases));
          ++Cases;
        }
}

TEST(QAddLanes, TiesRoundToEven) {
  // Ratios 1/2 and 3/4 (multipliers 2^19 and 3 * 2^18, shift 20): every
  // odd (a - a_zp) gives a tie, so both directions of rounding occur.
  const AddCase C = {CUVIL_Q_I8, CUVIL_Q_U8, CUVIL_Q_I8, 3,    128, -5,
                     1 << 19,    3 << 18,    20,         -128, 127};
  for (Where W : {Where::Apart, Where::OverA, Where::OverB})
    check(C, 515, W, 7);
  // Shift 1: half of every sum is a tie.
  const AddCase D = {CUVIL_Q_U8, CUVIL_Q_U8, CUVIL_Q_U8, 0, 255, 0,
                     1,          1,          1,          0, 255};
  check(D, 300, Where::Apart, 8);
}

TEST(QAddLanes, OutOfItsRangeHandsOverToTheReference) {
  // A multiplier of 2^21 or more, or a shift above the lanes' maximum:
  // the int64 reference arithmetic, still the same results.
  const AddCase Wide = {CUVIL_Q_U8,
                        CUVIL_Q_I8,
                        CUVIL_Q_U8,
                        17,
                        -9,
                        101,
                        (int64_t{1} << 30) + 12345,
                        (int64_t{1} << 29) - 3,
                        31,
                        0,
                        255};
  check(Wide, 257, Where::Apart, 11);
  check(Wide, 257, Where::OverB, 12);
  const AddCase Deep = {CUVIL_Q_I8,
                        CUVIL_Q_I8,
                        CUVIL_Q_I8,
                        0,
                        0,
                        0,
                        (int64_t{1} << 30) + 7,
                        int64_t{1} << 29,
                        45,
                        -128,
                        127};
  check(Deep, 64, Where::OverA, 13);
}

} // namespace
