/*
 * Cycle and retired-instruction counters of the a78: the PMUv3 cycle
 * counter PMCCNTR_EL0 (64 bits) and event counter 0 programmed with
 * INST_RETIRED (event 0x08).
 *
 * Event counters are 32 bits wide before PMUv3p5 (the A78 has PMUv3p1),
 * so cuvil_port_instret extends counter 0 to 64 bits in software: correct
 * as long as it is read at least once every 2^32 instructions.
 *
 * QEMU implements INST_RETIRED only under -icount (PMCEID0_EL0 bit 8 says
 * whether the event exists); without it cuvil_port_instret returns the
 * cycle count. QEMU's cycle counter follows its virtual clock at 1 GHz:
 * under -icount shift=0 that is one cycle per instruction.
 */
#include <cuvil/port.h>

#include "boot.h"

#define PMCR_E (1u << 0)  /* enable all counters */
#define PMCR_P (1u << 1)  /* reset event counters */
#define PMCR_C (1u << 2)  /* reset cycle counter */
#define PMCR_LC (1u << 6) /* cycle counter overflows at 64 bits */
#define PMCNTEN_CYCLES (1u << 31)
#define PMCNTEN_EVENT0 (1u << 0)
#define EVENT_INST_RETIRED 0x08u

#define SYSREG_READ(name, var) __asm__ volatile("mrs %0, " #name : "=r"(var))
#define SYSREG_WRITE(name, value)                                              \
  __asm__ volatile("msr " #name ", %0" : : "r"((uint64_t)(value)))

static int have_inst_retired;
static uint64_t instret_high;
static uint32_t instret_last;

void cuvil_counters_init(void) {
  uint64_t events;
  SYSREG_READ(pmceid0_el0, events);
  have_inst_retired = (events >> EVENT_INST_RETIRED) & 1;

  /* Count at EL1 and EL0 (all filter bits clear: P, U, NSK, NSH...). */
  SYSREG_WRITE(pmccfiltr_el0, 0);
  uint32_t enable = PMCNTEN_CYCLES;
  if (have_inst_retired) {
    SYSREG_WRITE(pmevtyper0_el0, EVENT_INST_RETIRED);
    enable |= PMCNTEN_EVENT0;
  }
  SYSREG_WRITE(pmcntenset_el0, enable);
  SYSREG_WRITE(pmcr_el0, PMCR_E | PMCR_P | PMCR_C | PMCR_LC);
  __asm__ volatile("isb");
}

uint64_t cuvil_port_cycles(void) {
  uint64_t value;
  __asm__ volatile("isb; mrs %0, pmccntr_el0" : "=r"(value));
  return value;
}

uint64_t cuvil_port_instret(void) {
  if (!have_inst_retired)
    return cuvil_port_cycles();
  uint64_t value;
  __asm__ volatile("isb; mrs %0, pmevcntr0_el0" : "=r"(value));
  const uint32_t now = (uint32_t)value;
  if (now < instret_last)
    instret_high += 1ull << 32;
  instret_last = now;
  return instret_high | now;
}
