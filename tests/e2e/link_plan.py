#!/usr/bin/python3
"""Two models sharing their arenas through `cuvilc link-plan`: the test models
mlp and cnn, built with --report, planned with --exclusive mlp,cnn, linked into
one image with tests/e2e/two_models.c by ld.lld and by GNU ld, run under QEMU.

    link_plan.py --cuvilc PATH --models DIR --work DIR --targets u74-mc,a78

For each board target, in WORK/<target>/:

1. `cuvilc build --report` of mlp and cnn, then `cuvilc link-plan` of the two
   reports into system.ld and system.h; the plan must say that the arenas
   are shared, and system.h must compile.
2. The image is linked with cuvil-models.ld INCLUDEing system.ld only, once
   with clang-19 and ld.lld and once with the target's GCC and GNU ld (the
   runtime and the harness built by each, as runtime.mk builds them). In each, cuvil_mlp_arena_<r> and cuvil_cnn_arena_<r> are
   one address for every region both use, and the image runs mlp, cnn, mlp:
   both outputs equal ONNX Runtime's, and mlp's two runs are the same bits.
3. The same through the Make glue: a Makefile that includes
   runtime-baremetal/cuvil.mk with CUVIL_EXCLUSIVE := mlp,cnn (GCC) builds
   the reports, runs link-plan and links with cuvil-system.ld only; its
   image runs as above. The same again through the CMake glue
   (cuvil-runtime.cmake: cuvil_add_model twice, then cuvil_link_plan with
   EXCLUSIVE mlp,cnn), with the target's GNU toolchain file.
4. A plan made from a report whose arena is smaller than its object's (a
   model rebuilt without rerunning link-plan) must fail the link, with both
   linkers, with the fragment's "outgrew the plan" message.

Prints `PASS target (...)` or `FAIL target: reason` per target, then
`N passed, M failed`. Exits 0 if all passed, 1 if any failed, 2 on usage errors.
"""

import json
import pathlib
import re
import shutil
import sys
import tomllib

import run_e2e

MODELS = ("mlp", "cnn")
HARNESS = pathlib.Path(__file__).resolve().parent / "two_models.c"
GNU_CC = {"u74-mc": "riscv64-unknown-elf-gcc", "a78": "aarch64-linux-gnu-gcc"}
NM = "llvm-nm-19"
OUTGREW = "outgrew the plan"


def build_reports(cuvilc, target, models_root, case_dir):
    """cuvilc build of each model with --report; returns {name: report}."""
    reports = {}
    for name in MODELS:
        (case_dir / name).mkdir(parents=True)
        shutil.copyfile(models_root / name / "input_0.bin", case_dir / name / "input_0.bin")
        run_e2e.cuvilc_build([cuvilc, "build", models_root / name / "model.onnx", "--target",
                              target.name, "--name", name, "--out", case_dir / f"{name}.o",
                              "--report", case_dir / f"{name}.json"], f"cuvilc build {name}")
        reports[name] = json.loads((case_dir / f"{name}.json").read_text())
    return reports


def link_plan(cuvilc, case_dir, reports, out):
    return run_e2e.run([cuvilc, "link-plan", *(case_dir / r for r in reports),
                        "--exclusive", ",".join(MODELS), "--out", case_dir / out,
                        "--header", case_dir / "system.h"], "cuvilc link-plan").stdout


def gnu_target(name, work):
    """Board `name` with the GNU toolchain: its runtime, the harness and the
    link by the target's GCC (GNU ld), as runtime.mk builds with CC=gcc."""
    target = run_e2e.load_target(name)
    target.cc = GNU_CC[name]
    target.label = f"{name}-gnu"
    target.prepare(work)
    return target


MAKEFILE = """\
CUVILC := {cuvilc}
CUVIL_TARGET := {target}
CC := {cc}
CUVIL_RT_BUILD := build/rt
CUVIL_MODELS := mlp cnn
mlp_MODEL := {models}/mlp/model.onnx
cnn_MODEL := {models}/cnn/model.onnx
CUVIL_EXCLUSIVE := mlp,cnn
include {repo}/runtime-baremetal/cuvil.mk

build/harness.o: {harness} $(CUVIL_MODEL_HEADERS)
	$(CC) $(CUVIL_RT_CFLAGS) -O2 -c $< -o $@
image.elf: build/harness.o $(CUVIL_MODEL_OBJS) $(CUVIL_RT_LINK_DEPS)
	$(CC) $(CUVIL_RT_LDFLAGS) build/harness.o $(CUVIL_MODEL_OBJS) $(CUVIL_RT_LDLIBS) -o $@
"""


