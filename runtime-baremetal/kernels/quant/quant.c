/* Reference quantization kernels: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, and the integer products behind MatMulInteger,
 * QLinearMatMul, ConvInteger and QLinearConv.
 *
 * Quantized tensors are passed as untyped pointers with a CUVIL_Q_* code;
 * the codes are compile-time constants at every call, so after
 * specialisation the type switches below disappear. Products accumulate in
 * int32 exactly as the ONNX spec defines them: (a - a_zp) * (b - b_zp). */
#include "cuvil/kernels.h"

#include "../math.h"

static inline int32_t q_load(const void *p, int64_t i, int64_t type) {
  if (type == CUVIL_Q_U8)
    return ((const uint8_t *)p)[i];
  if (type == CUVIL_Q_I8)
    return ((const int8_t *)p)[i];
  return ((const int32_t *)p)[i];
}

/* An absent zero point is 0. */
static inline int32_t q_zero_point(const void *zp, int64_t i, int64_t type) {
  return zp ? q_load(zp, i, type) : 0;
}

/* Stores round_half_even(v) + zp saturated to the range of `type` (U8 or
 * I8). The sum is done in float: both terms are integers, so it is exact
 * below 2^24 and saturates anyway above. NaN stores the lowest value. */
static inline void q_store_rounded(void *p, int64_t i, int64_t type, float v,
                                   int32_t zp) {
  const float lo = type == CUVIL_Q_U8 ? 0.0f : -128.0f;
  const float hi = type == CUVIL_Q_U8 ? 255.0f : 127.0f;
  float q = cuvil_roundevenf(v) + (float)zp;
  q = q >= lo ? q : lo;
  q = q <= hi ? q : hi;
  if (type == CUVIL_Q_U8)
    ((uint8_t *)p)[i] = (uint8_t)(int32_t)q;
  else
    ((int8_t *)p)[i] = (int8_t)(int32_t)q;
}

/* round_half_even(v) for |v| < 2^31. RV64GC has no rounding instruction
 * (roundevenf lowers to a test of the magnitude and two conversions):
 * there the conversion rounds, in the default rounding mode (to nearest,
 * ties to even: the mode every float kernel assumes). Elsewhere
 * roundevenf is one instruction, and the loop stays vectorised (with
 * lrintf, a78's MobileNetV1-0.25 input took 33K instructions more). */
static inline int32_t q_round_i32(float v) {
#if defined(__riscv)
  return (int32_t)__builtin_lrintf(v);
#else
  return (int32_t)cuvil_roundevenf(v);
#endif
}

/* y[j] = saturate(round_half_even(x[j] / s) + z) for n elements: the
 * quotient clamped first to the range less z (integers, so clamping and
 * rounding commute; fmaxf takes a NaN to the low end, as q_store_rounded),
 * then rounded (q_round_i32). RV64: 7 instructions an element, where
 * q_store_rounded's rounding, float zero point and clamp took 18
 * (MobileNetV1-0.25's input: 490K -> 203K instructions). */
static inline void q_quantize_run(const float *x, float s, int32_t z,
                                  uint8_t *y, int64_t n, int64_t y_type) {
  const float lo = (y_type == CUVIL_Q_U8 ? 0.0f : -128.0f) - (float)z;
  const float hi = (y_type == CUVIL_Q_U8 ? 255.0f : 127.0f) - (float)z;
  for (int64_t j = 0; j < n; ++j) {
    const float v = __builtin_fminf(__builtin_fmaxf(x[j] / s, lo), hi);
    y[j] = (uint8_t)(q_round_i32(v) + z);
  }
}

void cuvil_k_quantize_f32(const float *x, const float *scale, const void *zp,
                          void *y, int64_t outer, int64_t axis_dim,
                          int64_t inner, int64_t y_type) {
  if (axis_dim == 1) { /* per tensor: one run (cuvilc passes inner 1) */
    inner *= outer;
    outer = 1;
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < axis_dim; ++c) {
      const int64_t base = (o * axis_dim + c) * inner;
      /* The spec divides by the scale; multiplying by its reciprocal would
       * round differently at ties. */
      q_quantize_run(x + base, scale[c], q_zero_point(zp, c, y_type),
                     (uint8_t *)y + base, inner, y_type);
    }
  }
}

void cuvil_k_dequantize_f32(const void *x, const float *scale, const void *zp,
                            float *y, int64_t outer, int64_t axis_dim,
                            int64_t inner, int64_t x_type) {
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < axis_dim; ++c) {
      const float s = scale[c];
      const int64_t z = q_zero_point(zp, c, x_type);
      const int64_t base = (o * axis_dim + c) * inner;
      /* int64 keeps the difference exact even for int32 input. */
      for (int64_t j = 0; j < inner; ++j)
        y[base + j] = (float)((int64_t)q_load(x, base + j, x_type) - z) * s;
    }
  }
}

