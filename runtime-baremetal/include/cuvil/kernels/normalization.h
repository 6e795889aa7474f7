/* cuvil kernels: Normalization.
 * Part of cuvil/kernels.h, which includes it inside its extern "C" block
 * after the shared definitions; include cuvil/kernels.h, not this file. */
#ifndef CUVIL_KERNELS_NORMALIZATION_H
#define CUVIL_KERNELS_NORMALIZATION_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Normalization (issue #3, group norm: kernels/nn/normalization.c) -- */
/* Statistics are two-pass with double accumulators; variances are the
 * population ones (divided by the element count). */

/* LayerNormalization of x viewed as [outer, n] (n: the normalized
 * dimensions): y = (x - mean) * inv_std * scale + bias per row, inv_std =
 * 1 / sqrt(var + eps). scale and bias repeat with periods scale_period and
 * bias_period (each divides n; the trailing-dimension broadcast of a smaller
 * operand); bias may be NULL. mean and inv_std ([outer]) may be NULL. */
void cuvil_k_layer_norm_f32(const float *x, const float *scale,
                            const float *bias, float *y, float *mean,
                            float *inv_std, int64_t outer, int64_t n,
                            int64_t scale_period, int64_t bias_period,
                            float eps);
/* InstanceNormalization of [n, c, spatial]: each (n, c) row normalized with
 * its own mean/variance, then y = norm * scale[c] + bias[c]. In place. */
void cuvil_k_instance_norm_f32(const float *x, const float *scale,
                               const float *bias, float *y, int64_t n,
                               int64_t c, int64_t spatial, float eps);
/* GroupNormalization of [n, groups * cpg, spatial]: each (n, group) block
 * of cpg * spatial elements normalized with its own mean/variance, then
 * y = norm * scale[p] + bias[p], p the channel (per_channel != 0, opset 21)
 * or the group (opset 18). In place. */
void cuvil_k_group_norm_f32(const float *x, const float *scale,
                            const float *bias, float *y, int64_t n,
                            int64_t groups, int64_t cpg, int64_t spatial,
                            int64_t per_channel, float eps);
/* MeanVarianceNormalization: y = (x - mean) / (stddev + 1e-9) over groups
 * given as the reduction loop nests of cuvil_k_reduce_* (out_* enumerates
 * the groups, red_* the elements of one group; y has x's layout). In place. */
void cuvil_k_mvn_f32(const float *x, float *y, const int64_t *out_shape,
                     const int64_t *out_str, const int64_t *red_shape,
                     const int64_t *red_str);
/* LRN across channels of [n, c, spatial]: y = x / (bias + alpha / size *
 * sum of squares over the channel window)^beta. Not in place. */
void cuvil_k_lrn_f32(const float *x, float *y, int64_t n, int64_t c,
                     int64_t spatial, int64_t size, float alpha, float beta,
                     float bias);
/* Inference BatchNormalization of [n, c, spatial] with run-time parameters
 * (all [c]): y = (x - mean) / sqrt(var + eps) * scale + bias. In place. */
void cuvil_k_batch_norm_f32(const float *x, const float *scale,
                            const float *bias, const float *mean,
                            const float *var, float *y, int64_t n, int64_t c,
                            int64_t spatial, float eps);
/* Training-mode BatchNormalization: y normalized with the batch's own
 * per-channel mean/variance; running_mean/var (may be NULL) = mean/var *
 * momentum + batch statistic * (1 - momentum). In place (y may be x). */
void cuvil_k_batch_norm_train_f32(const float *x, const float *scale,
                                  const float *bias, const float *mean,
                                  const float *var, float *y,
                                  float *running_mean, float *running_var,
                                  int64_t n, int64_t c, int64_t spatial,
                                  float eps, float momentum);
/* LpNormalization of [outer, n, inner] along n: y = x / ||x||_p, p 1 or 2.
 * In place. */
void cuvil_k_lp_norm_f32(const float *x, float *y, int64_t outer, int64_t n,
                         int64_t inner, int64_t p);

#endif /* CUVIL_KERNELS_NORMALIZATION_H */
