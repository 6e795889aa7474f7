"""The e2e models exported by other tools (PyTorch: torch_einsum.py,
torch_sequence.py, torch_control_flow.py, torch_source.py), committed
beside this script: which file each case uses, with what dimensions and
input values, and how gen_models.py writes a case's directory
(write_exported).
"""

import copy
import json
import pathlib
import zlib

import numpy as np
import onnx
# Exported models committed beside this script: file, the values of their
# symbolic input dimensions, and (optional) the value every element of a
# named input takes (others are drawn at random), or None for an optional
# input left out (see write_exported).
EXPORTED = {
    "torch_einsum": ("torch_einsum.onnx", {"batch": 2}),
    # Traced at 32 and 49 steps (torch_sequence.py).
    "torch_encoder": ("torch_encoder.onnx", {"seq": 24}),
    "torch_lstm": ("torch_lstm.onnx", {"seq": 20}),
    # torch_control_flow.py: torch_vad both ways through each of its Ifs
    # (the sample-rate If is decided at run time by `sr`, the padding If
    # at compile time by `samples`: 250 is padded to 256, 256 needs none);
    # torch_stream's Loop runs samples // 16 times (traced at 4).
    "torch_vad_16k": ("torch_vad.onnx", {"samples": 250}, {"sr": 16000}),
    "torch_vad_8k": ("torch_vad.onnx", {"samples": 256}, {"sr": 8000}),
    # Its state inputs are Optional[Tensor] (zeros when None): left out
    # (NULL) on both networks, and one of the two given.
    "torch_vad_16k_fresh": ("torch_vad.onnx", {"samples": 250}, {"sr": 16000, "h": None, "c": None}),
    "torch_vad_8k_fresh_h": ("torch_vad.onnx", {"samples": 256}, {"sr": 8000, "h": None}),
    "torch_stream": ("torch_stream.onnx", {"samples": 80}),
    # torch_until's loop breaks once an update is below `limit`: after 4 of
    # its 8 iterations at 0.05, never at 0.
    "torch_until_early": ("torch_until.onnx", {}, {"limit": 0.05}),
    "torch_until_full": ("torch_until.onnx", {}, {"limit": 0.0}),
    # torch_scores' output y is [1, 10, 4] (every frame) or [1, 1, 4] (the
    # last), as the run-time `every_frame` picks.
    "torch_scores_all": ("torch_scores.onnx", {"frames": 10}, {"every_frame": True}),
    "torch_scores_last": ("torch_scores.onnx", {"frames": 10}, {"every_frame": False}),
    # torch_refine's Loop runs `steps` times unless an update falls below
    # `tol` first; nothing in the model bounds it, so it is built with
    # --loop-bound /Loop=8 (LOOP_BOUNDS): 6 steps, and 20 asked for that
    # break after 4.
    "torch_refine_steps": ("torch_refine.onnx", {}, {"steps": 6, "tol": 0.0}),
    "torch_refine_early": ("torch_refine.onnx", {}, {"steps": 20, "tol": 0.01}),
}

# Exported models built with --loop-bound: file -> {Loop node: bound}
# (written into the manifest as "loop_bounds").
LOOP_BOUNDS = {"torch_refine.onnx": {"/Loop": 8}}


def without_inputs(model, names):
    """The model with the optional inputs `names` left out: each becomes the
    output of an `Optional` node without input (an empty optional), which is
    how ONNX Runtime, whose feeds cannot leave out an input, computes the
    reference of a run that passes NULL for them."""
    model = copy.deepcopy(model)
    graph = model.graph
    kept = [v for v in graph.input if v.name not in names]
    gone = [v for v in graph.input if v.name in names]
    for v in gone:
        if not v.type.HasField("optional_type"):
            raise RuntimeError(f"input '{v.name}' is not optional: it cannot be left out")
    del graph.input[:]
    graph.input.extend(kept)
    for i, v in enumerate(gone):
        graph.node.insert(i, onnx.helper.make_node("Optional", [], [v.name], name=f"absent_{v.name}",
                                                   type=v.type.optional_type.elem_type))
    return model


def write_exported(out_dir, name):
    """An exported model with inputs for EXPORTED's dimension values."""
    file, dims, *fixed = EXPORTED[name]
    fixed = fixed[0] if fixed else {}
    model = onnx.load(pathlib.Path(__file__).resolve().parent / file)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    model_dir = out_dir / name
    model_dir.mkdir(parents=True, exist_ok=True)
    onnx.save(model, model_dir / "model.onnx")
    weights = {t.name for t in model.graph.initializer}
    inputs = []
    for value in (v for v in model.graph.input if v.name not in weights):
        tensor_type = (value.type.optional_type.elem_type.tensor_type
                       if value.type.HasField("optional_type") else value.type.tensor_type)
        dtype = np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[tensor_type.elem_type])
        if value.name not in fixed and dtype != np.float32:
            raise RuntimeError(f"{name}: input '{value.name}' is {dtype}; give its value in EXPORTED")
        shape = [d.dim_value if d.HasField("dim_value") else dims[d.dim_param]
                 for d in tensor_type.shape.dim]
        if value.name in fixed and fixed[value.name] is None:
            # Left out: an empty file (the runner passes NULL).
            (model_dir / f"input_{len(inputs)}.bin").write_bytes(b"")
            inputs.append({"name": value.name, "shape": shape, "dtype": dtype.name, "absent": True})
            continue
        data = (np.full(shape, fixed[value.name], dtype) if value.name in fixed
                else rng.normal(0.0, 1.0, shape).astype(np.float32))
        data.astype(dtype.newbyteorder("<")).tofile(model_dir / f"input_{len(inputs)}.bin")
        inputs.append({"name": value.name, "shape": shape, "dtype": dtype.name})
    manifest = {"inputs": inputs, "outputs": [o.name for o in model.graph.output], "dims": dims}
    if file in LOOP_BOUNDS:
        manifest["loop_bounds"] = LOOP_BOUNDS[file]
    absent = {i["name"] for i in inputs if i.get("absent")}
    if absent:
        onnx.save(without_inputs(model, absent), model_dir / "reference.onnx")
        manifest["reference_model"] = "reference.onnx"
    (model_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


