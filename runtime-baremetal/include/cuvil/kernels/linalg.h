/* cuvil kernels: Linear algebra beyond Gemm and MatMul (Einsum).
 * Part of cuvil/kernels.h, which includes it inside its extern "C" block
 * after the shared definitions; include cuvil/kernels.h, not this file. */
#ifndef CUVIL_KERNELS_LINALG_H
#define CUVIL_KERNELS_LINALG_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Einsum -------------------------------------------------------------- */

/* The general Einsum kernel's bounds: operands, and distinct labels (each
 * dimension an ellipsis covers counts as one label). cuvilc refuses
 * equations beyond them. */
#define CUVIL_EINSUM_MAX_INPUTS 4
#define CUVIL_EINSUM_MAX_LABELS 12

/* A contraction of n_inputs operands (x0..x3; the unused ones NULL) over
 * n_labels labels. Labels 0..n_out-1 are the output's, in its order: y is
 * dense with shape extent[0..n_out). Labels n_out..n_labels-1 are summed.
 * Element (i_0, ..., i_{n_labels-1}) of operand p is
 *   xp[sum(i_l * strides[p * CUVIL_EINSUM_MAX_LABELS + l])],
 * stride 0 where the operand lacks the label or broadcasts it; a label the
 * operand repeats (a diagonal) has the sum of the repeated dimensions'
 * strides. So y[i_0..i_{n_out-1}] = sum over the summed labels of the product
 * of the operands' elements, accumulated in the element type. y must not
 * overlap an operand. */
void cuvil_k_einsum_f32(const float *x0, const float *x1, const float *x2,
                        const float *x3, float *y, int64_t n_inputs,
                        int64_t n_out, int64_t n_labels, const int64_t *extent,
                        const int64_t *strides);
void cuvil_k_einsum_f64(const double *x0, const double *x1, const double *x2,
                        const double *x3, double *y, int64_t n_inputs,
                        int64_t n_out, int64_t n_labels, const int64_t *extent,
                        const int64_t *strides);

/* Batched matrix product with transposed operands, by cuvil_k_gemm_f32 on
 * each matrix: for every batch index (b0..b3) < batch_shape[0..3],
 *   A = a + sum(bi * a_bstride[i]): op(A) is [m, k], A stored [m, k], or
 *       [k, m] when trans_a;
 *   B = b + sum(bi * b_bstride[i]): op(B) is [k, n], B stored [k, n], or
 *       [n, k] when trans_b;
 *   Y = y + linear batch index * m * n, dense [m, n];  Y = op(A) * op(B).
 * The batch arrays are those of cuvil_k_matmul_f32 (stride 0 broadcasts). */
void cuvil_k_einsum_bmm_f32(const float *a, const float *b, float *y, int64_t m,
                            int64_t n, int64_t k, int64_t trans_a,
                            int64_t trans_b, const int64_t *batch_shape,
                            const int64_t *a_bstride, const int64_t *b_bstride);

#endif /* CUVIL_KERNELS_LINALG_H */
