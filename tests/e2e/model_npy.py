#!/usr/bin/python3
"""Write a test model's reference data as .npy files, for `cuvilc run`.

    model_npy.py MODEL_DIR OUT_DIR

MODEL_DIR is a directory tests/models/gen_models.py wrote (model.onnx,
manifest.json, input_<i>.bin) with ONNX Runtime's outputs (ref_<i>.bin, from
tests/reference/run_ort.js). The .bin files hold raw little-endian data; this
writes OUT_DIR/input_<i>.npy with the manifest's dtype and shape (none for
an input the manifest marks absent), and
OUT_DIR/ref_<i>.npy as float32 (run_ort.js writes every output so) with the
shape model.onnx declares for the output, its symbolic dimensions taken from
the manifest's "dims" (one other symbolic dimension follows from the data's
size). Prints the paths written; exits 1 on a problem.
"""

import json
import pathlib
import sys

import numpy as np
import onnx


def output_shapes(model_path, dims):
    """The declared shape of each graph output, symbolic names resolved."""
    graph = onnx.load(str(model_path), load_external_data=False).graph
    shapes = []
    for out in graph.output:
        shape = []
        for d in out.type.tensor_type.shape.dim:
            if d.HasField("dim_value"):
                shape.append(d.dim_value)
            elif d.dim_param in dims:
                shape.append(dims[d.dim_param])
            else:
                shape.append(-1)  # from the data's size, if it is the only one
        if shape.count(-1) > 1:
            raise ValueError(f"output '{out.name}': more than one dimension is "
                             "neither fixed nor in the manifest's dims")
        shapes.append(shape)
    return shapes


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    model_dir, out_dir = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((model_dir / "manifest.json").read_text())
    try:
        for i, inp in enumerate(manifest["inputs"]):
            if inp.get("absent"):
                continue  # an optional input left out: `--input none`
            dtype = np.dtype(inp["dtype"]).newbyteorder("<")
            data = np.fromfile(model_dir / f"input_{i}.bin", dtype=dtype)
            path = out_dir / f"input_{i}.npy"
            np.save(path, data.reshape(inp["shape"]))
            print(path)
        shapes = output_shapes(model_dir / "model.onnx", manifest.get("dims", {}))
        for i, shape in enumerate(shapes):
            # The sanitized tree generates the models without ONNX
            # Runtime's outputs: then only the inputs are written.
            if not (model_dir / f"ref_{i}.bin").exists():
                continue
            data = np.fromfile(model_dir / f"ref_{i}.bin", dtype="<f4")
            path = out_dir / f"ref_{i}.npy"
            np.save(path, data.reshape(shape))
            print(path)
    except (OSError, ValueError) as err:
        print(f"model_npy.py: {model_dir}: {err}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
