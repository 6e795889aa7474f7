# runtime.mk: build glue for firmware Makefiles (GNU make).
#
# Builds libcuvil-rt.a (boot code of one target + lib/) and tells the
# firmware how to compile and link against it. Usage:
#
#   CUVIL_TARGET := u74-mc                  # or a78
#   CC           := clang-19                # or riscv64-unknown-elf-gcc,
#                                           #    aarch64-linux-gnu-gcc
#   CUVIL_RT_DIR := path/to/runtime-baremetal
#   CUVIL_RT_BUILD := build/cuvil-rt        # objects, library, models script
#   CUVIL_MODEL_LDS := build/kws.ld         # cuvilc fragments, may be empty
#   include $(CUVIL_RT_DIR)/runtime.mk
#
#   build/%.o: src/%.c
#           $(CC) $(CUVIL_RT_CFLAGS) -O2 -c $< -o $@
#   build/fw.elf: build/main.o build/kws.o $(CUVIL_RT_LINK_DEPS)
#           $(CC) $(CUVIL_RT_LDFLAGS) build/main.o build/kws.o \
#               $(CUVIL_RT_LDLIBS) -o $@
#
# Inputs (CUVIL_TARGET and CC are required):
#   CUVIL_RT_BOOT       boot code, boot/<name>/ (default: CUVIL_TARGET)
#   CUVIL_RT_ARCH       target flags of the CPU, as the target file's
#                       llvm.clang_flags (default: u74-mc's or a78's; needed
#                       for any other board)
#   CUVIL_RT_TRIPLE     clang's --target (default: u74-mc's or a78's;
#                       needed for another board built with clang)
#   CUVIL_RT_DIR        this directory (default: where this file is)
#   CUVIL_RT_BUILD      output directory (default: build/cuvil-rt/TARGET)
#   CUVIL_MODEL_LDS     linker-script fragments written by cuvilc
#   CUVIL_LINKER_SCRIPT base script (default: linker-scripts/TARGET-qemu.ld)
#   CUVIL_RT_AR         archiver (default: llvm-ar-N for clang-N, else the
#                       ar beside the GNU cross compiler)
# Outputs:
#   CUVIL_RT_LIB        the library
#   CUVIL_RT_CFLAGS     target, ABI and freestanding flags and the include
#                       path: use them for every C file of the firmware
#                       (no -O or warning flags: those are the firmware's)
#   CUVIL_RT_LDFLAGS    link flags: target, -nostdlib -static, the base
#                       script, the models script's search path
#   CUVIL_RT_LDLIBS     goes after the firmware's objects: the library (and
#                       libgcc for GNU compilers)
#   CUVIL_RT_LINK_DEPS  prerequisites of the link: library, scripts
#
# The models script $(CUVIL_RT_BUILD)/cuvil-models.ld has one
# "INCLUDE name.ld" line per CUVIL_MODEL_LDS entry (none without models);
# it is rewritten only when that list changes. See linker-scripts/README.md.

