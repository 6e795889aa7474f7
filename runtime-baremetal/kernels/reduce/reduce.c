/* Reference reductions (ReduceSum, ReduceMax, ... and ArgMax/ArgMin).
 *
 * A reduction is two loop nests of CUVIL_REDUCE_RANK dimensions each: the
 * kept dimensions, in output order (y is dense over them), and the reduced
 * dimensions. Both carry element strides into x, so any set of reduced axes
 * is one call; the compiler merges contiguous dimensions and pads with
 * extent 1 on the left. */
#include "cuvil/kernels.h"

#include "../math.h"

enum reduce_op {
  REDUCE_SUM,
  REDUCE_MEAN,
  REDUCE_MAX,
  REDUCE_MIN,
  REDUCE_PROD,
  REDUCE_SUM_SQUARE,
  REDUCE_L1,
  REDUCE_L2,
  REDUCE_LOG_SUM,
  REDUCE_LOG_SUM_EXP,
};

_Static_assert(CUVIL_REDUCE_RANK == 3,
               "the loop nests below span CUVIL_REDUCE_RANK dimensions");

/* Per-type helpers. f64 transcendental functions go through the f32
 * approximations (about 1e-7 relative error); integer types never use them. */
CUVIL_MATH_INLINE double red_exp_f64(double x) {
  return (double)cuvil_expf((float)x);
}
CUVIL_MATH_INLINE double red_log_f64(double x) {
  return (double)cuvil_logf((float)x);
}
#define RED_EXP_f32(v) cuvil_expf(v)
#define RED_LOG_f32(v) cuvil_logf(v)
#define RED_SQRT_f32(v) __builtin_sqrtf(v)
#define RED_ABS_f32(v) __builtin_fabsf(v)
#define RED_EXP_f64(v) red_exp_f64(v)
#define RED_LOG_f64(v) red_log_f64(v)
#define RED_SQRT_f64(v) __builtin_sqrt(v)
#define RED_ABS_f64(v) __builtin_fabs(v)
#define RED_EXP_i32(v) (v)
#define RED_LOG_i32(v) (v)
#define RED_SQRT_i32(v) (v)
#define RED_ABS_i32(v) ((v) < 0 ? -(v) : (v))
#define RED_EXP_i64(v) (v)
#define RED_LOG_i64(v) (v)
#define RED_SQRT_i64(v) (v)
#define RED_ABS_i64(v) ((v) < 0 ? -(v) : (v))

/* reduce_<sfx>(op, x, y, out_shape, out_str, red_shape, red_str). op is a
 * constant at every call site, so only its arm survives inlining. */
