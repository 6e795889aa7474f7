/* Reference signal-processing kernels: window generators, DFT, STFT and the
 * mel filter bank. Transforms are direct O(n^2) sums (any length, no
 * scratch memory); every twiddle factor comes from cuvil_twiddle, which
 * reduces the angle exactly in integers first. */
#include "cuvil/kernels.h"

#include "../math.h"

/* cos and sin of 2 pi m / n for 0 <= m < n. 4m = q n + r splits the angle
 * into q exact quarter turns and (pi/2) r / n in [0, pi/2): quarter, half and
 * three-quarter turns give exact 0 and +-1 (a real signal's Nyquist bin has
 * an imaginary part of exactly 0, as the reference's). */
static inline void cuvil_twiddle(int64_t m, int64_t n, float *c, float *s) {
  const int64_t q = (4 * m) / n, r = 4 * m - q * n;
  const float t = 1.57079632679489661923f * ((float)r / (float)n);
  const float sb = cuvil_sinf(t), cb = cuvil_cosf(t);
  switch (q & 3) {
  case 0:
    *c = cb;
    *s = sb;
    break;
  case 1:
    *c = -sb;
    *s = cb;
    break;
  case 2:
    *c = -cb;
    *s = -sb;
    break;
  default:
    *c = sb;
    *s = -cb;
    break;
  }
}

void cuvil_k_cosine_window_f32(float *y, int64_t n, int64_t periodic, float a0,
                               float a1, float a2) {
  const int64_t len = periodic ? n : n - 1;
  for (int64_t i = 0; i < n; ++i) {
    float c1 = 1.0f, c2 = 1.0f, s;
    if (len > 0) {
      cuvil_twiddle(i % len, len, &c1, &s);
      cuvil_twiddle((2 * i) % len, len, &c2, &s);
    }
    y[i] = a0 - a1 * c1 + a2 * c2;
  }
}

/* One DFT of the n_in samples x[t * xs] (complex when xc: imaginary part at
 * x[t * xs + 1]), zero-padded or cut to n_fft, bins 0..n_out-1 written to
 * y[k * ys], y[k * ys + 1]. */
static void cuvil_dft_line(const float *x, int64_t xs, int64_t xc, int64_t n_in,
                           const float *w, float *y, int64_t ys, int64_t n_fft,
                           int64_t n_out, int64_t inverse) {
  const int64_t n = n_in < n_fft ? n_in : n_fft;
  const float scale = inverse ? 1.0f / (float)n_fft : 1.0f;
  for (int64_t k = 0; k < n_out; ++k) {
    float re = 0.0f, im = 0.0f;
    int64_t m = 0; /* k * t mod n_fft */
    const int64_t step = k % n_fft;
    for (int64_t t = 0; t < n; ++t) {
      const float wt = w ? w[t] : 1.0f;
      const float xr = x[t * xs] * wt, xi = xc ? x[t * xs + 1] * wt : 0.0f;
      float c, s;
      cuvil_twiddle(m, n_fft, &c, &s);
      if (inverse)
        s = -s;
      /* (xr + i xi) (c - i s) */
      re += xr * c + xi * s;
      im += xi * c - xr * s;
      m += step;
      if (m >= n_fft)
        m -= n_fft;
    }
    y[k * ys] = re * scale;
    y[k * ys + 1] = im * scale;
  }
}

void cuvil_k_dft_f32(const float *x, float *y, int64_t outer, int64_t n_in,
                     int64_t inner, int64_t complex_in, int64_t n_fft,
                     int64_t n_out, int64_t inverse) {
  const int64_t xc = complex_in ? 2 : 1;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j)
      cuvil_dft_line(x + (o * n_in * inner + j) * xc, inner * xc, complex_in,
                     n_in, 0, y + (o * n_out * inner + j) * 2, inner * 2, n_fft,
                     n_out, inverse);
}

/* A run-time integer scalar of either width. */
static inline int64_t cuvil_load_int(const void *p, int64_t is64) {
  return is64 ? *(const int64_t *)p : *(const int32_t *)p;
}

