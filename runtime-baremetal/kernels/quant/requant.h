/* Fixed-point requantization shared by the integer kernels (reference and
 * optimised): see cuvil/kernels/qint.h for the contract. */
#ifndef CUVIL_KERNELS_QUANT_REQUANT_H
#define CUVIL_KERNELS_QUANT_REQUANT_H

#include "cuvil/kernels.h"

/* rhe(v / 2^shift) for shift in [1, 62], rounding half to even. */
static inline int64_t cuvil_q_rshift_rhe(int64_t v, int64_t shift) {
  const int64_t q = v >> shift; /* floor (arithmetic shift) */
  /* v - q 2^shift, without shifting a negative value left (undefined). */
  const int64_t rem = v & (((int64_t)1 << shift) - 1);
  const int64_t half = (int64_t)1 << (shift - 1);
  return q + (rem > half || (rem == half && (q & 1)));
}

/* The stored value of accumulator acc of a channel whose requantization
 * pair is rq[0] (multiplier), rq[1] (shift). */
static inline int32_t cuvil_q_requant(int32_t acc, const int32_t *rq,
                                      int32_t y_zp, int32_t y_lo,
                                      int32_t y_hi) {
  int64_t v = cuvil_q_rshift_rhe((int64_t)acc * rq[0], rq[1]) + y_zp;
  v = v < y_lo ? y_lo : v;
  return (int32_t)(v > y_hi ? y_hi : v);
}

/* Element i of a uint8/int8 tensor (CUVIL_Q_U8 / CUVIL_Q_I8). */
static inline int32_t cuvil_q_load8(const void *p, int64_t i, int64_t type) {
  return type == CUVIL_Q_U8 ? ((const uint8_t *)p)[i] : ((const int8_t *)p)[i];
}

static inline void cuvil_q_store8(void *p, int64_t i, int64_t type, int32_t v) {
  if (type == CUVIL_Q_U8)
    ((uint8_t *)p)[i] = (uint8_t)v;
  else
    ((int8_t *)p)[i] = (int8_t)v;
}

#endif
