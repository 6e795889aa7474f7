/* Reference normalization kernels: LayerNormalization, InstanceNormalization,
 * MeanVarianceNormalization, LRN and BatchNormalization with run-time
 * parameters or in training mode.
 *
 * Means and variances are two-pass (mean first, then the mean of squared
 * deviations) with double accumulators: E[x^2] - E[x]^2 in float loses all
 * precision when |mean| >> stddev, and a float running sum drifts over long
 * rows; doubles cost little here next to the memory traffic. */
#include "cuvil/kernels.h"

#include "../math.h"

/* The mean is kept as an unevaluated float sum hi + lo: x - hi is exact
 * when x is near the mean, so (x - hi) - lo keeps the deviations accurate
 * even when |mean| dwarfs the spread, at float speed. */
struct norm_moments {
  float mean_hi, mean_lo;
  float var; /* population variance (divided by the count) */
};

static inline __attribute__((always_inline)) struct norm_moments
norm_make_moments(double mean, double var) {
  struct norm_moments m;
  m.mean_hi = (float)mean;
  m.mean_lo = (float)(mean - (double)m.mean_hi);
  m.var = (float)var;
  return m;
}

/* Moments of the n contiguous elements x[0..n). An empty row gives 0, 0. */
static inline __attribute__((always_inline)) struct norm_moments
norm_moments(const float *x, int64_t n) {
  if (n <= 0)
    return norm_make_moments(0.0, 0.0);
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i)
    sum += (double)x[i];
  const double mean = sum / (double)n;
  double sq = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = (double)x[i] - mean;
    sq += d * d;
  }
  return norm_make_moments(mean, sq / (double)n);
}

/* 1 / sqrt(var + eps), rounded once from double. */
static inline __attribute__((always_inline)) float norm_inv_std(float var,
                                                                float eps) {
  return (float)(1.0 / __builtin_sqrt((double)var + (double)eps));
}

void cuvil_k_layer_norm_f32(const float *x, const float *scale,
                            const float *bias, float *y, float *mean,
                            float *inv_std, int64_t outer, int64_t n,
                            int64_t scale_period, int64_t bias_period,
                            float eps) {
  for (int64_t o = 0; o < outer; ++o) {
    const float *xr = x + o * n;
    float *yr = y + o * n;
    const struct norm_moments m = norm_moments(xr, n);
    const float r = norm_inv_std(m.var, eps);
    if (mean)
      mean[o] = m.mean_hi;
    if (inv_std)
      inv_std[o] = r;
    for (int64_t i = 0; i < n; ++i) {
      /* The periods are compile-time constants at every call site, so the
       * common dense case (period == n) needs no division. */
      const int64_t si = scale_period == n ? i : i % scale_period;
      float v = ((xr[i] - m.mean_hi) - m.mean_lo) * r * scale[si];
      if (bias)
        v += bias[bias_period == n ? i : i % bias_period];
      yr[i] = v;
    }
  }
}

void cuvil_k_instance_norm_f32(const float *x, const float *scale,
                               const float *bias, float *y, int64_t n,
                               int64_t c, int64_t spatial, float eps) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t base = (b * c + ch) * spatial;
      const struct norm_moments m = norm_moments(x + base, spatial);
      const float k = norm_inv_std(m.var, eps) * scale[ch];
      const float t = bias[ch];
      for (int64_t i = 0; i < spatial; ++i)
        y[base + i] = ((x[base + i] - m.mean_hi) - m.mean_lo) * k + t;
    }
}

_Static_assert(CUVIL_REDUCE_RANK == 3,
               "cuvil_k_mvn_f32 walks CUVIL_REDUCE_RANK loop dimensions");

/* Runs BODY (which sees `off`, the element offset) over the reduced loop
 * nest rs/rst starting at xb's group. */
#define NORM_FOR_REDUCED(rs, rst, BODY)                                        \
  for (int64_t r0 = 0; r0 < (rs)[0]; ++r0)                                     \
    for (int64_t r1 = 0; r1 < (rs)[1]; ++r1)                                   \
      for (int64_t r2 = 0; r2 < (rs)[2]; ++r2) {                               \
        const int64_t off = r0 * (rst)[0] + r1 * (rst)[1] + r2 * (rst)[2];     \
        BODY;                                                                  \
      }

void cuvil_k_mvn_f32(const float *x, float *y, const int64_t *out_shape,
                     const int64_t *out_str, const int64_t *red_shape,
                     const int64_t *red_str) {
  const int64_t count = red_shape[0] * red_shape[1] * red_shape[2];
  if (count <= 0)
    return;
  for (int64_t o0 = 0; o0 < out_shape[0]; ++o0)
    for (int64_t o1 = 0; o1 < out_shape[1]; ++o1)
      for (int64_t o2 = 0; o2 < out_shape[2]; ++o2) {
        const int64_t base =
            o0 * out_str[0] + o1 * out_str[1] + o2 * out_str[2];
        const float *xb = x + base;
        float *yb = y + base;
        double sum = 0.0;
        NORM_FOR_REDUCED(red_shape, red_str, sum += (double)xb[off]);
        const double mean = sum / (double)count;
        double sq = 0.0;
        NORM_FOR_REDUCED(red_shape, red_str, {
          const double d = (double)xb[off] - mean;
          sq += d * d;
        });
        /* ONNX adds its epsilon (1e-9) to the standard deviation, not to
         * the variance. */
        const float k =
            (float)(1.0 / (__builtin_sqrt(sq / (double)count) + 1e-9));
        const struct norm_moments m = norm_make_moments(mean, 0.0);
        NORM_FOR_REDUCED(red_shape, red_str,
                         yb[off] = ((xb[off] - m.mean_hi) - m.mean_lo) * k);
      }
}

