/* cuvil kernels: Indexing: GatherElements, GatherND, Scatter*, TopK, OneHot,
 * Trilu.... Part of cuvil/kernels.h, which includes it inside its extern "C"
 * block after the shared definitions; include cuvil/kernels.h, not this file.
 */
#ifndef CUVIL_KERNELS_INDEXING_H
#define CUVIL_KERNELS_INDEXING_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Indexing: GatherElements, GatherND, Scatter*, TopK, OneHot, Trilu,
 *      EyeLike, ReverseSequence, CumSum (gather_scatter.c, index_ops.c) --- */

/* Index tensors are read at run time. A negative index counts from the end
 * of its axis (index + dim). An index still outside [0, dim) after that is
 * a malformed input, and kernels never touch memory outside their buffers
 * because of it: gathers (GatherElements, GatherND) clamp it into
 * [0, dim) and read that element; scatters (ScatterElements, Scatter,
 * ScatterND) skip that update (the output keeps the data's element);
 * OneHot writes an all-off row for it. Element kernels named _b<bits> move
 * elements of 8, 16, 32 or 64 bits of any type; _i32 / _i64 name the index
 * type. */

/* GatherElements: y is dense with shape[CUVIL_MAX_RANK] (the index tensor's
 * shape padded on the left with 1); for every index i,
 *   y[i] = x[sum(i_k * x_str[k]) + idx[i] * axis_str],
 * x_str being x's element strides with 0 on the gather axis, axis_dim and
 * axis_str that axis's extent and stride. */
#define CUVIL_GATHER_ELEMENTS_DECL(BITS, INAME, ITYPE)                         \
  void cuvil_k_gather_elements_b##BITS##_##INAME(                              \
      const void *x, const ITYPE *idx, void *y, const int64_t *shape,          \
      const int64_t *x_str, int64_t axis_dim, int64_t axis_str);
/* ScatterElements on y, which already holds a copy of the data: with the
 * same loop as GatherElements (updates dense like the indices),
 *   t = &y[sum(i_k * y_str[k]) + idx[i] * axis_str]; *t = op(*t, upd[i]),
 * in index order (duplicate indices: the last one wins for none).
 * cuvil_k_scatter_elements_<op>_<t>_<index type>: op none with t b8..b64;
 * op add, mul, max, min with t f32, f64, i32, i64. */
#define CUVIL_SCATTER_ELEMENTS_DECL(NAME, INAME, ITYPE)                        \
  void cuvil_k_scatter_elements_##NAME##_##INAME(                              \
      void *y, const ITYPE *idx, const void *upd, const int64_t *shape,        \
      const int64_t *y_str, int64_t axis_dim, int64_t axis_str);
/* clang-format off */
#define CUVIL_GATHER_SCATTER_DECLS(INAME, ITYPE)                               \
  CUVIL_GATHER_ELEMENTS_DECL(8, INAME, ITYPE)                                  \
  CUVIL_GATHER_ELEMENTS_DECL(16, INAME, ITYPE)                                 \
  CUVIL_GATHER_ELEMENTS_DECL(32, INAME, ITYPE)                                 \
  CUVIL_GATHER_ELEMENTS_DECL(64, INAME, ITYPE)                                 \
  CUVIL_SCATTER_ELEMENTS_DECL(none_b8, INAME, ITYPE)                           \
  CUVIL_SCATTER_ELEMENTS_DECL(none_b16, INAME, ITYPE)                          \
  CUVIL_SCATTER_ELEMENTS_DECL(none_b32, INAME, ITYPE)                          \
  CUVIL_SCATTER_ELEMENTS_DECL(none_b64, INAME, ITYPE)                          \
  CUVIL_SCATTER_ELEMENTS_RED_DECLS(f32, INAME, ITYPE)                          \
  CUVIL_SCATTER_ELEMENTS_RED_DECLS(f64, INAME, ITYPE)                          \
  CUVIL_SCATTER_ELEMENTS_RED_DECLS(i32, INAME, ITYPE)                          \
  CUVIL_SCATTER_ELEMENTS_RED_DECLS(i64, INAME, ITYPE)
