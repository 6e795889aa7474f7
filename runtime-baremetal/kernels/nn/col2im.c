/* Reference Col2Im (opset 18) over 1 to 3 spatial dimensions (geometry
 * arrays of three entries, depth first, a neutral leading dimension for
 * fewer): the column blocks of x are summed back into the image. */
#include "cuvil/kernels.h"

void cuvil_k_col2im_f32(const float *x, float *y, int64_t n, int64_t c,
                        const int64_t *img, const int64_t *k,
                        const int64_t *nblk, const int64_t *stride,
                        const int64_t *dil, const int64_t *pad) {
  const int64_t img_vol = img[0] * img[1] * img[2];
  const int64_t taps = k[0] * k[1] * k[2];
  const int64_t blocks = nblk[0] * nblk[1] * nblk[2];
  for (int64_t i = 0; i < n * c * img_vol; ++i)
    y[i] = 0.0f;
  for (int64_t plane = 0; plane < n * c; ++plane) {
    float *yp = y + plane * img_vol;
    const float *xp = x + plane * taps * blocks;
    int64_t row = 0; /* (t0, t1, t2) row-major: the row of x */
    for (int64_t t0 = 0; t0 < k[0]; ++t0)
      for (int64_t t1 = 0; t1 < k[1]; ++t1)
        for (int64_t t2 = 0; t2 < k[2]; ++t2, ++row) {
          const float *xr = xp + row * blocks;
          int64_t b = 0;
          for (int64_t b0 = 0; b0 < nblk[0]; ++b0) {
            const int64_t i0 = b0 * stride[0] - pad[0] + t0 * dil[0];
            for (int64_t b1 = 0; b1 < nblk[1]; ++b1) {
              const int64_t i1 = b1 * stride[1] - pad[1] + t1 * dil[1];
              for (int64_t b2 = 0; b2 < nblk[2]; ++b2, ++b) {
                const int64_t i2 = b2 * stride[2] - pad[2] + t2 * dil[2];
                if (i0 < 0 || i0 >= img[0] || i1 < 0 || i1 >= img[1] ||
                    i2 < 0 || i2 >= img[2])
                  continue;
                yp[(i0 * img[1] + i1) * img[2] + i2] += xr[b];
              }
            }
          }
        }
  }
}
