#!/usr/bin/python3
"""Write docs/benchmarks.md from bench/run_bench.py's results.

    bench_report.py --results FILE.json --out docs/benchmarks.md

Every figure sits next to its goal (issue 5): host latency below ONNX
Runtime's (ratio < 1.0), instructions per MAC on a78 (<= 0.5 for the
convolution-heavy models, <= 0.4 for the fully connected ones) and u74-mc
(<= 1.6 for the convolution-heavy models). A figure that misses its goal is
marked, never hidden.
"""

import argparse
import json
import pathlib
import platform
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "bench"))
from goals import (COMPILE_SECONDS_GOAL, CORES4_CRITICAL_RATIO,  # noqa: E402
                   DEPTH_SCALING_GOAL, GOALS, HOST_RATIO_GOAL, INT8_A78_PER_MAC,
                   INT8_ARENA_RATIO, INT8_SUFFIX, INT8_WEIGHTS_RATIO, TEXT_GROWTH_GOAL)


def verdict(value, goal):
    if goal is None:
        return ""
    return "met" if value <= goal else "**missed**"


def kib(n):
    return f"{n / 1024:,.1f}"


def host_cpu():
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def ort_version():
    package = pathlib.Path(__file__).resolve().parents[1] / "tests" / "reference" / "package.json"
    try:
        return json.loads(package.read_text())["dependencies"]["onnxruntime-node"]
    except (OSError, KeyError, ValueError):
        return "unknown"


def qemu_version():
    try:
        out = subprocess.run(["qemu-system-riscv64", "--version"], capture_output=True,
                             text=True, check=True).stdout
        return out.splitlines()[0].replace("QEMU emulator version ", "")
    except (OSError, subprocess.CalledProcessError, IndexError):
        return "unknown"


def depth_lines(depth):
    """The compile-time scaling figure (bench/run_bench.py bench_depth)."""
    if not depth:
        return []
    (shallow, s), (deep, d) = depth["seconds"].items()
    ratio = d / s
    return [f"Scaling with depth ({depth['target']}): `{shallow}` builds in {s:.2f} s, "
            f"`{deep}` (4x the layers, no two of the same shape) in {d:.2f} s: "
            f"{ratio:.2f}x (goal <= {DEPTH_SCALING_GOAL}x: "
            f"{verdict(ratio, DEPTH_SCALING_GOAL)}).", ""]


def compile_table(models, targets, cores):
    """Issue 17's compile times: `cuvilc build` wall seconds per model and
    target (bench/run_bench.py compile_model)."""
    rows = []
    for name, entry in models.items():
        cells = []
        for t in targets:
            f = entry.get(t, {})
            seconds = f.get("compile_seconds")
            if seconds is None:
                cells.append("-")
                continue
            goal = COMPILE_SECONDS_GOAL.get((t, name))
            cells.append(f"{seconds:.2f}"
                         + (f" (goal <= {goal}: {verdict(seconds, goal)})" if goal else ""))
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return ["## Compile time", "",
            "Wall seconds of `cuvilc build` (object, header and fragment), the median of "
            "3 builds one after another on the machine named above, otherwise idle. "
            "cuvilc optimises and generates the layers' code in one process per core "
            f"({cores} here; `--jobs`, docs/architecture.md); the object is the same for "
            "any number.", "",
            "| model | " + " | ".join(targets) + " |",
            "| --- | " + " | ".join("---:" for _ in targets) + " |", *rows, ""]