#define CUVIL_DEFINE_REDUCE(SFX, T, LOWEST, HIGHEST)                           \
  static inline __attribute__((always_inline)) void reduce_##SFX(              \
      enum reduce_op op, const T *x, T *y, const int64_t *os,                  \
      const int64_t *ost, const int64_t *rs, const int64_t *rst) {             \
    const int64_t count = rs[0] * rs[1] * rs[2];                               \
    T *yo = y;                                                                 \
    for (int64_t o0 = 0; o0 < os[0]; ++o0)                                     \
      for (int64_t o1 = 0; o1 < os[1]; ++o1)                                   \
        for (int64_t o2 = 0; o2 < os[2]; ++o2) {                               \
          const T *xb = x + o0 * ost[0] + o1 * ost[1] + o2 * ost[2];           \
          /* LogSumExp subtracts the maximum first: exp never overflows. */    \
          T shift = 0;                                                         \
          if (op == REDUCE_LOG_SUM_EXP) {                                      \
            T m = LOWEST;                                                      \
            for (int64_t r0 = 0; r0 < rs[0]; ++r0)                             \
              for (int64_t r1 = 0; r1 < rs[1]; ++r1)                           \
                for (int64_t r2 = 0; r2 < rs[2]; ++r2) {                       \
                  const T v = xb[r0 * rst[0] + r1 * rst[1] + r2 * rst[2]];     \
                  m = v > m ? v : m;                                           \
                }                                                              \
            shift = m > LOWEST && m < HIGHEST ? m : 0;                         \
          }                                                                    \
          T acc = op == REDUCE_MAX    ? LOWEST                                 \
                  : op == REDUCE_MIN  ? HIGHEST                                \
                  : op == REDUCE_PROD ? (T)1                                   \
                                      : (T)0;                                  \
          for (int64_t r0 = 0; r0 < rs[0]; ++r0)                               \
            for (int64_t r1 = 0; r1 < rs[1]; ++r1)                             \
              for (int64_t r2 = 0; r2 < rs[2]; ++r2) {                         \
                const T v = xb[r0 * rst[0] + r1 * rst[1] + r2 * rst[2]];       \
                acc = op == REDUCE_MAX    ? (v > acc ? v : acc)                \
                      : op == REDUCE_MIN  ? (v < acc ? v : acc)                \
                      : op == REDUCE_PROD ? acc * v                            \
                      : op == REDUCE_SUM_SQUARE || op == REDUCE_L2             \
                          ? acc + v * v                                        \
                      : op == REDUCE_L1 ? acc + RED_ABS_##SFX(v)               \
                      : op == REDUCE_LOG_SUM_EXP                               \
                          ? acc + RED_EXP_##SFX(v - shift)                     \
                          : acc + v;                                           \
              }                                                                \
          *yo++ = op == REDUCE_MEAN          ? acc / (T)count                  \
                  : op == REDUCE_L2          ? RED_SQRT_##SFX(acc)             \
                  : op == REDUCE_LOG_SUM     ? RED_LOG_##SFX(acc)              \
                  : op == REDUCE_LOG_SUM_EXP ? RED_LOG_##SFX(acc) + shift      \
                                             : acc;                            \
        }                                                                      \
  }

CUVIL_DEFINE_REDUCE(f32, float, -__builtin_inff(), __builtin_inff())
CUVIL_DEFINE_REDUCE(f64, double, -__builtin_inf(), __builtin_inf())
CUVIL_DEFINE_REDUCE(i32, int32_t, INT32_MIN, INT32_MAX)
CUVIL_DEFINE_REDUCE(i64, int64_t, INT64_MIN, INT64_MAX)

#define CUVIL_REDUCE_KERNEL(NAME, OP, SFX, T)                                  \
  void cuvil_k_reduce_##NAME##_##SFX(                                          \
      const T *x, T *y, const int64_t *out_shape, const int64_t *out_str,      \
      const int64_t *red_shape, const int64_t *red_str) {                      \
    reduce_##SFX(OP, x, y, out_shape, out_str, red_shape, red_str);            \
  }

#define CUVIL_REDUCE_FLOAT_KERNELS(SFX, T)                                     \
  CUVIL_REDUCE_KERNEL(sum, REDUCE_SUM, SFX, T)                                 \
  CUVIL_REDUCE_KERNEL(mean, REDUCE_MEAN, SFX, T)                               \
  CUVIL_REDUCE_KERNEL(max, REDUCE_MAX, SFX, T)                                 \
  CUVIL_REDUCE_KERNEL(min, REDUCE_MIN, SFX, T)                                 \
  CUVIL_REDUCE_KERNEL(prod, REDUCE_PROD, SFX, T)                               \
  CUVIL_REDUCE_KERNEL(sum_square, REDUCE_SUM_SQUARE, SFX, T)                   \
  CUVIL_REDUCE_KERNEL(l1, REDUCE_L1, SFX, T)                                   \
  CUVIL_REDUCE_KERNEL(l2, REDUCE_L2, SFX, T)                                   \
  CUVIL_REDUCE_KERNEL(log_sum, REDUCE_LOG_SUM, SFX, T)                         \
  CUVIL_REDUCE_KERNEL(log_sum_exp, REDUCE_LOG_SUM_EXP, SFX, T)

