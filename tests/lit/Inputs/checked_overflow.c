/*
 * checked.test: a --checked host build of a one-input, one-output float
 * model (--name model, static arena in RAM). Runs it once normally, then
 * with its output buffer placed at arena byte OFFSET (argv[1]): the gap
 * after a buffer that is still live, so the last step's writes land in
 * that buffer's canary. Prints each run's status, bounds_step and the
 * step's node name.
 */
#include <stdio.h>
#include <stdlib.h>

#include "model.h"

extern unsigned char cuvil_model_arena_ram[];

static float input[CUVIL_MODEL_INPUT_0_COUNT];
static float output[CUVIL_MODEL_OUTPUT_0_COUNT];

static void report(const char *what, const cuvil_model_t *m, int rc) {
  printf("%s: status %d, bounds_step %d, node '%s'\n", what, rc,
         (int)m->bounds_step, cuvil_model_step_name(m->bounds_step));
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  long offset = strtol(argv[1], NULL, 0);
  cuvil_model_t m;
  if (cuvil_model_init(&m, NULL, NULL, 0) != CUVIL_OK)
    return 1;
  report("in bounds", &m, cuvil_model_run(&m, input, output));
  float *inside = (float *)(cuvil_model_arena_ram + offset);
  report("output over a canary", &m, cuvil_model_run(&m, input, inside));
  report("in bounds again", &m, cuvil_model_run(&m, input, output));
  printf("step 99: '%s', step -1: '%s'\n", cuvil_model_step_name(99),
         cuvil_model_step_name(-1));
  return 0;
}