void cuvil_k_dynamic_quantize_f32_u8(const float *x, uint8_t *y, float *y_scale,
                                     uint8_t *y_zero_point, int64_t n) {
  /* The range always includes 0, so that 0 is exactly representable. */
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    lo = x[i] < lo ? x[i] : lo;
    hi = x[i] > hi ? x[i] : hi;
  }
  const float scale = (hi - lo) / 255.0f;
  /* zero point = round(saturate(0 - lo / scale)), as the spec's function
   * body computes it (clip first, then round half to even). */
  float zpf = scale != 0.0f ? 0.0f - lo / scale : 0.0f;
  zpf = cuvil_roundevenf(cuvil_clampf(zpf, 0.0f, 255.0f));
  const int32_t zp = (int32_t)zpf;
  *y_scale = scale;
  *y_zero_point = (uint8_t)zp;
  /* An all-zero input has scale 0; every element then quantizes to zp. */
  for (int64_t i = 0; i < n; ++i)
    q_store_rounded(y, i, CUVIL_Q_U8, scale != 0.0f ? x[i] / scale : 0.0f, zp);
}

/* ---- Integer matrix products ------------------------------------------- */

/* The int32 accumulator of output (i, j) of one [m, k] x [k, n] product. */
static inline int32_t q_dot(const void *a, int64_t a_off, int64_t a_type,
                            int32_t a_zp, const void *b, int64_t b_off,
                            int64_t b_type, int32_t b_zp, int64_t n,
                            int64_t k) {
  int32_t acc = 0;
  for (int64_t p = 0; p < k; ++p)
    acc += (q_load(a, a_off + p, a_type) - a_zp) *
           (q_load(b, b_off + p * n, b_type) - b_zp);
  return acc;
}

/* Walks the batches of a broadcast batched product: calls body(a_off,
 * b_off, y_off) with element offsets of each [m, k], [k, n] and [m, n]
 * matrix. The batch arrays are those of cuvil_k_matmul_f32. */
#define Q_FOR_EACH_BATCH(body)                                                 \
  do {                                                                         \
    int64_t y_off = 0;                                                         \
    for (int64_t b0 = 0; b0 < batch_shape[0]; ++b0)                            \
      for (int64_t b1 = 0; b1 < batch_shape[1]; ++b1)                          \
        for (int64_t b2 = 0; b2 < batch_shape[2]; ++b2)                        \
          for (int64_t b3 = 0; b3 < batch_shape[3]; ++b3) {                    \
            const int64_t a_off = b0 * a_bstride[0] + b1 * a_bstride[1] +      \
                                  b2 * a_bstride[2] + b3 * a_bstride[3];       \
            const int64_t b_off = b0 * b_bstride[0] + b1 * b_bstride[1] +      \
                                  b2 * b_bstride[2] + b3 * b_bstride[3];       \
            body;                                                              \
            y_off += m * n;                                                    \
          }                                                                    \
  } while (0)

void cuvil_k_matmul_integer(const void *a, const void *b, const void *a_zp,
                            const void *b_zp, int32_t *y, int64_t m, int64_t n,
                            int64_t k, const int64_t *batch_shape,
                            const int64_t *a_bstride, const int64_t *b_bstride,
                            int64_t a_type, int64_t b_type,
                            int64_t a_zp_per_row, int64_t b_zp_per_col) {
  Q_FOR_EACH_BATCH({
    for (int64_t i = 0; i < m; ++i) {
      const int32_t za = q_zero_point(a_zp, a_zp_per_row ? i : 0, a_type);
      for (int64_t j = 0; j < n; ++j) {
        const int32_t zb = q_zero_point(b_zp, b_zp_per_col ? j : 0, b_type);
        y[y_off + i * n + j] =
            q_dot(a, a_off + i * k, a_type, za, b, b_off + j, b_type, zb, n, k);
      }
    }
  });
}

void cuvil_k_qlinear_matmul(const void *a, const float *a_scale,
                            const void *a_zp, const void *b,
                            const float *b_scale, const void *b_zp,
                            const float *y_scale, const void *y_zp, void *y,
                            int64_t m, int64_t n, int64_t k,
                            const int64_t *batch_shape,
                            const int64_t *a_bstride, const int64_t *b_bstride,
                            int64_t a_type, int64_t b_type, int64_t y_type,
                            int64_t b_per_col) {
  const int32_t za = q_zero_point(a_zp, 0, a_type);
  const int32_t zy = q_zero_point(y_zp, 0, y_type);
  Q_FOR_EACH_BATCH({
    for (int64_t j = 0; j < n; ++j) {
      const int64_t jb = b_per_col ? j : 0;
      const int32_t zb = q_zero_point(b_zp, jb, b_type);
      const float mult = a_scale[0] * b_scale[jb] / y_scale[0];
      for (int64_t i = 0; i < m; ++i) {
        const int32_t acc =
            q_dot(a, a_off + i * k, a_type, za, b, b_off + j, b_type, zb, n, k);
        q_store_rounded(y, y_off + i * n + j, y_type, (float)acc * mult, zy);
      }
    }
  });
}

/* ---- Integer convolution ------------------------------------------------ */

