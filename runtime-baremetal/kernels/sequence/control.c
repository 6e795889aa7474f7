/* Control flow: ONNX If (both branches' results exist in the graph, which
 * the importer inlined; the condition picks the one copied) and the test
 * of an optional input (OptionalHasElement). */
#include "cuvil/kernels.h"

void cuvil_k_select_bytes(const uint8_t *cond, const uint8_t *a,
                          const uint8_t *b, uint8_t *y, int64_t na,
                          int64_t nb) {
  const uint8_t *src = *cond ? a : b;
  int64_t n = *cond ? na : nb;
  for (int64_t i = 0; i < n; ++i)
    y[i] = src[i];
}

void cuvil_k_is_present(const uint8_t *x, uint8_t *y) { *y = x != 0; }
