// The tie-free requantization (kernels/opt/qrequant.h): where
// cuvil_qrq_tiefree holds for a channel, cuvil_qrq_lanes_tf's arithmetic
// (the high product, a rounding constant, an arithmetic shift; modelled
// here lane by lane, as AArch64 computes it) equals round half to even of
// acc * mult / 2^shift, computed here in int64 without the kernels' code;
// and where it does not hold, ties occur and the two differ.
#include "kernels/opt/qrequant.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

namespace {

// rhe(acc * mult / 2^shift) + zp, in int64 (shift in [32, 53]).
int64_t exactRequant(int32_t Acc, int32_t Mult, int64_t Shift, int64_t Zp) {
  const int64_t V = static_cast<int64_t>(Acc) * Mult;
  const int64_t Q = V >> Shift;
  const int64_t Rem = V - Q * (int64_t{1} << Shift);
  const int64_t Half = int64_t{1} << (Shift - 1);
  return Q + (Rem > Half || (Rem == Half && (Q & 1))) + Zp;
}

// cuvil_qrq_lanes_tf for one lane: sqdmulh (the product's bits from 31 up,
// floored), plus round32 = cuvil_qrq_round31 + 1, shifted right by
// shift - 31 (no saturation: the accumulators here stay far inside).
int64_t tieFreeLane(int32_t Acc, int32_t Mult, int64_t Shift, int64_t Zp) {
  const int64_t Hi = (static_cast<int64_t>(Acc) * Mult) >> 31;
  return (Hi + cuvil_qrq_round31(Shift, Zp) + 1) >> (Shift - 31);
}

// Multipliers as cuvilc makes them from float32 scales (a 24-bit
// mantissa in [2^30, 2^31): at least 7 low zero bits), shifts over the
// int32 form's range, zero points, and accumulators up to each pair's
// bound: wherever the predicate holds, both forms agree.
TEST(QRequantTieFree, EqualsRoundHalfToEvenWhereItHolds) {
  std::mt19937 Rng(17);
  std::uniform_int_distribution<int32_t> Mantissa(1 << 23, (1 << 24) - 1);
  std::uniform_int_distribution<int64_t> Shift(CUVIL_QRQ_SHIFT_MIN,
                                               CUVIL_QRQ_SHIFT_MAX);
  std::uniform_int_distribution<int64_t> Zp(-128, 255);
  int64_t Held = 0, Checked = 0;
  for (int Pair = 0; Pair < 4000; ++Pair) {
    const int32_t Mult = Mantissa(Rng) << 7;
    const int64_t S = Shift(Rng), Z = Zp(Rng);
    // The largest bound the predicate accepts for this pair (E >= 1: the
    // mantissa leaves at most 30 low zero bits), within int32.
    const int64_t E = S - 1 - __builtin_ctz(static_cast<uint32_t>(Mult));
    const int64_t Bound = E >= 31 ? INT32_MAX : (int64_t{1} << E) - 1;
    if (!cuvil_qrq_tiefree(Bound, Mult, S))
      continue;
    ++Held;
    std::uniform_int_distribution<int64_t> Acc(-Bound, Bound);
    for (int I = 0; I < 250; ++I, ++Checked) {
      const int32_t A = static_cast<int32_t>(Acc(Rng));
      ASSERT_EQ(tieFreeLane(A, Mult, S, Z), exactRequant(A, Mult, S, Z))
          << "acc " << A << " mult " << Mult << " shift " << S;
    }
  }
  EXPECT_GT(Held, 1000);
  EXPECT_GT(Checked, 250000);
}

// A multiplier of 2^30 at shift 38 makes every acc = 128 (2k + 1) an exact
// tie: the predicate refuses accumulators of that size, and rounding half
// up would indeed give another value there.
TEST(QRequantTieFree, RefusesWhereTiesOccur) {
  const int32_t Mult = 1 << 30;
  EXPECT_FALSE(cuvil_qrq_tiefree(1000, Mult, 38));
  EXPECT_TRUE(cuvil_qrq_tiefree(127, Mult, 38));
  EXPECT_EQ(exactRequant(128, Mult, 38, 0), 0);   // 0.5: to even
  EXPECT_EQ(tieFreeLane(128, Mult, 38, 0), 1);    // half up
  EXPECT_EQ(exactRequant(384, Mult, 38, 0), 2);   // 1.5
  EXPECT_TRUE(cuvil_qrq_tiefree(1 << 20, 0, 40)); // a zero multiplier
}

} // namespace
