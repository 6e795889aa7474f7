/* cuvil kernels: Recurrent and control-flow ops.
 * Part of cuvil/kernels.h, which includes it inside its extern "C" block
 * after the shared definitions; include cuvil/kernels.h, not this file. */
#ifndef CUVIL_KERNELS_RECURRENT_H
#define CUVIL_KERNELS_RECURRENT_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Recurrent and control-flow ops (RNN, GRU, LSTM, If) --------------- */

/* One ONNX RNN (cell 0), GRU (cell 1) or LSTM (cell 2) with T steps, batch
 * n_batch, input size n_in, hidden size n_hid and n_dir directions (2:
 * bidirectional; else reverse != 0 runs backwards). G = 1, 3 or 4 gates.
 * x: [T, n_batch, n_in] ([n_batch, T, n_in] when layout = 1); w: [n_dir,
 * G*n_hid, n_in]; r: [n_dir, G*n_hid, n_hid]; b: [n_dir, 2*G*n_hid] or NULL;
 * seq_lens: [n_batch] int32 or NULL; init_h, init_c: like y_h or NULL;
 * p (LSTM peepholes): [n_dir, 3*n_hid] or NULL.
 * y: [T, n_dir, n_batch, n_hid] ([n_batch, T, n_dir, n_hid]) or NULL, zero
 * past a row's sequence length; y_h, y_c (LSTM only, else NULL): [n_dir,
 * n_batch, n_hid] ([n_batch, n_dir, n_hid]), never NULL: they hold the
 * state. work: (G + 1) * n_hid floats of scratch.
 * acts: per direction 3 activations of 3 entries each (code, alpha bits,
 * beta bits; codes: 0 Relu, 1 Tanh, 2 Sigmoid, 3 Affine, 4 LeakyRelu,
 * 5 ThresholdedRelu, 6 ScaledTanh, 7 HardSigmoid, 8 Elu, 9 Softsign,
 * 10 Softplus), in the ONNX order (f, g[, h]). clip > 0 clamps the gates'
 * pre-activations to [-clip, clip]. */
void cuvil_k_recurrent_f32(const float *x, const float *w, const float *r,
                           const float *b, const int32_t *seq_lens,
                           const float *init_h, const float *init_c,
                           const float *p, float *y, float *y_h, float *y_c,
                           float *work, int64_t cell, int64_t seq_len,
                           int64_t n_batch, int64_t n_in, int64_t n_hid,
                           int64_t n_dir, int64_t reverse, int64_t layout,
                           const int64_t *acts, float clip,
                           int64_t linear_before_reset, int64_t input_forget);

/* An LSTM of cuvil_k_recurrent_f32's shapes in its common form (default
 * activations, no clip, peepholes, sequence lengths or input_forget), with
 * W and R packed by cuvilc as B operands of cuvil_k_gemm_packed_f32: each
 * direction's [4*n_hid, n_in] block of w (and [4*n_hid, n_hid] of r) in
 * panels of cuvil_k_pack_mr gate rows, as Gemm's transB weights are. Each
 * step is x_t . W^T + wb + rb and h . R^T + that, two register-blocked
 * products, then the cell over the gates in one pass; the input products
 * run CUVIL_LSTM_STEPS steps at a time. work: CUVIL_LSTM_STEPS * 4 * n_hid
 * floats (cuvilc sizes the workspace by this constant). */
#define CUVIL_LSTM_STEPS 4
void cuvil_k_lstm_packed_f32(const float *x, const float *wp, const float *rp,
                             const float *b, const float *init_h,
                             const float *init_c, float *y, float *y_h,
                             float *y_c, float *work, int64_t seq_len,
                             int64_t n_batch, int64_t n_in, int64_t n_hid,
                             int64_t n_dir, int64_t reverse, int64_t layout);

/* If: y = *cond ? a : b (the branches' results), na or nb bytes (a graph
 * output's branches may differ in shape). */
void cuvil_k_select_bytes(const uint8_t *cond, const uint8_t *a,
                          const uint8_t *b, uint8_t *y, int64_t na, int64_t nb);

/* OptionalHasElement of an optional graph input: *y = 1 when the caller
 * gave the input (x is not NULL), 0 when it left it out (NULL). */
void cuvil_k_is_present(const uint8_t *x, uint8_t *y);

#endif /* CUVIL_KERNELS_RECURRENT_H */
