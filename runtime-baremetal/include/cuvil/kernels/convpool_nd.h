/* cuvil kernels: Convolution and pooling over 1 to 3 spatial dimensions.
 * Part of cuvil/kernels.h, which includes it inside its extern "C" block
 * after the shared definitions; include cuvil/kernels.h, not this file. */
#ifndef CUVIL_KERNELS_CONVPOOL_ND_H
#define CUVIL_KERNELS_CONVPOOL_ND_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Convolution and pooling over 1 to 3 spatial dimensions (convpool) -- */

/* Geometry arrays have three entries, depth first; ops with fewer spatial
 * dimensions pass a neutral leading dimension (extent, kernel, stride and
 * dilation 1, padding 0). pad holds the leading padding; the trailing padding
 * is implied by the output extent unless given. */

/* 3-D convolution, NCDHW: x [n, c, in...]; w [m, c/group, k...]; bias [m] or
 * NULL; y [n, m, out...]; then clamped to [act_lo, act_hi]. */
void cuvil_k_conv3d_f32(const float *x, const float *w, const float *bias,
                        float *y, int64_t n, int64_t c, int64_t m,
                        const int64_t *in, const int64_t *k, const int64_t *out,
                        const int64_t *stride, const int64_t *dil,
                        const int64_t *pad, int64_t group, float act_lo,
                        float act_hi);
/* ConvTranspose: x [n, c, in...]; w [c, m/group, k...]; bias [m] or NULL;
 * y [n, m, out...]. Input element i feeds output i * stride + t * dil - pad
 * through tap t; outputs no input reaches hold the bias. */
void cuvil_k_convtranspose3d_f32(const float *x, const float *w,
                                 const float *bias, float *y, int64_t n,
                                 int64_t c, int64_t m, const int64_t *in,
                                 const int64_t *k, const int64_t *out,
                                 const int64_t *stride, const int64_t *dil,
                                 const int64_t *pad, int64_t group);
/* MaxPool on [nc, in...] -> [nc, out...]; padded positions never win.
 * indices (NULL when absent) receives the flat index into x of each maximum,
 * row-major, or column-major within each plane when storage_order != 0. */
void cuvil_k_maxpool3d_f32(const float *x, float *y, int64_t *indices,
                           int64_t nc, const int64_t *in, const int64_t *out,
                           const int64_t *k, const int64_t *stride,
                           const int64_t *dil, const int64_t *pad,
                           int64_t storage_order);
void cuvil_k_maxpool3d_u8(const uint8_t *x, uint8_t *y, int64_t *indices,
                          int64_t nc, const int64_t *in, const int64_t *out,
                          const int64_t *k, const int64_t *stride,
                          const int64_t *dil, const int64_t *pad,
                          int64_t storage_order);
void cuvil_k_maxpool3d_i8(const int8_t *x, int8_t *y, int64_t *indices,
                          int64_t nc, const int64_t *in, const int64_t *out,
                          const int64_t *k, const int64_t *stride,
                          const int64_t *dil, const int64_t *pad,
                          int64_t storage_order);
/* AveragePool on [nc, in...] -> [nc, out...], the divisor as in
 * cuvil_k_avgpool2d_f32. */
void cuvil_k_avgpool3d_f32(const float *x, float *y, int64_t nc,
                           const int64_t *in, const int64_t *out,
                           const int64_t *k, const int64_t *stride,
                           const int64_t *pad_begin, const int64_t *pad_end,
                           int64_t count_include_pad);
/* LpPool on [nc, in...] -> [nc, out...]: y = (sum of |x|^p over the
 * window's real elements)^(1/p), p >= 1 (padding adds 0). */
void cuvil_k_lppool3d_f32(const float *x, float *y, int64_t nc,
                          const int64_t *in, const int64_t *out,
                          const int64_t *k, const int64_t *stride,
                          const int64_t *dil, const int64_t *pad, int64_t p);
/* Col2Im: x [n, c * k0 * k1 * k2, blocks] -> y [n, c, img...]: block b,
 * tap (t0, t1, t2) of channel ch is added to y at position
 * blk * stride - pad + t * dil of each dimension (positions outside the
 * image are dropped); blk enumerates the blocks row-major over nblk[3].
 * y is zeroed first; not in place. */
void cuvil_k_col2im_f32(const float *x, float *y, int64_t n, int64_t c,
                        const int64_t *img, const int64_t *k,
                        const int64_t *nblk, const int64_t *stride,
                        const int64_t *dil, const int64_t *pad);
/* AveragePool with dilations: the mean of the window's taps inside x
 * (count_include_pad: divided by the taps inside the padded input). */
void cuvil_k_avgpool3d_dilated_f32(const float *x, float *y, int64_t nc,
                                   const int64_t *in, const int64_t *out,
                                   const int64_t *k, const int64_t *stride,
                                   const int64_t *dil, const int64_t *pad_begin,
                                   const int64_t *pad_end,
                                   int64_t count_include_pad);
/* y[i] = max(x[i, 0..hw)) for i < nc. */
void cuvil_k_global_maxpool_f32(const float *x, float *y, int64_t nc,
                                int64_t hw);
/* MaxUnpool: y [nc, out...] is zero except where x[i] (i < n_in) goes:
 * indices[i] is a flat index into a [nc, idx_dims...] tensor (the input of
 * the MaxPool that produced it), and the element lands at the same plane
 * and spatial position of y; positions outside y are ignored. */
void cuvil_k_maxunpool_f32(const float *x, const int64_t *indices, float *y,
                           int64_t n_in, int64_t nc, const int64_t *idx_dims,
                           const int64_t *out);

#endif /* CUVIL_KERNELS_CONVPOOL_ND_H */
