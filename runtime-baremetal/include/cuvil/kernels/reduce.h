/* cuvil kernels: Reductions, arg-reductions and the broadcast element-wise
 * families. Part of cuvil/kernels.h, which includes it inside its extern "C"
 * block after the shared definitions; include cuvil/kernels.h, not this file.
 */
#ifndef CUVIL_KERNELS_REDUCE_H
#define CUVIL_KERNELS_REDUCE_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Reductions, arg-reductions, broadcast element-wise families -------- */
/* (issue #3: kernels in kernels/reduce/reduce.c and
 * kernels/elementwise/binary.c) */

/* Reductions take two loop nests padded (on the left, with extent 1) to this
 * rank: the kept dimensions in output order and the reduced dimensions. */
#define CUVIL_REDUCE_RANK 3

/* y[o] = reduce over r of x[sum(o_k * out_str[k]) + sum(r_k * red_str[k])],
 * for o over out_shape (y dense in that order) and r over red_shape.
 * <op>: sum, mean, max, min, prod, sum_square, l1, l2, log_sum, log_sum_exp
 * for f32 and f64 (f64 exp/log through the f32 approximations); sum, max,
 * min, prod for i32 and i64. An empty reduction gives the op's identity. */
#define CUVIL_REDUCE_DECL(NAME, SFX, T)                                        \
  void cuvil_k_reduce_##NAME##_##SFX(                                          \
      const T *x, T *y, const int64_t *out_shape, const int64_t *out_str,      \
      const int64_t *red_shape, const int64_t *red_str);
/* clang-format off */
#define CUVIL_REDUCE_FLOAT_DECLS(SFX, T)                                       \
  CUVIL_REDUCE_DECL(sum, SFX, T) CUVIL_REDUCE_DECL(mean, SFX, T)               \
  CUVIL_REDUCE_DECL(max, SFX, T) CUVIL_REDUCE_DECL(min, SFX, T)                \
  CUVIL_REDUCE_DECL(prod, SFX, T) CUVIL_REDUCE_DECL(sum_square, SFX, T)        \
  CUVIL_REDUCE_DECL(l1, SFX, T) CUVIL_REDUCE_DECL(l2, SFX, T)                  \
  CUVIL_REDUCE_DECL(log_sum, SFX, T) CUVIL_REDUCE_DECL(log_sum_exp, SFX, T)
/* clang-format on */
/* clang-format off */
#define CUVIL_REDUCE_INT_DECLS(SFX, T)                                         \
  CUVIL_REDUCE_DECL(sum, SFX, T) CUVIL_REDUCE_DECL(max, SFX, T)                \
  CUVIL_REDUCE_DECL(min, SFX, T) CUVIL_REDUCE_DECL(prod, SFX, T)
/* clang-format on */
CUVIL_REDUCE_FLOAT_DECLS(f32, float)
CUVIL_REDUCE_FLOAT_DECLS(f64, double)
CUVIL_REDUCE_INT_DECLS(i32, int32_t)
CUVIL_REDUCE_INT_DECLS(i64, int64_t)

/* ArgMax/ArgMin over the middle axis of [outer, n, inner] (n >= 1); y is
 * [outer, inner] int64. Ties: first index, or last when select_last. */
/* clang-format off */
#define CUVIL_ARG_DECLS(SFX, T)                                                \
  void cuvil_k_argmax_##SFX(const T *x, int64_t *y, int64_t outer, int64_t n,  \
                            int64_t inner, int64_t select_last);               \
  void cuvil_k_argmin_##SFX(const T *x, int64_t *y, int64_t outer, int64_t n,  \
                            int64_t inner, int64_t select_last);
/* clang-format on */
CUVIL_ARG_DECLS(f32, float)
CUVIL_ARG_DECLS(i32, int32_t)
CUVIL_ARG_DECLS(i64, int64_t)

/* LogSoftmax, and Hardmax (1 at the first maximum, 0 elsewhere), over the
 * middle axis of [outer, n, inner]. */
void cuvil_k_logsoftmax_f32(const float *x, float *y, int64_t outer, int64_t n,
                            int64_t inner);
void cuvil_k_hardmax_f32(const float *x, float *y, int64_t outer, int64_t n,
                         int64_t inner);

