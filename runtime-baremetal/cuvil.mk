# cuvil.mk: build glue for firmware Makefiles (GNU make 4.3+) that compiles
# ONNX models with cuvilc and then includes runtime.mk. One model is one
# name in CUVIL_MODELS plus its NAME_MODEL:
#
#   CUVIL_TARGET := u74-mc                  # or a78
#   CC           := riscv64-unknown-elf-gcc
#   CUVILC       := path/to/cuvilc          # default: cuvilc (from PATH)
#   CUVIL_MODELS := kws                     # C names, one per model
#   kws_MODEL    := kws.onnx
#   kws_FLAGS    := --weights-region FLASH  # optional, more build options
#   CUVIL_MODEL_DIR := build/models         # optional, see below
#   include path/to/runtime-baremetal/cuvil.mk
#
#   build/main.o: src/main.c $(CUVIL_MODEL_HEADERS)   # main.c includes kws.h
#           $(CC) $(CUVIL_RT_CFLAGS) -O2 -c $< -o $@
#   build/fw.elf: build/main.o $(CUVIL_MODEL_OBJS) $(CUVIL_RT_LINK_DEPS)
#           $(CC) $(CUVIL_RT_LDFLAGS) build/main.o $(CUVIL_MODEL_OBJS) \
#               $(CUVIL_RT_LDLIBS) -o $@
#
# For each NAME in CUVIL_MODELS it runs
#   $(CUVILC) build $(NAME_MODEL) --target $(CUVIL_TARGET) --name NAME
#       --out $(CUVIL_MODEL_DIR)/NAME.o $(NAME_FLAGS)
# which writes NAME.o, NAME.h and NAME.ld. The model is rebuilt when its
# .onnx file changes, when CUVILC changes (if CUVILC is a path) and when the
# command line above changes (target, flags; kept in NAME.cmd).
#
# Inputs (set them before the include; CUVIL_TARGET and CC are required):
#   CUVIL_MODELS        model names, valid C identifiers (may be empty)
#   NAME_MODEL          the ONNX file of model NAME (required per model)
#   NAME_FLAGS          extra `cuvilc build` options of model NAME
#   CUVILC              the compiler (default: cuvilc)
#   CUVIL_MODEL_DIR     output directory of the models (default:
#                       $(CUVIL_RT_BUILD)/models if CUVIL_RT_BUILD is set,
#                       else build/cuvil-models/TARGET)
#   CUVIL_MODEL_LDS     more fragments (hand-written, or built elsewhere)
#   CUVIL_EXCLUSIVE     groups of models the firmware never runs at the
#                       same time, each a comma-separated list (kws,vww):
#                       with it (or with CUVIL_LINK_PLAN := 1) the models are
#                       placed together by `cuvilc link-plan` (see
#                       docs/deployment.md): each group shares its arenas,
#                       and one fragment cuvil-system.ld (header
#                       cuvil-system.h) replaces the models' own
#   CUVIL_LINK_PLAN_FLAGS more `cuvilc link-plan` options (--region-map...)
#   and every input of runtime.mk (CUVIL_RT_DIR, CUVIL_RT_BUILD, ...)
# Outputs:
#   CUVIL_MODEL_OBJS    the model objects: link them
#   CUVIL_MODEL_HEADERS the model headers: prerequisites of the firmware's
#                       objects that include them
#   CUVIL_MODEL_CFLAGS  -I$(CUVIL_MODEL_DIR); also added to CUVIL_RT_CFLAGS
#   CUVIL_MODEL_LDS     the models' fragments are appended, so runtime.mk
#                       writes one "INCLUDE NAME.ld" line per model (with a
#                       link plan: the one line "INCLUDE cuvil-system.ld";
#                       cuvil-system.h is then in CUVIL_MODEL_HEADERS)
#   and every output of runtime.mk (CUVIL_RT_CFLAGS, CUVIL_RT_LDFLAGS, ...)
#
# Like runtime.mk, this file does not change the including Makefile's
# default goal. See linker-scripts/README.md for the models script.

ifndef CUVIL_TARGET
$(error cuvil.mk: set CUVIL_TARGET to u74-mc or a78)
endif

# The rules below must not become the including Makefile's default goal.
cuvil_mk_default_goal := $(.DEFAULT_GOAL)

# Evaluated now, while this file is the last one make has read.
ifndef CUVIL_RT_DIR
CUVIL_RT_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
endif

CUVILC ?= cuvilc
ifdef CUVIL_RT_BUILD
CUVIL_MODEL_DIR ?= $(CUVIL_RT_BUILD)/models
else
CUVIL_MODEL_DIR ?= build/cuvil-models/$(CUVIL_TARGET)
endif
CUVIL_MODEL_DIR := $(patsubst %/,%,$(CUVIL_MODEL_DIR))

# --- Checks ------------------------------------------------------------------

# Every model needs its ONNX file, and its name becomes C identifiers
# (cuvil_NAME_run) and file names.
$(foreach m,$(CUVIL_MODELS),$(if $($(m)_MODEL),,\
  $(error cuvil.mk: set $(m)_MODEL to the ONNX file of model '$(m)' in CUVIL_MODELS)))
