# Bare-metal AArch64 with Debian's aarch64-linux-gnu-gcc used freestanding.
# That compiler targets Linux (position-independent executables by
# default), so position-independent code, PIE links and the stack
# protector are switched off here. CPU flags come from the cuvil target
# (runtime-baremetal/cuvil-runtime.cmake).
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-gnu.cmake ...
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_ASM_COMPILER aarch64-linux-gnu-gcc)

set(CMAKE_C_FLAGS_INIT
  "-ffreestanding -fno-pic -mcmodel=small -fno-stack-protector")
set(CMAKE_CXX_FLAGS_INIT
  "-ffreestanding -fno-pic -mcmodel=small -fno-stack-protector")
set(CMAKE_ASM_FLAGS_INIT "-fno-pic")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostdlib -static -no-pie")

# Nothing can be linked before the firmware provides a linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
