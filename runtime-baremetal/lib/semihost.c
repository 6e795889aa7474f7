/*
 * Semihosting protocol on top of the per-architecture trap primitive
 * cuvil_semihost_call (boot/<target>/semihost_call.S): program exit and
 * whole-file host I/O for tests.
 *
 * Operation numbers and parameter blocks follow Arm's "Semihosting for
 * AArch32 and AArch64", which the RISC-V semihosting specification reuses.
 * Parameter blocks are arrays of pointer-sized fields. Both supported
 * targets are 64-bit, where SYS_EXIT takes a {reason, exit code} block.
 */
#include <cuvil/port.h>

#define SYS_OPEN 0x01
#define SYS_CLOSE 0x02
#define SYS_WRITE 0x05
#define SYS_READ 0x06
#define SYS_FLEN 0x0c
#define SYS_EXIT 0x18

/* SYS_OPEN modes, named after the fopen() mode they stand for. */
#define OPEN_MODE_RB 1
#define OPEN_MODE_WB 5

#define ADP_STOPPED_APPLICATION_EXIT 0x20026

static intptr_t open_file(const char *path, uintptr_t mode) {
  size_t length = 0;
  while (path[length] != '\0')
    length++;
  uintptr_t args[3] = {(uintptr_t)path, mode, length};
  return cuvil_semihost_call(SYS_OPEN, args);
}

static void close_file(intptr_t handle) {
  uintptr_t args[1] = {(uintptr_t)handle};
  cuvil_semihost_call(SYS_CLOSE, args);
}

long cuvil_semihost_read_file(const char *path, void *buf, size_t size) {
  const intptr_t handle = open_file(path, OPEN_MODE_RB);
  if (handle < 0)
    return -1;
  uintptr_t flen_args[1] = {(uintptr_t)handle};
  const intptr_t length = cuvil_semihost_call(SYS_FLEN, flen_args);
  long result = -1;
  if (length >= 0 && (size_t)length <= size) {
    uintptr_t read_args[3] = {(uintptr_t)handle, (uintptr_t)buf,
                              (uintptr_t)length};
    /* SYS_READ returns the number of bytes it did not read. */
    if (cuvil_semihost_call(SYS_READ, read_args) == 0)
      result = (long)length;
  }
  close_file(handle);
  return result;
}

long cuvil_semihost_write_file(const char *path, const void *buf, size_t size) {
  const intptr_t handle = open_file(path, OPEN_MODE_WB);
  if (handle < 0)
    return -1;
  uintptr_t write_args[3] = {(uintptr_t)handle, (uintptr_t)buf, size};
  /* SYS_WRITE returns the number of bytes it did not write. */
  const long result =
      cuvil_semihost_call(SYS_WRITE, write_args) == 0 ? (long)size : -1;
  close_file(handle);
  return result;
}

void cuvil_port_exit(int code) {
  uintptr_t args[2] = {ADP_STOPPED_APPLICATION_EXIT, (uintptr_t)(intptr_t)code};
  cuvil_semihost_call(SYS_EXIT, args);
  /* Still here: nobody listens (no debugger, no emulator). */
  cuvil_port_halt();
}
