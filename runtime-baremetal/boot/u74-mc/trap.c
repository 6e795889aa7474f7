/*
 * Trap dump of the u74-mc boot code: cause, CSRs and all registers on the
 * UART, then exit with CUVIL_EXIT_TRAP_BASE + cause.
 */
#include <cuvil/port.h>

#include "boot.h"

#define MCAUSE_INTERRUPT (1ull << 63)

static const char *const exception_names[16] = {
    [0] = "instruction address misaligned",
    [1] = "instruction access fault",
    [2] = "illegal instruction",
    [3] = "breakpoint",
    [4] = "load address misaligned",
    [5] = "load access fault",
    [6] = "store/AMO address misaligned",
    [7] = "store/AMO access fault",
    [8] = "environment call from U-mode",
    [9] = "environment call from S-mode",
    [11] = "environment call from M-mode",
    [12] = "instruction page fault",
    [13] = "load page fault",
    [15] = "store/AMO page fault",
};

static const char reg_names[32][5] = {
    "zero", "ra", "sp", "gp", "tp",  "t0",  "t1", "t2", "s0", "s1", "a0",
    "a1",   "a2", "a3", "a4", "a5",  "a6",  "a7", "s2", "s3", "s4", "s5",
    "s6",   "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
};

#define CSR_READ(name, var) __asm__ volatile("csrr %0, " #name : "=r"(var))

void cuvil_trap_report(const uint64_t regs[32]) {
  /* A second trap while reporting (a broken stack or UART) would recurse
   * forever: park instead. */
  static int reporting;
  if (reporting)
    cuvil_port_halt();
  reporting = 1;

  uint64_t cause, epc, tval, hart;
  CSR_READ(mcause, cause);
  CSR_READ(mepc, epc);
  CSR_READ(mtval, tval);
  CSR_READ(mhartid, hart);

  const uint64_t code = cause & ~MCAUSE_INTERRUPT;
  const char *what = "unknown exception";
  if (cause & MCAUSE_INTERRUPT)
    what = "unexpected interrupt";
  else if (code < 16 && exception_names[code])
    what = exception_names[code];

  cuvil_printf("\n*** cuvil: trap on hart %lu: %s\n", hart, what);
  cuvil_printf("mcause=0x%016lx mepc=0x%016lx mtval=0x%016lx\n", cause, epc,
               tval);
  for (int i = 0; i < 32; i++)
    cuvil_printf("%4s=0x%016lx%s", reg_names[i], regs[i],
                 i % 4 == 3 ? "\n" : "  ");
  cuvil_port_exit(CUVIL_EXIT_TRAP_BASE + (int)(code & 0x7f));
}
