/*
 * The other U74 harts as team members (cuvil/team.h). Member k runs on
 * hart BOOT_HART + k: the boot hart is member 0, harts 2..4 members 1..3;
 * hart 0 (the E51 monitor core, no FPU) never joins.
 *
 * start.S leaves harts 2..4 in wfi with only the machine software
 * interrupt enabled (mie.MSIE; mstatus.MIE stays 0, so it wakes wfi and
 * is never taken as a trap). To start one, this file fills its mailbox
 * and raises its CLINT msip bit; start.S then sets up gp, the FPU and
 * counters and jumps to the entry on the given stack. Waking is the same
 * msip bit: a waiting hart clears its own bit after wfi returns.
 */
#include "boot.h"

#include <cuvil/team.h>

#define CLINT_MSIP ((volatile uint32_t *)0x2000000)
#define MIE_MSIE (1u << 3)

cuvil_core_mailbox_t cuvil_core_mailbox[CUVIL_BOOT_HART + CUVIL_TEAM_MAX];

static uint64_t hart_id(void) {
  uint64_t hart;
  __asm__ volatile("csrr %0, mhartid" : "=r"(hart));
  return hart;
}

int cuvil_port_core_start(int core, void (*entry)(int64_t core),
                          void *stack_top) {
  if (core < 1 || core >= CUVIL_TEAM_MAX)
    return -1;
  /* Member 0 waits for the others with wfi too. */
  __asm__ volatile("csrs mie, %0" ::"r"((uint64_t)MIE_MSIE));
  cuvil_core_mailbox_t *box = &cuvil_core_mailbox[CUVIL_BOOT_HART + core];
  box->stack_top = stack_top;
  box->core = core;
  /* The entry last: start.S takes a zero entry for a spurious wake-up. */
  __atomic_store_n(&box->entry, entry, __ATOMIC_RELEASE);
  __asm__ volatile("fence rw, rw" ::: "memory");
  CLINT_MSIP[CUVIL_BOOT_HART + core] = 1;
  return 0;
}

void cuvil_port_core_wait(void) {
  __asm__ volatile("wfi" ::: "memory");
  CLINT_MSIP[hart_id()] = 0;
  __asm__ volatile("fence rw, rw" ::: "memory");
}

void cuvil_port_core_wake(int core) {
  __asm__ volatile("fence rw, rw" ::: "memory");
  CLINT_MSIP[CUVIL_BOOT_HART + core] = 1;
}