ifndef CUVIL_TARGET
$(error runtime.mk: set CUVIL_TARGET to u74-mc, a78 or your board's name)
endif

# The rules below must not become the including Makefile's default goal.
cuvil_rt_default_goal := $(.DEFAULT_GOAL)

# Evaluated now, while this file is the last one make has read.
ifndef CUVIL_RT_DIR
CUVIL_RT_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
endif
CUVIL_RT_BUILD ?= build/cuvil-rt/$(CUVIL_TARGET)
CUVIL_LINKER_SCRIPT ?= $(CUVIL_RT_DIR)/../linker-scripts/$(CUVIL_TARGET)-qemu.ld

# --- Compiler family ---------------------------------------------------------

ifneq ($(findstring clang,$(notdir $(CC))),)
cuvil_rt_cc := clang
# clang-19 -> llvm-ar-19, clang -> llvm-ar
CUVIL_RT_AR ?= $(subst clang,llvm-ar,$(notdir $(CC)))
else ifneq ($(findstring gcc,$(notdir $(CC))),)
cuvil_rt_cc := gnu
CUVIL_RT_AR ?= $(patsubst %gcc,%ar,$(CC))
else
$(error runtime.mk: CC=$(CC) is neither clang nor a GNU cross gcc)
endif

# --- Target flags ------------------------------------------------------------

# A board described by its own target file (docs/targets.md) gives its
# flags and boot code; the shipped targets have theirs here.
CUVIL_RT_BOOT ?= $(CUVIL_TARGET)
ifeq ($(CUVIL_TARGET),u74-mc)
CUVIL_RT_ARCH ?= -march=rv64gc_zba_zbb -mabi=lp64d -mcmodel=medany
CUVIL_RT_TRIPLE ?= riscv64-unknown-elf
else ifeq ($(CUVIL_TARGET),a78)
CUVIL_RT_ARCH ?= -mcpu=cortex-a78
CUVIL_RT_TRIPLE ?= aarch64-none-elf
endif
ifeq ($(strip $(CUVIL_RT_ARCH)),)
$(error runtime.mk: CUVIL_TARGET '$(CUVIL_TARGET)' is not u74-mc or a78: set CUVIL_RT_ARCH (its llvm.clang_flags) and CUVIL_RT_BOOT (u74-mc or a78))
endif
ifeq ($(wildcard $(CUVIL_RT_DIR)/boot/$(CUVIL_RT_BOOT)/start.S),)
$(error runtime.mk: no boot code '$(CUVIL_RT_BOOT)' in $(CUVIL_RT_DIR)/boot (CUVIL_RT_BOOT: u74-mc or a78))
endif
cuvil_rt_arch := $(CUVIL_RT_ARCH)

ifeq ($(cuvil_rt_cc),clang)
ifeq ($(strip $(CUVIL_RT_TRIPLE)),)
$(error runtime.mk: set CUVIL_RT_TRIPLE (clang's --target) for board '$(CUVIL_TARGET)')
endif
cuvil_rt_arch := --target=$(CUVIL_RT_TRIPLE) $(cuvil_rt_arch)
cuvil_rt_linker := -fuse-ld=lld
cuvil_rt_libgcc :=
cuvil_rt_mem_flags :=
else
# GNU ld 2.39+ warns about the single RWX segment of a RAM-only image.
cuvil_rt_linker := -Wl,--no-warn-rwx-segments
cuvil_rt_libgcc := -lgcc
# Some GCC versions turn copy/fill loops into memcpy/memset calls even in
# freestanding code (GCC bug 56888); mem.c must not call itself.
cuvil_rt_mem_flags := -fno-tree-loop-distribute-patterns
endif

# aarch64-linux-gnu-gcc targets Linux, where code is position-independent
# and executables are PIE by default.
ifeq ($(cuvil_rt_cc)-$(CUVIL_RT_BOOT),gnu-a78)
cuvil_rt_arch += -fno-pic -mcmodel=small
cuvil_rt_linker += -no-pie
endif

# -fno-math-errno: there is no errno, and with it clang keeps
# __builtin_fma/__builtin_sqrt as libm calls instead of instructions.
CUVIL_RT_CFLAGS := $(cuvil_rt_arch) -ffreestanding -fno-math-errno \
  -fno-stack-protector -fno-common -fno-unwind-tables \
  -fno-asynchronous-unwind-tables -ffunction-sections -fdata-sections \
  -I$(CUVIL_RT_DIR)/include
CUVIL_RT_LIB := $(CUVIL_RT_BUILD)/libcuvil-rt.a
CUVIL_RT_MODELS_LD := $(CUVIL_RT_BUILD)/cuvil-models.ld
CUVIL_RT_LDFLAGS := $(cuvil_rt_arch) $(cuvil_rt_linker) -nostdlib -static \
  -Wl,--gc-sections -T $(CUVIL_LINKER_SCRIPT) -L$(CUVIL_RT_BUILD) \
  $(addprefix -L,$(sort $(patsubst %/,%,$(dir $(CUVIL_MODEL_LDS)))))
CUVIL_RT_LDLIBS := $(CUVIL_RT_LIB) $(cuvil_rt_libgcc)
CUVIL_RT_LINK_DEPS := $(CUVIL_RT_LIB) $(CUVIL_RT_MODELS_LD) \
  $(CUVIL_LINKER_SCRIPT) $(CUVIL_MODEL_LDS)

# --- Library -----------------------------------------------------------------

cuvil_rt_sources := \
  $(wildcard $(CUVIL_RT_DIR)/boot/$(CUVIL_RT_BOOT)/*.S) \
  $(wildcard $(CUVIL_RT_DIR)/boot/$(CUVIL_RT_BOOT)/*.c) \
  $(wildcard $(CUVIL_RT_DIR)/lib/*.c)
# build/cuvil-rt/boot/a78/start.S.o: the suffix keeps start.S and start.c apart.
cuvil_rt_objects := \
  $(patsubst $(CUVIL_RT_DIR)/%,$(CUVIL_RT_BUILD)/obj/%.o,$(cuvil_rt_sources))
cuvil_rt_internal_flags := -std=c11 -O2 -g -Wall -Wextra -MMD -MP

$(CUVIL_RT_LIB): $(cuvil_rt_objects)
	@rm -f $@
	$(CUVIL_RT_AR) rcs $@ $^

$(filter %.c.o,$(cuvil_rt_objects)): $(CUVIL_RT_BUILD)/obj/%.c.o: $(CUVIL_RT_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(CUVIL_RT_CFLAGS) $(cuvil_rt_internal_flags) \
	  $(if $(filter lib/mem.c,$*.c),$(cuvil_rt_mem_flags)) -c $< -o $@

$(filter %.S.o,$(cuvil_rt_objects)): $(CUVIL_RT_BUILD)/obj/%.S.o: $(CUVIL_RT_DIR)/%.S
	@mkdir -p $(@D)
	$(CC) $(CUVIL_RT_CFLAGS) $(cuvil_rt_internal_flags) -c $< -o $@

# Rewritten only when its text changes, so that links stay up to date.
$(CUVIL_RT_MODELS_LD): cuvil-rt-models-force
	@mkdir -p $(@D)
	@: > $@.tmp
	@$(foreach f,$(CUVIL_MODEL_LDS),echo 'INCLUDE $(notdir $(f))' >> $@.tmp;)
	@if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

.PHONY: cuvil-rt-models-force
cuvil-rt-models-force:

-include $(cuvil_rt_objects:.o=.d)

.DEFAULT_GOAL := $(cuvil_rt_default_goal)
