# cuvil-runtime.cmake: the cuvil bare-metal runtime and model build rules for
# CMake firmware projects, configured with one of the toolchain files in
# cmake/toolchains/:
#
#   cmake_minimum_required(VERSION 3.20)
#   project(firmware C ASM)
#   set(CUVIL_TARGET a78)       # or -DCUVIL_TARGET=a78; u74-mc, a78
#   include(path/to/runtime-baremetal/cuvil-runtime.cmake)
#   cuvil_firmware(fw SOURCES main.c)
#   cuvil_add_model(fw NAME kws MODEL kws.onnx)  # main.c includes "kws.h"
#
# Provides
#   cuvil_rt  static library: the target's boot code and lib/. Linking it
#             brings its target and freestanding compile flags, include
#             directory and link flags (base linker script, -nostdlib,
#             -static; libgcc for GNU compilers) to the firmware.
#   cuvil_firmware(<name> SOURCES <file>... [MODEL_FRAGMENTS <file.ld>...])
#             executable <name>.elf linked with cuvil_rt. It writes
#             <binary dir>/<name>-ld/cuvil-models.ld with one INCLUDE line
#             per model fragment (empty without models) and passes -L for
#             it and the fragments' directories; see linker-scripts/README.md.
#             The fragments are the target property CUVIL_MODEL_FRAGMENTS:
#             cuvil_add_model appends to it, and MODEL_FRAGMENTS adds
#             fragments of models built some other way (absolute, or
#             relative to the current binary directory; their objects go
#             into SOURCES).
#   cuvil_add_model(<firmware> NAME <c-name> MODEL <file.onnx>
#                   [TARGET <cuvil-target>] [OPTIONS <cuvilc build args>...]
#                   [OUTPUT_DIR <dir>])
#             compiles the model at build time with
#               ${CUVILC} build MODEL --target TARGET --name NAME
#                   --out OUTPUT_DIR/NAME.o OPTIONS...
#             (again when the model, the compiler or this command line
#             changes) and adds it to
#             <firmware>, a cuvil_firmware target of the same directory:
#             NAME.o to its sources, OUTPUT_DIR to its include directories
#             (NAME.h exists before any of its sources is compiled) and
#             NAME.ld to its models script. TARGET defaults to CUVIL_TARGET,
#             OUTPUT_DIR to <binary dir>/<firmware>-models (relative paths:
#             to the current binary directory; MODEL: to the current source
#             directory).
#   cuvil_link_plan(<firmware> [EXCLUSIVE <a,b[,...]>...]
#                   [OPTIONS <cuvilc link-plan args>...])
#             after the firmware's cuvil_add_model calls: places its models
#             together with `cuvilc link-plan` from their build reports
#             (NAME.json, which cuvil_add_model writes): each EXCLUSIVE
#             group (models the firmware never runs at the same time)
#             shares its arenas, and the plan's fragment cuvil-system.ld
#             (header cuvil-system.h, in the models' OUTPUT_DIR of the
#             first model) replaces the models' own in the models script.
#             See docs/deployment.md.
# Cache variables: CUVIL_TARGET, CUVILC (default cuvilc, from PATH; a path
# or an executable target of the project), CUVIL_LINKER_SCRIPT (default
# linker-scripts/<target>-qemu.ld). For a board described by its own target
# file (docs/targets.md): CUVIL_RT_ARCH (its llvm.clang_flags) and
# CUVIL_RT_BOOT (boot code: u74-mc or a78), as for runtime.mk.

include_guard(GLOBAL)

set(CUVIL_TARGET "${CUVIL_TARGET}" CACHE STRING
  "cuvil target: u74-mc, a78, or a target file's path")
set(CUVIL_RT_ARCH "" CACHE STRING
  "CPU flags of another board: its target file's llvm.clang_flags")
set(CUVIL_RT_BOOT "" CACHE STRING
  "Boot code of runtime-baremetal/boot/ (default: CUVIL_TARGET)")
set(CUVILC cuvilc CACHE FILEPATH "The cuvilc compiler")
set(CUVIL_RT_DIR "${CMAKE_CURRENT_LIST_DIR}")
set(CUVIL_LINKER_SCRIPT
  "${CUVIL_RT_DIR}/../linker-scripts/${CUVIL_TARGET}-qemu.ld"
  CACHE FILEPATH "Base linker script of the board")

