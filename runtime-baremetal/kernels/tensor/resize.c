/* Reference N-D Resize (and Upsample): each output element is a weighted sum
 * of input elements, the weights being the tensor product of 1-D weights per
 * axis (nearest, linear or cubic, optionally antialiased). The 1-D taps of
 * an axis depend only on the output coordinate along that axis, so they are
 * recomputed only when that coordinate changes. */
#include "cuvil/kernels.h"

/* The longest 1-D filter an axis may use (cuvilc refuses antialiased
 * resizes that would need more). */
#define RESIZE_MAX_TAPS CUVIL_RESIZE_MAX_TAPS

typedef struct {
  int64_t n;       /* taps in use */
  int64_t outside; /* tf_crop_and_resize: the coordinate left the input */
  int64_t idx[RESIZE_MAX_TAPS];
  float w[RESIZE_MAX_TAPS];
} taps_t;

typedef struct {
  const float *roi, *scales;
  const int64_t *in_dims, *out_dims, *slot, *static_scale;
  int64_t n_slots, mode, ctm, nearest_mode, exclude_outside, antialias;
  float cubic_a;
} resize_params_t;

static double floor_d(double v) { return __builtin_floor(v); }
static double abs_d(double v) { return v < 0 ? -v : v; }

static double bits_to_double(int64_t bits) {
  union {
    int64_t i;
    double d;
  } u;
  u.i = bits;
  return u.d;
}

static double cubic_weight(double d, double a) {
  d = abs_d(d);
  if (d <= 1)
    return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2)
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

/* The input coordinate of output coordinate o along axis d (ONNX
 * coordinate_transformation_mode); sets *outside for tf_crop_and_resize. */
static double source_coord(const resize_params_t *p, int64_t d, int64_t o,
                           double scale, int64_t *outside) {
  const double in = (double)p->in_dims[d], out = (double)p->out_dims[d];
  const double x = (double)o;
  *outside = 0;
  switch (p->ctm) {
  case CUVIL_RESIZE_PYTORCH_HALF_PIXEL:
    return out > 1 ? (x + 0.5) / scale - 0.5 : 0;
  case CUVIL_RESIZE_ALIGN_CORNERS: {
    /* ONNX takes the resized length as scale * in, not its floor. */
    const double len = scale * in;
    return len == 1 ? 0 : x * (in - 1) / (len - 1);
  }
  case CUVIL_RESIZE_ASYMMETRIC: return x / scale;
  case CUVIL_RESIZE_TF_HALF_PIXEL_FOR_NN: return (x + 0.5) / scale;
  case CUVIL_RESIZE_TF_CROP_AND_RESIZE: {
    const int64_t s = p->slot[d];
    const double start = p->roi[s], end = p->roi[p->n_slots + s];
    const double v =
        out > 1 ? start * (in - 1) + x * (end - start) * (in - 1) / (out - 1)
                : 0.5 * (start + end) * (in - 1);
    *outside = v < 0 || v > in - 1;
    return v;
  }
  case CUVIL_RESIZE_HALF_PIXEL_SYMMETRIC: {
    const double adjustment = out / (scale * in);
    const double offset = in / 2 * (1 - adjustment);
    return offset + (x + 0.5) / scale - 0.5;
  }
  default: /* half_pixel */ return (x + 0.5) / scale - 0.5;
  }
}

