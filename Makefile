# cuvil: the two entry points (see README.md) and a few helpers.
#
#   make demo   install what is missing, build, compile an example model for
#               the u74-mc target and boot it in QEMU
#   make test   install what is missing, build, run the whole test suite
#
# Everything is built in $(BUILD) with Ninja; the sanitized build (ASan +
# UBSan, clang-19, with the libFuzzer targets) in $(SANITIZE_BUILD).

BUILD ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CUVILC := $(abspath $(BUILD))/cuvilc/cuvilc
SANITIZE_BUILD ?= $(BUILD)/sanitize
FUZZ_SECONDS ?= 300

.PHONY: all deps configure build demo-build sanitize test fuzz demo demo-a78 demo-update memory-report profile-report conformance conformance-quick bench ptq-accuracy clean help format tidy

all: build

help:
	@echo "make demo       build, compile the example CNN for u74-mc, boot it in QEMU"
	@echo "make test       build and run every test (unit, CLI, boot, end-to-end), then"
	@echo "                the unit, CLI, robustness and fuzz tests under ASan+UBSan"
	@echo "make build      configure and build only"
	@echo "make sanitize   build the ASan+UBSan tree with the fuzz targets ($(SANITIZE_BUILD))"
	@echo "make fuzz       run each fuzz target for FUZZ_SECONDS (default 300), report crashes"
	@echo "make demo-a78   the a78 example (CMake + GNU toolchain file)"
	@echo "make demo-update  weight update on u74-mc: boot on v1 in flash, switch to a"
	@echo "                received v2, refuse a damaged v3 (docs/deployment.md)"
	@echo "make memory-report  regenerate docs/memory.md (arena sizes per model)"
	@echo "make profile-report regenerate docs/profile-figures.md and the MobileNetV2 report page"
	@echo "make conformance  run every in-scope ONNX backend test on all targets, refresh docs/conformance.md"
	@echo "make conformance-quick  only the tests of tests/conformance/subset.txt (every op, a few minutes)"
	@echo "make bench      run the benchmark suite (bench/) on all targets, refresh docs/benchmarks.md"
	@echo "make ptq-accuracy  quantize the float benchmark models with cuvilc quantize, refresh the"
	@echo "                 accuracy table of docs/quantization.md"
	@echo "make deps       install the Debian/npm packages the project needs"
	@echo "make format     clang-format the C and C++ sources (.clang-format; make test checks it)"
	@echo "make tidy       clang-tidy the compiler's sources (.clang-tidy)"

deps:
	./scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DCUVIL_WERROR=ON

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# What the demos need, and nothing of the test suite: the compiler and the
# test models with their ONNX Runtime references (the runtime is built by
# each example's own Makefile or CMake project).
demo-build: configure
	cmake --build $(BUILD) -j $(JOBS) --target cuvilc e2e_models

# The sanitized tree: cuvilc, the host kernels, the unit, CLI and
# robustness tests and the fuzz targets (CMakePresets.json, docs/robustness.md).
sanitize: deps
	cmake --preset sanitize -B $(SANITIZE_BUILD)
	cmake --build $(SANITIZE_BUILD) -j $(JOBS)

# Both test trees run; either failing fails the target.
test: build sanitize
	@status=0; \
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) || status=1; \
	ctest --test-dir $(SANITIZE_BUILD) --output-on-failure -j $(JOBS) || status=1; \
	exit $$status

# The sources clang-format keeps (.clang-format) are listed once, in
# tests/lint/check_format.py; the format_check test fails when one of them
# is not formatted.
format: deps
	python3 tests/lint/check_format.py --fix .

# clang-tidy reads each source's flags from a compilation database, which
# lists sources one by one only without the unity build: a tree of its own.
TIDY_BUILD ?= $(BUILD)/tidy
tidy: deps
	cmake -S . -B $(TIDY_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
	  -DCUVIL_UNITY_BUILD=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
	cmake --build $(TIDY_BUILD) -j $(JOBS) --target cuvilc
	git ls-files 'cuvilc/*.cpp' | xargs -P $(JOBS) -n 8 clang-tidy-19 -p $(TIDY_BUILD) --quiet \
	  --extra-arg=-Wno-deprecated-declarations

fuzz: sanitize
	./scripts/run_fuzzers.sh $(SANITIZE_BUILD) $(FUZZ_SECONDS)

demo: demo-build
	$(MAKE) -C examples/u74-mc-make CUVILC=$(CUVILC) \
	  MODEL=$(abspath $(BUILD))/models/cnn/model.onnx \
	  INPUT=$(abspath $(BUILD))/models/cnn/input_0.bin \
	  BUILD=$(abspath $(BUILD))/examples/u74-mc-make run

demo-update: demo-build
	$(MAKE) -C examples/weight-update CUVILC=$(CUVILC) \
	  MODEL_DIR=$(abspath $(BUILD))/models/cnn \
	  BUILD=$(abspath $(BUILD))/examples/weight-update run

demo-a78: demo-build
	cmake -S examples/a78-cmake -B $(BUILD)/examples/a78-cmake \
	  -DCMAKE_TOOLCHAIN_FILE=$(abspath cmake/toolchains/aarch64-gnu.cmake) \
	  -DCUVILC=$(CUVILC) -DCUVIL_MODEL=$(abspath $(BUILD))/models/cnn/model.onnx \
	  -DCUVIL_INPUT=$(abspath $(BUILD))/models/cnn/input_0.bin
	cmake --build $(BUILD)/examples/a78-cmake --target run

conformance: build
	cmake --build $(BUILD) --target conformance

conformance-quick: build
	cmake --build $(BUILD) --target conformance_quick

memory-report: build
	/usr/bin/python3 scripts/memory_report.py --cuvilc $(CUVILC) \
	  --models $(BUILD)/models --out docs/memory.md --jobs $(JOBS)

profile-report: build
	/usr/bin/python3 scripts/profile_report.py --cuvilc $(CUVILC) \
	  --work $(BUILD)/profile-report --out docs/profile-figures.md \
	  --html docs/mobilenet_v2-u74-mc.html

bench: build
	/usr/bin/python3 bench/run_bench.py --cuvilc $(CUVILC) --work $(BUILD)/bench \
	  --results $(BUILD)/bench/results.json
	/usr/bin/python3 scripts/bench_report.py --results $(BUILD)/bench/results.json \
	  --out docs/benchmarks.md

ptq-accuracy: build
	/usr/bin/python3 scripts/ptq_accuracy.py --cuvilc $(CUVILC) --work $(BUILD)/ptq-accuracy \
	  --out docs/quantization.md

clean:
	rm -rf $(BUILD)
