#!/usr/bin/python3
"""What splitting costs, layer by layer (--cores, docs/multicore.md).

    share_profile.py --cuvilc PATH --model MODEL.onnx --target a78|u74-mc
                     [--cores 4] [--work DIR]

Builds the model twice with --profile, for one core and for --cores, and
runs both under QEMU with -icount. The multicore image is built with the
runner's team measurement (-DCUVIL_RUNNER_TEAM_MEASURE): every share runs
on the first core, so a split layer's profiled count is the sum of its
shares. Prints, per step, the one-core instructions, the shares' sum and
their ratio: above 1.00 is work the split adds (input gathered again by
every share, set-up repeated per share, a narrower kernel form).
The inputs are the model directory's input_<i>.bin (bench/models.py
writes them).
"""

import argparse
import pathlib
import re
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "e2e"))
import run_e2e  # noqa: E402

ROW = re.compile(r"^cuvil: profile\s+(\d+)\s+\d+\s+(\d+)\s+\S+%\s+(\S+)", re.MULTILINE)


def profile(cuvilc, model, target, cores, work):
    """{step: (instructions, node)} of a --profile build for `cores` cores."""
    case = work / f"cores{cores}"
    shutil.rmtree(case, ignore_errors=True)
    case.mkdir(parents=True)
    for f in model.parent.glob("input_*.bin"):
        shutil.copyfile(f, case / f.name)
    run_e2e.run([cuvilc, "build", model, "--target", target.name, "--name", "model",
                 "--profile", "--cores", str(cores), "--out", case / "model.o"],
                f"cuvilc build --cores {cores}")
    defines = ["CUVIL_RUNNER_TEAM_MEASURE=1"] if cores > 1 else []
    image = target.build(case, defines=defines)
    stdout = run_e2e.run(target.command(image), "run under QEMU", cwd=case,
                         timeout=run_e2e.RUN_TIMEOUT_S).stdout
    rows = {int(m[1]): (int(m[2]), m[3]) for m in ROW.finditer(stdout)}
    if not rows:
        raise run_e2e.CaseError(f"the {cores}-core run printed no profile")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuvilc", required=True, type=pathlib.Path)
    parser.add_argument("--model", required=True, type=pathlib.Path)
    parser.add_argument("--target", required=True, choices=["a78", "u74-mc"])
    parser.add_argument("--cores", type=int, default=4)
    parser.add_argument("--work", type=pathlib.Path, default=pathlib.Path("/tmp/share_profile"))
    args = parser.parse_args()
    target = run_e2e.load_target(args.target)
    target.prepare(args.work)
    try:
        one = profile(args.cuvilc, args.model, target, 1, args.work)
        split = profile(args.cuvilc, args.model, target, args.cores, args.work)
    except run_e2e.CaseError as err:
        print(f"share_profile: {err}", file=sys.stderr)
        return 1
    print(f"{'step':>4}  {'node':40} {'1 core':>10} {'shares':>10} {'ratio':>6}")
    for step, (count, node) in sorted(one.items()):
        shares = split.get(step, (0, ""))[0]
        ratio = shares / count if count else 0.0
        print(f"{step:4}  {node[:40]:40} {count:10,} {shares:10,} {ratio:6.2f}")
    total_one = sum(c for c, _ in one.values())
    total_split = sum(c for c, _ in split.values())
    print(f"{'':4}  {'total':40} {total_one:10,} {total_split:10,} "
          f"{total_split / total_one:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
