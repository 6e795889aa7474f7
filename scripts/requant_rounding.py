#!/usr/bin/python3
"""How often cuvil's fixed-point requantization and ONNX Runtime's float one
round an accumulator to different integers (docs/quantization.md).

cuvil computes rhe(acc * M) exactly (M, a float32 multiplier, held as a
31-bit fixed-point value and a shift); ONNX Runtime's kernels compute
rhe(float32(float32(acc) * M)), whose product is rounded to 24 bits first.
The two differ, by one, only where that rounding carries the product across
a half. Prints the share of differing results for random multipliers
(log-uniform in [1e-4, 1)) and accumulators of several magnitudes.

    scripts/requant_rounding.py [--samples N]
"""
import argparse

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2_000_000)
    args = parser.parse_args()
    rng = np.random.default_rng(13)
    mult = (10 ** rng.uniform(-4, 0, args.samples)).astype(np.float32)
    print("| accumulator range | results differing by one |")
    print("| --- | ---: |")
    for bits in (12, 15, 18, 20, 24):
        acc = rng.integers(-2**bits, 2**bits, args.samples)
        exact = np.rint(acc.astype(np.float64) * mult.astype(np.float64))
        ort = np.rint((acc.astype(np.float32) * mult).astype(np.float32))
        differ = np.count_nonzero(exact != ort)
        assert np.all(np.abs(exact - ort) <= 1)
        print(f"| +-2^{bits} | {differ / args.samples:.4%} |")


if __name__ == "__main__":
    main()
