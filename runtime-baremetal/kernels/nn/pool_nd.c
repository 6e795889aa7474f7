/* Reference pooling over 1 to 3 spatial dimensions (geometry arrays of three
 * entries, depth first, a neutral leading dimension for 1-D and 2-D): max
 * (any element type, optional argmax indices), average, global max and
 * MaxUnpool. The 2-D float kernels in pool.c remain the fast path. */
#include "cuvil/kernels.h"

static int64_t min_i64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t max_i64(int64_t a, int64_t b) { return a > b ? a : b; }

/* Flat index of input element (z, y, x) of plane p for the Indices output:
 * row-major, or column-major within the plane when storage_order != 0. */
static int64_t argmax_index(int64_t p, const int64_t *in, int64_t z, int64_t y,
                            int64_t x, int64_t storage_order) {
  const int64_t vol = in[0] * in[1] * in[2];
  const int64_t within =
      storage_order ? (x * in[1] + y) * in[0] + z : (z * in[1] + y) * in[2] + x;
  return p * vol + within;
}

/* Padding is skipped rather than read as the lowest value; a float NaN never
 * compares greater, so it is skipped too (as in cuvil_k_maxpool2d_f32). The
 * index is that of the first maximum, or of the first real element when no
 * element exceeds the type's lowest value. */
#define CUVIL_MAXPOOL3D(SUFFIX, T, LOWEST)                                     \
  void cuvil_k_maxpool3d_##SUFFIX(                                             \
      const T *x, T *y, int64_t *indices, int64_t nc, const int64_t *in,       \
      const int64_t *out, const int64_t *k, const int64_t *stride,             \
      const int64_t *dil, const int64_t *pad, int64_t storage_order) {         \
    const int64_t in_vol = in[0] * in[1] * in[2];                              \
    const int64_t out_vol = out[0] * out[1] * out[2];                          \
    for (int64_t p = 0; p < nc; ++p) {                                         \
      const T *xp = x + p * in_vol;                                            \
      int64_t o = p * out_vol;                                                 \
      for (int64_t oz = 0; oz < out[0]; ++oz)                                  \
        for (int64_t oy = 0; oy < out[1]; ++oy)                                \
          for (int64_t ox = 0; ox < out[2]; ++ox, ++o) {                       \
            T best = LOWEST;                                                   \
            int64_t arg = -1;                                                  \
            for (int64_t kz = 0; kz < k[0]; ++kz) {                            \
              const int64_t iz = oz * stride[0] - pad[0] + kz * dil[0];        \
              if (iz < 0 || iz >= in[0])                                       \
                continue;                                                      \
              for (int64_t ky = 0; ky < k[1]; ++ky) {                          \
                const int64_t iy = oy * stride[1] - pad[1] + ky * dil[1];      \
                if (iy < 0 || iy >= in[1])                                     \
                  continue;                                                    \
                for (int64_t kx = 0; kx < k[2]; ++kx) {                        \
                  const int64_t ix = ox * stride[2] - pad[2] + kx * dil[2];    \
                  if (ix < 0 || ix >= in[2])                                   \
                    continue;                                                  \
                  const T v = xp[(iz * in[1] + iy) * in[2] + ix];              \
                  if (arg < 0 || v > best) {                                   \
                    arg = argmax_index(p, in, iz, iy, ix, storage_order);      \
                    best = v > best ? v : best;                                \
                  }                                                            \
                }                                                              \
              }                                                                \
            }                                                                  \
            y[o] = best;                                                       \
            if (indices)                                                       \
              indices[o] = arg;                                                \
          }                                                                    \
    }                                                                          \
  }

CUVIL_MAXPOOL3D(f32, float, -__builtin_inff())
CUVIL_MAXPOOL3D(u8, uint8_t, 0)
CUVIL_MAXPOOL3D(i8, int8_t, -128)