void cuvil_k_stft_f32(const float *x, const void *frame_step,
                      const void *frame_length, const float *window, float *y,
                      int64_t batch, int64_t sig_len, int64_t complex_in,
                      int64_t frames, int64_t bins, int64_t window_len,
                      int64_t int64_scalars) {
  const int64_t step = cuvil_load_int(frame_step, int64_scalars);
  const int64_t len =
      frame_length ? cuvil_load_int(frame_length, int64_scalars) : window_len;
  const int64_t xc = complex_in ? 2 : 1;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t f = 0; f < frames; ++f) {
      float *yf = y + (b * frames + f) * bins * 2;
      const int64_t start = f * step;
      /* Run-time lengths that disagree with the static shapes must not read
       * out of bounds: the frame is cut at the signal's (and window's) end. */
      int64_t avail = sig_len - start;
      if (window && window_len < avail)
        avail = window_len;
      if (len <= 0 || start < 0 || avail <= 0) {
        for (int64_t k = 0; k < bins * 2; ++k)
          yf[k] = 0.0f;
        continue;
      }
      cuvil_dft_line(x + (b * sig_len + start) * xc, xc, complex_in,
                     avail < len ? avail : len, window, yf, 2, len, bins, 0);
    }
}

/* Hertz to mel and back: mel(f) = 2595 log10(1 + f / 700). */
static inline float cuvil_hz_to_mel(float hz) {
  return 2595.0f * cuvil_logf(1.0f + hz / 700.0f) * 0.434294481903251828f;
}
static inline float cuvil_mel_to_hz(float mel) {
  return 700.0f * (cuvil_expf(mel * (2.30258509299404568f / 2595.0f)) - 1.0f);
}

void cuvil_k_mel_weight_matrix_f32(
    const void *num_mel_bins, const void *dft_length, const void *sample_rate,
    const float *lower_edge_hertz, const float *upper_edge_hertz, float *y,
    int64_t bins, int64_t mels, int64_t int64_inputs) {
  (void)num_mel_bins; /* the output's static shape gives it */
  const int64_t dft = cuvil_load_int(dft_length, int64_inputs);
  const int64_t rate = cuvil_load_int(sample_rate, int64_inputs);
  for (int64_t i = 0; i < bins * mels; ++i)
    y[i] = 0.0f;
  if (rate <= 0)
    return;
  const float lo = cuvil_hz_to_mel(*lower_edge_hertz);
  const float step =
      (cuvil_hz_to_mel(*upper_edge_hertz) - lo) / (float)(mels + 2);
  /* Spectrogram bin of mel point p (p = 0 .. mels + 1): points split
   * [lower, upper] in mels + 2 equal mel steps, as ONNX specifies. */
#define CUVIL_MEL_BIN(p)                                                       \
  ((int64_t)cuvil_floorf((float)(dft + 1) *                                    \
                         cuvil_mel_to_hz((float)(p) * step + lo) /             \
                         (float)rate))
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t l = CUVIL_MEL_BIN(i), c = CUVIL_MEL_BIN(i + 1),
                  h = CUVIL_MEL_BIN(i + 2);
    /* Rising edge l..c (a single 1 at c when l == c), falling edge c..h-1. */
    for (int64_t j = l; j <= c; ++j)
      if (j >= 0 && j < bins)
        y[j * mels + i] = c == l ? 1.0f : (float)(j - l) / (float)(c - l);
    for (int64_t j = c; j < h; ++j)
      if (j >= 0 && j < bins)
        y[j * mels + i] = (float)(h - j) / (float)(h - c);
  }
#undef CUVIL_MEL_BIN
}

void cuvil_k_det_f32(const float *x, float *y, int64_t batch, int64_t n) {
  float a[CUVIL_DET_MAX_N * CUVIL_DET_MAX_N];
  for (int64_t b = 0; b < batch; ++b) {
    /* Indexed, not x + offset: x may be NULL for 0x0 matrices. */
    for (int64_t i = 0; i < n * n; ++i)
      a[i] = x[b * n * n + i];
    float det = 1.0f;
    /* LU with partial pivoting: det = sign of the row swaps * the pivots. */
    for (int64_t k = 0; k < n && det != 0.0f; ++k) {
      int64_t p = k;
      for (int64_t i = k + 1; i < n; ++i)
        if (__builtin_fabsf(a[i * n + k]) > __builtin_fabsf(a[p * n + k]))
          p = i;
      if (a[p * n + k] == 0.0f) {
        det = 0.0f;
        break;
      }
      if (p != k) {
        for (int64_t j = 0; j < n; ++j) {
          const float t = a[k * n + j];
          a[k * n + j] = a[p * n + j];
          a[p * n + j] = t;
        }
        det = -det;
      }
      const float piv = a[k * n + k];
      det *= piv;
      for (int64_t i = k + 1; i < n; ++i) {
        const float f = a[i * n + k] / piv;
        for (int64_t j = k + 1; j < n; ++j)
          a[i * n + j] -= f * a[k * n + j];
      }
    }
    y[b] = det;
  }
}
