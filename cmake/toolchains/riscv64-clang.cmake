# Bare-metal RV64 with clang-19 and ld.lld-19 (target riscv64-unknown-elf).
# CPU and ABI flags come from the cuvil target
# (runtime-baremetal/cuvil-runtime.cmake).
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/riscv64-clang.cmake ...
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv64)

set(CMAKE_C_COMPILER clang-19)
set(CMAKE_CXX_COMPILER clang++-19)
set(CMAKE_ASM_COMPILER clang-19)
set(CMAKE_C_COMPILER_TARGET riscv64-unknown-elf)
set(CMAKE_CXX_COMPILER_TARGET riscv64-unknown-elf)
set(CMAKE_ASM_COMPILER_TARGET riscv64-unknown-elf)
set(CMAKE_AR llvm-ar-19)
set(CMAKE_RANLIB llvm-ranlib-19)
# clang-19 runs the ld.lld next to it (LLVM 19's, whatever /usr/bin/ld.lld is).
set(CMAKE_EXE_LINKER_FLAGS_INIT "-fuse-ld=lld")

# Nothing can be linked before the firmware provides a linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
