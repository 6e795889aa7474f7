/* Reference kernels of the loss operators (NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss) and of the variants of Clip and
 * BatchNormalization whose operands are only known at run time, plus
 * Shrink.
 *
 * The losses see their input as [n, c, d]: the class axis in the middle and
 * every trailing dimension flattened into d, so one loop serves every rank.
 * Sums accumulate in double: a mean over many elements keeps float accuracy. */
#include "cuvil/kernels.h"

#include "../math.h"

/* The class a target selects, or -1 when the position is ignored (its
 * target is ignore_index, or a class that does not exist). */
static inline __attribute__((always_inline)) int64_t
loss_class(int64_t t, int64_t c, int64_t ignore_index, int64_t has_ignore) {
  if (has_ignore && t == ignore_index)
    return -1;
  return t >= 0 && t < c ? t : -1;
}

/* Stores the loss of position (i, j) or accumulates it, per the reduction. */
static inline __attribute__((always_inline)) void
loss_put(float *y, int64_t at, double loss, double weight, int64_t reduction,
         double *sum, double *wsum) {
  if (reduction == CUVIL_LOSS_NONE) {
    y[at] = (float)loss;
    return;
  }
  *sum += loss;
  *wsum += weight;
}

static inline __attribute__((always_inline)) void
loss_finish(float *y, int64_t reduction, double sum, double wsum) {
  if (reduction == CUVIL_LOSS_SUM)
    y[0] = (float)sum;
  else if (reduction == CUVIL_LOSS_MEAN)
    y[0] = (float)(sum / wsum); /* all ignored: 0/0, NaN as in ONNX */
}

#define CUVIL_DEFINE_LOSSES(TSFX, TT)                                          \
  void cuvil_k_nll_loss_f32_##TSFX(const float *x, const TT *t,                \
                                   const float *w, float *y, int64_t n,        \
                                   int64_t c, int64_t d, int64_t reduction,    \
                                   int64_t ignore_index, int64_t has_ignore) { \
    double sum = 0.0, wsum = 0.0;                                              \
    for (int64_t i = 0; i < n; ++i)                                            \
      for (int64_t j = 0; j < d; ++j) {                                        \
        const int64_t k =                                                      \
            loss_class((int64_t)t[i * d + j], c, ignore_index, has_ignore);    \
        double loss = 0.0, weight = 0.0;                                       \
        if (k >= 0) {                                                          \
          weight = w ? (double)w[k] : 1.0;                                     \
          loss = -(double)x[(i * c + k) * d + j] * weight;                     \
        }                                                                      \
        loss_put(y, i *d + j, loss, weight, reduction, &sum, &wsum);           \
      }                                                                        \
    loss_finish(y, reduction, sum, wsum);                                      \
  }                                                                            \
                                                                               \
  void cuvil_k_sce_loss_f32_##TSFX(                                            \
      const float *x, const TT *t, const float *w, float *y, float *log_prob,  \
      int64_t n, int64_t c, int64_t d, int64_t reduction,                      \
      int64_t ignore_index, int64_t has_ignore) {                              \
    double sum = 0.0, wsum = 0.0;                                              \
    for (int64_t i = 0; i < n; ++i)                                            \
      for (int64_t j = 0; j < d; ++j) {                                        \
        /* LogSoftmax over the classes of position (i, j), as                  \
         * cuvil_k_logsoftmax_f32 computes it. */                              \
        const float *xs = x + i * c * d + j;                                   \
        float mx = -__builtin_inff();                                          \
        for (int64_t k = 0; k < c; ++k)                                        \
          mx = xs[k * d] > mx ? xs[k * d] : mx;                                \
        float se = 0.0f;                                                       \
        for (int64_t k = 0; k < c; ++k)                                        \
          se += cuvil_expf_nonpos(xs[k * d] - mx);                             \
        const float shift = mx + cuvil_logf(se);                               \
        if (log_prob)                                                          \
          for (int64_t k = 0; k < c; ++k)                                      \
            log_prob[i * c * d + k * d + j] = xs[k * d] - shift;               \
        const int64_t k =                                                      \
            loss_class((int64_t)t[i * d + j], c, ignore_index, has_ignore);    \
        double loss = 0.0, weight = 0.0;                                       \
        if (k >= 0) {                                                          \
          weight = w ? (double)w[k] : 1.0;                                     \
          loss = -(double)(xs[k * d] - shift) * weight;                        \
        }                                                                      \
        loss_put(y, i *d + j, loss, weight, reduction, &sum, &wsum);           \
      }                                                                        \
    loss_finish(y, reduction, sum, wsum);                                      \
  }

CUVIL_DEFINE_LOSSES(i32, int32_t)
CUVIL_DEFINE_LOSSES(i64, int64_t)

/* ---- Clip with run-time bounds ------------------------------------------ */

#define CUVIL_DEFINE_CLIP_RT(SFX, T)                                           \
  void cuvil_k_clip_rt_##SFX(const T *x, const T *lo, const T *hi, T *y,       \
                             int64_t n) {                                      \
    for (int64_t i = 0; i < n; ++i) {                                          \
      T v = x[i];                                                              \
      if (lo && v < *lo)                                                       \
        v = *lo;                                                               \
      if (hi && v > *hi)                                                       \
        v = *hi;                                                               \
      y[i] = v;                                                                \
    }                                                                          \
  }

CUVIL_DEFINE_CLIP_RT(f32, float)
CUVIL_DEFINE_CLIP_RT(f64, double)
CUVIL_DEFINE_CLIP_RT(i8, int8_t)
CUVIL_DEFINE_CLIP_RT(u8, uint8_t)
CUVIL_DEFINE_CLIP_RT(i16, int16_t)
CUVIL_DEFINE_CLIP_RT(u16, uint16_t)
CUVIL_DEFINE_CLIP_RT(i32, int32_t)
CUVIL_DEFINE_CLIP_RT(u32, uint32_t)
CUVIL_DEFINE_CLIP_RT(i64, int64_t)
CUVIL_DEFINE_CLIP_RT(u64, uint64_t)

/* ---- Shrink ------------------------------------------------------------- */

void cuvil_k_shrink_f32(const float *x, float *y, int64_t n, float bias,
                        float lambd) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    y[i] = v < -lambd ? v + bias : v > lambd ? v - bias : 0.0f;
  }
}

/* ---- Dropout with run-time training_mode / ratio ------------------------ */

/* splitmix64's finaliser of (seed, i): a counter-based generator, so the
 * kernel needs no state and element i's draw does not depend on n. */
static inline __attribute__((always_inline)) uint64_t
dropout_bits(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void cuvil_k_dropout_f32(const float *x, const float *ratio,
                         const uint8_t *training, float *y, uint8_t *mask,
                         int64_t n, int64_t seed) {
  const float r = ratio ? *ratio : 0.5f;
  if (!training || !*training || r == 0.0f) {
    for (int64_t i = 0; i < n; ++i) {
      y[i] = x[i];
      if (mask)
        mask[i] = 1;
    }
    return;
  }
  const float scale = r < 1.0f ? 1.0f / (1.0f - r) : 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    /* The top 24 bits give a float in [0, 1) exactly. */
    const float u =
        (float)(dropout_bits((uint64_t)seed, (uint64_t)i) >> 40) * 0x1p-24f;
    const int keep = u >= r;
    y[i] = keep ? x[i] * scale : 0.0f;
    if (mask)
      mask[i] = (uint8_t)keep;
  }
}