set(_cuvil_boot "${CUVIL_RT_BOOT}")
if(NOT _cuvil_boot)
  set(_cuvil_boot "${CUVIL_TARGET}")
endif()
if(CUVIL_RT_ARCH)
  separate_arguments(_cuvil_arch_flags UNIX_COMMAND "${CUVIL_RT_ARCH}")
elseif(CUVIL_TARGET STREQUAL "u74-mc")
  set(_cuvil_arch_flags -march=rv64gc_zba_zbb -mabi=lp64d -mcmodel=medany)
elseif(CUVIL_TARGET STREQUAL "a78")
  set(_cuvil_arch_flags -mcpu=cortex-a78)
else()
  message(FATAL_ERROR
    "cuvil-runtime.cmake: CUVIL_TARGET '${CUVIL_TARGET}' is not u74-mc or "
    "a78: set CUVIL_RT_ARCH (its llvm.clang_flags) and CUVIL_RT_BOOT")
endif()
if(NOT EXISTS "${CUVIL_RT_DIR}/boot/${_cuvil_boot}/start.S")
  message(FATAL_ERROR
    "cuvil-runtime.cmake: no boot code '${_cuvil_boot}' in "
    "${CUVIL_RT_DIR}/boot (CUVIL_RT_BOOT: u74-mc or a78)")
endif()

enable_language(ASM)

