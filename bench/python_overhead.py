#!/usr/bin/python3
"""The cost of calling a compiled model from Python (docs/python.md).

    python_overhead.py [--cuvilc PATH] [--runs N] [--rounds R]
                       [--models DIR] [--model mlp]

Compiles a benchmark model (bench/models.py; default the MLP) for the host
once, then, in alternating rounds so that a change in the machine's load
weighs on both sides alike:
  - the native figure: bench/host_bench.c linked with the object, the
    median of N timed cuvil_model_run_v calls in C;
  - the Python figure: the median of N timed `fn(x)` calls of the cuvil
    package on the same model and input (fn = cuvil.compile(...)).
Prints both (median of the round medians) and their difference, the
overhead of one call from Python: the input checks, output allocation and
the ctypes call.
"""

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

BENCH = pathlib.Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO / "python"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuvilc", default=str(REPO / "build" / "cuvilc" / "cuvilc"))
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--runs", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    os.environ["CUVILC"] = args.cuvilc
    import cuvil  # after $CUVILC is set: the package finds cuvilc through it

    with tempfile.TemporaryDirectory(prefix="cuvil-overhead-") as work:
        work = pathlib.Path(work)
        subprocess.run([sys.executable, BENCH / "models.py", work, "--only", args.model],
                       check=True, capture_output=True)
        model_dir = work / args.model
        subprocess.run([args.cuvilc, "build", model_dir / "model.onnx", "--target", "host",
                        "--name", "model", "--out", model_dir / "model.o"], check=True)
        exe = model_dir / "host_bench"
        subprocess.run(["cc", "-O2", "-I", model_dir, BENCH / "host_bench.c",
                        model_dir / "model.o", "-o", exe], check=True)
        fn = cuvil.compile(model_dir / "model.onnx")
        inputs = [np.fromfile(model_dir / f"input_{i}.bin", info.dtype).reshape(info.shape)
                  for i, info in enumerate(fn.inputs)]
        fn(*inputs)  # the thread's instance is initialised by its first call
        native, python = [], []
        for _ in range(args.rounds):
            out = subprocess.run([exe, str(args.runs)], cwd=model_dir, check=True,
                                 capture_output=True, text=True).stdout
            native.append(json.loads(out)["median_ns"])
            times = []
            for _ in range(args.runs):
                start = time.perf_counter_ns()
                fn(*inputs)
                times.append(time.perf_counter_ns() - start)
            python.append(statistics.median(times))
    n, p = statistics.median(native), statistics.median(python)
    print(f"model {args.model}: native run {n / 1000:.2f} us, fn(x) from Python "
          f"{p / 1000:.2f} us, overhead {(p - n) / 1000:.2f} us per call "
          f"(medians of {args.rounds} rounds of {args.runs} calls)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
