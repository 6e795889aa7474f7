#!/usr/bin/python3
"""Robustness test: cuvilc must never crash on a damaged model.

Takes valid test models, damages them in deterministic ways (flipped bytes,
overwritten runs, truncation, duplicated chunks), and runs `cuvilc inspect`
and `cuvilc build` on each. Every run must end with exit code 0 (the damage
happened to be harmless) or 1 (a reported error, with an "error:" line), never
with a signal, an abort or another code, and a failed build must leave no
output file.

    mutate_models.py CUVILC MODELS_DIR WORK_DIR [--cases N]
"""

import argparse
import pathlib
import random
import subprocess
import sys

MODELS = ["cnn", "dwsep", "shapes", "matmul"]


def mutations(data: bytes, rng: random.Random):
    """Yields (description, damaged bytes)."""
    n = len(data)
    while True:
        kind = rng.choice(["flip", "run", "truncate", "duplicate"])
        b = bytearray(data)
        if kind == "flip":
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(n)
                b[i] ^= 1 << rng.randrange(8)
            yield f"flip", bytes(b)
        elif kind == "run":
            i = rng.randrange(n)
            length = rng.randint(1, 64)
            b[i:i + length] = bytes(rng.randrange(256) for _ in range(length))
            yield f"run@{i}", bytes(b[:n])
        elif kind == "truncate":
            i = rng.randrange(1, n)
            yield f"truncate@{i}", bytes(b[:i])
        else:
            i, j = sorted(rng.sample(range(n), 2))
            yield f"duplicate@{i}:{j}", bytes(b[:j] + b[i:j] + b[j:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cuvilc")
    ap.add_argument("models", type=pathlib.Path)
    ap.add_argument("work", type=pathlib.Path)
    ap.add_argument("--cases", type=int, default=40, help="per model")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    passed = failed = 0
    for name in MODELS:
        data = (args.models / name / "model.onnx").read_bytes()
        rng = random.Random(name)  # deterministic per model
        gen = mutations(data, rng)
        for case in range(args.cases):
            what, damaged = next(gen)
            path = args.work / f"{name}-{case}.onnx"
            path.write_bytes(damaged)
            out = args.work / f"{name}-{case}.o"
            problems = []
            for cmd in (
                [args.cuvilc, "inspect", str(path)],
                [args.cuvilc, "build", str(path), "--target", "u74-mc",
                 "--out", str(out)],
            ):
                r = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                                   timeout=120)
                if r.returncode not in (0, 1):
                    problems.append(f"{cmd[1]} exited {r.returncode}: "
                                    f"{r.stderr.strip()[-300:]}")
                elif r.returncode == 1 and "error:" not in r.stderr:
                    problems.append(f"{cmd[1]} failed without an error line")
                elif cmd[1] == "build" and r.returncode == 1 and out.exists():
                    problems.append("failed build left an object behind")
            if problems:
                failed += 1
                print(f"FAIL {name}#{case} ({what}): {'; '.join(problems)}")
            else:
                passed += 1
                path.unlink()
                for ext in (".o", ".h", ".ld"):
                    out.with_suffix(ext).unlink(missing_ok=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
