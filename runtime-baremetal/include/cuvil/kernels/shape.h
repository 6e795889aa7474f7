/* cuvil kernels: Shape and data-movement ops (Slice, Expand, Tile, Pad, Split,
 * Gather, Cast...). Part of cuvil/kernels.h, which includes it inside its
 * extern "C" block after the shared definitions; include cuvil/kernels.h, not
 * this file. */
#ifndef CUVIL_KERNELS_SHAPE_H
#define CUVIL_KERNELS_SHAPE_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Shape and data-movement ops (Slice, Expand, Tile, Pad, Split, Gather,
 *      Cast) ------------------------------------------------------------ */

/* Strided copy of elements of BITS bits: for every index (i0..i5) below
 * shape[CUVIL_MAX_RANK], y[sum(ik * y_str[k])] = x[sum(ik * x_str[k])]
 * (element strides, possibly 0 or negative; x and y already point at the
 * first element). Slice, Expand, Tile, Split and Pad's interior. */
void cuvil_k_strided_copy_b8(const void *x, void *y, const int64_t *shape,
                             const int64_t *x_str, const int64_t *y_str);
void cuvil_k_strided_copy_b16(const void *x, void *y, const int64_t *shape,
                              const int64_t *x_str, const int64_t *y_str);
void cuvil_k_strided_copy_b32(const void *x, void *y, const int64_t *shape,
                              const int64_t *x_str, const int64_t *y_str);
void cuvil_k_strided_copy_b64(const void *x, void *y, const int64_t *shape,
                              const int64_t *x_str, const int64_t *y_str);
/* y[0..n) = the low BITS bits of bits (Pad's constant). */
void cuvil_k_fill_b8(void *y, int64_t n, int64_t bits);
void cuvil_k_fill_b16(void *y, int64_t n, int64_t bits);
void cuvil_k_fill_b32(void *y, int64_t n, int64_t bits);
void cuvil_k_fill_b64(void *y, int64_t n, int64_t bits);
/* Gather along an axis: x is [outer, axis_dim, inner], y is
 * [outer, n_idx, inner]; y[o, j, :] = x[o, idx[j], :]. inner in bytes;
 * negative indices count from the end; out-of-range ones are clamped. */
void cuvil_k_gather_i64(const void *x, void *y, const int64_t *idx,
                        int64_t outer, int64_t n_idx, int64_t axis_dim,
                        int64_t inner_bytes);
void cuvil_k_gather_i32(const void *x, void *y, const int32_t *idx,
                        int64_t outer, int64_t n_idx, int64_t axis_dim,
                        int64_t inner_bytes);

/* Slice with run-time parameters: x has shape in_shape, y out_shape (both
 * padded on the left to CUVIL_MAX_RANK; rank is the real rank). For each
 * k < count, axis axes[k] (or k when axes is NULL) starts at starts[k]
 * (negative counts from the end, clamped as ONNX does) and steps by
 * steps[k] (1 when NULL). The output shape already encodes the ends. */
#define CUVIL_SLICE_DECL(BITS, INAME, ITYPE)                                   \
  void cuvil_k_slice_b##BITS##_##INAME(                                        \
      const void *x, void *y, const int64_t *in_shape,                         \
      const int64_t *out_shape, const ITYPE *starts, const ITYPE *axes,        \
      const ITYPE *steps, int64_t count, int64_t rank);
CUVIL_SLICE_DECL(8, i64, int64_t)
CUVIL_SLICE_DECL(16, i64, int64_t)
CUVIL_SLICE_DECL(32, i64, int64_t)
CUVIL_SLICE_DECL(64, i64, int64_t)
CUVIL_SLICE_DECL(8, i32, int32_t)
CUVIL_SLICE_DECL(16, i32, int32_t)
CUVIL_SLICE_DECL(32, i32, int32_t)
CUVIL_SLICE_DECL(64, i32, int32_t)
#undef CUVIL_SLICE_DECL

/* Pad with run-time pads (int64: the begin pads of n_axes axes, given by
 * axes or 0..n_axes-1; the end pads are implied by out_shape). Shapes are
 * padded on the left to CUVIL_MAX_RANK; rank is the real rank. mode: 0
 * constant (*value, or 0 when value is NULL), 1 edge, 2 reflect, 3 wrap. */