def cores_table(models, boards):
    """Issue 17's multicore figures: per core and critical-path instructions
    for 1, 2 and 4 cores (bench/run_bench.py bench_cores)."""
    rows = []
    for name, entry in models.items():
        for b in boards:
            f = entry.get(b, {})
            if "cores" not in f:
                continue
            single = f["instructions"]
            cells = [f"{single:,}"]
            for n in ("2", "4"):
                c = f["cores"][n]
                ratio = c["critical_path"] / single
                cells.append(f"{c['critical_path']:,} ({ratio:.2f}x) | "
                             + " / ".join(f"{x:,}" for x in c["per_core"]))
            ratio4 = f["cores"]["4"]["critical_path"] / single
            cells.append(f"<= {CORES4_CRITICAL_RATIO}x: "
                         f"{verdict(ratio4, CORES4_CRITICAL_RATIO)}")
            rows.append(f"| {name} | {b} | " + " | ".join(cells) + " |")
    if not rows:
        return []
    return ["## Several cores (`--cores`)", "",
            "Built with `cuvilc build --cores N`, every share of the split layers run and "
            "counted on one core (`-DCUVIL_RUNNER_TEAM_MEASURE`, see bench/run_bench.py). "
            "The critical path is what a run on N cores retires on its busiest core between "
            "barriers: per split layer its largest share, plus everything outside the shares "
            "(the first core's). Per core: the instructions each core would retire, waiting "
            "excluded. Convolutions split by output channels (whole panels of the packed "
            "kernel: a78 16 channels, u74-mc 4) or by output rows, whichever balances better; "
            "INT8 ones by whole panels of output channels, depthwise ones in groups of 8 "
            "channels, while the direct kernel (a78's multi-tap INT8 convolutions) does not "
            "split (docs/multicore.md); the other layers run on the first core.",
            "",
            "| model | board | 1 core | 2 cores: critical path | 2 cores: per core | "
            "4 cores: critical path | 4 cores: per core | goal (4 cores) |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |", *rows, ""]


