/* cuvil kernels: Resampling: Resize, GridSample, RoiAlign.
 * Part of cuvil/kernels.h, which includes it inside its extern "C" block
 * after the shared definitions; include cuvil/kernels.h, not this file. */
#ifndef CUVIL_KERNELS_RESAMPLE_H
#define CUVIL_KERNELS_RESAMPLE_H

#ifndef CUVIL_KERNELS_H
#error "include cuvil/kernels.h instead"
#endif

/* ---- Resampling: Resize, GridSample, RoiAlign ----------------------- */

/* Resize modes, coordinate transformations and nearest rounding (the ONNX
 * attribute values). */
#define CUVIL_RESIZE_NEAREST 0
#define CUVIL_RESIZE_LINEAR 1
#define CUVIL_RESIZE_CUBIC 2
#define CUVIL_RESIZE_HALF_PIXEL 0
#define CUVIL_RESIZE_PYTORCH_HALF_PIXEL 1
#define CUVIL_RESIZE_ALIGN_CORNERS 2
#define CUVIL_RESIZE_ASYMMETRIC 3
#define CUVIL_RESIZE_TF_HALF_PIXEL_FOR_NN 4
#define CUVIL_RESIZE_TF_CROP_AND_RESIZE 5
#define CUVIL_RESIZE_HALF_PIXEL_SYMMETRIC 6
#define CUVIL_RESIZE_ROUND_PREFER_FLOOR 0
#define CUVIL_RESIZE_ROUND_PREFER_CEIL 1
#define CUVIL_RESIZE_FLOOR 2
#define CUVIL_RESIZE_CEIL 3
/* The longest 1-D filter of an axis (antialiased downscaling widens it). */
#define CUVIL_RESIZE_MAX_TAPS 32

/* N-D Resize of x [in_dims] into y [out_dims] (rank <= CUVIL_MAX_RANK).
 * slot[d] is the position of axis d in the resized axes (the order of
 * ONNX's scales and roi, n_slots of them), or -1 when axis d is not
 * resized (then in_dims[d] == out_dims[d]). The scale of axis d is
 * scales[slot[d]] when scales is not NULL (a run-time input), else the
 * double whose bit pattern is static_scale[d]. roi ([starts, ends], 2 *
 * n_slots floats) is read by tf_crop_and_resize only. Out-of-range taps
 * read the edge (or are dropped and the rest renormalised, with
 * exclude_outside); antialias widens linear and cubic filters by 1/scale
 * when downscaling. */
void cuvil_k_resize_f32(const float *x, const float *roi, const float *scales,
                        float *y, int64_t rank, const int64_t *in_dims,
                        const int64_t *out_dims, const int64_t *slot,
                        int64_t n_slots, const int64_t *static_scale,
                        int64_t mode, int64_t ctm, int64_t nearest_mode,
                        float cubic_a, int64_t exclude_outside,
                        int64_t antialias, float extrapolation_value);

/* GridSample, 4-D: x [n, c, h, w], grid [n, oh, ow, 2] of (x, y) in
 * [-1, 1], y [n, c, oh, ow]. mode and padding are CUVIL_GRID_* values. */
#define CUVIL_GRID_LINEAR 0
#define CUVIL_GRID_NEAREST 1
#define CUVIL_GRID_CUBIC 2
#define CUVIL_GRID_PAD_ZEROS 0
#define CUVIL_GRID_PAD_BORDER 1
#define CUVIL_GRID_PAD_REFLECTION 2
void cuvil_k_grid_sample_f32(const float *x, const float *grid, float *y,
                             int64_t n, int64_t c, int64_t h, int64_t w,
                             int64_t oh, int64_t ow, int64_t mode,
                             int64_t padding, int64_t align_corners);

/* RoiAlign, average mode: x [n, c, h, w], rois [num_rois, 4] of (x1, y1,
 * x2, y2), batch_indices [num_rois] (clamped to [0, n)), y [num_rois, c,
 * oh, ow]. sampling_ratio 0 adapts the samples per bin to the RoI's size;
 * half_pixel shifts RoI coordinates by -0.5 (else RoIs are at least 1x1). */
void cuvil_k_roi_align_f32(const float *x, const float *rois,
                           const int64_t *batch_indices, float *y, int64_t n,
                           int64_t c, int64_t h, int64_t w, int64_t num_rois,
                           int64_t oh, int64_t ow, int64_t sampling_ratio,
                           float spatial_scale, int64_t half_pixel);

#endif /* CUVIL_KERNELS_RESAMPLE_H */
