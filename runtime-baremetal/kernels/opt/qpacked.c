/* Integer convolution and matrix product on weights packed at compile time
 * (cuvil/kernels/qint.h; block shapes in qblocking.h). The reference
 * kernels in quant/qint.c are their oracle. */
#include "cuvil/kernels.h"

#include "qblocking.h"

/* Read by cuvilc from the kernel bitcode: the packing it must use. */
const int64_t cuvil_k_qpack_mr = CUVIL_QMR;
const int64_t cuvil_k_qpack_kr = CUVIL_QKR;

void cuvil_k_qconv2d_packed_s8(const void *x, const int8_t *wp,
                               const int32_t *bias, const int32_t *wsum,
                               const int32_t *rq, void *y, const int64_t *geom,
                               int64_t x_type, int64_t x_zp, int64_t y_type,
                               int64_t y_zp, int64_t y_lo, int64_t y_hi) {
  cuvil_k_qconv2d_s8(x, wp, bias, wsum, rq, y, geom, CUVIL_QMR, CUVIL_QKR,
                     x_type, x_zp, y_type, y_zp, y_lo, y_hi);
}

void cuvil_k_qgemm_packed_s8(const void *a, const int8_t *wp,
                             const int32_t *bias, const int32_t *wsum,
                             const int32_t *rq, void *y, int64_t m, int64_t n,
                             int64_t k, int64_t a_type, int64_t a_zp,
                             int64_t y_type, int64_t y_zp, int64_t y_lo,
                             int64_t y_hi) {
  cuvil_k_qgemm_s8(a, wp, bias, wsum, rq, y, m, n, k, CUVIL_QMR, CUVIL_QKR,
                   a_type, a_zp, y_type, y_zp, y_lo, y_hi);
}
