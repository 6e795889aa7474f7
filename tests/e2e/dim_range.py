#!/usr/bin/python3
"""Bounded dynamic dimensions: one object built with `--dim seq=LO..HI` runs
every length in the range, with ONNX Runtime's outputs at each.

    dim_range.py --cuvilc PATH --models DIR --work DIR --node NODE
                 --targets host,a78,u74-mc [--model NAME]... [--range LO..HI]
                 [--lengths L,L,...]

For each model (default: torch_encoder and torch_lstm, PyTorch exports whose
sequence length is the symbolic dimension `seq`), in WORK/refs/<model>/len_L
this writes, for each length L, an input of that length (seeded normal
values) and ONNX Runtime's outputs for it (tests/reference/run_ort.js).

For each target, in WORK/<target>/<model>/, cuvilc builds the model once
with --dim seq=LO..HI (no warnings); model.h must state the bounds
(NUM_DIMS, DIM_0_MIN/MAX). runtime-baremetal/runner/runner.c, built once
against that object, then runs each length: it reads dims.bin and calls
cuvil_model_set_dims, prints each output's shape from
cuvil_model_output_shape, and reads and writes the inputs and outputs at
their sizes for that length. Each run's printed shapes must be ORT's, and
its outputs equal to ORT's (run_e2e.compare). A length past the range must
be refused by set_dims with CUVIL_ERR_DIM_RANGE (-8).

Prints `PASS target/model (...)` or `FAIL target/model: reason` per case,
then `N passed, M failed`. Exits 0 if all passed, 1 if any failed, 2 on
usage errors.
"""

import argparse
import json
import pathlib
import re
import shutil
import subprocess
import sys
import tomllib
import zlib

import numpy as np
import onnx

import run_e2e

RUN_ORT = run_e2e.REPO / "tests" / "reference" / "run_ort.js"
SHAPE = re.compile(r"^cuvil: output (\d+) shape ?([\d,]*)\r?$", re.MULTILINE)
SET_DIMS = re.compile(r"cuvil_model_set_dims returned (-?\d+)")
DIM_RANGE = -8  # CUVIL_ERR_DIM_RANGE
DIM = "seq"


def write_references(node, model_dir, refs, lengths):
    """refs/len_L: the model, an input of length L and ORT's outputs."""
    model = onnx.load(model_dir / "model.onnx")
    weights = {t.name for t in model.graph.initializer}
    inputs = [v for v in model.graph.input if v.name not in weights]
    outputs = [o.name for o in model.graph.output]
    dirs = []
    for length in lengths:
        case = refs / f"len_{length}"
        case.mkdir(parents=True)
        shutil.copyfile(model_dir / "model.onnx", case / "model.onnx")
        rng = np.random.default_rng(zlib.crc32(f"{model_dir.name}/{length}".encode()))
        specs = []
        for i, value in enumerate(inputs):
            shape = [d.dim_value if d.HasField("dim_value") else length
                     for d in value.type.tensor_type.shape.dim]
            rng.normal(0.0, 1.0, shape).astype("<f4").tofile(case / f"input_{i}.bin")
            specs.append({"name": value.name, "shape": shape, "dtype": "float32"})
        (case / "manifest.json").write_text(json.dumps({"inputs": specs, "outputs": outputs}))
        dirs.append(case)
    run_e2e.run([node, RUN_ORT, *dirs], "run_ort.js")
    return outputs


def header_int(header, name):
    m = re.search(rf"^#define CUVIL_MODEL_{name} (\S+)$", header.read_text(), re.MULTILINE)
    if not m:
        raise run_e2e.CaseError(f"{header.name} defines no CUVIL_MODEL_{name}")
    return int(m[1])


def expected_shapes(model_dir, outputs, length):
    """The model's output shapes at a length: its declared dimensions, `seq`
    replaced by the length (the exporter names the output's axis so; the
    comparison with ORT's outputs checks the sizes too)."""
    model = onnx.load(model_dir / "model.onnx")
    declared = {o.name: o.type.tensor_type.shape.dim for o in model.graph.output}
    shapes = []
    for name in outputs:
        shape = []
        for d in declared[name]:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            elif d.dim_param == DIM:
                shape.append(length)
            else:
                raise run_e2e.CaseError(f"output '{name}' has dimension '{d.dim_param}'")
        shapes.append(shape)
    return shapes