/* Broadcast binary kernels with the signature of cuvil_k_add_f32:
 *   void cuvil_k_<op>_<t>(const TA *a, const TB *b, TY *y,
 *                         const int64_t *shape, const int64_t *a_str,
 *                         const int64_t *b_str);
 * <t> in i8 u8 i16 u16 i32 u32 i64 u64 (ints), f32, f64, bool (uint8_t 0/1):
 *   add, sub, mul, div       ints, f64 (f32 above); int division by 0 gives 0
 *   max, min                 ints, f16, f32, f64
 *   mod                      ints: the result has the divisor's sign (fmod=0)
 *   fmod                     ints, f16, f32, f64: C fmod (fmod=1)
 *   pow                      f32, i32, i64; mixed pow_<ta>_<tb>: f32_i32,
 *                            f32_i64, f32_u32, f32_u64, i32_f32, i64_f32
 *                            (y has a's type)
 *   equal, greater, less, greater_equal, less_equal
 *                            ints, f32, f64 (equal also bool); y is bool
 *   and, or, xor             bool
 *   shl, shr                 u8 u16 u32 u64 (BitShift); shifts >= width give 0
 * y may alias a when a is dense with the output's shape and type. */
#define CUVIL_BINARY_DECL(NAME, TA, TB, TY)                                    \
  void NAME(const TA *a, const TB *b, TY *y, const int64_t *shape,             \
            const int64_t *a_str, const int64_t *b_str);
