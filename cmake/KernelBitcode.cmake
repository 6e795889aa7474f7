# Compiles the runtime kernels (and the runtime helpers generated code
# calls) to one LLVM bitcode module per target, for embedding in cuvilc.
#
# cuvil_kernel_bitcode(<target-name> <out-var>) reads the triple and the
# clang flags from targets/<target-name>.toml, so a target is described in
# one place.

set(CUVIL_KERNEL_SOURCES_GLOB
  ${PROJECT_SOURCE_DIR}/runtime-baremetal/kernels/*/*.c)
set(CUVIL_KERNEL_EXTRA_SOURCES
  ${PROJECT_SOURCE_DIR}/runtime-baremetal/lib/blob.c
  ${PROJECT_SOURCE_DIR}/runtime-baremetal/lib/digest.c
  ${PROJECT_SOURCE_DIR}/runtime-baremetal/lib/slots.c
  ${PROJECT_SOURCE_DIR}/runtime-baremetal/lib/mem.c)

function(cuvil_toml_string file key out)
  file(STRINGS ${file} line REGEX "^${key} *=")
  if(NOT line)
    message(FATAL_ERROR "${file}: no '${key}'")
  endif()
  string(REGEX REPLACE "^${key} *= *\"([^\"]*)\".*" "\\1" value "${line}")
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

function(cuvil_kernel_bitcode target out)
  set(toml ${PROJECT_SOURCE_DIR}/targets/${target}.toml)
  # The flags are read here, at configure time: an edited target file
  # configures again, or its kernels would keep the old flags.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${toml})
  cuvil_toml_string(${toml} triple triple)
  cuvil_toml_string(${toml} clang_flags flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  file(GLOB kernel_sources CONFIGURE_DEPENDS ${CUVIL_KERNEL_SOURCES_GLOB})
  list(APPEND kernel_sources ${CUVIL_KERNEL_EXTRA_SOURCES})
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/kernels-${target})
  file(GLOB_RECURSE headers CONFIGURE_DEPENDS
    ${PROJECT_SOURCE_DIR}/runtime-baremetal/include/*.h
    ${PROJECT_SOURCE_DIR}/runtime-baremetal/kernels/*.h)
  set(bcs)
  foreach(src ${kernel_sources})
    get_filename_component(base ${src} NAME_WE)
    get_filename_component(parent ${src} DIRECTORY)
    get_filename_component(parent ${parent} NAME)
    set(bc ${dir}/${parent}-${base}.bc)
    # Unoptimised but optimisable IR (no optnone): cuvilc optimises after
    # specialising the kernels on constant shapes.
    add_custom_command(OUTPUT ${bc}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
      COMMAND ${CUVIL_CLANG} --target=${triple} ${flags}
        -std=c11 -O2 -Xclang -disable-llvm-optzns
        -ffreestanding -fno-builtin -fno-math-errno -fno-stack-protector -fno-common
        -fno-exceptions -fno-unwind-tables -fno-asynchronous-unwind-tables
        -Wall -Wextra -Werror
        -I${PROJECT_SOURCE_DIR}/runtime-baremetal/include
        -emit-llvm -c ${src} -o ${bc}
      DEPENDS ${src} ${headers} ${toml}
      COMMENT "Kernel bitcode ${target}: ${parent}/${base}.c"
      VERBATIM)
    list(APPEND bcs ${bc})
  endforeach()
  set(linked ${CMAKE_CURRENT_BINARY_DIR}/kernels-${target}.bc)
  add_custom_command(OUTPUT ${linked}
    COMMAND ${CUVIL_LLVM_LINK} ${bcs} -o ${linked}
    DEPENDS ${bcs}
    COMMENT "Linking kernel bitcode for ${target}"
    VERBATIM)
  set(${out} ${linked} PARENT_SCOPE)
endfunction()
