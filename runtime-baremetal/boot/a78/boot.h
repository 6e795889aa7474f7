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

/* Print the exception class, syndrome and registers, then exit with
 * CUVIL_EXIT_TRAP_BASE + ESR_EL1.EC. `vector` is the index of the vector
 * table entry taken (0..15); `regs` holds x0..x30 and, at index 31, the
 * interrupted stack pointer. */
__attribute__((noreturn)) void cuvil_trap_report(uint64_t vector,
                                                 const uint64_t regs[32]);

#endif /* CUVIL_BOOT_A78_H */