def int8_table(models):
    """The INT8 twins next to their float models (issue 13's goals)."""
    pairs = [(n, n[:-len(INT8_SUFFIX)]) for n in models
             if n.endswith(INT8_SUFFIX) and n[:-len(INT8_SUFFIX)] in models]
    if not pairs:
        return []
    out = ["## INT8", "",
           "The `*_int8` models are their float twins' architectures quantized as ONNX "
           "Runtime's static quantizer writes them (QDQ form, uint8 activations, int8 "
           "per-channel weights; `tests/models/quant_models.py`), compiled to integer "
           "kernels (docs/quantization.md). Goals: a78 <= "
           f"{INT8_A78_PER_MAC} instructions per MAC, u74-mc no more instructions than the "
           f"float build, host faster than ORT, weights <= {INT8_WEIGHTS_RATIO}x and arena "
           f"<= {INT8_ARENA_RATIO}x the float model's.", "",
           "| model | a78 per MAC (float) | u74-mc instructions vs float | host ratio to ORT | "
           "host-avx512 ratio to ORT | weights vs float | arena vs float |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for q, f in pairs:
        qe, fe = models[q], models[f]

        def board(t, cell):
            a, b = qe.get(t, {}), fe.get(t, {})
            return cell(a, b) if "instructions" in a and "instructions" in b else "not run"

        a78 = board("a78", lambda a, b: f"{a['instructions_per_mac']:.2f} "
                    f"({b['instructions_per_mac']:.2f}): "
                    f"{verdict(a['instructions_per_mac'], INT8_A78_PER_MAC)}")
        u74 = board("u74-mc", lambda a, b: f"{a['instructions'] / b['instructions']:.2f}x: "
                    f"{verdict(a['instructions'], b['instructions'])}")
        hosts = []
        for t in ("host", "host-avx512"):
            e = qe.get(t, {})
            hosts.append(f"{e['ratio']:.2f}: {verdict(e['ratio'], HOST_RATIO_GOAL - 1e-12)}"
                         if "ratio" in e else "not run")
        facts = next((t for t in qe if "weight_bytes" in qe[t] and "weight_bytes" in fe.get(t, {})),
                     None)
        if facts:
            w = qe[facts]["weight_bytes"] / fe[facts]["weight_bytes"]
            ar = qe[facts]["arena_bytes"] / fe[facts]["arena_bytes"]
            sizes = [f"{w:.2f}x: {verdict(w, INT8_WEIGHTS_RATIO)}",
                     f"{ar:.2f}x: {verdict(ar, INT8_ARENA_RATIO)}"]
        else:
            sizes = ["not run", "not run"]
        out.append(f"| {q} | {a78} | {u74} | {' | '.join(hosts)} | {' | '.join(sizes)} |")
    return out + [""]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", required=True, type=pathlib.Path)
    parser.add_argument("--out", required=True, type=pathlib.Path)
    args = parser.parse_args()
    results = json.loads(args.results.read_text())
    models = results["models"]
    targets = results["targets"]

    out = ["# Benchmarks", "",
           "Generated by `scripts/bench_report.py` from `bench/run_bench.py` (`make bench`): "
           "do not edit by hand.", "",
           "The models come from `bench/models.py` (fixed seeds): an MLP (784-128-10), the "
           "four MLPerf Tiny architectures (DS-CNN keyword spotting on 49x10, ResNet-8 on "
           "32x32x3, MobileNetV1 0.25 on 96x96x3, the fully connected anomaly-detection "
           "autoencoder on 640 inputs), MobileNetV2 1.0 on 224x224x3, and three sequence "
           "models: transformer encoders of 2 post-norm layers with 4 heads and GELU "
           "(d_model 64 on 32 tokens, d_model 128 on 128 tokens; exported the way PyTorch "
           "writes them below opset 20) and an LSTM keyword spotter (2 layers of hidden "
           "size 64 over 49 frames of 10 features); batch 1, float32. "
           "Every output is checked against ONNX Runtime's before a figure is recorded.", "",
           "- **host**: median latency of one inference, cuvil's compiled model "
           "(`bench/host_bench.c`) and ONNX Runtime "
           f"(onnxruntime-node {ort_version()}, one intra-op thread, all graph optimisations; "
           "`bench/ort_bench.js`), on the same input in the same run (three alternating "
           "rounds; each side's figure is the median of its round medians), on "
           f"{host_cpu()}. Ratio = cuvil / ORT; the goal is < {HOST_RATIO_GOAL}. Latencies "
           "depend on the machine; the ratio is the figure to compare.",
           "- **a78, u74-mc**: instructions retired by one inference under "
           f"`qemu -icount shift=0` (QEMU {qemu_version()}), read from the cycle/instret "
           "counters around the run call; deterministic. Goals: a78 <= 0.5 instructions "
           "per MAC on the convolution-heavy models (ResNet-8, MobileNetV1, MobileNetV2) and "
           "<= 0.4 on the MLP and the autoencoder; u74-mc <= 1.6 on the convolution-heavy "
           "models; on the sequence models, a78 <= 0.5 and u74-mc <= 1.8.",
           "- **.text**: executable sections of `model.o`, next to the same model built "
           "with `--kernels portable` (reference kernels only); the goal is at most 64 KiB "
           "more. **weights**: the FlatBuffers blob; **arena**: activation memory, next to "
           "its lower bound (the largest set of tensors live at once).", ""]

    hosts = results.get("hosts", ["host"] if "host" in targets else [])  # timed natively
    if hosts:
        out += ["## Host latency against ONNX Runtime", "",
                "`host` is x86-64-v3 (AVX2), the portable build-machine target; "
                "`host-avx512` is x86-64-v4 (AVX-512) with AVX-512 VNNI, run where the CPU "
                "has them. ONNX "
                "Runtime picks its kernels for the CPU at run time (AVX-512 where present) "
                "and is timed again beside each.", ""]
        # Per host target: {"macs_per_ns", "int8", "int8_macs_per_ns"}.
        peaks = results.get("fma_peak", {})
        if peaks:
            int8 = [t for t in hosts if "int8_macs_per_ns" in peaks.get(t, {})]
            out += ["**Floor**: the model's MACs at this machine's multiply-add peak for "
                    "the target's instruction set, measured by `bench/fma_peak.c` (12 "
                    "independent FMA chains on one core): "
                    + ", ".join(f"`{t}` {peaks[t]['macs_per_ns']:.1f} MACs/ns"
                                for t in hosts if t in peaks)
                    + (". For the INT8 models, the same with the widest exact int8 "
                       "multiply-add of the target: " + ", ".join(
                           f"`{t}` {peaks[t]['int8_macs_per_ns']:.1f} MACs/ns "
                           f"(`{peaks[t]['int8']}`)" for t in int8)
                       + " (AVX2's `vpmaddubsw` makes more products but saturates their "
                       "sums)" if int8 else "")
                    + ". No code of that instruction set runs the model faster. Where ONNX "
                    "Runtime's time is below a target's floor (it uses AVX-512 and VNNI "
                    "where the CPU has them), no code for that target can meet the goal on "
                    "this machine.", ""]
        out += ["| model | MACs | target | cuvil (ms) | ORT (ms) | floor (ms) | ratio | "
                "goal < 1.0 |",
                "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- |"]
        for name, entry in models.items():
            for t in hosts:
                f = entry.get(t, {})
                if "error" in f or not f:
                    out.append(f"| {name} | | {t} | | | | failed: "
                               f"{f.get('error', 'not run')} | |")
                    continue
                peak = peaks.get(t, {})
                if name.endswith(INT8_SUFFIX) and "int8_macs_per_ns" in peak:
                    peak = peak["int8_macs_per_ns"]
                else:
                    peak = peak.get("macs_per_ns")
                floor_ns = f["macs"] / peak if peak else None
                result = verdict(f["ratio"], HOST_RATIO_GOAL - 1e-12)
                if result != "met" and floor_ns and f["ort_ns"] < floor_ns:
                    result += ": ORT is below the floor"
                floor = f"{floor_ns / 1e6:.3f}" if floor_ns else ""
                out.append(f"| {name} | {f['macs']:,} | {t} | {f['cuvil_ns'] / 1e6:.3f} | "
                           f"{f['ort_ns'] / 1e6:.3f} | {floor} | {f['ratio']:.2f} | "
                           f"{result} |")
        out.append("")

    boards = [t for t in targets if t not in hosts]
    if boards:
        out += ["## Instructions per inference under QEMU", "",
                "| model | MACs | " + " | ".join(
                    f"{b} instructions | {b} per MAC | {b} goal" for b in boards) + " |",
                "| --- | ---: | " + " | ".join("---: | ---: | ---" for _ in boards) + " |"]
        for name, entry in models.items():
            macs = next((f["macs"] for f in entry.values() if "macs" in f), 0)
            cells = []
            for b in boards:
                f = entry.get(b, {})
                if "error" in f or not f:
                    cells.append(f"failed: {f.get('error', 'not run')} | | ")
                    continue
                goal = GOALS.get((b, name))
                per_mac = f["instructions_per_mac"]
                goal_cell = f"<= {goal}: {verdict(per_mac, goal)}" if goal else "-"
                cells.append(f"{f['instructions']:,} | {per_mac:.2f} | {goal_cell}")
            out.append(f"| {name} | {macs:,} | " + " | ".join(cells) + " |")
        out.append("")

    out += cores_table(models, boards)
    out += compile_table(models, targets, results.get("compile_cores", 1))
    out += depth_lines(results.get("depth_scaling"))
    out += int8_table(models)

    out += ["## Code, weights and memory", "",
            "| model | target | .text (KiB) | portable .text (KiB) | goal: <= +64 KiB | "
            "weights (KiB) | arena (KiB) | arena lower bound (KiB) |",
            "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |"]
    for name, entry in models.items():
        for t in targets:
            f = entry.get(t, {})
            if "text_bytes" not in f:
                continue
            growth = f["text_bytes"] - f["text_portable_bytes"]
            out.append(f"| {name} | {t} | {kib(f['text_bytes'])} | "
                       f"{kib(f['text_portable_bytes'])} | "
                       f"{growth / 1024:+,.1f}: {verdict(growth, TEXT_GROWTH_GOAL)} | "
                       f"{kib(f['weight_bytes'])} | {kib(f['arena_bytes'])} | "
                       f"{kib(f['arena_lower_bound'])} |")
    out.append("")
    args.out.write_text("\n".join(out))
    print(f"bench_report: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