/* Fills t with the taps of output coordinate o along axis d. */
static void axis_taps(const resize_params_t *p, int64_t d, int64_t o,
                      taps_t *t) {
  const int64_t in = p->in_dims[d];
  const int64_t s = p->slot[d];
  if (s < 0) { /* not resized */
    t->n = 1;
    t->outside = 0;
    t->idx[0] = o;
    t->w[0] = 1;
    return;
  }
  const double scale =
      p->scales ? (double)p->scales[s] : bits_to_double(p->static_scale[d]);
  const double x = source_coord(p, d, o, scale, &t->outside);
  /* As in the ONNX definition, the fraction is in (0, 1]: an integral
   * coordinate is taken as 1 past its left neighbour. */
  int64_t base = (int64_t)floor_d(x);
  double r = x - (double)base;
  if (r == 0) {
    r = 1;
    base -= 1;
  }
  int64_t first, n = 0;
  double w[RESIZE_MAX_TAPS];
  if (p->mode == CUVIL_RESIZE_NEAREST) {
    int64_t up;
    switch (p->nearest_mode) {
    case CUVIL_RESIZE_ROUND_PREFER_CEIL: up = r >= 0.5; break;
    case CUVIL_RESIZE_FLOOR: up = r == 1; break;
    case CUVIL_RESIZE_CEIL: up = 1; break;
    default: up = r > 0.5; break; /* round_prefer_floor */
    }
    first = base + up;
    w[n++] = 1;
  } else {
    const double sc = p->antialias && scale < 1 ? scale : 1;
    /* Taps i in [lo, 1 - lo] (linear) or [lo, 2 - lo) (cubic) around base,
     * at distance (i - r) * sc in filter units. */
    int64_t lo, hi;
    if (p->mode == CUVIL_RESIZE_LINEAR) {
      lo = (int64_t)floor_d(-1 / sc) + 1;
      hi = 2 - lo;
    } else {
      lo = (int64_t)floor_d(-2 / sc) + 1;
      hi = 2 - lo;
    }
    first = base + lo;
    double sum = 0;
    for (int64_t i = lo; i < hi && n < RESIZE_MAX_TAPS; ++i) {
      const double arg = ((double)i - r) * sc;
      double v;
      if (p->mode == CUVIL_RESIZE_LINEAR) {
        v = 1 - abs_d(arg);
        v = v < 0 ? 0 : v;
      } else {
        v = cubic_weight(arg, p->cubic_a);
      }
      w[n++] = v;
      sum += v;
    }
    if (sc < 1 && sum != 0)
      for (int64_t k = 0; k < n; ++k)
        w[k] /= sum;
  }
  if (p->exclude_outside) {
    double sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = first + k;
      if (i < 0 || i >= in)
        w[k] = 0;
      sum += w[k];
    }
    if (sum != 0)
      for (int64_t k = 0; k < n; ++k)
        w[k] /= sum;
  }
  /* Out-of-range taps read the edge; zero weights are dropped. */
  t->n = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (w[k] == 0 && !(k == n - 1 && t->n == 0))
      continue;
    int64_t i = first + k;
    i = i < 0 ? 0 : i >= in ? in - 1 : i;
    t->idx[t->n] = i;
    t->w[t->n] = (float)w[k];
    t->n++;
  }
}

void cuvil_k_resize_f32(const float *x, const float *roi, const float *scales,
                        float *y, int64_t rank, const int64_t *in_dims,
                        const int64_t *out_dims, const int64_t *slot,
                        int64_t n_slots, const int64_t *static_scale,
                        int64_t mode, int64_t ctm, int64_t nearest_mode,
                        float cubic_a, int64_t exclude_outside,
                        int64_t antialias, float extrapolation_value) {
  const resize_params_t p = {roi,    scales,       in_dims,         out_dims,
                             slot,   static_scale, n_slots,         mode,
                             ctm,    nearest_mode, exclude_outside, antialias,
                             cubic_a};
  taps_t taps[CUVIL_MAX_RANK];
  int64_t in_str[CUVIL_MAX_RANK], oc[CUVIL_MAX_RANK], k[CUVIL_MAX_RANK];
  int64_t total = 1, s = 1;
  for (int64_t d = rank; d-- > 0;) {
    in_str[d] = s;
    s *= in_dims[d];
    total *= out_dims[d];
    oc[d] = 0;
  }
  if (total == 0)
    return;
  for (int64_t d = 0; d < rank; ++d)
    axis_taps(&p, d, 0, &taps[d]);
  for (int64_t e = 0; e < total; ++e) {
    int64_t outside = 0;
    for (int64_t d = 0; d < rank; ++d) {
      outside |= taps[d].outside;
      k[d] = 0;
    }
    float acc = 0;
    if (outside) {
      acc = extrapolation_value;
    } else {
      /* Sum over every combination of the axes' taps. */
      for (;;) {
        int64_t off = 0;
        float w = 1;
        for (int64_t d = 0; d < rank; ++d) {
          off += taps[d].idx[k[d]] * in_str[d];
          w *= taps[d].w[k[d]];
        }
        acc += w * x[off];
        int64_t d = rank - 1;
        while (d >= 0 && ++k[d] == taps[d].n)
          k[d--] = 0;
        if (d < 0)
          break;
      }
    }
    y[e] = acc;
    /* Next output coordinate; refresh the taps of the axes that moved. */
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++oc[d] < out_dims[d]) {
        axis_taps(&p, d, oc[d], &taps[d]);
        break;
      }
      oc[d] = 0;
      axis_taps(&p, d, 0, &taps[d]);
    }
  }
}
