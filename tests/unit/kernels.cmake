# Host build of the reference kernels and their unit tests. Included from
# tests/unit/CMakeLists.txt, after find_package(GTest) and include(GoogleTest).
set(CUVIL_RUNTIME_DIR ${PROJECT_SOURCE_DIR}/runtime-baremetal)

# The kernels in the same C dialect as their target bitcode: freestanding C11.
file(GLOB cuvil_kernels_host_sources CONFIGURE_DEPENDS
  ${CUVIL_RUNTIME_DIR}/kernels/ref/*.c ${CUVIL_RUNTIME_DIR}/kernels/opt/*.c)
add_library(cuvil_kernels_host STATIC ${cuvil_kernels_host_sources})
target_include_directories(cuvil_kernels_host PUBLIC ${CUVIL_RUNTIME_DIR}/include)
set_target_properties(cuvil_kernels_host PROPERTIES
  C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(cuvil_kernels_host PRIVATE -ffreestanding)
if(CUVIL_SANITIZE)
  # At -O1, ASan+UBSan take some 9 CPU-minutes on the register-blocked
  # kernels of opt/packed.c alone; at -O0, 2 seconds.
  target_compile_options(cuvil_kernels_host PRIVATE -O0)
endif()

add_executable(kernels_test ${CMAKE_CURRENT_LIST_DIR}/kernels_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/elementwise_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/pool_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/layout_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/math_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/datamove_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/unary_math_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/reduce_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/packed_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/quant_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sampling_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/indexing_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/norm_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/rnn_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/signal_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/convpool_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/losses_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/opset18_test.cpp)
# For "kernels/math.h": the kernels directory itself must not be on the
# include path, or its math.h would shadow the C library's.
target_include_directories(kernels_test PRIVATE ${CUVIL_RUNTIME_DIR})
target_link_libraries(kernels_test PRIVATE cuvil_kernels_host GTest::gtest_main)
gtest_discover_tests(kernels_test NO_PRETTY_VALUES)

# The sanitized tree (CUVIL_SANITIZE) stops here: the kernels above are
# built with ASan+UBSan there; the two variants below already run under
# ASan in the main tree, and compiling the packed kernels again with both
# sanitizers costs minutes of CPU for no new check.
if(CUVIL_SANITIZE)
  return()
endif()

# The optimised kernels again with the one-lane blocking of RV64 (VL 1,
# its block shapes and clamp), so their scalar paths run on the build
# machine too; the reference kernels come from cuvil_kernels_host. Under
# AddressSanitizer: the depthwise kernel's line buffer is on the stack and
# sized by arithmetic that no output would show to be off by a float.
file(GLOB cuvil_kernels_opt_sources CONFIGURE_DEPENDS ${CUVIL_RUNTIME_DIR}/kernels/opt/*.c)
add_library(cuvil_kernels_opt_scalar STATIC ${cuvil_kernels_opt_sources})
target_include_directories(cuvil_kernels_opt_scalar PUBLIC ${CUVIL_RUNTIME_DIR}/include)
set_target_properties(cuvil_kernels_opt_scalar PROPERTIES
  C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(cuvil_kernels_opt_scalar PRIVATE -ffreestanding -fsanitize=address
  -fno-omit-frame-pointer)
target_compile_definitions(cuvil_kernels_opt_scalar PRIVATE CUVIL_BLOCKING_SCALAR)

add_executable(packed_scalar_test ${CMAKE_CURRENT_LIST_DIR}/packed_test.cpp)
# The scalar library first: its definitions of the optimised kernels are the
# ones linked; cuvil_kernels_host then supplies only the reference kernels.
target_link_libraries(packed_scalar_test PRIVATE cuvil_kernels_opt_scalar cuvil_kernels_host
  GTest::gtest_main)
target_link_options(packed_scalar_test PRIVATE -fsanitize=address)
gtest_discover_tests(packed_scalar_test NO_PRETTY_VALUES TEST_PREFIX scalar.)

# And with the AVX-512 blocking of the host-avx512 target (16 lanes), run
# only where the CPU has AVX-512F (the test reports itself skipped
# elsewhere: exit code 77); under AddressSanitizer too, which checks the
# masked loads lane by lane.
add_library(cuvil_kernels_opt_avx512 STATIC ${cuvil_kernels_opt_sources})
target_include_directories(cuvil_kernels_opt_avx512 PUBLIC ${CUVIL_RUNTIME_DIR}/include)
set_target_properties(cuvil_kernels_opt_avx512 PROPERTIES
  C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(cuvil_kernels_opt_avx512 PRIVATE -ffreestanding -march=x86-64-v4
  -fsanitize=address -fno-omit-frame-pointer)

add_executable(packed_avx512_test ${CMAKE_CURRENT_LIST_DIR}/packed_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/avx512_main.cpp)
target_link_libraries(packed_avx512_test PRIVATE cuvil_kernels_opt_avx512 cuvil_kernels_host
  GTest::gtest)
target_link_options(packed_avx512_test PRIVATE -fsanitize=address)
add_test(NAME packed_avx512_test COMMAND packed_avx512_test)
set_tests_properties(packed_avx512_test PROPERTIES SKIP_RETURN_CODE 77)
