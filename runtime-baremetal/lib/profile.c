/*
 * cuvil_profile_print: the table of a --profile build on the console.
 * Shares are printed in tenths of a percent with integer arithmetic (no
 * floating point, so that it also links into firmware built without an FPU
 * ABI).
 */
#include <cuvil/port.h>
#include <cuvil/profile.h>

/* counter * 1000 / total, rounded, without overflow for any 64-bit values. */
static unsigned permille(uint64_t counter, uint64_t total) {
  if (total == 0)
    return 0;
  if (counter <= UINT64_MAX / 1000)
    return (unsigned)((counter * 1000 + total / 2) / total);
  return (unsigned)(counter / (total / 1000 ? total / 1000 : 1));
}

void cuvil_profile_print(const char *model, unsigned steps,
                         const char *counter0, const char *counter1,
                         uint64_t runs, const uint64_t *table,
                         const char *(*step_name)(int32_t step)) {
  int two = counter1 && counter1[0];
  uint64_t total0 = 0, total1 = 0;
  for (unsigned s = 0; s < steps; ++s) {
    total0 += table[2 * s];
    total1 += table[2 * s + 1];
  }
  cuvil_printf("cuvil: profile of %s: %u steps, %llu run(s), counts summed "
               "over the runs\n",
               model, steps, (unsigned long long)runs);
  if (two)
    cuvil_printf("cuvil: profile %5s %14s %14s %6s  %s\n", "step", counter0,
                 counter1, "share", "node");
  else
    cuvil_printf("cuvil: profile %5s %14s %6s  %s\n", "step", counter0, "share",
                 "node");
  for (unsigned s = 0; s < steps; ++s) {
    unsigned pm = permille(table[2 * s], total0);
    const char *name = step_name ? step_name((int32_t)s) : "";
    if (two)
      cuvil_printf("cuvil: profile %5u %14llu %14llu %4u.%u%%  %s\n", s,
                   (unsigned long long)table[2 * s],
                   (unsigned long long)table[2 * s + 1], pm / 10, pm % 10,
                   name);
    else
      cuvil_printf("cuvil: profile %5u %14llu %4u.%u%%  %s\n", s,
                   (unsigned long long)table[2 * s], pm / 10, pm % 10, name);
  }
  if (two)
    cuvil_printf("cuvil: profile %5s %14llu %14llu\n", "total",
                 (unsigned long long)total0, (unsigned long long)total1);
  else
    cuvil_printf("cuvil: profile %5s %14llu\n", "total",
                 (unsigned long long)total0);
}