/* clang-format on */
/* clang-format off */
#define CUVIL_SCATTER_ELEMENTS_RED_DECLS(T, INAME, ITYPE)                      \
  CUVIL_SCATTER_ELEMENTS_DECL(add_##T, INAME, ITYPE)                           \
  CUVIL_SCATTER_ELEMENTS_DECL(mul_##T, INAME, ITYPE)                           \
  CUVIL_SCATTER_ELEMENTS_DECL(max_##T, INAME, ITYPE)                           \
  CUVIL_SCATTER_ELEMENTS_DECL(min_##T, INAME, ITYPE)
/* clang-format on */
CUVIL_GATHER_SCATTER_DECLS(i64, int64_t)
CUVIL_GATHER_SCATTER_DECLS(i32, int32_t)

/* GatherND with batch_dims folded into `batch`: idx is [batch, n_tuples, k];
 * tuple t of batch b copies slice_bytes bytes from
 *   x + b * x_batch_bytes + sum(t[m] * str_bytes[m])   (m < k; dims[m] is
 * the extent indexed by t[m]) to y + (b * n_tuples + j) * slice_bytes. */
void cuvil_k_gather_nd_i64(const void *x, const int64_t *idx, void *y,
                           int64_t batch, int64_t n_tuples, int64_t k,
                           const int64_t *dims, const int64_t *str_bytes,
                           int64_t slice_bytes, int64_t x_batch_bytes);
/* ScatterND on y (already a copy of the data): idx is [n_tuples, k]; tuple
 * j combines the `slice` elements of upd + j * slice into y + sum(t[m] *
 * str[m]) (element strides), in tuple order. A tuple with any index out of
 * range is skipped whole. <op>_<t> as for ScatterElements. */
#define CUVIL_SCATTER_ND_DECL(NAME)                                            \
  void cuvil_k_scatter_nd_##NAME(                                              \
      void *y, const int64_t *idx, const void *upd, int64_t n_tuples,          \
      int64_t k, const int64_t *dims, const int64_t *str, int64_t slice);
/* clang-format off */
#define CUVIL_SCATTER_ND_RED_DECLS(T)                                          \
  CUVIL_SCATTER_ND_DECL(add_##T) CUVIL_SCATTER_ND_DECL(mul_##T)                \
  CUVIL_SCATTER_ND_DECL(max_##T) CUVIL_SCATTER_ND_DECL(min_##T)
/* clang-format on */
CUVIL_SCATTER_ND_DECL(none_b8)
CUVIL_SCATTER_ND_DECL(none_b16)
CUVIL_SCATTER_ND_DECL(none_b32)
CUVIL_SCATTER_ND_DECL(none_b64)
CUVIL_SCATTER_ND_RED_DECLS(f32)
CUVIL_SCATTER_ND_RED_DECLS(f64)
CUVIL_SCATTER_ND_RED_DECLS(i32)
CUVIL_SCATTER_ND_RED_DECLS(i64)

/* TopK over the middle axis of [outer, n, inner] (k <= n): values and
 * indices (int64) are [outer, k, inner], best first (largest != 0: the
 * largest values; else the smallest); equal values in increasing index
 * order. A NaN ranks after every number kept before it. */
#define CUVIL_TOPK_DECL(SFX, T)                                                \
  void cuvil_k_topk_##SFX(const T *x, T *values, int64_t *indices,             \
                          int64_t outer, int64_t n, int64_t inner, int64_t k,  \
                          int64_t largest);
CUVIL_TOPK_DECL(f32, float)
CUVIL_TOPK_DECL(f64, double)
CUVIL_TOPK_DECL(i32, int32_t)
CUVIL_TOPK_DECL(i64, int64_t)

/* OneHot: idx is [outer, inner], y is [outer, depth, inner] of elements of
 * BITS bits: y[o, d, i] = values[1] (on) when the index (float ones
 * truncated toward zero) is d, else values[0] (off).
 * cuvil_k_onehot_<index type>_b<bits>, index type i32, i64 or f32. */
#define CUVIL_ONEHOT_DECL(INAME, ITYPE, BITS)                                  \
  void cuvil_k_onehot_##INAME##_b##BITS(const ITYPE *idx, const void *values,  \
                                        void *y, int64_t outer, int64_t depth, \
                                        int64_t inner);
/* clang-format off */
#define CUVIL_ONEHOT_DECLS(INAME, ITYPE)                                       \
  CUVIL_ONEHOT_DECL(INAME, ITYPE, 8) CUVIL_ONEHOT_DECL(INAME, ITYPE, 16)       \
  CUVIL_ONEHOT_DECL(INAME, ITYPE, 32) CUVIL_ONEHOT_DECL(INAME, ITYPE, 64)
/* clang-format on */
CUVIL_ONEHOT_DECLS(i32, int32_t)
CUVIL_ONEHOT_DECLS(i64, int64_t)
CUVIL_ONEHOT_DECLS(f32, float)

/* Per element size (b8, b16, b32, b64):
 * Trilu on [batch, n, m]: y keeps x[b, i, j] where j - i >= k (upper) or
 *   j - i <= k (lower), else 0 bits; k is *k when k is not NULL (a run-time
 *   int64 scalar), else k_default. In place.
 * EyeLike: y [rows, cols] holds `one` (the element's bits) where j - i == k,
 *   0 bits elsewhere.
 * ReverseSequence: x and y have rows of `inner` contiguous elements at
 *   b * batch_str + t * time_str; for every batch b, rows t < lens[b]
 *   (clamped to [0, time]) come from row lens[b] - 1 - t, the others are
 *   copied unchanged. */
/* clang-format off */
#define CUVIL_MATRIX_FILL_DECLS(BITS)                                          \
  void cuvil_k_trilu_b##BITS(const void *x, void *y, const int64_t *k,         \
                             int64_t k_default, int64_t batch, int64_t n,      \
                             int64_t m, int64_t upper);                        \
  void cuvil_k_eye_b##BITS(void *y, int64_t rows, int64_t cols, int64_t k,     \
                           int64_t one);                                       \
  void cuvil_k_reverse_sequence_b##BITS(                                       \
      const void *x, const int64_t *lens, void *y, int64_t batch,              \
      int64_t time, int64_t inner, int64_t batch_str, int64_t time_str);