#undef NORM_FOR_REDUCED

void cuvil_k_lrn_f32(const float *x, float *y, int64_t n, int64_t c,
                     int64_t spatial, int64_t size, float alpha, float beta,
                     float bias) {
  /* The window of channel ch is [ch - before, ch + after]. */
  const int64_t before = (size - 1) / 2;
  const int64_t after = size - 1 - before;
  const float a = alpha / (float)size;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      const int64_t lo = ch - before < 0 ? 0 : ch - before;
      const int64_t hi = ch + after > c - 1 ? c - 1 : ch + after;
      const float *xb = x + b * c * spatial;
      float *yc = y + (b * c + ch) * spatial;
      for (int64_t i = 0; i < spatial; ++i) {
        float sq = 0.0f;
        for (int64_t k = lo; k <= hi; ++k) {
          const float v = xb[k * spatial + i];
          sq += v * v;
        }
        /* x / d^beta = x * exp(-beta * log(d)); d >= bias > 0. */
        const float d = bias + a * sq;
        yc[i] = xb[ch * spatial + i] * cuvil_expf(-beta * cuvil_logf(d));
      }
    }
}

void cuvil_k_batch_norm_f32(const float *x, const float *scale,
                            const float *bias, const float *mean,
                            const float *var, float *y, int64_t n, int64_t c,
                            int64_t spatial, float eps) {
  for (int64_t ch = 0; ch < c; ++ch) {
    const float k = norm_inv_std(var[ch], eps) * scale[ch];
    const float mu = mean[ch], t = bias[ch];
    for (int64_t b = 0; b < n; ++b) {
      const int64_t base = (b * c + ch) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        y[base + i] = (x[base + i] - mu) * k + t;
    }
  }
}

void cuvil_k_batch_norm_train_f32(const float *x, const float *scale,
                                  const float *bias, const float *mean,
                                  const float *var, float *y,
                                  float *running_mean, float *running_var,
                                  int64_t n, int64_t c, int64_t spatial,
                                  float eps, float momentum) {
  const int64_t count = n * spatial;
  for (int64_t ch = 0; ch < c; ++ch) {
    /* Batch statistics over (n, spatial) of this channel. */
    double sum = 0.0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < spatial; ++i)
        sum += (double)x[(b * c + ch) * spatial + i];
    const double bm = count > 0 ? sum / (double)count : 0.0;
    double sq = 0.0;
    for (int64_t b = 0; b < n; ++b)
      for (int64_t i = 0; i < spatial; ++i) {
        const double d = (double)x[(b * c + ch) * spatial + i] - bm;
        sq += d * d;
      }
    const struct norm_moments m =
        norm_make_moments(bm, count > 0 ? sq / (double)count : 0.0);
    const float k = norm_inv_std(m.var, eps) * scale[ch];
    const float t = bias[ch];
    for (int64_t b = 0; b < n; ++b) {
      const int64_t base = (b * c + ch) * spatial;
      for (int64_t i = 0; i < spatial; ++i)
        y[base + i] = ((x[base + i] - m.mean_hi) - m.mean_lo) * k + t;
    }
    if (running_mean)
      running_mean[ch] = mean[ch] * momentum + m.mean_hi * (1.0f - momentum);
    if (running_var)
      running_var[ch] = var[ch] * momentum + m.var * (1.0f - momentum);
  }
}

void cuvil_k_lp_norm_f32(const float *x, float *y, int64_t outer, int64_t n,
                         int64_t inner, int64_t p) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      const float *xs = x + o * n * inner + j;
      float *ys = y + o * n * inner + j;
      double acc = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        const double v = (double)xs[i * inner];
        acc += p == 1 ? __builtin_fabs(v) : v * v;
      }
      /* A zero norm divides by zero, as the ONNX definition does. */
      const float norm = (float)(p == 1 ? acc : __builtin_sqrt(acc));
      for (int64_t i = 0; i < n; ++i)
        ys[i * inner] = xs[i * inner] / norm;
    }
}

void cuvil_k_group_norm_f32(const float *x, const float *scale,
                            const float *bias, float *y, int64_t n,
                            int64_t groups, int64_t cpg, int64_t spatial,
                            int64_t per_channel, float eps) {
  const int64_t len = cpg * spatial;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t base = (b * groups + g) * len;
      const struct norm_moments m = norm_moments(x + base, len);
      const float r = norm_inv_std(m.var, eps);
      for (int64_t c = 0; c < cpg; ++c) {
        const int64_t p = per_channel ? g * cpg + c : g;
        const float k = r * scale[p], t = bias[p];
        const float *xr = x + base + c * spatial;
        float *yr = y + base + c * spatial;
        for (int64_t i = 0; i < spatial; ++i)
          yr[i] = ((xr[i] - m.mean_hi) - m.mean_lo) * k + t;
      }
    }
}
