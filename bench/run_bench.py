#!/usr/bin/python3
"""cuvil's benchmark suite: the models of bench/models.py on every target.

    run_bench.py --cuvilc PATH --work DIR [--targets host,host-avx512,a78,u74-mc]
                 [--models NAME,...] [--results FILE.json]

For each model (written into WORK/models by bench/models.py) and target:

  host,   cuvilc build --target host (AVX2) or host-avx512 (AVX-512; skipped
  host-   on a CPU without it); bench/host_bench.c times the compiled
  avx512  model (median of N runs after a warm-up, CLOCK_MONOTONIC) and
          bench/ort_bench.js times ONNX Runtime (onnxruntime-node, one
          intra-op thread, every graph optimisation) on the same input, in the
          same invocation, in three alternating rounds (each side's figure
          is the median of its round medians); the ratio is cuvil / ORT
          (< 1: cuvil is faster).
          bench/fma_peak.c measures the machine's multiply-adds per second
          for the target's x86-64 level: MACs / that is the model's floor,
          the least time any code of that level could take.
  a78,    the model linked into runtime-baremetal/runner/runner.c with the board's runtime
  u74-mc  and run under QEMU with -icount shift=0: the instructions retired
          between the entry and the exit of the run call (the runner reads
          the counters around it), and instructions per MAC.
          The convolution models (goals.MULTICORE) are also built with
          --cores 2 and 4 and run with the runner's team measurement
          (-DCUVIL_RUNNER_TEAM_MEASURE: every share on one core, counted):
          per core, the instructions it would retire, and the critical path
          (per layer the largest share, plus everything outside the shares,
          which the first core runs): a run on that many cores takes as long
          as its critical path, barrier waits aside.

and for every target: the wall time of `cuvilc build` (median of 3 builds
of the object, header and fragment, one after another; the machine should
be otherwise idle), .text bytes of model.o (its executable sections),
next to those of the same model built with --kernels portable,
weight blob bytes, arena bytes and their lower bound (from cuvilc --report),
and the MACs of one inference. Every output is checked against ONNX
Runtime's without graph optimisations (tests/reference/run_ort.js, as in
the tests; rtol 1e-3, atol 1e-4, or the quantized output's steps): a model
whose outputs differ gets no
figures, only the reason. Instruction counts are deterministic; latencies
are not (the host is whatever machine runs this).

--results writes everything as JSON; scripts/bench_report.py turns it into
docs/benchmarks.md (`make bench` does both). --guard FILE.json ({target:
{model: instructions}}) turns the run into a regression test: a board
count more than --margin (default 3%) above its recorded value fails (the
counts are deterministic, so only a code change moves them), and so does
one over a goal in instructions per MAC (bench/goals.py) that its recorded
value meets. A guard run measures only what the guard checks: one build
per model and board, its run and its outputs (no --kernels portable build,
no timed builds, no multicore runs: e2e_*-cores4 tests those). Exits 1 if
any model failed on any target or broke its guard.
"""

import argparse
import os
import json
import pathlib
import re
import shutil
import subprocess
import sys
import time

import numpy as np

BENCH = pathlib.Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import run_e2e  # noqa: E402  (targets, runtime build, image build and QEMU run)
from run_e2e import CaseError, run  # noqa: E402

sys.path.insert(0, str(BENCH))
import models as bench_models  # noqa: E402
from goals import GOALS, MULTICORE  # noqa: E402

HOST_BENCH = BENCH / "host_bench.c"
FMA_PEAK = BENCH / "fma_peak.c"
ORT_BENCH = BENCH / "ort_bench.js"
ORT_REFERENCE = REPO / "tests" / "reference" / "run_ort.js"
READELF = "llvm-readelf-19"
RTOL, ATOL = 1e-3, 1e-4
# Host timing: enough runs for a stable median, bounded for the big models.
TARGET_BENCH_NS = 1.5e9
RUN_TIMEOUT_S = 900
SECTION = re.compile(r"^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+[0-9a-f]+\s+([0-9a-f]+)\s+"
                     r"[0-9a-f]+\s+(\S*)", re.MULTILINE)