#define CUVIL_PAD_DECL(BITS)                                                   \
  void cuvil_k_pad_b##BITS(const void *x, void *y, const int64_t *in_shape,    \
                           const int64_t *out_shape, const int64_t *pads,      \
                           const int64_t *axes, int64_t n_axes, int64_t rank,  \
                           int64_t mode, const void *value);
CUVIL_PAD_DECL(8)
CUVIL_PAD_DECL(16)
CUVIL_PAD_DECL(32)
CUVIL_PAD_DECL(64)
#undef CUVIL_PAD_DECL

/* Range: y[i] = *start + i * *delta for i < n (start and delta are
 * one-element tensors of y's type). */
void cuvil_k_range_f32(const void *start, const void *delta, void *y,
                       int64_t n);
void cuvil_k_range_f64(const void *start, const void *delta, void *y,
                       int64_t n);
void cuvil_k_range_i16(const void *start, const void *delta, void *y,
                       int64_t n);
void cuvil_k_range_i32(const void *start, const void *delta, void *y,
                       int64_t n);
void cuvil_k_range_i64(const void *start, const void *delta, void *y,
                       int64_t n);

/* Cast: cuvil_k_cast_<from>_<to>(x, y, n) converts n elements with C
 * semantics (to bool: x != 0), for every pair of CUVIL_CAST_TYPES. */
/* clang-format off */
#define CUVIL_CAST_TYPES(X)                                                    \
  X(f32, float) X(f64, double) X(i8, int8_t) X(u8, uint8_t) X(i16, int16_t)    \
  X(u16, uint16_t) X(i32, int32_t) X(u32, uint32_t) X(i64, int64_t)           \
  X(u64, uint64_t) X(bool, uint8_t)
/* clang-format on */
/* clang-format off */
#define CUVIL_CAST_ROW(X, F, FC)                                               \
  X(F, FC, f32, float) X(F, FC, f64, double) X(F, FC, i8, int8_t)              \
  X(F, FC, u8, uint8_t) X(F, FC, i16, int16_t) X(F, FC, u16, uint16_t)         \
  X(F, FC, i32, int32_t) X(F, FC, u32, uint32_t) X(F, FC, i64, int64_t)        \
  X(F, FC, u64, uint64_t) X(F, FC, bool, uint8_t)
/* clang-format on */
/* clang-format off */
#define CUVIL_CAST_PAIRS(X)                                                    \
  CUVIL_CAST_ROW(X, f32, float) CUVIL_CAST_ROW(X, f64, double)                 \
  CUVIL_CAST_ROW(X, i8, int8_t) CUVIL_CAST_ROW(X, u8, uint8_t)                 \
  CUVIL_CAST_ROW(X, i16, int16_t) CUVIL_CAST_ROW(X, u16, uint16_t)             \
  CUVIL_CAST_ROW(X, i32, int32_t) CUVIL_CAST_ROW(X, u32, uint32_t)             \
  CUVIL_CAST_ROW(X, i64, int64_t) CUVIL_CAST_ROW(X, u64, uint64_t)             \
  CUVIL_CAST_ROW(X, bool, uint8_t)
/* clang-format on */
#define CUVIL_CAST_DECL(F, FC, T, TC)                                          \
  void cuvil_k_cast_##F##_##T(const void *x, void *y, int64_t n);
CUVIL_CAST_PAIRS(CUVIL_CAST_DECL)
#undef CUVIL_CAST_DECL
/* float16 and bfloat16 (as uint16_t bits) to and from float32 only: round
 * to nearest even, NaN stays NaN, overflow becomes infinity. */
void cuvil_k_cast_f32_f16(const void *x, void *y, int64_t n);
void cuvil_k_cast_f16_f32(const void *x, void *y, int64_t n);
void cuvil_k_cast_f32_bf16(const void *x, void *y, int64_t n);
/* Truncating float32 -> bfloat16 (Cast before opset 19, as ONNX's reference).
 */
void cuvil_k_cast_f32_bf16_trunc(const void *x, void *y, int64_t n);
void cuvil_k_cast_bf16_f32(const void *x, void *y, int64_t n);

#endif /* CUVIL_KERNELS_SHAPE_H */
