"""Writes calibration inputs for a model, in the layouts `cuvilc quantize
--calibrate` reads (docs/quantization.md):

  gen_calibration.py MODEL.onnx DIR --samples N [--seed S] [--layout L]

L = batch: one .npy holding all N samples stacked on the leading axis;
    files: one .npy per sample;
    dirs:  one subdirectory per sample with <input name>.npy per input.
Values are uniform in [0, 1) (image-like), from a fixed seed.
"""
import argparse
import pathlib

import numpy as np
import onnx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("dir")
    ap.add_argument("--samples", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layout", choices=["batch", "files", "dirs"], default="batch")
    args = ap.parse_args()
    model = onnx.load(args.model)
    inits = {t.name for t in model.graph.initializer}
    inputs = [i for i in model.graph.input if i.name not in inits]
    rng = np.random.default_rng(args.seed)
    out = pathlib.Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    shapes = [[d.dim_value for d in i.type.tensor_type.shape.dim] for i in inputs]
    data = [rng.random((args.samples, *s), dtype=np.float32) for s in shapes]
    if args.layout == "batch":
        assert len(inputs) == 1 and shapes[0][0] == 1
        np.save(out / "calibration.npy", data[0].reshape(args.samples, *shapes[0][1:]))
    elif args.layout == "files":
        assert len(inputs) == 1
        for k in range(args.samples):
            np.save(out / f"sample_{k:04d}.npy", data[0][k])
    else:
        for k in range(args.samples):
            d = out / f"sample_{k:04d}"
            d.mkdir(exist_ok=True)
            for i, inp in enumerate(inputs):
                np.save(d / f"{inp.name}.npy", data[i][k])


if __name__ == "__main__":
    main()