def text_bytes(obj):
    """Bytes of the executable (SHF_EXECINSTR) sections of an object."""
    listing = run([READELF, "-S", "-W", obj], f"{READELF} -S").stdout
    return sum(int(m[2], 16) for m in SECTION.finditer(listing) if "X" in m[3])


COMPILE_RUNS = 3  # builds timed per model and target (their median is reported)


def compile_model(cuvilc, target, model_dir, case_dir, counts_only=False):
    """cuvilc build with a report, and once more with the portable kernels
    (for the code-size comparison) and COMPILE_RUNS times for the compile
    time, unless counts_only; returns the facts for the table."""
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    report = case_dir / "report.json"
    build = [cuvilc, "build", model_dir / "model.onnx", "--target", target, "--name", "model"]
    # MobileNetV2's 6 MB of activations spill from u74-mc's 2 MiB L2 LIM
    # into DDR, which cuvilc warns about: the figures are of that plan.
    spill = ("spilled to",)
    run_e2e.cuvilc_build([*build, "--out", case_dir / "model.o", "--report", report],
                         f"cuvilc build {model_dir.name}", spill, timeout=RUN_TIMEOUT_S)
    facts = json.loads(report.read_text())
    figures = {
        "text_bytes": text_bytes(case_dir / "model.o"),
        "weight_bytes": facts["weights"]["blob_bytes"],
        "arena_bytes": facts["arena"]["bytes"],
        "arena_lower_bound": facts["arena"]["lower_bound_bytes"],
        "macs": facts["macs"],
    }
    if counts_only:
        return figures
    portable = case_dir / "portable" / "model.o"
    portable.parent.mkdir()
    run_e2e.cuvilc_build([*build, "--out", portable, "--kernels", "portable"],
                         f"cuvilc build --kernels portable {model_dir.name}", spill,
                         timeout=RUN_TIMEOUT_S)
    timed = case_dir / "timed" / "model.o"
    timed.parent.mkdir()
    seconds = []
    for _ in range(COMPILE_RUNS):
        start = time.perf_counter()
        run_e2e.cuvilc_build([*build, "--out", timed], f"cuvilc build {model_dir.name}", spill,
                             timeout=RUN_TIMEOUT_S)
        seconds.append(time.perf_counter() - start)
    return {**figures, "compile_seconds": float(np.median(seconds)),
            "text_portable_bytes": text_bytes(portable)}


def check_outputs(model_dir, case_dir, outputs, lsb=None):
    """Largest absolute difference from ORT's outputs; CaseError if not close.
    A quantized model's output (lsb: {name: quantization step}, from its
    manifest) may differ by a step or two (run_e2e.LSB_WORST;
    docs/quantization.md)."""
    worst = 0.0
    for i, name in enumerate(outputs):
        ref = np.fromfile(model_dir / f"ref_{i}.bin", dtype="<f4")
        got = np.fromfile(case_dir / f"out_{i}.bin", dtype="<f4")
        step = (lsb or {}).get(name)
        if got.size != ref.size:
            close = np.zeros(got.size, dtype=bool)
        elif step is not None:
            close = np.abs(got.astype(np.float64) - ref) <= step * (run_e2e.LSB_WORST + 0.001)
        else:
            close = np.isclose(got, ref, rtol=RTOL, atol=ATOL)
        if not close.all():
            raise CaseError(f"output '{name}' differs from ONNX Runtime's "
                            f"({np.count_nonzero(~close)} elements)")
        worst = max(worst, float(np.abs(got.astype(np.float64) - ref).max()))
    return worst


def copy_inputs(model_dir, case_dir, manifest):
    for i in range(len(manifest["inputs"])):
        shutil.copyfile(model_dir / f"input_{i}.bin", case_dir / f"input_{i}.bin")


HOST_ROUNDS = 3  # alternating ORT / cuvil timings per host model


