#!/usr/bin/python3
"""Writes docs/memory.md: how well cuvilc's memory planner does on the test models.

For every target and every model (each subdirectory of the models directory
that holds a model.onnx, as tests/models/gen_models.py writes them), runs

    cuvilc build MODEL --target T --out TMP.o --report TMP.json

and tabulates the memory plan from the JSON report: arena bytes, lower bound,
their ratio, what a plain greedy-by-size planner would need, same-bank pairs,
the schedule and the offset-assignment strategy. Standard library only.

    /usr/bin/python3 scripts/memory_report.py \\
        --cuvilc build/cuvilc/cuvilc --models build/models --out docs/memory.md
"""

import argparse
import concurrent.futures
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

REGENERATE = ("make memory-report   # or: /usr/bin/python3 scripts/memory_report.py "
              "--cuvilc build/cuvilc/cuvilc --models build/models --out docs/memory.md")

EXPLANATION = """\
Columns:

- **arena**: bytes of activation memory the plan needs (the sum over
  arenas when a model spills into a second region); every buffer starts
  and ends on the target's DMA alignment (64 bytes).
- **lower bound**: the largest total size of the tensors alive at one step
  of the chosen execution order, after in-place reuse and views, before
  alignment padding. No assignment of offsets can do with less.
- **ratio**: arena / lower bound. 1.000 means the offsets are optimal for
  that schedule; padding to the alignment alone can push it above 1.
- **baseline**: the arena a plain planner needs: the model's own node
  order, no in-place reuse, no views, offsets assigned greedily by size.
- **baseline / arena**: how many times more memory the plain planner takes.
- **bank pairs**: input/output buffers of one kernel that share a memory
  bank, with the compact offsets -> as placed; "-" when the region has no
  banks.
- **schedule**, **strategy**: the execution order and the offset-assignment
  strategy that won (see `cuvilc/planner/MemoryPlan.h`).

Each figure comes from the JSON report of `cuvilc build MODEL --target T
--report FILE.json` (`cuvilc plan MODEL --target T --svg PREFIX` prints the
same plan and draws each arena over time). The models are those of
`tests/models/gen_models.py`. The total row adds the bytes of all models. Models
whose tensors are all weights or in the caller's input and output buffers
need no arena ("-").
"""


