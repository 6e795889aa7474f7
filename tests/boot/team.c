/*
 * Team smoke test (cuvil/team.h): start every core the board has, run
 * layers of shares on them and check which core ran each share, that the
 * results are right after the barrier, and that measurement mode counts.
 * run_boot_tests.sh boots it with the target's QEMU command (u74-mc
 * -smp 5: four U74 harts; a78 -smp 4) and wants "team: ok" and exit 0.
 */
#include <cuvil/port.h>
#include <cuvil/team.h>

#define SHARES 10
#define LENGTH 4096

static int failures;

static void check(int ok, const char *what) {
  if (!ok) {
    cuvil_printf("team: FAIL %s\n", what);
    ++failures;
  }
}

/* The hardware number of the calling core: the hart (u74-mc, the boot
 * hart is 1) or MPIDR Aff0 (a78, the boot core is 0). */
static int64_t core_number(void) {
  uint64_t id;
#if defined(__riscv)
  __asm__ volatile("csrr %0, mhartid" : "=r"(id));
  return (int64_t)id - 1;
#else
  __asm__ volatile("mrs %0, mpidr_el1" : "=r"(id));
  return (int64_t)(id & 0xff);
#endif
}

typedef struct {
  const uint32_t *in;
  uint32_t *out;
  int64_t ran_on[SHARES];
  uint32_t round;
} layer_t;

static uint32_t data[LENGTH], result[LENGTH];

/* Share s of a layer: out = in * 3 + round over its slice. */
static void share(void *ctx, int64_t s) {
  layer_t *l = ctx;
  const int64_t per = LENGTH / SHARES;
  const int64_t end = s == SHARES - 1 ? LENGTH : (s + 1) * per;
  for (int64_t i = s * per; i < end; ++i)
    l->out[i] = l->in[i] * 3u + l->round;
  l->ran_on[s] = core_number();
}

int main(void) {
  check(cuvil_team_size() == 1, "size before start");
  for (int64_t i = 0; i < LENGTH; ++i)
    data[i] = (uint32_t)(i * 2654435761u);

  /* Measured first, alone: under QEMU -icount the instruction counter is
   * the machine's, so the members' own instructions (their waiting) would
   * be counted too. */
  cuvil_team_measure(1);
  layer_t l = {.in = data, .out = result, .round = 7};
  cuvil_team_run(share, &l, SHARES);
  cuvil_team_figures_t f = cuvil_team_figures();
  cuvil_team_measure(0);
  check(f.runs == 1, "measured one run");
  /* Equal shares (the last has 6 elements more of 415). */
  check(f.sum > 0 && f.max * SHARES <= f.sum + f.sum / 10, "measured shares");
  for (int s = 0; s < SHARES; ++s)
    check(l.ran_on[s] == core_number(), "measured shares run on the caller");
  check(result[LENGTH - 1] == data[LENGTH - 1] * 3u + 7, "measured result");
  cuvil_printf("team: sum %lu max %lu\n", (unsigned long)f.sum,
               (unsigned long)f.max);

  int n = cuvil_team_start(CUVIL_TEAM_MAX);
  cuvil_printf("team: %d cores\n", n);
  check(n == CUVIL_TEAM_MAX, "every core started");
  check(cuvil_team_start(2) == n, "a second start keeps the team");

  for (uint32_t round = 0; round < 200 && !failures; ++round) {
    l.round = round;
    cuvil_team_run(share, &l, SHARES);
    for (int64_t i = 0; i < LENGTH; ++i)
      if (result[i] != data[i] * 3u + round) {
        cuvil_printf("team: round %u element %ld is %u\n", round, (long)i,
                     result[i]);
        check(0, "results after the barrier");
        break;
      }
    for (int s = 0; s < SHARES; ++s)
      check(l.ran_on[s] == s % n, "share ran on its member");
  }

  cuvil_printf(failures ? "team: FAILED\n" : "team: ok\n");
  return failures != 0;
}
