/*
 * Boot smoke test: checks the state the boot code hands to main, printf
 * formatting, the counters, the mem* functions and semihosting file I/O.
 * run_boot_tests.sh compares the UART output with hello.expected, so every
 * line printed here is deterministic; a failed check prints a FAIL line.
 */
#include <cuvil/port.h>

/* The runtime's strong definitions (there is no libc <string.h>). */
void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

static int failures;

static void check(int ok, const char *what) {
  if (!ok) {
    cuvil_printf("FAIL: %s\n", what);
    failures++;
  }
}

/* volatile: the compiler must neither fold these into constants nor run
 * the constructor at compile time. */
static volatile int initialized = 42;
static volatile uint64_t zeroed[32];
static volatile int constructed;

__attribute__((constructor)) static void construct(void) { constructed = 1; }

static void test_startup(void) {
  check(initialized == 42, ".data initialised");
  int all_zero = 1;
  for (int i = 0; i < 32; i++)
    all_zero &= zeroed[i] == 0;
  check(all_zero, ".bss cleared");
  check(constructed, "constructors ran");

#if defined(__riscv)
  uint64_t hart, mstatus;
  __asm__ volatile("csrr %0, mhartid" : "=r"(hart));
  __asm__ volatile("csrr %0, mstatus" : "=r"(mstatus));
  check(hart == 1, "boot hart is hart 1");
  check(((mstatus >> 13) & 3) != 0, "FPU enabled (mstatus.FS)");
#elif defined(__aarch64__)
  uint64_t el, sctlr, cpacr;
  __asm__ volatile("mrs %0, CurrentEL" : "=r"(el));
  __asm__ volatile("mrs %0, sctlr_el1" : "=r"(sctlr));
  __asm__ volatile("mrs %0, cpacr_el1" : "=r"(cpacr));
  check(el >> 2 == 1, "runs at EL1");
  check((sctlr & 0x1005) == 0x1005, "MMU, D-cache and I-cache on");
  check(((cpacr >> 20) & 3) == 3, "FP/SIMD enabled (CPACR_EL1.FPEN)");
  /* Translate a RAM and a UART address; PAR_EL1 gives the MAIR attribute
   * in bits 63:56 and a fault flag in bit 0. */
  uint64_t par_ram, par_uart;
  __asm__ volatile("at s1e1r, %1\n\tisb\n\tmrs %0, par_el1"
                   : "=r"(par_ram)
                   : "r"(&zeroed[0]));
  __asm__ volatile("at s1e1r, %1\n\tisb\n\tmrs %0, par_el1"
                   : "=r"(par_uart)
                   : "r"(0x09000000ul));
  check((par_ram & 1) == 0 && par_ram >> 56 == 0xff,
        "RAM mapped Normal write-back");
  check((par_uart & 1) == 0 && par_uart >> 56 == 0x00,
        "UART mapped Device-nGnRnE");
#endif
  cuvil_printf("startup: ok\n");
}

static void test_printf(void) {
  cuvil_printf("int: %d %i %u %d %d\n", 0, -42, 4294967295u, 2147483647,
               -2147483647 - 1);
  cuvil_printf("long: %ld %lu %lld %llu %zu\n", -9223372036854775807L - 1,
               18446744073709551615ul, 123456789012345ll, 42ull, (size_t)4096);
  cuvil_printf("hex: %x %X %08x %lx %p\n", 0xdeadbeefu, 0xabcdefu, 0x1fu,
               0x123456789abcdef0ul, (void *)0x80001000ul);
  cuvil_printf("width: [%5d] [%-5d] [%05d] [%-6s] [%6s] [%c] [%3c]\n", 42, 42,
               -42, "ab", "ab", 'x', 'y');
  cuvil_printf("string: %s %s 100%%\n", "text", "");
  cuvil_printf("fixed: %f %.2f %.0f %8.3f [%-8.1f] %08.3f\n", 3.14159265358979,
               -2.71828, 1234.4, 0.0005, 1.26, -3.14159);
  cuvil_printf("float: %f %f %.3f %lu\n", 0.1f, 1e10, 123456789.0626,
               1234567890123ul);
  cuvil_printf("exp: %e %.3e %e %e %.2e\n", 12345.678, -0.000123456, 0.0, 1e300,
               9.999e-5);
  cuvil_printf("special: %f %f %f %e [%5f]\n", __builtin_inf(),
               -__builtin_inf(), __builtin_nan(""), -0.0, __builtin_inf());
}