def timed_runs(macs):
    """Runs per round for the host medians: TARGET_BENCH_NS / MACs, 50 to
    1000 (MobileNetV2's 300 M MACs take 50 runs of about 4 ms)."""
    return int(min(1000, max(50, TARGET_BENCH_NS / max(macs, 1))))


def fma_peak(target, work):
    """Multiply-adds per ns one core does at the target's x86-64 level and
    features: {"macs_per_ns": float32, "int8": instruction,
    "int8_macs_per_ns": int8 operands}."""
    exe = work / target.name / "fma_peak"
    exe.parent.mkdir(parents=True, exist_ok=True)
    features = [f"-m{f[1:]}" for f in target.features.split(",") if f.startswith("+")]
    run([run_e2e.CROSS_CC, "-O2", f"-march={target.cpu}", *features, FMA_PEAK, "-o", exe],
        "build fma_peak")
    return json.loads(run([exe], "fma_peak", timeout=RUN_TIMEOUT_S).stdout)


def bench_host(cuvilc, target, model_dir, case_dir, manifest):
    facts = compile_model(cuvilc, target.name, model_dir, case_dir)
    copy_inputs(model_dir, case_dir, manifest)
    exe = case_dir / "host_bench"
    run(["cc", "-O2", "-I", case_dir, HOST_BENCH, case_dir / "model.o", "-o", exe],
        "build host_bench")
    runs = timed_runs(facts["macs"])
    # Alternating rounds, so that a change in the machine's load (a shared
    # VM) weighs on both sides alike; each side's figure is the median of
    # its round medians.
    ort_rounds, cuvil_rounds = [], []
    for _ in range(HOST_ROUNDS):
        ort = json.loads(run(["node", ORT_BENCH, model_dir, str(runs)], "ONNX Runtime",
                             timeout=RUN_TIMEOUT_S).stdout)
        cuvil = json.loads(run([exe, str(runs)], "host_bench", cwd=case_dir,
                               timeout=RUN_TIMEOUT_S).stdout)
        ort_rounds.append(ort["median_ns"])
        cuvil_rounds.append(cuvil["median_ns"])
    facts["max_abs_err"] = check_outputs(model_dir, case_dir, manifest["outputs"],
                                         manifest.get("lsb"))
    facts["runs"] = runs
    facts["rounds"] = {"cuvil_ns": cuvil_rounds, "ort_ns": ort_rounds}
    facts["cuvil_ns"] = float(np.median(cuvil_rounds))
    facts["ort_ns"] = float(np.median(ort_rounds))
    facts["ratio"] = facts["cuvil_ns"] / facts["ort_ns"]
    return facts


def bench_board(cuvilc, target, model_dir, case_dir, manifest, counts_only=False):
    facts = compile_model(cuvilc, target.name, model_dir, case_dir, counts_only)
    copy_inputs(model_dir, case_dir, manifest)
    image = target.build(case_dir)
    stdout = run(target.command(image), "run under QEMU", cwd=case_dir,
                 timeout=RUN_TIMEOUT_S).stdout
    ok = run_e2e.RUN_OK.search(stdout)
    if not ok or ok.group(2) is None:
        raise CaseError("the runner did not report its counters")
    facts["max_abs_err"] = check_outputs(model_dir, case_dir, manifest["outputs"],
                                         manifest.get("lsb"))
    facts["instructions"] = int(ok.group(2))
    facts["cycles"] = int(ok.group(1))
    facts["instructions_per_mac"] = facts["instructions"] / facts["macs"]
    if model_dir.name in MULTICORE and not counts_only:
        facts["cores"] = {n: bench_cores(cuvilc, target, model_dir, case_dir, manifest, n)
                          for n in (2, 4)}
    return facts


TEAM = re.compile(r"^cuvil: team shares=(\d+) sum=(\d+) max=(\d+) members=([\d,]+)\r?$",
                  re.MULTILINE)


