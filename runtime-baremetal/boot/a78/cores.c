/*
 * The other cores as team members (cuvil/team.h): member k is the core
 * with MPIDR affinity 0.0.0.k, powered on through PSCI CPU_ON at
 * cuvil_core_entry (start.S). QEMU virt implements PSCI itself, called
 * with HVC from EL1 (no EL2 or EL3 configured); firmware behind a
 * different conduit or numbering supplies its own cores.c.
 *
 * Waiting is WFE; waking is SEV after the store it announces (SEV is
 * broadcast, so any waiting core rechecks).
 */
#include "boot.h"

#include <cuvil/team.h>

#define PSCI_CPU_ON_64 0xc4000003u
#define PSCI_SUCCESS 0

cuvil_core_mailbox_t cuvil_core_mailbox[CUVIL_TEAM_MAX];

static int64_t psci_cpu_on(uint64_t mpidr, uint64_t entry, uint64_t context) {
  register uint64_t x0 __asm__("x0") = PSCI_CPU_ON_64;
  register uint64_t x1 __asm__("x1") = mpidr;
  register uint64_t x2 __asm__("x2") = entry;
  register uint64_t x3 __asm__("x3") = context;
  __asm__ volatile("hvc #0"
                   : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3)
                   :
                   : "memory");
  return (int64_t)x0;
}

int cuvil_port_core_start(int core, void (*entry)(int64_t core),
                          void *stack_top) {
  if (core < 1 || core >= CUVIL_TEAM_MAX)
    return -1;
  /* With EL2 implemented HVC would go to the boot code's EL2, which has
   * no PSCI; QEMU handles HVC itself only when there is no EL2. */
  uint64_t features;
  __asm__ volatile("mrs %0, id_aa64pfr0_el1" : "=r"(features));
  if ((features >> 8) & 0xf)
    return -1;
  cuvil_core_mailbox_t *box = &cuvil_core_mailbox[core];
  box->entry = entry;
  box->stack_top = stack_top;
  /* The new core reads its mailbox with the MMU (and caches) off. */
  __asm__ volatile("dc cvac, %0\n\tdsb sy" ::"r"(box) : "memory");
  return psci_cpu_on((uint64_t)core, (uint64_t)(uintptr_t)cuvil_core_entry,
                     (uint64_t)core) == PSCI_SUCCESS
             ? 0
             : -1;
}

void cuvil_port_core_wait(void) { __asm__ volatile("wfe" ::: "memory"); }

void cuvil_port_core_wake(int core) {
  (void)core;
  __asm__ volatile("dsb ish\n\tsev" ::: "memory");
}