/* clang-format off */
#define CUVIL_BINARY_INT_DECLS(SFX, T)                                         \
  CUVIL_BINARY_DECL(cuvil_k_add_##SFX, T, T, T)                                \
  CUVIL_BINARY_DECL(cuvil_k_sub_##SFX, T, T, T)                                \
  CUVIL_BINARY_DECL(cuvil_k_mul_##SFX, T, T, T)                                \
  CUVIL_BINARY_DECL(cuvil_k_div_##SFX, T, T, T)                                \
  CUVIL_BINARY_DECL(cuvil_k_max_##SFX, T, T, T)                                \
  CUVIL_BINARY_DECL(cuvil_k_min_##SFX, T, T, T)                                \
  CUVIL_BINARY_DECL(cuvil_k_mod_##SFX, T, T, T)                                \
  CUVIL_BINARY_DECL(cuvil_k_fmod_##SFX, T, T, T)                               \
  CUVIL_BINARY_DECL(cuvil_k_equal_##SFX, T, T, uint8_t)                        \
  CUVIL_BINARY_DECL(cuvil_k_greater_##SFX, T, T, uint8_t)                      \
  CUVIL_BINARY_DECL(cuvil_k_less_##SFX, T, T, uint8_t)                         \
  CUVIL_BINARY_DECL(cuvil_k_greater_equal_##SFX, T, T, uint8_t)                \
  CUVIL_BINARY_DECL(cuvil_k_less_equal_##SFX, T, T, uint8_t)
/* clang-format on */
CUVIL_BINARY_INT_DECLS(i8, int8_t)
CUVIL_BINARY_INT_DECLS(u8, uint8_t)
CUVIL_BINARY_INT_DECLS(i16, int16_t)
CUVIL_BINARY_INT_DECLS(u16, uint16_t)
CUVIL_BINARY_INT_DECLS(i32, int32_t)
CUVIL_BINARY_INT_DECLS(u32, uint32_t)
CUVIL_BINARY_INT_DECLS(i64, int64_t)
CUVIL_BINARY_INT_DECLS(u64, uint64_t)
CUVIL_BINARY_DECL(cuvil_k_add_f64, double, double, double)
CUVIL_BINARY_DECL(cuvil_k_sub_f64, double, double, double)
CUVIL_BINARY_DECL(cuvil_k_mul_f64, double, double, double)
CUVIL_BINARY_DECL(cuvil_k_div_f64, double, double, double)
CUVIL_BINARY_DECL(cuvil_k_max_f32, float, float, float)
CUVIL_BINARY_DECL(cuvil_k_min_f32, float, float, float)
CUVIL_BINARY_DECL(cuvil_k_max_f64, double, double, double)
CUVIL_BINARY_DECL(cuvil_k_min_f64, double, double, double)
CUVIL_BINARY_DECL(cuvil_k_fmod_f32, float, float, float)
CUVIL_BINARY_DECL(cuvil_k_fmod_f64, double, double, double)
/* float16 elements as their uint16_t bits (compared and computed in f32). */
CUVIL_BINARY_DECL(cuvil_k_max_f16, uint16_t, uint16_t, uint16_t)
CUVIL_BINARY_DECL(cuvil_k_min_f16, uint16_t, uint16_t, uint16_t)
CUVIL_BINARY_DECL(cuvil_k_fmod_f16, uint16_t, uint16_t, uint16_t)
CUVIL_BINARY_DECL(cuvil_k_pow_f32, float, float, float)
CUVIL_BINARY_DECL(cuvil_k_pow_f32_i32, float, int32_t, float)
CUVIL_BINARY_DECL(cuvil_k_pow_f32_i64, float, int64_t, float)
CUVIL_BINARY_DECL(cuvil_k_pow_f32_u32, float, uint32_t, float)
CUVIL_BINARY_DECL(cuvil_k_pow_f32_u64, float, uint64_t, float)
CUVIL_BINARY_DECL(cuvil_k_pow_i32, int32_t, int32_t, int32_t)
CUVIL_BINARY_DECL(cuvil_k_pow_i64, int64_t, int64_t, int64_t)
CUVIL_BINARY_DECL(cuvil_k_pow_i32_f32, int32_t, float, int32_t)
CUVIL_BINARY_DECL(cuvil_k_pow_i64_f32, int64_t, float, int64_t)
/* clang-format off */
#define CUVIL_COMPARE_DECLS(SFX, T)                                            \
  CUVIL_BINARY_DECL(cuvil_k_equal_##SFX, T, T, uint8_t)                        \
  CUVIL_BINARY_DECL(cuvil_k_greater_##SFX, T, T, uint8_t)                      \
  CUVIL_BINARY_DECL(cuvil_k_less_##SFX, T, T, uint8_t)                         \
  CUVIL_BINARY_DECL(cuvil_k_greater_equal_##SFX, T, T, uint8_t)                \
  CUVIL_BINARY_DECL(cuvil_k_less_equal_##SFX, T, T, uint8_t)
/* clang-format on */
CUVIL_COMPARE_DECLS(f32, float)
CUVIL_COMPARE_DECLS(f64, double)
CUVIL_BINARY_DECL(cuvil_k_equal_bool, uint8_t, uint8_t, uint8_t)
CUVIL_BINARY_DECL(cuvil_k_and_bool, uint8_t, uint8_t, uint8_t)
CUVIL_BINARY_DECL(cuvil_k_or_bool, uint8_t, uint8_t, uint8_t)
CUVIL_BINARY_DECL(cuvil_k_xor_bool, uint8_t, uint8_t, uint8_t)
/* clang-format off */
#define CUVIL_SHIFT_DECLS(SFX, T)                                              \
  CUVIL_BINARY_DECL(cuvil_k_shl_##SFX, T, T, T)                                \
  CUVIL_BINARY_DECL(cuvil_k_shr_##SFX, T, T, T)
/* clang-format on */
CUVIL_SHIFT_DECLS(u8, uint8_t)
CUVIL_SHIFT_DECLS(u16, uint16_t)
CUVIL_SHIFT_DECLS(u32, uint32_t)
CUVIL_SHIFT_DECLS(u64, uint64_t)

/* Where: y = c ? a : b with broadcasting (c bool), for elements of 8, 16,
 * 32 or 64 bits (cuvil_k_where_b<bits>); strides as for binary kernels. */
#define CUVIL_WHERE_DECL(BITS)                                                 \
  void cuvil_k_where_b##BITS(const uint8_t *c, const void *a, const void *b,   \
                             void *y, const int64_t *shape,                    \
                             const int64_t *c_str, const int64_t *a_str,       \
                             const int64_t *b_str);
CUVIL_WHERE_DECL(8)
CUVIL_WHERE_DECL(16)
CUVIL_WHERE_DECL(32)
CUVIL_WHERE_DECL(64)

/* y[i] = x[i] * s for i < n (Mean's final division). In place. */
void cuvil_k_scale_f32(const float *x, float *y, int64_t n, float s);
void cuvil_k_scale_f64(const double *x, double *y, int64_t n, float s);

#endif /* CUVIL_KERNELS_REDUCE_H */
