/*
 * cuvil team: the cores of the board working on one model run, without an
 * OS, locks or heap.
 *
 * A model built with `cuvilc build --cores N` cuts each heavy layer into
 * N shares at compile time (output channels) and runs them through
 * cuvil_team_run, with a barrier after each layer. The firmware starts the
 * other cores once, from main, before the first run:
 *
 *     cuvil_team_start(CUVIL_KWS_WORKERS);   // 4 on a four-core build
 *     ...
 *     cuvil_kws_run(&kws, in, out);          // uses every started core
 *
 * Any team size works with any model: when fewer cores run (the board has
 * fewer, or the firmware started none), the cores take the shares in turn
 * and the results are the same bits. The other cores then only wait for
 * cuvil_team_run (wfe on AArch64, wfi until a software interrupt on
 * RISC-V); the firmware must not use them for anything else.
 *
 * Only the core that called cuvil_team_start may call cuvil_team_run.
 */
#ifndef CUVIL_TEAM_H
#define CUVIL_TEAM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most cores a team has (the caller and three others). */
#define CUVIL_TEAM_MAX 4

/* Stack of each started core; override with -DCUVIL_TEAM_STACK_BYTES=N
 * when building the runtime. A member needs what the model's header states
 * as CUVIL_<M>_RUN_STACK_BYTES at most (that figure is member 0's: run_v,
 * cuvil_team_run and the deepest share below them). */
#ifndef CUVIL_TEAM_STACK_BYTES
#define CUVIL_TEAM_STACK_BYTES 32768
#endif

/* The most stack cuvil_team_run uses below its caller's stack pointer
 * besides the share it calls; cuvilc's stack figures count on it. */
#define CUVIL_TEAM_RUN_STACK_BYTES 256

/* One share of a layer: share `share` of the work whose context is ctx. */
typedef void (*cuvil_team_fn)(void *ctx, int64_t share);

/* Starts up to `cores` - 1 other cores (at most CUVIL_TEAM_MAX - 1) as
 * members 1.. of the team, each on its own stack; returns the team size,
 * the calling core included (1 when the board starts no other core). A
 * second call returns the size of the running team. */
int cuvil_team_start(int cores);

/* The current team size (1 before cuvil_team_start). */
int cuvil_team_size(void);

/* Runs fn(ctx, s) for every share s in [0, shares), member m of the team
 * taking shares m, m + size, ...; returns when all have finished, with
 * their writes visible to the caller. The calling core is member 0. */
void cuvil_team_run(cuvil_team_fn fn, void *ctx, int64_t shares);

/* Measurement (benchmarks): while on, cuvil_team_run runs every share on
 * the calling core, one after another, and counts each share's retired
 * instructions. The critical path of a run on `shares` cores is then the
 * run's own instruction count minus `sum` plus `max`: layers split in
 * shares cost their largest share instead of all of them. share[m] is the
 * work member m would do on a team of `shares` cores (member 0 also runs
 * everything outside the shares). Turning it on clears the figures. */
typedef struct {
  uint64_t sum;                   /* instructions of all shares */
  uint64_t max;                   /* per layer, of its largest share */
  uint64_t runs;                  /* cuvil_team_run calls */
  uint64_t share[CUVIL_TEAM_MAX]; /* per share number (below the max) */
} cuvil_team_figures_t;

void cuvil_team_measure(int on);
cuvil_team_figures_t cuvil_team_figures(void);

/* Board side (boot/<target>/cores.c): start core `core` (1 .. team max - 1)
 * at entry(core) on the stack ending at stack_top; 0 when it started. Wait
 * for cuvil_port_core_wake (may return early: callers recheck their
 * condition), and wake core `core` from that wait. */
int cuvil_port_core_start(int core, void (*entry)(int64_t core),
                          void *stack_top);
void cuvil_port_core_wait(void);
void cuvil_port_core_wake(int core);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_TEAM_H */