def make_glue(cuvilc, gnu, models_root, reports, case_dir):
    """Build and run the two models through cuvil.mk with CUVIL_EXCLUSIVE."""
    work = case_dir / "make"
    for name in MODELS:
        (work / name).mkdir(parents=True)
        shutil.copyfile(models_root / name / "input_0.bin", work / name / "input_0.bin")
    (work / "Makefile").write_text(MAKEFILE.format(
        cuvilc=cuvilc, target=gnu.name, cc=gnu.cc, models=models_root, repo=run_e2e.REPO,
        harness=HARNESS))
    run_e2e.run(["make", "-C", work, "image.elf"], "make with cuvil.mk")
    included = (work / "build" / "rt" / "cuvil-models.ld").read_text()
    if included != "INCLUDE cuvil-system.ld\n":
        raise run_e2e.CaseError(f"cuvil.mk's cuvil-models.ld is {included!r}, not the plan")
    image = work / "image.elf"
    check_shared(image, reports)
    run_and_compare(gnu, image, work, models_root)


CMAKELISTS = """\
cmake_minimum_required(VERSION 3.20)
project(link_plan_test C ASM)
set(CUVIL_TARGET {target})
include({repo}/runtime-baremetal/cuvil-runtime.cmake)
cuvil_firmware(image SOURCES {harness})
cuvil_add_model(image NAME mlp MODEL {models}/mlp/model.onnx)
cuvil_add_model(image NAME cnn MODEL {models}/cnn/model.onnx)
cuvil_link_plan(image EXCLUSIVE mlp,cnn)
"""
TOOLCHAIN = {"u74-mc": "riscv64-gnu.cmake", "a78": "aarch64-gnu.cmake"}


def cmake_glue(cuvilc, gnu, models_root, reports, case_dir):
    """Build and run the two models through cuvil_link_plan."""
    work = case_dir / "cmake"
    for name in MODELS:
        (work / name).mkdir(parents=True)
        shutil.copyfile(models_root / name / "input_0.bin", work / name / "input_0.bin")
    (work / "src").mkdir()
    (work / "src" / "CMakeLists.txt").write_text(CMAKELISTS.format(
        target=gnu.name, models=models_root, repo=run_e2e.REPO, harness=HARNESS))
    run_e2e.run(["cmake", "-S", work / "src", "-B", work / "build", "-G", "Ninja",
                 f"-DCMAKE_TOOLCHAIN_FILE={run_e2e.REPO}/cmake/toolchains/{TOOLCHAIN[gnu.name]}",
                 f"-DCUVILC={cuvilc}"],
                "cmake configure with cuvil_link_plan")
    run_e2e.run(["cmake", "--build", work / "build"], "cmake build with cuvil_link_plan")
    included = (work / "build" / "image-ld" / "cuvil-models.ld").read_text()
    if included != "INCLUDE cuvil-system.ld\n":
        raise run_e2e.CaseError(f"cuvil_link_plan's cuvil-models.ld is {included!r}")
    image = work / "image.elf"
    shutil.copyfile(work / "build" / "image.elf", image)
    check_shared(image, reports)
    run_and_compare(gnu, image, work, models_root)


def arena_addresses(image):
    """{symbol: address} of the models' arena symbols in image."""
    listing = run_e2e.run([NM, image], f"{NM} {image.name}").stdout
    return {m[2]: int(m[1], 16) for m in
            re.finditer(r"^([0-9a-f]+) \w (cuvil_\w+_arena_\w+?)$", listing, re.MULTILINE)
            if not m[2].endswith("_bytes")}


