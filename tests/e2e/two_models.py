#!/usr/bin/python3
"""Two models in one image: the test models mlp and cnn, compiled by cuvilc with
--name mlp and --name cnn, linked together with tests/e2e/two_models.c, run
under QEMU, both outputs compared with ONNX Runtime's.

    two_models.py --cuvilc PATH --models DIR --work DIR --targets u74-mc,a78

--models is the directory tests/models/gen_models.py wrote, with reference
outputs from tests/reference/run_ort.js. For each board target, in
WORK/<target>/: build mlp.o and cnn.o (no undefined symbols), link both into
one image with the target's base linker script, whose cuvil-models.ld INCLUDEs
mlp.ld and cnn.ld (a clash of symbols, sections or memory fails the link), run
it, and compare mlp/out_0.bin and cnn/out_0.bin with the references, as
run_e2e.py does (whose steps this reuses).

Prints `PASS target (...)` or `FAIL target: reason` per target, then
`N passed, M failed`. Exits 0 if all passed, 1 if any failed, 2 on usage errors.
"""

import argparse
import json
import pathlib
import shutil
import sys
import tomllib

import run_e2e

MODELS = ("mlp", "cnn")
HARNESS = pathlib.Path(__file__).resolve().parent / "two_models.c"


def run_target(cuvilc, target, models_root, case_dir):
    """Build, link, run and check both models on one target; returns the
    largest absolute error."""
    shutil.rmtree(case_dir, ignore_errors=True)
    for name in MODELS:
        (case_dir / name).mkdir(parents=True)
        shutil.copyfile(models_root / name / "input_0.bin", case_dir / name / "input_0.bin")
        run_e2e.compile_model(cuvilc, target, models_root / name, case_dir, name)
    image = target.build(case_dir, source=HARNESS, models=MODELS)
    run_e2e.run_image(target, image, case_dir)
    worst = 0.0
    for name in MODELS:
        manifest = json.loads((models_root / name / "manifest.json").read_text())
        worst = max(worst, run_e2e.compare(models_root / name, case_dir / name,
                                           manifest["outputs"]))
    return worst


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuvilc", required=True, type=pathlib.Path, help="the cuvilc executable")
    parser.add_argument("--models", required=True, type=pathlib.Path,
                        help="directory written by gen_models.py, with reference outputs")
    parser.add_argument("--work", required=True, type=pathlib.Path, help="scratch directory")
    parser.add_argument("--targets", required=True,
                        help="comma-separated board targets, e.g. u74-mc,a78")
    return parser.parse_args()


def main():
    args = parse_args()
    try:
        if not args.cuvilc.is_file():
            raise ValueError(f"cuvilc not found at {args.cuvilc}")
        targets = [run_e2e.load_target(t) for t in args.targets.split(",") if t]
        if not targets:
            raise ValueError("--targets names no target")
        if any(isinstance(t, run_e2e.HostTarget) for t in targets):
            raise ValueError("two_models.py runs board targets only")
        run_e2e.find_models(args.models, list(MODELS))
    except (ValueError, tomllib.TOMLDecodeError) as err:
        print(f"two_models: error: {err}", file=sys.stderr)
        return 2
    cuvilc = args.cuvilc.resolve()
    work = args.work.resolve()

    passed = failed = 0
    for target in targets:
        try:
            target.prepare(work)
            max_err = run_target(cuvilc, target, args.models.resolve(), work / target.name)
        except run_e2e.CaseError as reason:
            print(f"FAIL {target.name}: {reason}", flush=True)
            failed += 1
            continue
        print(f"PASS {target.name} ({' + '.join(MODELS)}, max_abs_err={max_err:.3g})", flush=True)
        passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
