/*
 * Semihosting without a host (QEMU started without -semihosting-config):
 * calls must fail with -1 instead of trapping, and cuvil_port_exit must
 * park the core. run_boot_tests.sh expects the output below and QEMU to
 * keep running until its timeout.
 */
#include <cuvil/port.h>

int main(void) {
  char c;
  cuvil_printf("no host: read_file returned %ld\n",
               cuvil_semihost_read_file("boot-test.txt", &c, 1));
  cuvil_printf("no host: exiting\n");
  return 0;
}