def check_shared(image, reports):
    """CaseError unless both models' arenas in each region they both use
    are at one address; returns {region: address}."""
    addresses = arena_addresses(image)
    regions = [a["region"] for a in reports["mlp"]["arenas"]
               if any(b["region"] == a["region"] for b in reports["cnn"]["arenas"])]
    if not regions:
        raise run_e2e.CaseError("mlp and cnn have no arena region in common")
    shared = {}
    for region in regions:
        syms = [f"cuvil_{m}_arena_{region.lower()}" for m in MODELS]
        found = [addresses.get(s) for s in syms]
        if None in found or found[0] != found[1]:
            raise run_e2e.CaseError(f"{image.name}: {syms[0]} at {found[0]}, {syms[1]} at "
                                    f"{found[1]}: not one shared arena")
        shared[region] = found[0]
    return shared


def run_and_compare(target, image, case_dir, models_root):
    for name in MODELS:
        (case_dir / name / "out_0.bin").unlink(missing_ok=True)
    run_e2e.run_image(target, image, case_dir)
    for name in MODELS:
        manifest = json.loads((models_root / name / "manifest.json").read_text())
        run_e2e.compare(models_root / name, case_dir / name, manifest["outputs"])


def run_target(cuvilc, target, gnu, models_root, case_dir):
    shutil.rmtree(case_dir, ignore_errors=True)
    reports = build_reports(cuvilc, target, models_root, case_dir)
    summary = link_plan(cuvilc, case_dir, [f"{m}.json" for m in MODELS], "system.ld")
    if "shared" not in summary:
        raise run_e2e.CaseError(f"link-plan shares no arena:\n{summary}")
    # system.h is C the firmware can include.
    (case_dir / "system_h.c").write_text('#include "system.h"\n'
                                         "int groups = CUVIL_SYSTEM_NUM_GROUPS;\n")
    run_e2e.run([run_e2e.CROSS_CC, *target.rt["CUVIL_RT_CFLAGS"], "-Wall", "-Werror", "-c",
                 case_dir / "system_h.c", "-I", case_dir, "-o", case_dir / "system_h.o"],
                "compile system.h")

    lld_image = target.build(case_dir, source=HARNESS, models=MODELS, fragments=["system.ld"])
    shared = check_shared(lld_image, reports)
    run_and_compare(target, lld_image, case_dir, models_root)

    gnu_image = gnu.build(case_dir, source=HARNESS, models=MODELS, fragments=["system.ld"])
    check_shared(gnu_image, reports)
    run_and_compare(gnu, gnu_image, case_dir, models_root)

    make_glue(cuvilc, gnu, models_root, reports, case_dir)
    cmake_glue(cuvilc, gnu, models_root, reports, case_dir)

    # The larger model's report, shrunk: its object no longer fits the plan.
    big = max(MODELS, key=lambda m: max(a["bytes"] for a in reports[m]["arenas"]))
    stale = dict(reports[big])
    stale["arenas"] = [dict(a, bytes=64) for a in reports[big]["arenas"]]
    (case_dir / "stale.json").write_text(json.dumps(stale))
    names = ["stale.json" if m == big else f"{m}.json" for m in MODELS]
    link_plan(cuvilc, case_dir, names, "system.ld")
    for linker in (target, gnu):
        try:
            linker.build(case_dir, source=HARNESS, models=MODELS, fragments=["system.ld"])
            raise run_e2e.CaseError(f"{linker.cc} linked objects that outgrew the plan")
        except run_e2e.CaseError as err:
            if OUTGREW not in str(err):
                raise
    return ", ".join(f"{r} shared at {a:#x}" for r, a in shared.items())


def main():
    args = run_e2e.test_arguments(__doc__, targets_required=True).parse_args()
    try:
        targets = run_e2e.board_targets(args, "link_plan.py", MODELS, GNU_CC)
    except (ValueError, tomllib.TOMLDecodeError) as err:
        print(f"link_plan: error: {err}", file=sys.stderr)
        return 2
    cuvilc = args.cuvilc.resolve()
    work = args.work.resolve()

    def case(target):
        target.prepare(work)
        return run_target(cuvilc, target, gnu_target(target.name, work), args.models.resolve(),
                          work / target.name)

    return run_e2e.run_cases((t.name, lambda t=t: case(t)) for t in targets)


if __name__ == "__main__":
    sys.exit(main())
