/* cuvil kernels: Signal processing.
 * Part of cuvil/kernels.h, which includes it inside its extern "C" block
 * after the shared definitions; include cuvil/kernels.h, not this file. */
#ifndef CUVIL_KERNELS_SIGNAL_H
#define CUVIL_KERNELS_SIGNAL_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Signal processing (windows, DFT, STFT, mel, Det, TfIdf) ------------ */

/* Generalised cosine window of n points (Hann, Hamming, Blackman):
 * y[i] = a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N), N = n when periodic,
 * n - 1 otherwise (symmetric). */
void cuvil_k_cosine_window_f32(float *y, int64_t n, int64_t periodic, float a0,
                               float a1, float a2);
/* DFT along one axis. x: [outer, n_in, inner, 1 or 2 (complex_in)];
 * y: [outer, n_out, inner, 2]. The signal is zero-padded or cut to n_fft;
 * bins 0..n_out-1 are written (n_out = n_fft / 2 + 1 for onesided). inverse:
 * e^(+i...) and scaled by 1 / n_fft. */
void cuvil_k_dft_f32(const float *x, float *y, int64_t outer, int64_t n_in,
                     int64_t inner, int64_t complex_in, int64_t n_fft,
                     int64_t n_out, int64_t inverse);
/* STFT. x: [batch, sig_len, 1 or 2]; y: [batch, frames, bins, 2]. Frame f
 * starts at f * *frame_step (read at run time) and is *frame_length long
 * (frame_length NULL: window_len), multiplied by window (NULL: none). The
 * two scalars are int64_t when int64_scalars, else int32_t. */
void cuvil_k_stft_f32(const float *x, const void *frame_step,
                      const void *frame_length, const float *window, float *y,
                      int64_t batch, int64_t sig_len, int64_t complex_in,
                      int64_t frames, int64_t bins, int64_t window_len,
                      int64_t int64_scalars);
/* ONNX MelWeightMatrix, y: [bins, mels]. The integer scalars are int64_t when
 * int64_inputs, else int32_t; all scalars are read at run time. */
void cuvil_k_mel_weight_matrix_f32(
    const void *num_mel_bins, const void *dft_length, const void *sample_rate,
    const float *lower_edge_hertz, const float *upper_edge_hertz, float *y,
    int64_t bins, int64_t mels, int64_t int64_inputs);
/* Determinants of batch n x n matrices (LU with partial pivoting, in a stack
 * copy: n <= CUVIL_DET_MAX_N). */
#define CUVIL_DET_MAX_N 16
void cuvil_k_det_f32(const float *x, float *y, int64_t batch, int64_t n);
/* TfIdfVectorizer over rows x len tokens; y: [rows, n_out]. The pool holds
 * the n-grams of length n at pool[level_start[n-1] .. level_start[n]);
 * n-gram g of that level is number level_first[n-1] + g overall and counts
 * into output out_index[that number]. mode: 0 TF, 1 IDF, 2 TFIDF, with
 * weight_bits[o] (float32 bit patterns per output; NULL: all 1). */
void cuvil_k_tfidf_i32(const int32_t *x, float *y, int64_t rows, int64_t len,
                       int64_t min_n, int64_t max_n, int64_t max_skip,
                       int64_t mode, const int64_t *level_start,
                       const int64_t *level_first, const int64_t *pool,
                       const int64_t *out_index, int64_t n_out,
                       const int64_t *weight_bits);
void cuvil_k_tfidf_i64(const int64_t *x, float *y, int64_t rows, int64_t len,
                       int64_t min_n, int64_t max_n, int64_t max_skip,
                       int64_t mode, const int64_t *level_start,
                       const int64_t *level_first, const int64_t *pool,
                       const int64_t *out_index, int64_t n_out,
                       const int64_t *weight_bits);

#endif /* CUVIL_KERNELS_SIGNAL_H */
