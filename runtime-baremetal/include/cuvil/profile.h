/*
 * Printing the per-step profile of a model built with `cuvilc build
 * --profile` (docs/profiling.md). The model's header wraps the call:
 *
 *   #include <cuvil/profile.h>
 *   #include "model.h"
 *   ...
 *   cuvil_model_run(&m, in, out);
 *   CUVIL_MODEL_PROFILE_PRINT(&m);
 */
#ifndef CUVIL_PROFILE_H
#define CUVIL_PROFILE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Prints, with cuvil_printf, one line per step: its counters summed over
 * `runs` runs, the share of the first counter, and step_name(step); then the
 * totals. `table` holds `steps` rows of two counters; counter1 "" means the
 * second column is unused. Steps whose first counter is 0 are still listed,
 * so that the line numbers are the steps. */
void cuvil_profile_print(const char *model, unsigned steps,
                         const char *counter0, const char *counter1,
                         uint64_t runs, const uint64_t *table,
                         const char *(*step_name)(int32_t step));

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_PROFILE_H */
