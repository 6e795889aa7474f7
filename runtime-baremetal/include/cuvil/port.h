/*
 * cuvil bare-metal port surface: the few functions firmware and tests use to
 * talk to the board. Implemented per target under runtime-baremetal/boot/.
 * The boot code calls `int main(void)` on one core with the stack, .data,
 * .bss, FPU/SIMD (and on a78 the MMU and caches) set up, and exits through
 * semihosting with main's return value.
 */
#ifndef CUVIL_PORT_H
#define CUVIL_PORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Console (the board UART). A '\n' is sent as "\r\n" for serial
 * terminals; puts appends no newline. */
void cuvil_port_putc(char c);
void cuvil_port_puts(const char *s);
/* printf subset: %d %i %u %x %X %s %c %p %%, the l/ll/z length modifiers,
 * field width with zero padding ('0') or left alignment ('-'), and %f/%e
 * with an optional precision (at most 17 digits; %f switches to %e style
 * above 1e19). Floating-point output may differ from glibc in the last
 * digit; it never calls libm. */
void cuvil_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Counters: cycles and retired instructions since reset. Under
 * `qemu -icount shift=0` both are deterministic. */
uint64_t cuvil_port_cycles(void);
uint64_t cuvil_port_instret(void);

/* End the program: semihosting SYS_EXIT with this code (QEMU exits with it),
 * or park the core when no debugger/emulator listens. */
__attribute__((noreturn)) void cuvil_port_exit(int code);

/* Park the calling core forever (interrupts masked, wfi/wfe loop). */
__attribute__((noreturn)) void cuvil_port_halt(void);

/* A CPU exception (illegal instruction, fault, ...) prints a register dump
 * on the console and exits with CUVIL_EXIT_TRAP_BASE + cause, where cause is
 * mcause (u74-mc) or ESR_EL1.EC (a78): 130 for an illegal instruction on
 * RISC-V, 128 for an undefined instruction on AArch64. */
#define CUVIL_EXIT_TRAP_BASE 128

/* Host file I/O through semihosting (tests only). Paths are relative to the
 * emulator's working directory. Return the number of bytes transferred, or
 * -1 on error (missing file, short read/write). read_file reads the whole
 * file, which must fit in `size` bytes; write_file creates or truncates. */
long cuvil_semihost_read_file(const char *path, void *buf, size_t size);
long cuvil_semihost_write_file(const char *path, const void *buf, size_t size);

/* The raw semihosting call (Arm semihosting numbering, also used by RISC-V):
 * operation `op` with parameter block `param`; returns the host's result.
 * Without a debugger or emulator listening it returns -1 instead of
 * trapping (the boot code's trap handler recognises the call site). */
intptr_t cuvil_semihost_call(uintptr_t op, void *param);

#ifdef __cplusplus
}
#endif

#endif /* CUVIL_PORT_H */
