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
    return run_e2e.test_arguments(__doc__, targets_required=True).parse_args()


def main():
    args = parse_args()
    try:
        targets = run_e2e.board_targets(args, "two_models.py", MODELS)
    except (ValueError, tomllib.TOMLDecodeError) as err:
        print(f"two_models: error: {err}", file=sys.stderr)
        return 2
    cuvilc = args.cuvilc.resolve()
    work = args.work.resolve()

    def case(target):
        target.prepare(work)
        max_err = run_target(cuvilc, target, args.models.resolve(), work / target.name)
        return f"{' + '.join(MODELS)}, max_abs_err={max_err:.3g}"

    return run_e2e.run_cases((t.name, lambda t=t: case(t)) for t in targets)


if __name__ == "__main__":
    sys.exit(main())
