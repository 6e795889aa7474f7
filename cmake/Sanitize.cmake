# CUVIL_SANITIZE=ON: the compiler, the host kernels and their tests built
# with AddressSanitizer and UndefinedBehaviorSanitizer (any report is fatal),
# and the libFuzzer targets of tests/fuzz. Needs clang: configure with the
# `sanitize` preset (CMakePresets.json), which `make test` and `make fuzz`
# use for build/sanitize.
if(NOT CMAKE_C_COMPILER_ID STREQUAL "Clang" OR
   NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "CUVIL_SANITIZE needs clang for libFuzzer: configure "
    "with `cmake --preset sanitize` (or -DCMAKE_C_COMPILER=clang-19 "
    "-DCMAKE_CXX_COMPILER=clang++-19)")
endif()

# -O1 with line tables: fast enough to test and fuzz, readable stack traces.
# Assertions stay on (no NDEBUG): they are the invariants a fuzzer should hit.
# vptr is left out: LLVM's classes have no RTTI to check against.
set(CUVIL_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize=vptr
  -fno-sanitize-recover=all -fno-omit-frame-pointer -O1 -gline-tables-only)
add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${CUVIL_SANITIZE_FLAGS}>")
add_link_options(-fsanitize=address,undefined)

# Every program of the tree starts with cuvil's ASan defaults (see the
# file). Created before link_libraries(), so that it does not link itself.
add_library(cuvil_asan_defaults OBJECT ${CMAKE_CURRENT_LIST_DIR}/asan_defaults.c)
link_libraries(cuvil_asan_defaults)

# Coverage instrumentation for libFuzzer in the code the fuzz targets reach
# (cuvil_library() adds it to the compiler's libraries).
set(CUVIL_FUZZ_INSTRUMENT -fsanitize=fuzzer-no-link)
