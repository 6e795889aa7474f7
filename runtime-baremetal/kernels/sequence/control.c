/* Reference kernel of ONNX If: both branches were computed (they are
 * inlined into the graph); the condition picks which result is copied. */
#include "cuvil/kernels.h"

void cuvil_k_select_bytes(const uint8_t *cond, const uint8_t *a,
                          const uint8_t *b, uint8_t *y, int64_t n) {
  const uint8_t *src = *cond ? a : b;
  for (int64_t i = 0; i < n; ++i)
    y[i] = src[i];
}
