# Bare-metal RV64 with the GNU cross compiler riscv64-unknown-elf-gcc
# (Debian gcc-riscv64-unknown-elf; no C library). CPU and ABI flags come
# from the cuvil target (runtime-baremetal/cuvil-runtime.cmake).
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/riscv64-gnu.cmake ...
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv64)

set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)

# Nothing can be linked before the firmware provides a linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