static void test_counters(void) {
  const uint64_t cycles = cuvil_port_cycles();
  const uint64_t instret = cuvil_port_instret();
  volatile uint64_t sink = 0;
  for (int i = 0; i < 10000; i++)
    sink += (uint64_t)i;
  check(cuvil_port_cycles() > cycles, "cycle counter advances");
  check(cuvil_port_instret() > instret, "instret counter advances");
  cuvil_printf("counters: ok\n");
}

/* Every offset/length pair up to a few words, against the expected bytes
 * (checked by reading only: a reference copy loop could itself be
 * compiled into a memcpy call). */
#define MEM_SPAN 48
#define MEM_BUF (2 * MEM_SPAN)

static unsigned char pattern(int i) { return (unsigned char)(i * 7 + 1); }

static void test_mem(void) {
  static unsigned char src[MEM_BUF], dst[MEM_BUF];
  int ok = 1;
  for (int s = 0; s < 16; s++) {
    for (int d = 0; d < 16; d++) {
      for (int n = 0; n <= MEM_SPAN - 16; n++) {
        for (int i = 0; i < MEM_BUF; i++) {
          src[i] = pattern(i);
          dst[i] = 0xee;
        }
        ok &= memcpy(dst + d, src + s, (size_t)n) == dst + d;
        for (int i = 0; i < MEM_BUF; i++)
          ok &= dst[i] == (i >= d && i < d + n ? pattern(s + i - d) : 0xee);

        /* memmove within one buffer: source and destination overlap. */
        ok &= memmove(src + d, src + s, (size_t)n) == src + d;
        for (int i = 0; i < MEM_BUF; i++)
          ok &=
              src[i] == (i >= d && i < d + n ? pattern(s + i - d) : pattern(i));
      }
    }
  }
  for (int d = 0; d < 16; d++) {
    for (int n = 0; n <= MEM_SPAN - 16; n++) {
      for (int i = 0; i < MEM_BUF; i++)
        dst[i] = 0xee;
      ok &= memset(dst + d, 0x1a5, (size_t)n) == dst + d;
      for (int i = 0; i < MEM_BUF; i++)
        ok &= dst[i] == (i >= d && i < d + n ? 0xa5 : 0xee);
    }
  }
  check(ok, "memcpy/memmove/memset");
  const unsigned char a[4] = {1, 2, 3, 0x80}, b[4] = {1, 2, 3, 0x7f};
  check(memcmp(a, b, 3) == 0 && memcmp(a, b, 4) > 0 && memcmp(b, a, 4) < 0 &&
            memcmp(a, b, 0) == 0,
        "memcmp");
  cuvil_printf("mem: ok\n");
}

static void test_semihosting(void) {
  static const char message[] = "cuvil semihosting round trip\n";
  const long length = (long)sizeof message - 1;
  char buf[64];
  check(cuvil_semihost_write_file("boot-test.txt", message,
                                  sizeof message - 1) == length,
        "write_file");
  check(cuvil_semihost_read_file("boot-test.txt", buf, sizeof buf) == length &&
            memcmp(buf, message, (size_t)length) == 0,
        "read_file reads back what write_file wrote");
  check(cuvil_semihost_read_file("boot-test.txt", buf, 4) == -1,
        "read_file into a too small buffer fails");
  check(cuvil_semihost_read_file("no-such-file.bin", buf, sizeof buf) == -1,
        "read_file of a missing file fails");
  cuvil_printf("semihosting: ok\n");
}

int main(void) {
  cuvil_printf("cuvil boot test\n");
  test_startup();
  test_printf();
  test_counters();
  test_mem();
  test_semihosting();
  cuvil_printf("boot test: %s\n", failures == 0 ? "PASS" : "FAIL");
  return failures == 0 ? 0 : 1;
}
