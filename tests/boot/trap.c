/*
 * Trap test: executes an undefined instruction. The boot code's trap
 * handler must print its register dump and exit with
 * CUVIL_EXIT_TRAP_BASE + cause (run_boot_tests.sh checks both).
 */
#include <cuvil/port.h>

int main(void) {
  cuvil_printf("trap test: executing an undefined instruction\n");
#if defined(__riscv)
  __asm__ volatile("unimp");
#elif defined(__aarch64__)
  __asm__ volatile("udf #0");
#endif
  cuvil_printf("trap test: still running after the trap\n");
  return 0;
}
