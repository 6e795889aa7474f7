#!/usr/bin/python3
"""`cuvilc run` end to end: a test model run on each target, its outputs
compared with ONNX Runtime's.

    run_cli.py --cuvilc PATH --models DIR --work DIR [--targets u74-mc,a78]
               [--model NAME] [--cores N]

For each target T, in WORK/T: the model's reference data as .npy
(model_npy.py), then

    cuvilc run MODEL --target T --input input_<i>.npy... --compare ref_<i>.npy...
                     --output-dir out --json out/run.json [--cores N]

(the interface the Python package uses) must exit 0, the JSON summary must
name every output's .npy file, and each file must hold the reference's
values; the instruction and cycle counts must be positive on a board. Then
the same run against a reference with one element changed must exit 1 and
say which output differs. On a board both runs keep the runtime library
in WORK/T/cache (CUVIL_CACHE_DIR): the first builds it there, the second
must link the same file, unchanged. On a board all runs work in
WORK/T/keep (--keep-work), after one more run there without the cache
(CUVIL_CACHE_DIR empty), whose leftovers they must not mistake for
theirs. Prints PASS/FAIL per target; exits 1 if any failed.
"""

import argparse
import json
import os
import pathlib
import subprocess
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ATOL = 1e-4
RTOL = 1e-3


def check_target(cuvilc, model_dir, target, work, cores):
    """None if every check passed, else what failed."""
    work.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, HERE / "model_npy.py", model_dir, work],
                   check=True, capture_output=True)
    inputs = sorted(work.glob("input_*.npy"))
    refs = sorted(work.glob("ref_*.npy"))
    out = work / "out"
    cmd = [cuvilc, "run", model_dir / "model.onnx", "--target", target,
           *(a for f in inputs for a in ("--input", f)),
           "--output-dir", out, "--json", out / "run.json", "--cores", str(cores)]
    cache = work / "cache"
    env = {**os.environ, "CUVIL_CACHE_DIR": str(cache)}
    if target != "host":
        # Every run in one kept work directory, as users rerun; the first
        # without the cache (the runtime built in keep/runtime): the runs
        # after it must not take that run's leftovers for their own.
        cmd += ["--keep-work", work / "keep"]
        proc = subprocess.run([*cmd, *(a for f in refs for a in ("--compare", f))],
                              capture_output=True, text=True, timeout=900,
                              env={**os.environ, "CUVIL_CACHE_DIR": ""})
        if proc.returncode != 0:
            return f"cuvilc run without a cache exited {proc.returncode}:\n{proc.stderr}"
    proc = subprocess.run([*cmd, *(a for f in refs for a in ("--compare", f))],
                          capture_output=True, text=True, timeout=900, env=env)
    if proc.returncode != 0:
        return f"cuvilc run exited {proc.returncode}:\n{proc.stdout}{proc.stderr}"
    summary = json.loads((out / "run.json").read_text())
    if summary["target"] != target or len(summary["outputs"]) != len(refs):
        return f"unexpected summary: {summary}"
    if not all(c["ok"] for c in summary["compare"]):
        return f"a comparison is not ok: {summary['compare']}"
    if target != "host" and not (summary["instructions"] > 0 and summary["cycles"] > 0):
        return f"no instruction or cycle counts: {summary}"
    for ref_path, output in zip(refs, summary["outputs"]):
        got = np.load(output["file"])
        ref = np.load(ref_path)
        if got.shape != ref.shape or not np.allclose(got, ref, atol=ATOL, rtol=RTOL):
            return f"{output['file']} differs from {ref_path}"
    # A reference one element off: exit 1, naming the output.
    bad = np.load(refs[0])
    bad.flat[0] += 1.0
    np.save(work / "bad_ref.npy", bad)
    libraries = sorted(cache.glob(f"runtime-{target}-*/libcuvil-rt.a"))
    if target != "host" and len(libraries) != 1:
        return f"expected one runtime library in {cache}, found {libraries}"
    built = [lib.stat().st_mtime_ns for lib in libraries]
    proc = subprocess.run([*cmd, "--compare", work / "bad_ref.npy",
                           *(a for f in refs[1:] for a in ("--compare", f))],
                          capture_output=True, text=True, timeout=900, env=env)
    name = summary["outputs"][0]["name"]
    if proc.returncode != 1 or f"'{name}'" not in proc.stderr \
            or "differ from the reference" not in proc.stderr:
        return f"a wrong reference gave exit {proc.returncode}:\n{proc.stderr}"
    if [lib.stat().st_mtime_ns for lib in libraries] != built:
        return f"the second run rebuilt the cached runtime {libraries[0]}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuvilc", required=True, type=pathlib.Path)
    parser.add_argument("--models", required=True, type=pathlib.Path)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    parser.add_argument("--targets", default="u74-mc")
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--cores", type=int, default=1,
                        help="build and run for this many cores (boards)")
    args = parser.parse_args()
    failed = 0
    for target in args.targets.split(","):
        why = check_target(args.cuvilc, args.models / args.model, target,
                           args.work / target, args.cores)
        if why:
            failed += 1
            print(f"FAIL {target}/{args.model}: {why}")
        else:
            print(f"PASS {target}/{args.model}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
