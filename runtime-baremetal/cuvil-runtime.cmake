# cuvil-runtime.cmake: the cuvil bare-metal runtime for CMake firmware
# projects, configured with one of the toolchain files in cmake/toolchains/:
#
#   cmake_minimum_required(VERSION 3.20)
#   project(firmware C ASM)
#   set(CUVIL_TARGET a78)       # or -DCUVIL_TARGET=a78; u74-mc, a78
#   include(path/to/runtime-baremetal/cuvil-runtime.cmake)
#   cuvil_firmware(fw SOURCES main.c ${CMAKE_BINARY_DIR}/kws.o
#                  MODEL_FRAGMENTS ${CMAKE_BINARY_DIR}/kws.ld)
#
# Provides
#   cuvil_rt  static library: the target's boot code and lib/. Linking it
#             brings its target and freestanding compile flags, include
#             directory and link flags (base linker script, -nostdlib,
#             -static; libgcc for GNU compilers) to the firmware.
#   cuvil_firmware(<name> SOURCES <file>... [MODEL_FRAGMENTS <file.ld>...])
#             executable <name>.elf linked with cuvil_rt. Model objects
#             written by cuvilc go into SOURCES, their linker-script
#             fragments into MODEL_FRAGMENTS (absolute, or relative to the
#             current binary directory). It writes
#             <binary dir>/<name>-ld/cuvil-models.ld with one INCLUDE line
#             per fragment (empty without models) and passes -L for it and
#             the fragments' directories; see linker-scripts/README.md.
# Cache variables: CUVIL_TARGET, CUVIL_LINKER_SCRIPT (default
# linker-scripts/<target>-qemu.ld).

include_guard(GLOBAL)

set(CUVIL_TARGET "${CUVIL_TARGET}" CACHE STRING "cuvil target: u74-mc or a78")
set(CUVIL_RT_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(CUVIL_LINKER_SCRIPT
  "${CUVIL_RT_DIR}/../linker-scripts/${CUVIL_TARGET}-qemu.ld"
  CACHE FILEPATH "Base linker script of the board")

if(CUVIL_TARGET STREQUAL "u74-mc")
  set(_cuvil_arch_flags -march=rv64gc_zba_zbb -mabi=lp64d -mcmodel=medany)
elseif(CUVIL_TARGET STREQUAL "a78")
  set(_cuvil_arch_flags -mcpu=cortex-a78)
else()
  message(FATAL_ERROR
    "cuvil-runtime.cmake: set CUVIL_TARGET to u74-mc or a78 (got '${CUVIL_TARGET}')")
endif()

enable_language(ASM)

file(GLOB _cuvil_rt_sources CONFIGURE_DEPENDS
  "${CUVIL_RT_DIR}/boot/${CUVIL_TARGET}/*.S"
  "${CUVIL_RT_DIR}/boot/${CUVIL_TARGET}/*.c"
  "${CUVIL_RT_DIR}/lib/*.c")
add_library(cuvil_rt STATIC ${_cuvil_rt_sources})
target_include_directories(cuvil_rt PUBLIC "${CUVIL_RT_DIR}/include")
set_target_properties(cuvil_rt PROPERTIES
  OUTPUT_NAME cuvil-rt C_STANDARD 11 C_EXTENSIONS OFF)

# -fno-math-errno: there is no errno, and with it clang keeps
# __builtin_fma/__builtin_sqrt as libm calls instead of instructions.
target_compile_options(cuvil_rt PUBLIC
  ${_cuvil_arch_flags} -ffreestanding -fno-math-errno -fno-stack-protector
  -fno-common -fno-unwind-tables -fno-asynchronous-unwind-tables
  -ffunction-sections -fdata-sections)
# The runtime is always optimised, whatever the firmware's build type.
target_compile_options(cuvil_rt PRIVATE -O2 -g -Wall -Wextra)
target_link_options(cuvil_rt INTERFACE
  ${_cuvil_arch_flags} -nostdlib -static -Wl,--gc-sections
  -T "${CUVIL_LINKER_SCRIPT}")

if(CMAKE_C_COMPILER_ID STREQUAL "Clang")
  target_link_options(cuvil_rt INTERFACE -fuse-ld=lld)
elseif(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  # Some GCC versions turn copy/fill loops into memcpy/memset calls even in
  # freestanding code (GCC bug 56888); mem.c must not call itself.
  set_source_files_properties("${CUVIL_RT_DIR}/lib/mem.c" PROPERTIES
    COMPILE_OPTIONS -fno-tree-loop-distribute-patterns)
  # GNU ld 2.39+ warns about the single RWX segment of a RAM-only image.
  target_link_options(cuvil_rt INTERFACE -Wl,--no-warn-rwx-segments)
  target_link_libraries(cuvil_rt INTERFACE gcc)
endif()

function(cuvil_firmware name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;MODEL_FRAGMENTS")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_SOURCES)
    message(FATAL_ERROR
      "cuvil_firmware(${name} SOURCES <file>... [MODEL_FRAGMENTS <file.ld>...])")
  endif()

  add_executable(${name} ${arg_SOURCES})
  set_target_properties(${name} PROPERTIES SUFFIX ".elf")
  target_link_libraries(${name} PRIVATE cuvil_rt)

  set(models_dir "${CMAKE_CURRENT_BINARY_DIR}/${name}-ld")
  set(models_text "")
  set(search_dirs "${models_dir}")
  set(fragments "")
  foreach(fragment IN LISTS arg_MODEL_FRAGMENTS)
    get_filename_component(fragment "${fragment}" ABSOLUTE
      BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    get_filename_component(fragment_name "${fragment}" NAME)
    get_filename_component(fragment_dir "${fragment}" DIRECTORY)
    string(APPEND models_text "INCLUDE ${fragment_name}\n")
    list(APPEND search_dirs "${fragment_dir}")
    list(APPEND fragments "${fragment}")
  endforeach()
  list(REMOVE_DUPLICATES search_dirs)
  # Written at generate time, and only when the text changes.
  file(GENERATE OUTPUT "${models_dir}/cuvil-models.ld"
    CONTENT "${models_text}")

  list(TRANSFORM search_dirs PREPEND "-L")
  target_link_options(${name} PRIVATE ${search_dirs})
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS
    "${CUVIL_LINKER_SCRIPT}" "${models_dir}/cuvil-models.ld" ${fragments})
endfunction()
