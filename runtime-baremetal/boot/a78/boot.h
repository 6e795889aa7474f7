/*
 * Internal interfaces of the a78 boot code: functions start.S and vectors.S
 * call in the C files of this directory.
 */
#ifndef CUVIL_BOOT_A78_H
#define CUVIL_BOOT_A78_H

#include <stdint.h>

/* Program the PL011 for 115200 8N1 and enable its transmitter. */
void cuvil_uart_init(void);

/* Enable the PMU cycle counter and, where the CPU has it, an
 * INST_RETIRED event counter. */
void cuvil_counters_init(void);

/* How cuvil_core_entry (start.S) starts a core powered on by cores.c:
 * entry(core) with sp = stack_top. Indexed by core; the layout is
 * start.S's too. */
typedef struct {
  void (*entry)(int64_t core); /* offset 0 */
  void *stack_top;             /* offset 8 */
} cuvil_core_mailbox_t;
extern cuvil_core_mailbox_t cuvil_core_mailbox[];

/* Where PSCI CPU_ON starts a core: EL1, MMU off, x0 = its core number. */
void cuvil_core_entry(void);

/* Print the exception class, syndrome and registers, then exit with
 * CUVIL_EXIT_TRAP_BASE + ESR_EL1.EC. `vector` is the index of the vector
 * table entry taken (0..15); `regs` holds x0..x30 and, at index 31, the
 * interrupted stack pointer. */
__attribute__((noreturn)) void cuvil_trap_report(uint64_t vector,
                                                 const uint64_t regs[32]);

#endif /* CUVIL_BOOT_A78_H */
