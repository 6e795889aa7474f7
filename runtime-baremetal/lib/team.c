/*
 * cuvil team (cuvil/team.h): the other cores wait for a layer, run their
 * shares of it and report back; the calling core runs its own shares and
 * waits for theirs. Synchronisation is one epoch counter (a new layer) and
 * one finished counter (members done with it), with acquire/release
 * atomics that both ISAs have (AArch64 LDAR/STLR/LDADDAL or LL/SC, RISC-V
 * AMOs with .aq/.rl): no locks.
 */
#include "cuvil/team.h"

#include "cuvil/port.h"

/* The layer being run. Written by member 0 before it advances the epoch
 * (release); read by the others after they see the new epoch (acquire). */
static struct {
  cuvil_team_fn fn;
  void *ctx;
  int64_t shares;
} job;

static uint32_t epoch;    /* advanced once per layer */
static uint32_t finished; /* other members done with the current layer */
static int team = 1;      /* members, member 0 included */
static int started;       /* cuvil_team_start ran */

static int measuring;
static cuvil_team_figures_t figures;

static uint8_t stacks[CUVIL_TEAM_MAX - 1][CUVIL_TEAM_STACK_BYTES]
    __attribute__((aligned(16)));

/* Member `core` of the team: runs its shares of each new layer. */
__attribute__((noreturn)) static void member(int64_t core) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t now;
    while ((now = __atomic_load_n(&epoch, __ATOMIC_ACQUIRE)) == seen)
      cuvil_port_core_wait();
    seen = now;
    for (int64_t s = core; s < job.shares; s += team)
      job.fn(job.ctx, s);
    __atomic_fetch_add(&finished, 1, __ATOMIC_ACQ_REL);
    cuvil_port_core_wake(0);
  }
}

int cuvil_team_start(int cores) {
  if (started)
    return team;
  started = 1;
  if (cores > CUVIL_TEAM_MAX)
    cores = CUVIL_TEAM_MAX;
  /* Members are numbered densely: a core that does not start ends the
   * team (the shares are dealt by member number). The counters must be
   * in place before the first member starts waiting on them. */
  int n = 1;
  while (n < cores &&
         cuvil_port_core_start(n, member,
                               stacks[n - 1] + CUVIL_TEAM_STACK_BYTES) == 0)
    ++n;
  __atomic_store_n(&team, n, __ATOMIC_RELEASE);
  return n;
}

int cuvil_team_size(void) { return team; }

/* Every share on this core, counting each one's instructions, the last
 * share first: a share that stores past its part of the outputs then
 * spoils a neighbour's finished part, which the output check catches
 * (tests/e2e variant a78-cores4-serial; a team under QEMU tends to run
 * the first share first). */
static void run_measured(cuvil_team_fn fn, void *ctx, int64_t shares) {
  uint64_t largest = 0;
  for (int64_t s = shares - 1; s >= 0; --s) {
    uint64_t before = cuvil_port_instret();
    fn(ctx, s);
    uint64_t spent = cuvil_port_instret() - before;
    figures.sum += spent;
    if (s < CUVIL_TEAM_MAX)
      figures.share[s] += spent;
    if (spent > largest)
      largest = spent;
  }
  figures.max += largest;
  ++figures.runs;
}

void cuvil_team_run(cuvil_team_fn fn, void *ctx, int64_t shares) {
  if (measuring) {
    run_measured(fn, ctx, shares);
    return;
  }
  const int n = team;
  if (n == 1 || shares <= 1) {
    for (int64_t s = 0; s < shares; ++s)
      fn(ctx, s);
    return;
  }
  job.fn = fn;
  job.ctx = ctx;
  job.shares = shares;
  __atomic_store_n(&finished, 0, __ATOMIC_RELAXED);
  __atomic_fetch_add(&epoch, 1, __ATOMIC_ACQ_REL);
  for (int core = 1; core < n; ++core)
    cuvil_port_core_wake(core);
  for (int64_t s = 0; s < shares; s += n)
    fn(ctx, s);
  while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) != (uint32_t)(n - 1))
    cuvil_port_core_wait();
}

void cuvil_team_measure(int on) {
  measuring = on;
  if (on) {
    const cuvil_team_figures_t zero = {0};
    figures = zero;
  }
}

cuvil_team_figures_t cuvil_team_figures(void) { return figures; }
