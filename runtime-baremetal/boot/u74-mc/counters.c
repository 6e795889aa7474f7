/*
 * Cycle and retired-instruction counters of the u74-mc: the M-mode CSRs
 * mcycle and minstret (start.S clears mcountinhibit so both run). QEMU
 * derives both from the host clock, or from the instruction count under
 * -icount.
 */
#include <cuvil/port.h>

uint64_t cuvil_port_cycles(void) {
  uint64_t value;
  __asm__ volatile("csrr %0, mcycle" : "=r"(value));
  return value;
}

uint64_t cuvil_port_instret(void) {
  uint64_t value;
  __asm__ volatile("csrr %0, minstret" : "=r"(value));
  return value;
}
