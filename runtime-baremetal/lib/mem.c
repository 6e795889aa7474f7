/*
 * memcpy, memmove, memset and memcmp for the freestanding runtime.
 *
 * Compilers call these four even in -ffreestanding code (struct copies,
 * large initialisers, loops they recognise as copies), so the runtime
 * defines them as ordinary strong symbols. Each copies or fills bytewise
 * up to 8-byte alignment and then word by word; unaligned word accesses
 * are never made, so they also work on cores and memory types that fault
 * on them.
 *
 * GCC's loop distribution can turn copy and fill loops into memcpy/memset
 * calls even under -ffreestanding (GCC bug 56888; GCC 10 does, 12 no
 * longer does), which inside memcpy itself would recurse forever:
 * runtime.mk and cuvil-runtime.cmake build this file with
 * -fno-tree-loop-distribute-patterns for GCC. Clang forms no such calls
 * under -ffreestanding (it implies -fno-builtin). tests/boot checks the
 * relocations of every build for calls to the four functions.
 */
#include <stddef.h>
#include <stdint.h>

/* A word that may alias any object, like unsigned char. */
typedef uint64_t __attribute__((may_alias)) word_t;
#define WORD_SIZE sizeof(word_t)
#define WORD_MASK (WORD_SIZE - 1)

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

/* Copy upwards; also correct for overlapping buffers with dst < src, as
 * every word is read before the (lower) word that overlaps it is written. */
static void copy_forward(unsigned char *d, const unsigned char *s, size_t n) {
  if ((((uintptr_t)d ^ (uintptr_t)s) & WORD_MASK) == 0) {
    for (; n > 0 && ((uintptr_t)d & WORD_MASK) != 0; n--)
      *d++ = *s++;
    for (; n >= WORD_SIZE; n -= WORD_SIZE, d += WORD_SIZE, s += WORD_SIZE)
      *(word_t *)d = *(const word_t *)s;
  }
  for (; n > 0; n--)
    *d++ = *s++;
}

/* Copy downwards from the ends; correct for overlap with dst > src. */
static void copy_backward(unsigned char *d, const unsigned char *s, size_t n) {
  d += n;
  s += n;
  if ((((uintptr_t)d ^ (uintptr_t)s) & WORD_MASK) == 0) {
    for (; n > 0 && ((uintptr_t)d & WORD_MASK) != 0; n--)
      *--d = *--s;
    for (; n >= WORD_SIZE; n -= WORD_SIZE) {
      d -= WORD_SIZE;
      s -= WORD_SIZE;
      *(word_t *)d = *(const word_t *)s;
    }
  }
  for (; n > 0; n--)
    *--d = *--s;
}

void *memcpy(void *restrict dst, const void *restrict src, size_t n) {
  copy_forward(dst, src, n);
  return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
  const uintptr_t d = (uintptr_t)dst;
  const uintptr_t s = (uintptr_t)src;
  if (d - s >= n) /* dst below src, or no overlap (unsigned wrap-around) */
    copy_forward(dst, src, n);
  else
    copy_backward(dst, src, n);
  return dst;
}

void *memset(void *dst, int c, size_t n) {
  unsigned char *d = dst;
  const unsigned char byte = (unsigned char)c;
  for (; n > 0 && ((uintptr_t)d & WORD_MASK) != 0; n--)
    *d++ = byte;
  const word_t pattern = (word_t)byte * 0x0101010101010101u;
  for (; n >= WORD_SIZE; n -= WORD_SIZE, d += WORD_SIZE)
    *(word_t *)d = pattern;
  for (; n > 0; n--)
    *d++ = byte;
  return dst;
}

int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *p = a;
  const unsigned char *q = b;
  for (; n > 0; n--, p++, q++) {
    if (*p != *q)
      return *p - *q;
  }
  return 0;
}