def run(cmd):
    """Runs cmd; on failure, exits with its output."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"memory_report.py: {' '.join(cmd)} failed "
                 f"(exit {proc.returncode}):\n{proc.stderr}{proc.stdout}")
    return proc.stdout


def list_targets(cuvilc):
    """Target names, as `cuvilc targets` lists them (one unindented line each)."""
    out = run([cuvilc, "targets"])
    return [line.split()[0] for line in out.splitlines() if line and not line[0].isspace()]


def list_models(models_dir):
    return sorted(p.name for p in pathlib.Path(models_dir).iterdir()
                  if (p / "model.onnx").is_file())


def dim_flags(models_dir, model):
    """--dim NAME=VALUE for each symbolic dimension the model's manifest
    fixes and --loop-bound NODE=K for each loop it bounds (as the
    end-to-end tests build it)."""
    manifest = pathlib.Path(models_dir, model, "manifest.json")
    facts = json.loads(manifest.read_text()) if manifest.is_file() else {}
    return ([flag for name, value in sorted(facts.get("dims", {}).items())
             for flag in ("--dim", f"{name}={value}")]
            + [flag for node, k in sorted(facts.get("loop_bounds", {}).items())
               for flag in ("--loop-bound", f"{node}={k}")])


def build_report(cuvilc, models_dir, model, target, tmp):
    stem = os.path.join(tmp, f"{model}.{target}")
    run([cuvilc, "build", os.path.join(models_dir, model, "model.onnx"), "--target", target,
         "--out", stem + ".o", "--report", stem + ".json", *dim_flags(models_dir, model)])
    with open(stem + ".json", encoding="utf-8") as f:
        return json.load(f)


def bank_pairs(arenas):
    pairs = [f"{a['same_bank_pairs_before']} -> {a['same_bank_pairs']}"
             for a in arenas if a["same_bank_pairs"] is not None]
    return ", ".join(pairs) if pairs else "-"


def row(model, report):
    arena = report["arena"]
    arenas = [a for a in report["arenas"] if a["bytes"]]
    if not arena["bytes"]:
        # Every tensor is a weight or lives in the caller's buffers.
        return [model, str(len(report["nodes"])), "-", "0", "0", "-", str(arena["baseline_bytes"]),
                "-", "-", report["schedule"], "-"]
    return [model, str(len(report["nodes"])), " + ".join(a["region"] for a in arenas),
            str(arena["bytes"]), str(arena["lower_bound_bytes"]), f"{arena['ratio']:.3f}",
            str(arena["baseline_bytes"]), f"{arena['baseline_ratio']:.3f}", bank_pairs(arenas),
            report["schedule"], ", ".join(a["strategy"] for a in arenas)]


def total_row(reports):
    arena = sum(r["arena"]["bytes"] for r in reports)
    bound = sum(r["arena"]["lower_bound_bytes"] for r in reports)
    baseline = sum(r["arena"]["baseline_bytes"] for r in reports)
    ratio = f"{arena / bound:.3f}" if bound else "-"
    baseline_ratio = f"{baseline / arena:.3f}" if arena else "-"
    return ["**total**", "", "", str(arena), str(bound), ratio, str(baseline),
            baseline_ratio, "", "", ""]


def geomean(values):
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else 1.0


HEADER = ["model", "nodes", "regions", "arena", "lower bound", "ratio", "baseline",
          "baseline / arena", "bank pairs", "schedule", "strategy"]
RIGHT = {"nodes", "arena", "lower bound", "ratio", "baseline", "baseline / arena"}


def table(rows):
    lines = ["| " + " | ".join(HEADER) + " |",
             "|" + "|".join("---:" if h in RIGHT else "---" for h in HEADER) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cuvilc", default="build/cuvilc/cuvilc", help="the compiler")
    parser.add_argument("--models", default="build/models",
                        help="directory of model subdirectories (tests/models/gen_models.py)")
    parser.add_argument("--targets", default="",
                        help="comma-separated targets (default: every target cuvilc knows)")
    parser.add_argument("--out", default="docs/memory.md", help="Markdown file to write")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="builds run at once")
    args = parser.parse_args()

    targets = args.targets.split(",") if args.targets else list_targets(args.cuvilc)
    models = list_models(args.models)
    if not models:
        sys.exit(f"memory_report.py: no */model.onnx in {args.models}")
    version = run([args.cuvilc, "--version"]).strip()

    with tempfile.TemporaryDirectory() as tmp, \
            concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        jobs = {(t, m): pool.submit(build_report, args.cuvilc, args.models, m, t, tmp)
                for t in targets for m in models}
        reports = {key: job.result() for key, job in jobs.items()}

    out = ["# Memory plans of the test models", "",
           "<!-- Generated by scripts/memory_report.py: do not edit by hand. -->", "",
           f"Figures from `{version}`; regenerate with:", "", f"    {REGENERATE}", "",
           EXPLANATION]
    for t in targets:
        rs = [reports[(t, m)] for m in models]
        used = [r["arena"] for r in rs if r["arena"]["bytes"]]
        out += [f"## {t}", "",
                table([row(m, r) for m, r in zip(models, rs)] + [total_row(rs)]), "",
                f"Geometric means over the {len(used)} models with an arena: ratio "
                f"{geomean([a['ratio'] for a in used]):.3f}, baseline / arena "
                f"{geomean([a['baseline_ratio'] for a in used]):.3f}.", ""]
    text = "\n".join(out)
    pathlib.Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    tmp_out = args.out + ".tmp"
    with open(tmp_out, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp_out, args.out)
    print(f"wrote {args.out}: {len(models)} models x {len(targets)} targets")


if __name__ == "__main__":
    main()
