/* cuvil_q_requant (quant/requant.h) in int32 lanes on AArch64, shared by
 * the depthwise (qdepthwise.c) and packed (qpacked.c) integer kernels.
 * Each lane may be a different channel: the constants are vectors. */
#ifndef CUVIL_KERNELS_OPT_QREQUANT_H
#define CUVIL_KERNELS_OPT_QREQUANT_H

#include "cuvil/kernels.h"

/* The shifts the int32 form is exact for (see cuvil_qrq_lanes). */
#define CUVIL_QRQ_SHIFT_MIN 32
#define CUVIL_QRQ_SHIFT_MAX 53

/* round31 of a channel of shift `shift` (in range) for zero point y_zp. */
static inline int32_t cuvil_qrq_round31(int64_t shift, int64_t y_zp) {
  const int64_t s = shift - 31;
  return (int32_t)(((int64_t)1 << (s - 1)) - 1 + y_zp * ((int64_t)1 << s));
}

/* Whether no accumulator of magnitude at most bound makes acc * mult /
 * 2^shift an exact tie (a fraction of exactly one half): that needs
 * acc * mult = (2 i + 1) 2^(shift - 1), i.e. acc a nonzero multiple of
 * 2^e with e = shift - 1 - ctz(mult), so none exists below 2^e. A float32
 * scale's multiplier has at least 7 low zero bits, so with shift 38 and up
 * a layer's accumulators (|bias| + K 2^15 at most) are far below it. Then
 * rounding half up is rounding half to even (cuvil_qrq_lanes_tf). */
static inline int cuvil_qrq_tiefree(int64_t bound, int32_t mult,
                                    int64_t shift) {
  if (mult == 0)
    return 1;
  const int64_t e = shift - 1 - __builtin_ctz((uint32_t)mult);
  return e >= 62 || (e > 0 && bound < ((int64_t)1 << e));
}

#if defined(__aarch64__)
#include <arm_neon.h>
#define CUVIL_QRQ_TF 1 /* cuvil_qrq_lanes_tf exists */

/* rhe(acc * mult / 2^shift) + y_zp per lane, no int64 lanes: with
 * v = acc * mult = hi * 2^31 + L (0 <= L < 2^31), hi = sqdmulh(acc, mult)
 * exactly (mult >= 0, so it never saturates) and L = (acc * mult mod 2^32)
 * mod 2^31. For s = shift - 31 >= 1 the result is (hi + round31 + bit) >> s
 * with round31 = 2^(s - 1) - 1 + y_zp * 2^s (cuvil_qrq_round31) and
 * bit = ((hi >> s) & 1) | (L != 0): L only decides an exact tie of hi,
 * which it breaks upwards. The adds saturate: a sum out of int32 range
 * shifts to beyond 2^(31 - s) >= 2^9 in magnitude (s <= 22), and a
 * saturated one as well, so both clamp to the same 8-bit bound. Per lane:
 * nshift = -s, odd = 2^s. 9 instructions per 4 lanes where the int64 form
 * took 19. */
static inline __attribute__((always_inline)) int32x4_t
cuvil_qrq_lanes(int32x4_t acc, int32x4_t mult, int32x4_t nshift, int32x4_t odd,
                int32x4_t round31) {
  const int32x4_t hi = vqdmulhq_s32(acc, mult);
  const uint32x4_t sticky =
      vtstq_s32(vmulq_s32(acc, mult), vdupq_n_s32(0x7fffffff));
  /* bit as a mask (-1 or 0), subtracted: + 1 */
  const int32x4_t bit =
      vreinterpretq_s32_u32(vorrq_u32(sticky, vtstq_s32(hi, odd)));
  return vshlq_s32(vqsubq_s32(vqaddq_s32(hi, round31), bit), nshift);
}

/* cuvil_qrq_lanes for lanes whose channels cuvil_qrq_tiefree holds for
 * their accumulators: no tie, so (acc * mult / 2^31 + 2^(s - 1)) >> s, and
 * as hi's dropped fraction never carries past a multiple of 2^s there,
 * (hi + round32) >> s with round32 = round31 + 1. 3 instructions per 4
 * lanes. */
static inline __attribute__((always_inline)) int32x4_t cuvil_qrq_lanes_tf(
    int32x4_t acc, int32x4_t mult, int32x4_t nshift, int32x4_t round32) {
  return vshlq_s32(vqaddq_s32(vqdmulhq_s32(acc, mult), round32), nshift);
}
#else
#define CUVIL_QRQ_TF 0
#endif

#endif
