/* Depthwise integer convolution (cuvil/kernels/qint.h). The reference
 * kernel in quant/qint.c is its oracle. */
#include "cuvil/kernels.h"

void cuvil_k_qdwconv2d_tiled_s8(const void *x, const int8_t *w,
                                const int32_t *bias, const int32_t *wsum,
                                const int32_t *rq, void *y, const int64_t *geom,
                                int64_t x_type, int64_t x_zp, int64_t y_type,
                                int64_t y_zp, int64_t y_lo, int64_t y_hi) {
  cuvil_k_qdwconv2d_s8(x, w, bias, wsum, rq, y, geom, x_type, x_zp, y_type,
                       y_zp, y_lo, y_hi);
}
