/*
 * Internal interfaces of the u74-mc boot code: functions start.S and
 * trap_entry.S call in the C files of this directory.
 */
#ifndef CUVIL_BOOT_U74_MC_H
#define CUVIL_BOOT_U74_MC_H

#include <stdint.h>

/* The hart that boots the program (the first U74); start.S has its own
 * copy. */
#define CUVIL_BOOT_HART 1

/* How start.S starts a waiting hart (cores.c): jump to entry(core) with sp
 * = stack_top. Indexed by hart; the layout is start.S's too. */
typedef struct {
  void (*entry)(int64_t core); /* offset 0; 0 until the hart may start */
  void *stack_top;             /* offset 8 */
  int64_t core;                /* offset 16 */
  int64_t unused;              /* pads the entry to 32 bytes */
} cuvil_core_mailbox_t;
extern cuvil_core_mailbox_t cuvil_core_mailbox[];

/* Enable the UART0 transmitter (called by start.S before main). */
void cuvil_uart_init(void);

/* Print the trap cause, CSRs and registers, then exit with
 * CUVIL_EXIT_TRAP_BASE + mcause. `regs` holds x0..x31 as they were when
 * the trap was taken (x0 reads 0, sp is the interrupted stack pointer). */
__attribute__((noreturn)) void cuvil_trap_report(const uint64_t regs[32]);

#endif /* CUVIL_BOOT_U74_MC_H */