struct q_conv_shape {
  int64_t n, c, h, w, m, kh, kw, oh, ow;
  int64_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left, group;
};

static inline struct q_conv_shape q_conv_unpack(const int64_t *g) {
  struct q_conv_shape s = {
      g[CUVIL_QCONV_N],    g[CUVIL_QCONV_C],       g[CUVIL_QCONV_H],
      g[CUVIL_QCONV_W],    g[CUVIL_QCONV_M],       g[CUVIL_QCONV_KH],
      g[CUVIL_QCONV_KW],   g[CUVIL_QCONV_OH],      g[CUVIL_QCONV_OW],
      g[CUVIL_QCONV_SH],   g[CUVIL_QCONV_SW],      g[CUVIL_QCONV_DH],
      g[CUVIL_QCONV_DW],   g[CUVIL_QCONV_PAD_TOP], g[CUVIL_QCONV_PAD_LEFT],
      g[CUVIL_QCONV_GROUP]};
  return s;
}

/* The int32 accumulator of output (b, oc, oy, ox) of a grouped, strided,
 * dilated 2-D convolution. Padding contributes nothing: a padded input
 * element equals the input zero point, so (x - x_zp) is 0 there. */
static inline int32_t q_conv_acc(const void *x, int64_t x_type, int32_t x_zp,
                                 const void *w, int64_t w_type, int32_t w_zp,
                                 const struct q_conv_shape *s, int64_t b,
                                 int64_t oc, int64_t oy, int64_t ox) {
  const int64_t cg = s->c / s->group;
  const int64_t g = oc / (s->m / s->group);
  int32_t acc = 0;
  for (int64_t ic = 0; ic < cg; ++ic) {
    const int64_t x_plane = (b * s->c + g * cg + ic) * s->h * s->w;
    const int64_t w_plane = (oc * cg + ic) * s->kh * s->kw;
    for (int64_t ky = 0; ky < s->kh; ++ky) {
      const int64_t iy = oy * s->stride_h + ky * s->dil_h - s->pad_top;
      if (iy < 0 || iy >= s->h)
        continue;
      for (int64_t kx = 0; kx < s->kw; ++kx) {
        const int64_t ix = ox * s->stride_w + kx * s->dil_w - s->pad_left;
        if (ix < 0 || ix >= s->w)
          continue;
        acc += (q_load(x, x_plane + iy * s->w + ix, x_type) - x_zp) *
               (q_load(w, w_plane + ky * s->kw + kx, w_type) - w_zp);
      }
    }
  }
  return acc;
}

void cuvil_k_conv_integer(const void *x, const void *w, const void *x_zp,
                          const void *w_zp, int32_t *y, const int64_t *geom,
                          int64_t x_type, int64_t w_type,
                          int64_t w_zp_per_channel) {
  const struct q_conv_shape sh = q_conv_unpack(geom), *s = &sh;
  const int32_t zx = q_zero_point(x_zp, 0, x_type);
  for (int64_t b = 0; b < s->n; ++b)
    for (int64_t oc = 0; oc < s->m; ++oc) {
      const int32_t zw = q_zero_point(w_zp, w_zp_per_channel ? oc : 0, w_type);
      int32_t *yc = y + (b * s->m + oc) * s->oh * s->ow;
      for (int64_t oy = 0; oy < s->oh; ++oy)
        for (int64_t ox = 0; ox < s->ow; ++ox)
          yc[oy * s->ow + ox] =
              q_conv_acc(x, x_type, zx, w, w_type, zw, s, b, oc, oy, ox);
    }
}

void cuvil_k_qlinear_conv(const void *x, const float *x_scale, const void *x_zp,
                          const void *w, const float *w_scale, const void *w_zp,
                          const float *y_scale, const void *y_zp,
                          const int32_t *bias, void *y, const int64_t *geom,
                          int64_t x_type, int64_t w_type, int64_t y_type,
                          int64_t w_per_channel) {
  const struct q_conv_shape sh = q_conv_unpack(geom), *s = &sh;
  const int32_t zx = q_zero_point(x_zp, 0, x_type);
  const int32_t zy = q_zero_point(y_zp, 0, y_type);
  for (int64_t b = 0; b < s->n; ++b)
    for (int64_t oc = 0; oc < s->m; ++oc) {
      const int64_t cw = w_per_channel ? oc : 0;
      const int32_t zw = q_zero_point(w_zp, cw, w_type);
      const float mult = x_scale[0] * w_scale[cw] / y_scale[0];
      const int32_t init = bias ? bias[oc] : 0;
      const int64_t y_plane = (b * s->m + oc) * s->oh * s->ow;
      for (int64_t oy = 0; oy < s->oh; ++oy)
        for (int64_t ox = 0; ox < s->ow; ++ox) {
          const int32_t acc =
              init + q_conv_acc(x, x_type, zx, w, w_type, zw, s, b, oc, oy, ox);
          q_store_rounded(y, y_plane + oy * s->ow + ox, y_type,
                          (float)acc * mult, zy);
        }
    }
}