#define CUVIL_REDUCE_INT_KERNELS(SFX, T)                                       \
  CUVIL_REDUCE_KERNEL(sum, REDUCE_SUM, SFX, T)                                 \
  CUVIL_REDUCE_KERNEL(max, REDUCE_MAX, SFX, T)                                 \
  CUVIL_REDUCE_KERNEL(min, REDUCE_MIN, SFX, T)                                 \
  CUVIL_REDUCE_KERNEL(prod, REDUCE_PROD, SFX, T)

CUVIL_REDUCE_FLOAT_KERNELS(f32, float)
CUVIL_REDUCE_FLOAT_KERNELS(f64, double)
CUVIL_REDUCE_INT_KERNELS(i32, int32_t)
CUVIL_REDUCE_INT_KERNELS(i64, int64_t)

/* ArgMax / ArgMin over the middle axis of [outer, n, inner]. Ties go to the
 * first index, or the last when select_last != 0. */
#define CUVIL_DEFINE_ARG(NAME, CMP, SFX, T)                                    \
  void cuvil_k_##NAME##_##SFX(const T *x, int64_t *y, int64_t outer,           \
                              int64_t n, int64_t inner, int64_t select_last) { \
    for (int64_t o = 0; o < outer; ++o)                                        \
      for (int64_t j = 0; j < inner; ++j) {                                    \
        const T *xs = x + o * n * inner + j;                                   \
        T best = xs[0];                                                        \
        int64_t at = 0;                                                        \
        for (int64_t i = 1; i < n; ++i) {                                      \
          const T v = xs[i * inner];                                           \
          if (v CMP best || (select_last && v == best)) {                      \
            best = v;                                                          \
            at = i;                                                            \
          }                                                                    \
        }                                                                      \
        y[o * inner + j] = at;                                                 \
      }                                                                        \
  }

CUVIL_DEFINE_ARG(argmax, >, f32, float)
CUVIL_DEFINE_ARG(argmin, <, f32, float)
CUVIL_DEFINE_ARG(argmax, >, i32, int32_t)
CUVIL_DEFINE_ARG(argmin, <, i32, int32_t)
CUVIL_DEFINE_ARG(argmax, >, i64, int64_t)
CUVIL_DEFINE_ARG(argmin, <, i64, int64_t)

/* ---- Reductions over axes known only at run time ------------------------ */

/* Builds the two loop nests of a reduction of x (dense, shape[0..rank)) over
 * the run-time axes, as the compiler does for constant ones: unit
 * dimensions dropped, contiguous neighbours merged, padded on the left.
 * Kept and reduced groups alternate, so rank <= 2 * CUVIL_REDUCE_RANK always
 * fits. Returns 1 for a plain copy (no axes with noop_with_empty_axes), 0 for
 * a reduction, -1 for axes that are out of range or repeated, or whose
 * result does not have out_count elements. */
static int reduce_rt_loops(const int64_t *axes, int64_t naxes, int64_t rank,
                           const int64_t *shape, int64_t noop,
                           int64_t out_count, int64_t *os, int64_t *ost,
                           int64_t *rs, int64_t *rst) {
  if (rank > 2 * CUVIL_REDUCE_RANK)
    return -1;
  int reduced[2 * CUVIL_REDUCE_RANK] = {0};
  if (naxes == 0) {
    if (noop)
      return 1;
    for (int64_t d = 0; d < rank; ++d)
      reduced[d] = 1;
  }
  for (int64_t i = 0; i < naxes; ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank || reduced[a])
      return -1;
    reduced[a] = 1;
  }
  int64_t sh[2][CUVIL_REDUCE_RANK] = {{0}}, st[2][CUVIL_REDUCE_RANK] = {{0}};
  int64_t len[2] = {0, 0};
  int64_t stride = 1, kept = 1;
  for (int64_t d = rank; d-- > 0;) {
    const int64_t dim = shape[d], k = reduced[d];
    if (!k)
      kept *= dim;
    if (dim != 1) {
      /* Walking right to left: merge into the group just added when this
       * dimension continues it. */
      int64_t *l = &len[k];
      if (*l > 0 && st[k][*l - 1] * sh[k][*l - 1] == stride) {
        sh[k][*l - 1] *= dim;
      } else {
        if (*l == CUVIL_REDUCE_RANK)
          return -1;
        sh[k][*l] = dim;
        st[k][*l] = stride;
        ++*l;
      }
    }
    stride *= dim;
  }
  if (kept != out_count)
    return -1;
  /* The groups were collected innermost first: reverse and pad. */
  for (int k = 0; k < 2; ++k) {
    int64_t *dsh = k ? rs : os, *dst = k ? rst : ost;
    for (int64_t i = 0; i < CUVIL_REDUCE_RANK; ++i) {
      const int64_t from = CUVIL_REDUCE_RANK - 1 - i;
      dsh[i] = from < len[k] ? sh[k][from] : 1;
      dst[i] = from < len[k] ? st[k][from] : 0;
    }
  }
  return 0;
}