void cuvil_k_avgpool3d_f32(const float *x, float *y, int64_t nc,
                           const int64_t *in, const int64_t *out,
                           const int64_t *k, const int64_t *stride,
                           const int64_t *pad_begin, const int64_t *pad_end,
                           int64_t count_include_pad) {
  const int64_t in_vol = in[0] * in[1] * in[2];
  const int64_t out_vol = out[0] * out[1] * out[2];
  for (int64_t p = 0; p < nc; ++p) {
    const float *xp = x + p * in_vol;
    int64_t o = p * out_vol;
    int64_t pos[3];
    for (pos[0] = 0; pos[0] < out[0]; ++pos[0])
      for (pos[1] = 0; pos[1] < out[1]; ++pos[1])
        for (pos[2] = 0; pos[2] < out[2]; ++pos[2], ++o) {
          /* Per dimension the window [lo, hi), clipped first to the padded
           * input (what count_include_pad counts; ceil_mode windows may
           * reach past it), then to the real input. */
          int64_t lo[3], hi[3], padded_count = 1, count = 1;
          for (int d = 0; d < 3; ++d) {
            lo[d] = pos[d] * stride[d] - pad_begin[d];
            hi[d] = min_i64(lo[d] + k[d], in[d] + pad_end[d]);
            padded_count *= hi[d] - lo[d];
            lo[d] = max_i64(lo[d], 0);
            hi[d] = min_i64(hi[d], in[d]);
            count *= hi[d] - lo[d];
          }
          float sum = 0.0f;
          for (int64_t iz = lo[0]; iz < hi[0]; ++iz)
            for (int64_t iy = lo[1]; iy < hi[1]; ++iy)
              for (int64_t ix = lo[2]; ix < hi[2]; ++ix)
                sum += xp[(iz * in[1] + iy) * in[2] + ix];
          y[o] = sum / (float)(count_include_pad ? padded_count : count);
        }
  }
}

/* Dilated windows (AveragePool-19): the taps are kernel points, so the
 * divisor counts taps rather than a clipped box: those inside the input, or
 * with count_include_pad those inside the padded input. */
void cuvil_k_avgpool3d_dilated_f32(const float *x, float *y, int64_t nc,
                                   const int64_t *in, const int64_t *out,
                                   const int64_t *k, const int64_t *stride,
                                   const int64_t *dil, const int64_t *pad_begin,
                                   const int64_t *pad_end,
                                   int64_t count_include_pad) {
  const int64_t in_vol = in[0] * in[1] * in[2];
  const int64_t out_vol = out[0] * out[1] * out[2];
  for (int64_t p = 0; p < nc; ++p) {
    const float *xp = x + p * in_vol;
    int64_t o = p * out_vol;
    int64_t pos[3];
    for (pos[0] = 0; pos[0] < out[0]; ++pos[0])
      for (pos[1] = 0; pos[1] < out[1]; ++pos[1])
        for (pos[2] = 0; pos[2] < out[2]; ++pos[2], ++o) {
          float sum = 0.0f;
          int64_t count = 0, padded_count = 0;
          for (int64_t kz = 0; kz < k[0]; ++kz) {
            const int64_t iz = pos[0] * stride[0] - pad_begin[0] + kz * dil[0];
            for (int64_t ky = 0; ky < k[1]; ++ky) {
              const int64_t iy =
                  pos[1] * stride[1] - pad_begin[1] + ky * dil[1];
              for (int64_t kx = 0; kx < k[2]; ++kx) {
                const int64_t ix =
                    pos[2] * stride[2] - pad_begin[2] + kx * dil[2];
                padded_count += iz < in[0] + pad_end[0] &&
                                iy < in[1] + pad_end[1] &&
                                ix < in[2] + pad_end[2];
                if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 ||
                    ix >= in[2])
                  continue;
                sum += xp[(iz * in[1] + iy) * in[2] + ix];
                ++count;
              }
            }
          }
          const int64_t d = count_include_pad ? padded_count : count;
          y[o] = d > 0 ? sum / (float)d : 0.0f;
        }
  }
}

void cuvil_k_global_maxpool_f32(const float *x, float *y, int64_t nc,
                                int64_t hw) {
  for (int64_t p = 0; p < nc; ++p) {
    float best = -__builtin_inff();
    for (int64_t i = 0; i < hw; ++i) {
      const float v = x[p * hw + i];
      best = v > best ? v : best;
    }
    y[p] = best;
  }
}

void cuvil_k_maxunpool_f32(const float *x, const int64_t *indices, float *y,
                           int64_t n_in, int64_t nc, const int64_t *idx_dims,
                           const int64_t *out) {
  const int64_t idx_vol = idx_dims[0] * idx_dims[1] * idx_dims[2];
  const int64_t out_vol = out[0] * out[1] * out[2];
  for (int64_t i = 0; i < nc * out_vol; ++i)
    y[i] = 0.0f;
  for (int64_t i = 0; i < n_in; ++i) {
    /* Split the index in the pooled input's coordinates; positions outside
     * y are ignored rather than written. */
    const int64_t idx = indices[i];
    const int64_t p = idx / idx_vol, r = idx % idx_vol;
    const int64_t z = r / (idx_dims[1] * idx_dims[2]);
    const int64_t v = r / idx_dims[2] % idx_dims[1], u = r % idx_dims[2];
    if (idx < 0 || p >= nc || z >= out[0] || v >= out[1] || u >= out[2])
      continue;
    y[p * out_vol + (z * out[1] + v) * out[2] + u] = x[i];
  }
}
