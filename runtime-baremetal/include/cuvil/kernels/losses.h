/* cuvil kernels: Losses and run-time-operand variants of Reduce/Clip/Dropout.
 * Part of cuvil/kernels.h, which includes it inside its extern "C" block
 * after the shared definitions; include cuvil/kernels.h, not this file. */
#ifndef CUVIL_KERNELS_LOSSES_H
#define CUVIL_KERNELS_LOSSES_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Losses, runtime-operand variants of Reduce/Clip/BatchNormalization,
 * Shrink, training Dropout (losses.c, reduce.c) ---------------------------- */

/* Loss reductions (the `reduction` attribute). */
#define CUVIL_LOSS_NONE 0
#define CUVIL_LOSS_SUM 1
#define CUVIL_LOSS_MEAN 2

/* NegativeLogLikelihoodLoss over x: [n, c, d] (d: the product of d1..dk,
 * 1 for [n, c]), target t: [n, d], weight w: [c] or NULL.
 * loss[i, j] = -x[i, t[i, j], j] * w[t[i, j]], 0 where t == ignore_index
 * (when has_ignore) or t is outside [0, c) (an invalid target is ignored,
 * never read out of bounds). y: [n, d] for CUVIL_LOSS_NONE, else one
 * element: the sum, or the sum divided by the sum of the weights of the
 * counted targets (mean). Accumulates in double. */
#define CUVIL_NLL_DECL(TSFX, TT)                                               \
  void cuvil_k_nll_loss_f32_##TSFX(const float *x, const TT *t,                \
                                   const float *w, float *y, int64_t n,        \
                                   int64_t c, int64_t d, int64_t reduction,    \
                                   int64_t ignore_index, int64_t has_ignore);  \
  /* SoftmaxCrossEntropyLoss: the NLL loss of LogSoftmax(x) over axis 1,       \
   * log_prob ([n, c, d], may be NULL) receives that LogSoftmax. */            \
  void cuvil_k_sce_loss_f32_##TSFX(                                            \
      const float *x, const TT *t, const float *w, float *y, float *log_prob,  \
      int64_t n, int64_t c, int64_t d, int64_t reduction,                      \
      int64_t ignore_index, int64_t has_ignore);
CUVIL_NLL_DECL(i32, int32_t)
CUVIL_NLL_DECL(i64, int64_t)
#undef CUVIL_NLL_DECL

/* Reduce* with axes read at run time (a non-constant axes input): axes has
 * naxes int64 entries (negative ones count from the end); x is dense with
 * shape[0..rank) (rank <= CUVIL_MAX_RANK); no axes reduce everything, or
 * copy x when noop_with_empty_axes. y is dense over the kept dimensions
 * (keepdims does not change the order) and holds out_count elements: axes
 * that are out of range, repeated, or give another element count than
 * out_count (the size compiled into the model) leave y zero-filled instead
 * of writing out of bounds. Ops and types as for cuvil_k_reduce_*. */
#define CUVIL_REDUCE_RT_DECL(NAME, SFX, T)                                     \
  void cuvil_k_reduce_rt_##NAME##_##SFX(                                       \
      const T *x, T *y, const int64_t *axes, int64_t naxes, int64_t rank,      \
      const int64_t *shape, int64_t noop_with_empty_axes, int64_t out_count);
/* clang-format off */
#define CUVIL_REDUCE_RT_FLOAT_DECLS(SFX, T)                                    \
  CUVIL_REDUCE_RT_DECL(sum, SFX, T) CUVIL_REDUCE_RT_DECL(mean, SFX, T)         \
  CUVIL_REDUCE_RT_DECL(max, SFX, T) CUVIL_REDUCE_RT_DECL(min, SFX, T)          \
  CUVIL_REDUCE_RT_DECL(prod, SFX, T) CUVIL_REDUCE_RT_DECL(sum_square, SFX, T)  \
  CUVIL_REDUCE_RT_DECL(l1, SFX, T) CUVIL_REDUCE_RT_DECL(l2, SFX, T)            \
  CUVIL_REDUCE_RT_DECL(log_sum, SFX, T)                                        \
  CUVIL_REDUCE_RT_DECL(log_sum_exp, SFX, T)
/* clang-format on */
/* clang-format off */
#define CUVIL_REDUCE_RT_INT_DECLS(SFX, T)                                      \
  CUVIL_REDUCE_RT_DECL(sum, SFX, T) CUVIL_REDUCE_RT_DECL(max, SFX, T)          \
  CUVIL_REDUCE_RT_DECL(min, SFX, T) CUVIL_REDUCE_RT_DECL(prod, SFX, T)
/* clang-format on */
CUVIL_REDUCE_RT_FLOAT_DECLS(f32, float)
CUVIL_REDUCE_RT_FLOAT_DECLS(f64, double)
CUVIL_REDUCE_RT_INT_DECLS(i32, int32_t)
CUVIL_REDUCE_RT_INT_DECLS(i64, int64_t)

/* Clip with bounds read at run time: y = min(max(x, *lo), *hi); lo or hi
 * NULL when absent. NaN stays NaN. In place. <t>: f32 f64 i8 u8 i16 u16 i32
 * u32 i64 u64. */
#define CUVIL_CLIP_RT_DECL(SFX, T)                                             \
  void cuvil_k_clip_rt_##SFX(const T *x, const T *lo, const T *hi, T *y,       \
                             int64_t n);
CUVIL_CLIP_RT_DECL(f32, float)
CUVIL_CLIP_RT_DECL(f64, double)
CUVIL_CLIP_RT_DECL(i8, int8_t)
CUVIL_CLIP_RT_DECL(u8, uint8_t)
CUVIL_CLIP_RT_DECL(i16, int16_t)
CUVIL_CLIP_RT_DECL(u16, uint16_t)
CUVIL_CLIP_RT_DECL(i32, int32_t)
CUVIL_CLIP_RT_DECL(u32, uint32_t)
CUVIL_CLIP_RT_DECL(i64, int64_t)
CUVIL_CLIP_RT_DECL(u64, uint64_t)
#undef CUVIL_CLIP_RT_DECL

/* Shrink: y = x < -lambd ? x + bias : x > lambd ? x - bias : 0. In place. */
void cuvil_k_shrink_f32(const float *x, float *y, int64_t n, float bias,
                        float lambd);

/* Dropout whose training_mode or ratio is only known at run time. ratio
 * (NULL: 0.5) and training (bool, NULL: false) are scalars. Not training or
 * ratio 0: y = x and mask all true. Training: element i is kept (mask 1,
 * y = x / (1 - ratio)) when a pseudo-random draw in [0, 1) that depends
 * only on seed and i is >= ratio, else dropped (mask 0, y = 0); mask may be
 * NULL. In place. */
void cuvil_k_dropout_f32(const float *x, const float *ratio,
                         const uint8_t *training, float *y, uint8_t *mask,
                         int64_t n, int64_t seed);

#endif /* CUVIL_KERNELS_LOSSES_H */