def run_case(cuvilc, target, model_dir, refs, lengths, bounds, case_dir, outputs):
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    lo, hi = bounds
    run_e2e.cuvilc_build([cuvilc, "build", model_dir / "model.onnx", "--target", target.name,
                          "--name", "model", "--out", case_dir / "model.o",
                          *target.cuvilc_flags, "--dim", f"{DIM}={lo}..{hi}"],
                         f"cuvilc build {model_dir.name} --dim {DIM}={lo}..{hi}")
    header = case_dir / "model.h"
    stated = (header_int(header, "NUM_DIMS"), header_int(header, "DIM_0_MIN"),
              header_int(header, "DIM_0_MAX"))
    if stated != (1, lo, hi):
        raise run_e2e.CaseError(f"model.h states dims {stated}, expected (1, {lo}, {hi})")
    image = target.build(case_dir)
    instret = []
    for length in lengths:
        ref = refs / f"len_{length}"
        for f in case_dir.glob("out_*.bin"):
            f.unlink()
        for f in ref.glob("input_*.bin"):
            shutil.copyfile(f, case_dir / f.name)
        np.array([length], "<i8").tofile(case_dir / "dims.bin")
        proc = subprocess.run(target.command(image), cwd=case_dir, capture_output=True,
                              text=True, timeout=run_e2e.RUN_TIMEOUT_S)
        ok = run_e2e.RUN_OK.search(proc.stdout)
        if proc.returncode != 0 or not ok:
            raise run_e2e.CaseError(f"{DIM}={length}: the runner failed ({proc.returncode}):\n"
                                    f"{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
        printed = {int(m[1]): [int(x) for x in m[2].split(",") if x]
                   for m in SHAPE.finditer(proc.stdout)}
        want = expected_shapes(model_dir, outputs, length)
        got = [printed.get(i) for i in range(len(outputs))]
        if got != want:
            raise run_e2e.CaseError(f"{DIM}={length}: output shapes {got}, ORT's {want}")
        run_e2e.compare(ref, case_dir, outputs)
        if ok.group(2):
            instret.append(f"{length}:{ok.group(2)}")
    # Past the range: refused before any run.
    np.array([hi + 1], "<i8").tofile(case_dir / "dims.bin")
    proc = subprocess.run(target.command(image), cwd=case_dir, capture_output=True,
                          text=True, timeout=run_e2e.RUN_TIMEOUT_S)
    got = SET_DIMS.search(proc.stdout)
    if proc.returncode == 0 or not got or int(got[1]) != DIM_RANGE:
        raise run_e2e.CaseError(f"{DIM}={hi + 1}: expected set_dims to return {DIM_RANGE}, "
                                f"the runner exited {proc.returncode}:\n{proc.stdout[-2000:]}")
    lengths_text = ",".join(map(str, lengths))
    return (f"{DIM}={lo}..{hi}, ran {lengths_text}"
            + (f"; instret {' '.join(instret)}" if instret else ""))


def parse_bounds(text):
    lo, _, hi = text.partition("..")
    return int(lo), int(hi)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuvilc", required=True, type=pathlib.Path)
    parser.add_argument("--models", required=True, type=pathlib.Path)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    parser.add_argument("--node", default="node")
    parser.add_argument("--targets", required=True)
    parser.add_argument("--model", action="append")
    parser.add_argument("--range", default="1..48", type=parse_bounds)
    parser.add_argument("--lengths", default="1,7,24,48")
    return parser.parse_args()


def main():
    args = parse_args()
    lengths = [int(x) for x in args.lengths.split(",") if x]
    models = args.model or ["torch_encoder", "torch_lstm"]
    lo, hi = args.range
    try:
        targets = [run_e2e.load_target(t) for t in args.targets.split(",") if t]
        run_e2e.find_models(args.models, models)
        if not lengths or any(not lo <= n <= hi for n in lengths):
            raise ValueError(f"--lengths must lie in {lo}..{hi}")
    except (ValueError, tomllib.TOMLDecodeError) as err:
        print(f"dim_range: error: {err}", file=sys.stderr)
        return 2
    cuvilc = args.cuvilc.resolve()
    work = args.work.resolve()
    passed = failed = 0
    outputs = {}
    for model in models:
        refs = work / "refs" / model
        shutil.rmtree(refs, ignore_errors=True)
        outputs[model] = write_references(args.node, args.models.resolve() / model, refs,
                                          lengths)
    for target in targets:
        target.prepare(work)
        for model in models:
            try:
                note = run_case(cuvilc, target, args.models.resolve() / model,
                                work / "refs" / model, lengths, (lo, hi),
                                work / target.label / model, outputs[model])
                print(f"PASS {target.label}/{model} ({note})", flush=True)
                passed += 1
            except (run_e2e.CaseError, subprocess.SubprocessError, OSError) as err:
                print(f"FAIL {target.label}/{model}: {err}", flush=True)
                failed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