/* clang-format on */
CUVIL_MATRIX_FILL_DECLS(8)
CUVIL_MATRIX_FILL_DECLS(16)
CUVIL_MATRIX_FILL_DECLS(32)
CUVIL_MATRIX_FILL_DECLS(64)

/* CumSum over one axis of x (shape padded on the left with 1 to
 * CUVIL_MAX_RANK, `rank` real dimensions). The axis is *axis (int32 when
 * axis_is_i32, else int64) when axis is not NULL, else axis_default;
 * negative counts from the end, and an out-of-range axis is clamped into
 * [0, rank). exclusive leaves the current element out, reverse sums from
 * the end. In place. */
#define CUVIL_CUMSUM_DECL(SFX, T)                                              \
  void cuvil_k_cumsum_##SFX(const T *x, T *y, const int64_t *shape,            \
                            int64_t rank, const void *axis,                    \
                            int64_t axis_is_i32, int64_t axis_default,         \
                            int64_t exclusive, int64_t reverse);
CUVIL_CUMSUM_DECL(f32, float)
CUVIL_CUMSUM_DECL(f64, double)
CUVIL_CUMSUM_DECL(i32, int32_t)
CUVIL_CUMSUM_DECL(i64, int64_t)

#endif /* CUVIL_KERNELS_INDEXING_H */
