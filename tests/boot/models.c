/*
 * Linker-script contract test: a stand-in for a cuvilc model, with weights
 * in .cuvil.fake.weights and arenas in .cuvil.fake.arena.<REGION>, linked
 * through the fragment fragments/<target>/fake.ld that cuvil-models.ld
 * includes. Checks that the sections land in their regions, after the
 * program's stack, and are usable.
 */
#include <cuvil/port.h>

#define ARENA_WORDS 1024

#if defined(__riscv)
#define FAST_REGION "L2LIM"
#define FAST_ARENA_SECTION ".cuvil.fake.arena.L2LIM"
#define FAST_ORIGIN 0x08000000u
#define FAST_END 0x08200000u
#else
#define FAST_REGION "RAM"
#define FAST_ARENA_SECTION ".cuvil.fake.arena.RAM"
#define FAST_ORIGIN 0x40100000u
#define FAST_END 0x80000000u
#endif

__attribute__((section(".cuvil.fake.weights"), aligned(64)))
const uint32_t fake_weights[4] = {0xc0ffee01u, 0xc0ffee02u, 0xc0ffee03u,
                                  0xc0ffee04u};
__attribute__((section(FAST_ARENA_SECTION),
               aligned(64))) uint32_t fake_arena[ARENA_WORDS];

/* End of the program's stack (linker script). */
extern char __cuvil_stack_top[];

int main(void) {
  int ok = 1;
  const volatile uint32_t *weights = fake_weights;
  for (uint32_t i = 0; i < 4; i++)
    ok &= weights[i] == 0xc0ffee01u + i;

  volatile uint32_t *arena = fake_arena;
  for (uint32_t i = 0; i < ARENA_WORDS; i++)
    arena[i] = i * 3u;
  for (uint32_t i = 0; i < ARENA_WORDS; i++)
    ok &= arena[i] == i * 3u;

  const uintptr_t stack_top = (uintptr_t)__cuvil_stack_top;
  const uintptr_t arena_at = (uintptr_t)fake_arena;
  ok &= (uintptr_t)fake_weights >= stack_top;
  ok &= arena_at >= FAST_ORIGIN && arena_at + sizeof fake_arena <= FAST_END;
  ok &= arena_at % 64 == 0 && (uintptr_t)fake_weights % 64 == 0;
  cuvil_printf("models: weights at %p, arena at %p (%s): %s\n",
               (const void *)fake_weights, (void *)fake_arena, FAST_REGION,
               ok ? "ok" : "FAIL");
  return ok ? 0 : 1;
}