#define CUVIL_REDUCE_RT_KERNEL(NAME, OP, SFX, T)                               \
  void cuvil_k_reduce_rt_##NAME##_##SFX(                                       \
      const T *x, T *y, const int64_t *axes, int64_t naxes, int64_t rank,      \
      const int64_t *shape, int64_t noop_with_empty_axes, int64_t out_count) { \
    int64_t os[CUVIL_REDUCE_RANK], ost[CUVIL_REDUCE_RANK];                     \
    int64_t rs[CUVIL_REDUCE_RANK], rst[CUVIL_REDUCE_RANK];                     \
    const int how =                                                            \
        reduce_rt_loops(axes, naxes, rank, shape, noop_with_empty_axes,        \
                        out_count, os, ost, rs, rst);                          \
    if (how == 0) {                                                            \
      reduce_##SFX(OP, x, y, os, ost, rs, rst);                                \
      return;                                                                  \
    }                                                                          \
    /* A copy has as many elements as x; out_count is x's count then. */       \
    for (int64_t i = 0; i < out_count; ++i)                                    \
      y[i] = how == 1 ? x[i] : (T)0;                                           \
  }

#define CUVIL_REDUCE_RT_FLOAT_KERNELS(SFX, T)                                  \
  CUVIL_REDUCE_RT_KERNEL(sum, REDUCE_SUM, SFX, T)                              \
  CUVIL_REDUCE_RT_KERNEL(mean, REDUCE_MEAN, SFX, T)                            \
  CUVIL_REDUCE_RT_KERNEL(max, REDUCE_MAX, SFX, T)                              \
  CUVIL_REDUCE_RT_KERNEL(min, REDUCE_MIN, SFX, T)                              \
  CUVIL_REDUCE_RT_KERNEL(prod, REDUCE_PROD, SFX, T)                            \
  CUVIL_REDUCE_RT_KERNEL(sum_square, REDUCE_SUM_SQUARE, SFX, T)                \
  CUVIL_REDUCE_RT_KERNEL(l1, REDUCE_L1, SFX, T)                                \
  CUVIL_REDUCE_RT_KERNEL(l2, REDUCE_L2, SFX, T)                                \
  CUVIL_REDUCE_RT_KERNEL(log_sum, REDUCE_LOG_SUM, SFX, T)                      \
  CUVIL_REDUCE_RT_KERNEL(log_sum_exp, REDUCE_LOG_SUM_EXP, SFX, T)

#define CUVIL_REDUCE_RT_INT_KERNELS(SFX, T)                                    \
  CUVIL_REDUCE_RT_KERNEL(sum, REDUCE_SUM, SFX, T)                              \
  CUVIL_REDUCE_RT_KERNEL(max, REDUCE_MAX, SFX, T)                              \
  CUVIL_REDUCE_RT_KERNEL(min, REDUCE_MIN, SFX, T)                              \
  CUVIL_REDUCE_RT_KERNEL(prod, REDUCE_PROD, SFX, T)

CUVIL_REDUCE_RT_FLOAT_KERNELS(f32, float)
CUVIL_REDUCE_RT_FLOAT_KERNELS(f64, double)
CUVIL_REDUCE_RT_INT_KERNELS(i32, int32_t)
CUVIL_REDUCE_RT_INT_KERNELS(i64, int64_t)
