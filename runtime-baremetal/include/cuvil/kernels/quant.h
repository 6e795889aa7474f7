/* cuvil kernels: Quantization.
 * Part of cuvil/kernels.h, which includes it inside its extern "C" block
 * after the shared definitions; include cuvil/kernels.h, not this file. */
#ifndef CUVIL_KERNELS_QUANT_H
#define CUVIL_KERNELS_QUANT_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Quantization ---------------------------------------------------------
 */

/* Element types of quantized tensors, passed as int64_t codes to the kernels
 * below, which take those tensors as untyped pointers. Zero points have the
 * type of the tensor they belong to; a NULL zero point is 0. */
#define CUVIL_Q_U8 0
#define CUVIL_Q_I8 1
#define CUVIL_Q_I32 2

/* QuantizeLinear: y = saturate(round_half_even(x / scale[c]) + zp[c]), where
 * x is dense [outer, axis_dim, inner] and c indexes the middle dimension
 * (axis_dim = 1 for per-tensor). y and zp are U8 or I8 (y_type). */
void cuvil_k_quantize_f32(const float *x, const float *scale, const void *zp,
                          void *y, int64_t outer, int64_t axis_dim,
                          int64_t inner, int64_t y_type);
/* DequantizeLinear: y = (x - zp[c]) * scale[c], same layout as above; x and
 * zp are U8, I8 or I32 (x_type). */
void cuvil_k_dequantize_f32(const void *x, const float *scale, const void *zp,
                            float *y, int64_t outer, int64_t axis_dim,
                            int64_t inner, int64_t x_type);
/* DynamicQuantizeLinear to uint8 over n elements: writes y, the scalar
 * scale and the scalar zero point. */
void cuvil_k_dynamic_quantize_f32_u8(const float *x, uint8_t *y, float *y_scale,
                                     uint8_t *y_zero_point, int64_t n);

/* MatMulInteger: y = (a - a_zp) * (b - b_zp) in int32, batched and
 * broadcast like cuvil_k_matmul_f32. a_zp holds one value, or one per row
 * of a when a_zp_per_row; b_zp one value, or one per column of b when
 * b_zp_per_col. */
void cuvil_k_matmul_integer(const void *a, const void *b, const void *a_zp,
                            const void *b_zp, int32_t *y, int64_t m, int64_t n,
                            int64_t k, const int64_t *batch_shape,
                            const int64_t *a_bstride, const int64_t *b_bstride,
                            int64_t a_type, int64_t b_type,
                            int64_t a_zp_per_row, int64_t b_zp_per_col);
/* QLinearMatMul: the int32 product as above, then
 * y = saturate(round_half_even(acc * (a_scale * b_scale / y_scale)) + y_zp).
 * b_scale and b_zp hold one value per column of b when b_per_col. */
void cuvil_k_qlinear_matmul(const void *a, const float *a_scale,
                            const void *a_zp, const void *b,
                            const float *b_scale, const void *b_zp,
                            const float *y_scale, const void *y_zp, void *y,
                            int64_t m, int64_t n, int64_t k,
                            const int64_t *batch_shape,
                            const int64_t *a_bstride, const int64_t *b_bstride,
                            int64_t a_type, int64_t b_type, int64_t y_type,
                            int64_t b_per_col);

/* Geometry of an integer 2-D convolution (NCHW, as cuvil_k_conv2d_f32):
 * an int64_t array indexed by these. */
enum {
  CUVIL_QCONV_N,
  CUVIL_QCONV_C,
  CUVIL_QCONV_H,
  CUVIL_QCONV_W,
  CUVIL_QCONV_M,
  CUVIL_QCONV_KH,
  CUVIL_QCONV_KW,
  CUVIL_QCONV_OH,
  CUVIL_QCONV_OW,
  CUVIL_QCONV_SH,
  CUVIL_QCONV_SW,
  CUVIL_QCONV_DH,
  CUVIL_QCONV_DW,
  CUVIL_QCONV_PAD_TOP,
  CUVIL_QCONV_PAD_LEFT,
  CUVIL_QCONV_GROUP,
  CUVIL_QCONV_GEOM_SIZE
};
/* ConvInteger: y = conv(x - x_zp, w - w_zp) in int32; padding contributes 0.
 * w_zp holds one value, or one per output channel when w_zp_per_channel. */
void cuvil_k_conv_integer(const void *x, const void *w, const void *x_zp,
                          const void *w_zp, int32_t *y, const int64_t *geom,
                          int64_t x_type, int64_t w_type,
                          int64_t w_zp_per_channel);
/* QLinearConv: the int32 convolution as above plus bias (int32, [m] or
 * NULL), then requantized like cuvil_k_qlinear_matmul with the multiplier
 * x_scale * w_scale[oc] / y_scale. w_scale and w_zp hold one value per
 * output channel when w_per_channel. */
void cuvil_k_qlinear_conv(const void *x, const float *x_scale, const void *x_zp,
                          const void *w, const float *w_scale, const void *w_zp,
                          const float *y_scale, const void *y_zp,
                          const int32_t *bias, void *y, const int64_t *geom,
                          int64_t x_type, int64_t w_type, int64_t y_type,
                          int64_t w_per_channel);

#endif /* CUVIL_KERNELS_QUANT_H */
