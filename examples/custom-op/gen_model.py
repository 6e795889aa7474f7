#!/usr/bin/python3
"""Writes the custom-op example's model, input and reference output.

    gen_model.py OUT_DIR

The model takes an 8x8 RGB image as uint8 NHWC and runs two ops of the
firmware team's own domains between standard ONNX ops:

    image u8[1,8,8,3] -> NormalizeU8toF32 (com.example.vision) -> f32[1,3,8,8]
      -> Conv 3x3 (3->4) -> Relu -> ScaleShift (com.example.vendor, in place)
      -> Conv 1x1 (4->2) -> y f32[1,2,8,8]

ONNX Runtime cannot run the two custom ops, so the reference output
(ref.bin, raw float32) is computed here in numpy from the ops' definitions
(see custom-ops.toml and vendor_kernels.c). Writes model.onnx, input.bin
(raw uint8) and ref.bin.
"""

import pathlib
import sys

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

SCALE = 1.0 / 255.0
ZERO_POINT = 16
ALPHA = 0.5
BETA = 0.25


def conv2d(x, w, b, pad):
    """NCHW convolution, stride 1, symmetric zero padding."""
    n, c, h, wd = x.shape
    k = w.shape[2]
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, w.shape[0], h, wd), dtype=np.float64)
    for i in range(k):
        for j in range(k):
            patch = xp[:, :, i:i + h, j:j + wd]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return (out + b[None, :, None, None]).astype(np.float32)


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(19)
    w1 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.5
    b1 = rng.standard_normal(4).astype(np.float32) * 0.1
    w2 = rng.standard_normal((2, 4, 1, 1)).astype(np.float32)
    b2 = rng.standard_normal(2).astype(np.float32) * 0.1
    image = rng.integers(0, 256, size=(1, 8, 8, 3), dtype=np.uint8)

    nodes = [
        helper.make_node("NormalizeU8toF32", ["image"], ["x"], name="normalize",
                         domain="com.example.vision", scale=SCALE,
                         zero_point=ZERO_POINT),
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("ScaleShift", ["r1"], ["s1"], name="scale_shift",
                         domain="com.example.vendor", alpha=ALPHA, beta=BETA),
        helper.make_node("Conv", ["s1", "w2", "b2"], ["y"], name="conv2"),
    ]
    graph = helper.make_graph(
        nodes, "custom_op_example",
        [helper.make_tensor_value_info("image", TensorProto.UINT8, [1, 8, 8, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b2, "b2")])
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17),
        helper.make_opsetid("com.example.vision", 1),
        helper.make_opsetid("com.example.vendor", 1)])
    model.ir_version = 8
    checker.check_model(model)
    save(model, out / "model.onnx")

    # The reference, op by op as the kernels define them.
    x = ((image.astype(np.float32) - np.float32(ZERO_POINT)) *
         np.float32(SCALE)).transpose(0, 3, 1, 2)
    r1 = np.maximum(conv2d(x, w1, b1, 1), 0)
    s1 = r1 * np.float32(ALPHA) + np.float32(BETA)
    y = conv2d(s1, w2, b2, 0)
    image.tofile(out / "input.bin")
    y.astype(np.float32).tofile(out / "ref.bin")


if __name__ == "__main__":
    main()
