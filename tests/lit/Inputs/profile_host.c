/*
 * profile.test: a --profile host build of a one-input, one-output float
 * model (--name model). Runs it three times and prints, per step, its name,
 * its ONNX nodes and whether its nanoseconds and (unused on the host)
 * second column are plausible; then the runs counted, the names of steps
 * out of range, and that init starts the table afresh.
 */
#include <stdint.h>
#include <stdio.h>

#include "model.h"

static float input[CUVIL_MODEL_INPUT_0_COUNT];
static float output[CUVIL_MODEL_OUTPUT_0_COUNT];

int main(void) {
  cuvil_model_t m;
  if (cuvil_model_init(&m, NULL, NULL, 0) != CUVIL_OK)
    return 1;
  for (int run = 0; run < 3; ++run)
    if (cuvil_model_run(&m, input, output) != CUVIL_OK)
      return 1;
  printf("counters: '%s' '%s'\n", CUVIL_MODEL_PROFILE_COUNTER_0,
         CUVIL_MODEL_PROFILE_COUNTER_1);
  for (int s = 0; s < CUVIL_MODEL_PROFILE_STEPS; ++s)
    printf("step %d: %s <- %s: %s, second column %llu\n", s,
           cuvil_model_step_name(s), cuvil_model_step_origins(s),
           m.profile[s][0] > 0 ? "time" : "NO TIME",
           (unsigned long long)m.profile[s][1]);
  printf("runs %llu; step %d: '%s', step -1: '%s'\n",
         (unsigned long long)m.profile_runs, CUVIL_MODEL_PROFILE_STEPS,
         cuvil_model_step_name(CUVIL_MODEL_PROFILE_STEPS),
         cuvil_model_step_origins(-1));
  if (cuvil_model_init(&m, NULL, NULL, 0) != CUVIL_OK)
    return 1;
  uint64_t left = m.profile_runs;
  for (int s = 0; s < CUVIL_MODEL_PROFILE_STEPS; ++s)
    left += m.profile[s][0] + m.profile[s][1];
  printf("after init: %llu\n", (unsigned long long)left);
  return 0;
}
