// Entry point of the kernel tests built for a CPU feature the build machine
// may lack (AVX-512F, AVX2, AVX-512 VNNI: CUVIL_TEST_CPU, a
// __builtin_cpu_supports name): elsewhere the test reports itself skipped
// (exit code 77, the test's SKIP_RETURN_CODE).
#include <cstdio>
#include <gtest/gtest.h>

int main(int argc, char **argv) {
  if (!__builtin_cpu_supports(CUVIL_TEST_CPU)) {
    std::puts("this CPU has no " CUVIL_TEST_CPU
              ": the kernels built for it are not run");
    return 77;
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
