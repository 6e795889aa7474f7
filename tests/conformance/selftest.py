#!/usr/bin/python3
"""The conformance runner catches what it is there to catch: run on four
ONNX backend tests, two of them spoiled (a wrong expected value, a short
input file), on the given targets, it must report exactly those two as
failures, with their reasons, and pass the others. On the boards the four
run in one batch (board_batches.py): a spoiled test must not hide behind
the others.

    selftest.py --cuvilc PATH --work DIR --targets host,a78,u74-mc [--data DIR]

Exits 0 when the verdicts are as expected, 1 otherwise.
"""

import argparse
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = pathlib.Path(__file__).resolve().parent
TESTS = ("node/test_abs", "node/test_add", "node/test_mul", "node/test_sub")
# test -> what its reason must say
SPOILED = {
    "node/test_sub": r"output 0: 1 of 60 elements differ; first at flat index 7",
    "node/test_mul": r"cannot read \S*input_0\.bin: expected a file of 240 bytes",
}


def rewrite(path, change):
    tensor = onnx.load_tensor(str(path))
    array = change(numpy_helper.to_array(tensor).copy())
    path.write_bytes(numpy_helper.from_array(array, tensor.name).SerializeToString())


def spoil(data):
    """Wrong expected value at flat index 7 of test_sub; test_mul's first
    input cut to its first row."""
    def shifted(a):
        a.flat[7] += np.float32(1.0)
        return a

    rewrite(data / "node/test_sub/test_data_set_0/output_0.pb", shifted)
    rewrite(data / "node/test_mul/test_data_set_0/input_0.pb", lambda a: a[:1].copy())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuvilc", required=True, type=pathlib.Path)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    parser.add_argument("--targets", required=True)
    parser.add_argument("--data", type=pathlib.Path,
                        default=pathlib.Path("/usr/share/libonnx-testdata/data"))
    args = parser.parse_args()

    shutil.rmtree(args.work, ignore_errors=True)
    data = args.work / "data"
    for test in TESTS:
        shutil.copytree(args.data / test, data / test)
    spoil(data)
    scope = args.work / "scope.txt"
    scope.write_text("".join(f"{t} in\n" for t in TESTS))
    proc = subprocess.run(
        [sys.executable, HERE / "run_conformance.py", "--cuvilc", args.cuvilc, "--work",
         args.work / "run", "--targets", args.targets, "--data", data, "--scope", scope],
        capture_output=True, text=True, check=False)
    print(proc.stdout + proc.stderr)

    problems = []
    if proc.returncode != 1:
        problems.append(f"run_conformance.py exited {proc.returncode}, expected 1")
    for label in args.targets.split(","):
        for test in TESTS:
            line = re.search(rf"^(PASS|FAIL|ERROR) {re.escape(label)}/{test}\b(.*)$",
                             proc.stdout, re.MULTILINE)
            if not line:
                problems.append(f"{label}/{test}: no verdict")
            elif test not in SPOILED and line[1] != "PASS":
                problems.append(f"{label}/{test}: {line[1]}, expected PASS")
            elif test in SPOILED and (line[1] != "FAIL"
                                      or not re.search(SPOILED[test], line[2])):
                problems.append(f"{label}/{test}: '{line[1]}{line[2]}', expected FAIL "
                                f"matching '{SPOILED[test]}'")
    for problem in problems:
        print(f"selftest: {problem}")
    if not problems:
        print("selftest: every spoiled test failed, with its reason; the others passed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
