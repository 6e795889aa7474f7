/*
 * Exception dump of the a78 boot code: vector, syndrome and all registers
 * on the UART, then exit with CUVIL_EXIT_TRAP_BASE + ESR_EL1.EC.
 */
#include <cuvil/port.h>

#include "boot.h"

static const char *const kind_names[4] = {"synchronous exception", "IRQ", "FIQ",
                                          "SError"};
static const char *const origin_names[4] = {"EL1 (SP_EL0)", "EL1 (SP_EL1)",
                                            "EL0 (AArch64)", "EL0 (AArch32)"};

/* ESR_EL1.EC values an EL1 program can meet. */
static const char *const class_names[64] = {
    [0x00] = "unknown reason / undefined instruction",
    [0x01] = "trapped WFI/WFE",
    [0x07] = "FP/SIMD access trapped",
    [0x0e] = "illegal execution state",
    [0x15] = "SVC",
    [0x18] = "trapped system register access",
    [0x20] = "instruction abort from a lower EL",
    [0x21] = "instruction abort",
    [0x22] = "PC alignment fault",
    [0x24] = "data abort from a lower EL",
    [0x25] = "data abort",
    [0x26] = "SP alignment fault",
    [0x2c] = "floating-point exception",
    [0x2f] = "SError",
    [0x3c] = "BRK instruction",
};

#define SYSREG_READ(name, var) __asm__ volatile("mrs %0, " #name : "=r"(var))

void cuvil_trap_report(uint64_t vector, const uint64_t regs[32]) {
  /* A second exception while reporting (a broken stack or UART) would
   * recurse forever: park instead. */
  static int reporting;
  if (reporting)
    cuvil_port_halt();
  reporting = 1;

  uint64_t esr, elr, far, spsr;
  SYSREG_READ(esr_el1, esr);
  SYSREG_READ(elr_el1, elr);
  SYSREG_READ(far_el1, far);
  SYSREG_READ(spsr_el1, spsr);
  const unsigned ec = (unsigned)(esr >> 26) & 0x3f;
  const char *what = class_names[ec] ? class_names[ec] : "unexpected class";

  cuvil_printf("\n*** cuvil: %s from %s: EC 0x%02x, %s\n",
               kind_names[vector & 3], origin_names[(vector >> 2) & 3], ec,
               what);
  cuvil_printf("ESR_EL1=0x%016lx ELR_EL1=0x%016lx\n"
               "FAR_EL1=0x%016lx SPSR_EL1=0x%016lx\n",
               esr, elr, far, spsr);
  for (int i = 0; i < 32; i++) {
    const char *separator = i % 4 == 3 ? "\n" : "  ";
    if (i < 31)
      cuvil_printf("x%-2d=0x%016lx%s", i, regs[i], separator);
    else
      cuvil_printf("sp =0x%016lx%s", regs[i], separator);
  }
  cuvil_port_exit(CUVIL_EXIT_TRAP_BASE + (int)ec);
}
