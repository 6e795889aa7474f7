// Entry point of packed_avx512_test: the packed kernels built for AVX-512
// run only on a CPU that has it; elsewhere the test reports itself skipped
// (exit code 77, the test's SKIP_RETURN_CODE).
#include <cstdio>
#include <gtest/gtest.h>

int main(int argc, char **argv) {
  if (!__builtin_cpu_supports("avx512f")) {
    std::puts("this CPU has no AVX-512F: the AVX-512 kernels are not run");
    return 77;
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