cuvil_mk_bad_names := $(strip $(foreach m,$(CUVIL_MODELS),\
  $(if $(or $(findstring /,$(m)),$(findstring -,$(m)),$(findstring .,$(m))),$(m))))
ifneq ($(cuvil_mk_bad_names),)
$(error cuvil.mk: model names must be C identifiers: $(cuvil_mk_bad_names))
endif
ifneq ($(words $(CUVIL_MODELS)),$(words $(sort $(CUVIL_MODELS))))
$(error cuvil.mk: CUVIL_MODELS names a model twice: $(CUVIL_MODELS))
endif

# --- Outputs -----------------------------------------------------------------

CUVIL_MODEL_OBJS := $(foreach m,$(CUVIL_MODELS),$(CUVIL_MODEL_DIR)/$(m).o)
CUVIL_MODEL_HEADERS := $(foreach m,$(CUVIL_MODELS),$(CUVIL_MODEL_DIR)/$(m).h)
CUVIL_MODEL_CFLAGS := -I$(CUVIL_MODEL_DIR)
# With a link plan, each build also writes its report (NAME.json), which
# `cuvilc link-plan` reads.
cuvil_mk_plan := $(if $(or $(strip $(CUVIL_EXCLUSIVE)),$(filter 1,$(CUVIL_LINK_PLAN))),1)
cuvil_mk_system := $(CUVIL_MODEL_DIR)/cuvil-system
# runtime.mk reads CUVIL_MODEL_LDS when it is included: the models script
# and the -L options come from this list.
ifeq ($(cuvil_mk_plan),1)
CUVIL_MODEL_LDS += $(cuvil_mk_system).ld
CUVIL_MODEL_HEADERS += $(cuvil_mk_system).h
else
CUVIL_MODEL_LDS += $(foreach m,$(CUVIL_MODELS),$(CUVIL_MODEL_DIR)/$(m).ld)
endif

include $(CUVIL_RT_DIR)/runtime.mk

CUVIL_RT_CFLAGS += $(CUVIL_MODEL_CFLAGS)

# --- Rules -------------------------------------------------------------------

# A compiler given as a path is a prerequisite; one found in PATH is not.
cuvil_mk_cuvilc_dep := $(if $(findstring /,$(CUVILC)),$(CUVILC))

# The command line of model $(1) (no trailing blank without flags).
cuvil_mk_command = $(CUVILC) build $($(1)_MODEL) --target $(CUVIL_TARGET) \
  --name $(1) --out $(CUVIL_MODEL_DIR)/$(1).o$(if $(cuvil_mk_plan), \
  --report $(CUVIL_MODEL_DIR)/$(1).json)$(if $($(1)_FLAGS), $($(1)_FLAGS))
cuvil_mk_plan_command = $(CUVILC) link-plan \
  $(foreach m,$(CUVIL_MODELS),$(CUVIL_MODEL_DIR)/$(m).json) \
  $(foreach g,$(CUVIL_EXCLUSIVE),--exclusive $(g) )--out $(cuvil_mk_system).ld \
  --header $(cuvil_mk_system).h$(if $(CUVIL_LINK_PLAN_FLAGS), $(CUVIL_LINK_PLAN_FLAGS))

# FILE.cmd holds the command line ($(2)) that made FILE; it is rewritten
# only when the command changes, so a new target or new flags rebuild it.
define cuvil_mk_cmd_rule
$(1).cmd: cuvil-models-force
	@mkdir -p $$(@D)
	@printf '%s\n' '$$(subst ','\'',$(2))' > $$@.tmp
	@if cmp -s $$@.tmp $$@; then rm $$@.tmp; else mv $$@.tmp $$@; fi
endef

# NAME.o, NAME.h and NAME.ld (and NAME.json) are written by one cuvilc run
# (grouped target).
define cuvil_mk_model_rules
$(call cuvil_mk_cmd_rule,$(CUVIL_MODEL_DIR)/$(1),$$(call cuvil_mk_command,$(1)))

$(CUVIL_MODEL_DIR)/$(1).o $(CUVIL_MODEL_DIR)/$(1).h $(CUVIL_MODEL_DIR)/$(1).ld$(if $(cuvil_mk_plan), $(CUVIL_MODEL_DIR)/$(1).json) &: \
    $($(1)_MODEL) $(cuvil_mk_cuvilc_dep) $(CUVIL_MODEL_DIR)/$(1).cmd
	$$(call cuvil_mk_command,$(1))
endef
$(foreach m,$(CUVIL_MODELS),$(eval $(call cuvil_mk_model_rules,$(m))))

# The link plan, from every model's report.
ifeq ($(cuvil_mk_plan),1)
$(eval $(call cuvil_mk_cmd_rule,$(cuvil_mk_system),$$(cuvil_mk_plan_command)))
$(cuvil_mk_system).ld $(cuvil_mk_system).h &: \
    $(foreach m,$(CUVIL_MODELS),$(CUVIL_MODEL_DIR)/$(m).json) \
    $(cuvil_mk_cuvilc_dep) $(cuvil_mk_system).cmd
	$(cuvil_mk_plan_command)
endif

.PHONY: cuvil-models-force
cuvil-models-force:

.DEFAULT_GOAL := $(cuvil_mk_default_goal)