def bench_depth(cuvilc, work, target):
    """Issue 17's compile-time scaling: `cuvilc build` wall seconds (median
    of COMPILE_RUNS) of bench_models.DEPTH_STACKS, two stacks of distinct
    convolutions, the second 4x as deep; their ratio should stay near 4."""
    seconds = {}
    for name in bench_models.DEPTH_STACKS:
        bench_models.write(work / "models", name)
        case_dir = work / target / name
        shutil.rmtree(case_dir, ignore_errors=True)
        case_dir.mkdir(parents=True)
        runs = []
        for _ in range(COMPILE_RUNS):
            start = time.perf_counter()
            run_e2e.cuvilc_build([cuvilc, "build", work / "models" / name / "model.onnx",
                                  "--target", target, "--name", "model",
                                  "--out", case_dir / "model.o"],
                                 f"cuvilc build {name}", timeout=RUN_TIMEOUT_S)
            runs.append(time.perf_counter() - start)
        seconds[name] = float(np.median(runs))
    return {"target": target, "seconds": seconds}


def bench_cores(cuvilc, target, model_dir, case_dir, manifest, cores):
    """The model built for `cores` cores, its shares measured on one core
    (see the module's docstring): critical-path and per-core instructions."""
    cores_dir = case_dir / f"cores{cores}"
    shutil.rmtree(cores_dir, ignore_errors=True)
    cores_dir.mkdir(parents=True)
    run_e2e.cuvilc_build([cuvilc, "build", model_dir / "model.onnx", "--target", target.name,
                          "--name", "model", "--cores", str(cores),
                          "--out", cores_dir / "model.o"],
                         f"cuvilc build --cores {cores} {model_dir.name}", ("spilled to",),
                         timeout=RUN_TIMEOUT_S)
    copy_inputs(model_dir, cores_dir, manifest)
    image = target.build(cores_dir, defines=["CUVIL_RUNNER_TEAM_MEASURE=1"])
    stdout = run(target.command(image), "run under QEMU", cwd=cores_dir,
                 timeout=RUN_TIMEOUT_S).stdout
    ok, team = run_e2e.RUN_OK.search(stdout), TEAM.search(stdout)
    if not ok or ok.group(2) is None or not team:
        raise CaseError(f"the {cores}-core runner did not report its counters")
    check_outputs(model_dir, cores_dir, manifest["outputs"], manifest.get("lsb"))
    total, shared, largest = int(ok.group(2)), int(team[2]), int(team[3])
    members = [int(x) for x in team[4].split(",")]
    outside = total - shared  # run by the first core alone
    return {"critical_path": outside + largest,
            "per_core": [outside + members[0], *members[1:]]}