file(GLOB _cuvil_rt_sources CONFIGURE_DEPENDS
  "${CUVIL_RT_DIR}/boot/${_cuvil_boot}/*.S"
  "${CUVIL_RT_DIR}/boot/${_cuvil_boot}/*.c"
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

# Appends the linker-script fragment <fragment> (absolute) to <firmware>'s
# models script: its name goes into an INCLUDE line, its directory into the
# linker's search path, and the link depends on it.
function(_cuvil_add_fragment firmware fragment)
  get_filename_component(fragment_name "${fragment}" NAME)
  get_filename_component(fragment_dir "${fragment}" DIRECTORY)
  set_property(TARGET ${firmware} APPEND PROPERTY
    CUVIL_MODEL_FRAGMENTS "${fragment}")
  set_property(TARGET ${firmware} APPEND PROPERTY
    _CUVIL_MODEL_FRAGMENT_NAMES "${fragment_name}")
  # Link options are de-duplicated: one -L per directory.
  target_link_options(${firmware} PRIVATE "-L${fragment_dir}")
  set_property(TARGET ${firmware} APPEND PROPERTY LINK_DEPENDS "${fragment}")
endfunction()

function(cuvil_firmware name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "SOURCES;MODEL_FRAGMENTS")
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_SOURCES)
    message(FATAL_ERROR
      "cuvil_firmware(${name} SOURCES <file>... [MODEL_FRAGMENTS <file.ld>...])")
  endif()

  add_executable(${name} ${arg_SOURCES})
  set_target_properties(${name} PROPERTIES SUFFIX ".elf")
  target_link_libraries(${name} PRIVATE cuvil_rt)
  # Marks the target for cuvil_add_model.
  set_property(TARGET ${name} PROPERTY CUVIL_FIRMWARE TRUE)
  set_property(TARGET ${name} PROPERTY CUVIL_MODEL_FRAGMENTS "")
  set_property(TARGET ${name} PROPERTY _CUVIL_MODEL_FRAGMENT_NAMES "")

  set(models_dir "${CMAKE_CURRENT_BINARY_DIR}/${name}-ld")
  target_link_options(${name} PRIVATE "-L${models_dir}")
  set_property(TARGET ${name} APPEND PROPERTY LINK_DEPENDS
    "${CUVIL_LINKER_SCRIPT}" "${models_dir}/cuvil-models.ld")
  foreach(fragment IN LISTS arg_MODEL_FRAGMENTS)
    get_filename_component(fragment "${fragment}" ABSOLUTE
      BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    _cuvil_add_fragment(${name} "${fragment}")
  endforeach()

  # One "INCLUDE name.ld" line per fragment, nothing without fragments. The
  # list is read at generate time, so that cuvil_add_model may come after
  # this call; the file is written only when its text changes.
  set(names "$<TARGET_PROPERTY:${name},_CUVIL_MODEL_FRAGMENT_NAMES>")
  file(GENERATE OUTPUT "${models_dir}/cuvil-models.ld"
    CONTENT "$<$<BOOL:${names}>:INCLUDE $<JOIN:${names},\nINCLUDE >\n>")
endfunction()

function(cuvil_add_model firmware)
  set(usage "cuvil_add_model(<firmware> NAME <c-name> MODEL <file.onnx> \
[TARGET <cuvil-target>] [OPTIONS <cuvilc build args>...] [OUTPUT_DIR <dir>])")
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "NAME;MODEL;TARGET;OUTPUT_DIR"
    "OPTIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cuvil_add_model: unexpected arguments "
      "'${arg_UNPARSED_ARGUMENTS}'; usage: ${usage}")
  endif()
  if(NOT TARGET ${firmware})
    message(FATAL_ERROR "cuvil_add_model: '${firmware}' is not a target; "
      "create it first with cuvil_firmware(${firmware} SOURCES ...)")
  endif()
  get_target_property(is_firmware ${firmware} CUVIL_FIRMWARE)
  if(NOT is_firmware)
    message(FATAL_ERROR "cuvil_add_model: '${firmware}' was not made by "
      "cuvil_firmware(), so it has no models script")
  endif()
  # Custom command outputs are only known to targets of their directory.
  get_target_property(firmware_dir ${firmware} SOURCE_DIR)
  if(NOT firmware_dir STREQUAL CMAKE_CURRENT_SOURCE_DIR)
    message(FATAL_ERROR "cuvil_add_model: call it in ${firmware_dir}, "
      "the directory that defines '${firmware}'")
  endif()
  if(NOT arg_NAME)
    message(FATAL_ERROR "cuvil_add_model(${firmware}): NAME is missing "
      "(the model's C name, as in cuvil_NAME_run); usage: ${usage}")
  endif()
  if(NOT arg_NAME MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "cuvil_add_model(${firmware}): NAME '${arg_NAME}' "
      "is not a C identifier")
  endif()
  if(NOT arg_MODEL)
    message(FATAL_ERROR "cuvil_add_model(${firmware} NAME ${arg_NAME}): "
      "MODEL is missing (the .onnx file); usage: ${usage}")
  endif()
  get_filename_component(model "${arg_MODEL}" ABSOLUTE
    BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "cuvil_add_model(${firmware} NAME ${arg_NAME}): "
      "model '${model}' does not exist")
  endif()
  set(target "${arg_TARGET}")
  if(NOT target)
    set(target "${CUVIL_TARGET}")
  endif()
  set(dir "${arg_OUTPUT_DIR}")
  if(NOT dir)
    set(dir "${firmware}-models")
  endif()
  get_filename_component(dir "${dir}" ABSOLUTE
    BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")

  # The compiler is a prerequisite when it is a target of the project or a
  # path; one found in PATH at build time is not.
  set(cuvilc_dep "")
  if(TARGET "${CUVILC}" OR CUVILC MATCHES "/")
    set(cuvilc_dep "${CUVILC}")
  endif()

  get_target_property(planned ${firmware} _CUVIL_LINK_PLAN)
  if(planned)
    message(FATAL_ERROR "cuvil_add_model(${firmware} NAME ${arg_NAME}): "
      "call it before cuvil_link_plan(${firmware}), which plans the "
      "memory of the models added so far")
  endif()

  set(obj "${dir}/${arg_NAME}.o")
  set(header "${dir}/${arg_NAME}.h")
  set(fragment "${dir}/${arg_NAME}.ld")
  set(report "${dir}/${arg_NAME}.json")
  set(command "${CUVILC}" build "${model}" --target "${target}"
    --name "${arg_NAME}" --out "${obj}" --report "${report}" ${arg_OPTIONS})
  # NAME.cmd holds the command line, rewritten only when it changes: the
  # Makefile generators do not rerun a custom command whose command changed.
  set(command_file "${dir}/${arg_NAME}.cmd")
  string(REPLACE ";" " " command_text "${command}")
  file(GENERATE OUTPUT "${command_file}" CONTENT "${command_text}\n")
  add_custom_command(
    OUTPUT "${obj}" "${header}" "${fragment}" "${report}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
    COMMAND ${command}
    DEPENDS "${model}" ${cuvilc_dep} "${command_file}"
    COMMENT "cuvilc: compiling model ${arg_NAME} (${model}) for ${target}"
    VERBATIM)

  # The object is an input of the link, like any other object file.
  set_source_files_properties("${obj}" PROPERTIES
    EXTERNAL_OBJECT TRUE GENERATED TRUE)
  target_sources(${firmware} PRIVATE "${obj}")
  target_include_directories(${firmware} PRIVATE "${dir}")
  # The firmware's sources may include NAME.h: a target that builds the
  # model first. (Later changes of the header recompile the sources that
  # include it through the compiler's dependency files.)
  set(model_target "${firmware}_cuvil_${arg_NAME}")
  add_custom_target(${model_target}
    DEPENDS "${obj}" "${header}" "${fragment}")
  add_dependencies(${firmware} ${model_target})
  _cuvil_add_fragment(${firmware} "${fragment}")
  set_property(TARGET ${firmware} APPEND PROPERTY _CUVIL_MODEL_REPORTS
    "${report}")
  if(NOT TARGET ${firmware}_cuvil_models)
    add_custom_target(${firmware}_cuvil_models)
  endif()
  add_dependencies(${firmware}_cuvil_models ${model_target})
endfunction()

function(cuvil_link_plan firmware)
  set(usage "cuvil_link_plan(<firmware> [EXCLUSIVE <a,b[,...]>...] \
[OPTIONS <cuvilc link-plan args>...])")
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "EXCLUSIVE;OPTIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cuvil_link_plan: unexpected arguments "
      "'${arg_UNPARSED_ARGUMENTS}'; usage: ${usage}")
  endif()
  if(NOT TARGET ${firmware})
    message(FATAL_ERROR "cuvil_link_plan: '${firmware}' is not a target")
  endif()
  get_target_property(reports ${firmware} _CUVIL_MODEL_REPORTS)
  if(NOT reports)
    message(FATAL_ERROR "cuvil_link_plan(${firmware}): no models; add them "
      "first with cuvil_add_model(${firmware} NAME ... MODEL ...)")
  endif()
  get_target_property(planned ${firmware} _CUVIL_LINK_PLAN)
  if(planned)
    message(FATAL_ERROR "cuvil_link_plan(${firmware}): called twice")
  endif()
  set_property(TARGET ${firmware} PROPERTY _CUVIL_LINK_PLAN TRUE)

  list(GET reports 0 first)
  get_filename_component(dir "${first}" DIRECTORY)
  set(fragment "${dir}/cuvil-system.ld")
  set(header "${dir}/cuvil-system.h")
  set(command "${CUVILC}" link-plan ${reports})
  foreach(group IN LISTS arg_EXCLUSIVE)
    list(APPEND command --exclusive "${group}")
  endforeach()
  list(APPEND command --out "${fragment}" --header "${header}" ${arg_OPTIONS})
  set(command_file "${dir}/cuvil-system.cmd")
  string(REPLACE ";" " " command_text "${command}")
  file(GENERATE OUTPUT "${command_file}" CONTENT "${command_text}\n")
  set(cuvilc_dep "")
  if(TARGET "${CUVILC}" OR CUVILC MATCHES "/")
    set(cuvilc_dep "${CUVILC}")
  endif()
  add_custom_command(
    OUTPUT "${fragment}" "${header}"
    COMMAND ${command}
    DEPENDS ${reports} ${cuvilc_dep} "${command_file}"
    COMMENT "cuvilc: planning the memory of ${firmware}'s models"
    VERBATIM)
  add_custom_target(${firmware}_cuvil_link_plan
    DEPENDS "${fragment}" "${header}")
  add_dependencies(${firmware}_cuvil_link_plan ${firmware}_cuvil_models)
  add_dependencies(${firmware} ${firmware}_cuvil_link_plan)
  # The models script INCLUDEs the plan's fragment only.
  set_property(TARGET ${firmware} PROPERTY _CUVIL_MODEL_FRAGMENT_NAMES "")
  _cuvil_add_fragment(${firmware} "${fragment}")
endfunction()
