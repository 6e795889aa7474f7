/*
 * The firmware's kernels of the example's custom ops (custom-ops.toml).
 * The model object calls them; including the generated header makes the
 * compiler check each definition against the prototype cuvilc wrote.
 */
#include <stdint.h>

#include "model.h"

/* image: pixels x channels uint8 (NHWC); y: channels x pixels (NCHW). */
void vision_normalize_u8_f32(const uint8_t *image, float *y, float scale,
                             int64_t zero_point, int64_t pixels,
                             int64_t channels) {
  for (int64_t p = 0; p < pixels; ++p)
    for (int64_t c = 0; c < channels; ++c)
      y[c * pixels + p] =
          ((float)image[p * channels + c] - (float)zero_point) * scale;
}

/* Element-wise, so y may be x (the op is declared in_place). */
void vendor_scale_shift_f32(const float *x, float *y, float alpha, float beta,
                            int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    y[i] = x[i] * alpha + beta;
}