def check_guard(guard, results, margin):
    """Compares the board instruction counts with the recorded ones; returns
    the number of regressions: a count above recorded * (1 + margin), or
    one that misses a goal in instructions per MAC (bench/goals.py) that the
    recorded count meets (the margin must not let a count slip past a goal
    it meets only narrowly)."""
    broken = 0
    for target, models in guard.items():
        for name, recorded in models.items():
            facts = results["models"].get(name, {}).get(target)
            if facts is None or "instructions" not in facts:
                continue  # not measured in this run (or failed: counted already)
            got = facts["instructions"]
            change = got / recorded - 1
            goal = GOALS.get((target, name))
            # A goal the recorded count misses too is left to the margin
            # (the closing notes track it); one it meets must stay met.
            meets = goal is not None and recorded / facts["macs"] <= goal
            if meets and facts["instructions_per_mac"] > goal:
                broken += 1
                print(f"FAIL guard {target}/{name}: {facts['instructions_per_mac']:.4f} "
                      f"instructions per MAC, over the goal of {goal}")
            elif change > margin:
                broken += 1
                print(f"FAIL guard {target}/{name}: {got} instructions, {change:+.1%} over "
                      f"the recorded {recorded} (margin {margin:.0%})")
            else:
                note = " (faster: update the guard file)" if change < -margin else ""
                print(f"guard {target}/{name}: {got} instructions, {change:+.1%}{note}")
    return broken


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuvilc", required=True, type=pathlib.Path)
    parser.add_argument("--work", required=True, type=pathlib.Path, help="scratch directory")
    parser.add_argument("--targets", default="host,host-avx512,a78,u74-mc")
    parser.add_argument("--models", default=",".join(bench_models.MODELS),
                        help="comma-separated model names (default: all)")
    parser.add_argument("--results", type=pathlib.Path, help="write the figures here (JSON)")
    parser.add_argument("--guard", type=pathlib.Path,
                        help="recorded instruction counts to check against (JSON)")
    parser.add_argument("--margin", type=float, default=0.03,
                        help="allowed growth over --guard's counts (default 0.03)")
    args = parser.parse_args()

    if args.guard and args.results:
        parser.error("--results wants every figure, which a --guard run does not measure: "
                     "run them separately")
    names = args.models.split(",")
    unknown = [n for n in names if n not in bench_models.MODELS]
    if unknown or not args.cuvilc.is_file():
        parser.error(f"unknown model(s) {unknown}" if unknown else f"no cuvilc at {args.cuvilc}")
    cuvilc = args.cuvilc.resolve()
    work = args.work.resolve()
    models_dir = work / "models"
    boards = {t.name: t for t in run_e2e.runnable(
        [run_e2e.load_target(name) for name in args.targets.split(",")])}
    for board in boards.values():
        board.prepare(work)
    targets = list(boards)
    hosts = [t for t in targets if isinstance(boards[t], run_e2e.HostTarget)]

    results = {"models": {}, "targets": targets, "hosts": hosts,
               "fma_peak": {t: fma_peak(boards[t], work) for t in hosts},
               # cuvilc optimises in one process per core it may use (--jobs).
               "compile_cores": len(os.sched_getaffinity(0))}
    failed = 0
    for name in names:
        bench_models.write(models_dir, name)
        model_dir = models_dir / name
        manifest = json.loads((model_dir / "manifest.json").read_text())
        # ORT's outputs are the reference for every target: run it once first,
        # as the tests do (tests/reference/run_ort.js: graph optimisations
        # off). Optimised, ORT fuses a QDQ model's integer ops, and on a CPU
        # without AVX-512 VNNI its u8s8 kernels (vpmaddubsw) saturate pairs
        # of products: MobileNetV1-0.25 INT8's logits then move by 13
        # quantization steps on such a machine, and not on one with VNNI.
        run(["node", ORT_REFERENCE, model_dir], "ONNX Runtime", timeout=RUN_TIMEOUT_S)
        entry = results["models"][name] = {}
        for target in targets:
            case_dir = work / target / name
            try:
                if target in hosts:
                    facts = bench_host(cuvilc, boards[target], model_dir, case_dir, manifest)
                else:
                    facts = bench_board(cuvilc, boards[target], model_dir, case_dir, manifest,
                                        counts_only=args.guard is not None)
            except CaseError as err:
                failed += 1
                entry[target] = {"error": str(err)}
                print(f"FAIL {target}/{name}: {err}", flush=True)
                continue
            entry[target] = facts
            if target in hosts:
                summary = (f"cuvil {facts['cuvil_ns'] / 1e6:.3f} ms, ORT "
                           f"{facts['ort_ns'] / 1e6:.3f} ms, ratio {facts['ratio']:.2f}")
            else:
                summary = (f"{facts['instructions']} instructions, "
                           f"{facts['instructions_per_mac']:.2f}/MAC")
            print(f"{target}/{name}: {summary}, .text {facts['text_bytes']} B, "
                  f"arena {facts['arena_bytes']} B, MACs {facts['macs']}", flush=True)
    if "a78" in boards and not args.guard:
        results["depth_scaling"] = bench_depth(cuvilc, work, "a78")
    if args.results:
        args.results.write_text(json.dumps(results, indent=1) + "\n")
    broken = 0
    if args.guard:
        broken = check_guard(json.loads(args.guard.read_text()), results, args.margin)
    print(f"{len(names) * len(targets) - failed} measured, {failed} failed"
          + (f", {broken} over their guard" if args.guard else ""))
    return 1 if failed or broken else 0


if __name__ == "__main__":
    sys.exit(main())
