"""Test models at opsets 18 to 21, for gen_models.py.

Each function builds one small model on a gen_models.Graph, sets the
model's opset and gives every output's shape: the ONNX 1.12 that python3-onnx
brings knows opsets up to 17 only, so neither its checker nor its shape
inference runs on these models. ONNX Runtime computes the reference outputs
and cuvilc (with its own schemas for opsets 18 to 21) must match them.
Each model exercises what changed in its opset: Reduce* taking axes as an
input, Split's num_outputs, Pad's axes input and wrap mode, Resize's axes,
keep_aspect_ratio_policy, antialias and half_pixel_symmetric, the max/min
reductions of ScatterElements/ScatterND, GroupNormalization (per group at
18, per channel at 21), LpPool's dilations and ceil_mode, Col2Im, Gelu,
Mish, and ops only re-versioned for wider types (Cast, Identity, Reshape,
Shape, Flatten, Transpose, Squeeze, Unsqueeze, QuantizeLinear,
DequantizeLinear).
"""

import numpy as np
from onnx import TensorProto, helper

# The IR version ONNX writes with each opset (ONNX 1.13: 8, 1.14-1.15: 9,
# 1.16: 10), which ONNX Runtime 1.20 reads.
IR_VERSIONS = {18: 8, 19: 9, 20: 9, 21: 10}


def ir_version(opset):
    return IR_VERSIONS[opset]


def ints(g, name, values):
    return g.const(name, values, np.int64)


def multi(g, op, inputs, outputs, name, **attrs):
    """A node with several outputs (Graph.node names one after the node)."""
    g.nodes.append(helper.make_node(op, inputs, outputs, name=name, **attrs))


def opset18_reduce(g):
    """Every Reduce* op with axes as an input (ReduceSum's since 13)."""
    g.opset = 18
    x = g.input("x", g.rng.uniform(-1.0, 1.0, (2, 3, 4, 5)))
    pos = g.node("Add", [g.node("Mul", [x, x], "square"), g.const("one", 1.0)], "positive")
    cases = [
        ("ReduceMax", [1], 1, x, (2, 1, 4, 5)),
        ("ReduceMin", [-1], 0, x, (2, 3, 4)),
        ("ReduceMean", [2, 3], 1, x, (2, 3, 1, 1)),
        ("ReduceProd", [1], 0, x, (2, 4, 5)),
        ("ReduceSumSquare", [0, 2], 0, x, (3, 5)),
        ("ReduceL1", [3], 1, x, (2, 3, 4, 1)),
        ("ReduceL2", [1, 2], 0, x, (2, 5)),
        ("ReduceLogSum", [2], 0, pos, (2, 3, 5)),
        ("ReduceLogSumExp", [3], 0, x, (2, 3, 4)),
        ("ReduceSum", [0], 0, x, (3, 4, 5)),
    ]
    for op, axes, keepdims, src, shape in cases:
        name = op[len("Reduce"):].lower()
        g.output(g.node(op, [src, ints(g, name + ".axes", axes)], name, keepdims=keepdims), shape)
    # Without axes: every axis; empty axes with noop_with_empty_axes: the
    # identity.
    g.output(g.node("ReduceMax", [x], "max_all", keepdims=0), ())
    noop = g.node("ReduceMean", [x, ints(g, "noop.axes", np.zeros(0))], "mean_noop",
                  noop_with_empty_axes=1)
    g.output(g.node("Neg", [noop], "neg_noop"), (2, 3, 4, 5))


def opset18_split_pad(g):
    """Split by num_outputs (uneven: the last part smaller) and by sizes; Pad
    restricted to an axes input, in constant, reflect and edge modes."""
    g.opset = 18
    x = g.input("x", g.rng.uniform(-1.0, 1.0, (2, 7, 5)))
    parts = ["part0", "part1", "part2"]
    multi(g, "Split", [x], parts, "split_equal", axis=1, num_outputs=3)
    for part, extent in zip(parts, (3, 3, 1)):
        g.output(part, (2, extent, 5))
    multi(g, "Split", [x, ints(g, "split.sizes", [2, 3])], ["left", "right"], "split_sizes",
          axis=-1)
    g.output("left", (2, 7, 2))
    g.output("right", (2, 7, 3))
    pads = [x, ints(g, "pad.pads", [1, 2, 0, 1]), g.const("pad.value", 0.5),
            ints(g, "pad.axes", [1, -1])]
    g.output(g.node("Pad", pads, "pad_constant", mode="constant"), (2, 8, 8))
    pads = [x, ints(g, "reflect.pads", [2, 1]), "", ints(g, "reflect.axes", [2])]
    g.output(g.node("Pad", pads, "pad_reflect", mode="reflect"), (2, 7, 8))
    pads = [x, ints(g, "edge.pads", [1, 0, 0, 2]), "", ints(g, "edge.axes", [0, 1])]
    g.output(g.node("Pad", pads, "pad_edge", mode="edge"), (3, 9, 5))


def opset18_resize(g):
    """Resize over an axes attribute: sizes, keep_aspect_ratio_policy
    not_larger / not_smaller, and antialiased linear downscaling."""
    g.opset = 18
    x = g.input("x", g.rng.uniform(0.0, 1.0, (1, 2, 8, 8)))
    spatial = {"axes": [2, 3]}
    g.output(g.node("Resize", [x, "", "", ints(g, "a.sizes", [4, 6])], "resize_sizes",
                    mode="linear", **spatial), (1, 2, 4, 6))
    # min(5/8, 7/8) = 0.625 on both axes: 5 x 5.
    g.output(g.node("Resize", [x, "", "", ints(g, "b.sizes", [5, 7])], "resize_not_larger",
                    mode="nearest", keep_aspect_ratio_policy="not_larger", **spatial),
             (1, 2, 5, 5))
    # max(4/8, 6/8) = 0.75 on both axes: 6 x 6.
    g.output(g.node("Resize", [x, "", "", ints(g, "c.sizes", [4, 6])], "resize_not_smaller",
                    mode="linear", keep_aspect_ratio_policy="not_smaller", **spatial),
             (1, 2, 6, 6))
    g.output(g.node("Resize", [x, "", g.const("d.scales", [0.5, 0.5])], "resize_antialias",
                    mode="linear", antialias=1, **spatial), (1, 2, 4, 4))


def opset18_scatter(g):
    """ScatterElements and ScatterND with reduction max and min, with
    repeated indices so that the reduction decides."""
    g.opset = 18
    x = g.input("x", g.rng.uniform(-1.0, 1.0, (3, 4)))
    updates = g.input("updates", g.rng.uniform(-1.0, 1.0, (2, 4)))
    idx = ints(g, "se.indices", [[1, 0, 2, 1], [1, 2, 0, 1]])
    for red in ("max", "min"):
        g.output(g.node("ScatterElements", [x, idx, updates], "elements_" + red, axis=0,
                        reduction=red), (3, 4))
    nd_updates = g.input("nd_updates", g.rng.uniform(-1.0, 1.0, (3, 4)))
    nd_idx = ints(g, "nd.indices", [[1], [0], [1]])
    for red in ("max", "min"):
        g.output(g.node("ScatterND", [x, nd_idx, nd_updates], "nd_" + red, reduction=red),
                 (3, 4))


def opset18_norm_pool(g):
    """GroupNormalization-18 (scale and bias per group), LpPool with
    dilations and ceil_mode, Col2Im with and without strides/pads."""
    g.opset = 18
    x = g.input("x", g.rng.normal(0.3, 1.0, (2, 6, 4, 5)))
    gn = [x, g.const("gn.scale", g.rng.uniform(0.5, 1.5, 3)),
          g.const("gn.bias", g.rng.uniform(-0.5, 0.5, 3))]
    g.output(g.node("GroupNormalization", gn, "group_norm", num_groups=3), (2, 6, 4, 5))
    g.output(g.node("LpPool", [x], "lp2", kernel_shape=[2, 3], strides=[2, 1],
                    pads=[0, 1, 0, 1], p=2), (2, 6, 2, 5))
    g.output(g.node("LpPool", [x], "lp3_dilated", kernel_shape=[2, 2], dilations=[1, 2], p=3),
             (2, 6, 3, 3))
    g.output(g.node("LpPool", [x], "lp1_ceil", kernel_shape=[3, 3], strides=[2, 2],
                    ceil_mode=1, p=1), (2, 6, 2, 2))
    cols = g.input("cols", g.rng.uniform(-1.0, 1.0, (1, 8, 6)))
    g.output(g.node("Col2Im", [cols, ints(g, "a.image", [3, 4]), ints(g, "a.block", [2, 2])],
                    "col2im"), (1, 2, 3, 4))
    # H: (5 + 2 - 3) / 2 + 1 = 3 blocks, W: (5 - 2) / 1 + 1 = 4: L = 12.
    strided = g.input("strided_cols", g.rng.uniform(-1.0, 1.0, (1, 4, 12)))
    g.output(g.node("Col2Im", [strided, ints(g, "b.image", [5, 5]), ints(g, "b.block", [2, 2])],
                    "col2im_strided", strides=[2, 1], dilations=[2, 1], pads=[1, 0, 1, 0]),
             (1, 1, 5, 5))


def opset19_misc(g):
    """Pad's wrap mode, AveragePool-19 (dilations), Resize's
    half_pixel_symmetric, and Cast (with saturate), Identity, Reshape, Shape
    and Scan as re-versioned at 19."""
    g.opset = 19
    x = g.input("x", g.rng.uniform(-1.0, 1.0, (1, 2, 5, 6)))
    g.output(g.node("Pad", [x, ints(g, "wrap.pads", [0, 0, 1, 2, 0, 0, 2, 1])], "pad_wrap",
                    mode="wrap"), (1, 2, 8, 9))
    g.output(g.node("AveragePool", [x], "avg", kernel_shape=[2, 2], strides=[1, 2],
                    dilations=[1, 1], pads=[0, 1, 0, 1]), (1, 2, 4, 4))
    # Dilated: H (5 + 1 - 3) / 1 + 1 = 4, W (6 + 3 - 5) / 2 + 1 = 3.
    for include in (0, 1):
        g.output(g.node("AveragePool", [x], f"avg_dilated{include}", kernel_shape=[2, 3],
                        strides=[1, 2], dilations=[2, 2], pads=[1, 1, 0, 2],
                        count_include_pad=include), (1, 2, 4, 3))
    half = g.node("Cast", [x], "to_half", to=TensorProto.FLOAT16, saturate=1)
    g.output(g.node("Cast", [half], "from_half", to=TensorProto.FLOAT), (1, 2, 5, 6))
    ident = g.node("Identity", [x], "ident")
    g.output(g.node("Reshape", [ident, ints(g, "reshape.shape", [2, 30])], "reshape"), (2, 30))
    shape = g.node("Shape", [x], "shape_of", start=1, end=3)
    g.output(g.node("Cast", [shape], "shape_float", to=TensorProto.FLOAT), (2,))
    g.output(g.node("Resize", [x, "", g.const("sym.scales", [1.0, 1.0, 2.0, 1.5])],
                    "resize_symmetric", mode="linear",
                    coordinate_transformation_mode="half_pixel_symmetric"), (1, 2, 10, 9))
    # Scan-19 with a static trip count (unrolled at import): running sums.
    seq = g.input("seq", g.rng.uniform(-1.0, 1.0, (3, 4)))
    vec = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, (4,))
    body = helper.make_graph(
        [helper.make_node("Add", ["sum_in", "row"], ["sum_out"], name="accumulate"),
         helper.make_node("Identity", ["sum_out"], ["row_out"], name="emit")],
        "body", [vec("sum_in"), vec("row")], [vec("sum_out"), vec("row_out")])
    multi(g, "Scan", [g.const("scan.init", np.zeros(4)), seq], ["scan_sum", "scan_rows"],
          "scan", body=body, num_scan_inputs=1)
    g.output("scan_sum", (4,))
    g.output("scan_rows", (3, 4))


def opset20_misc(g):
    """Gelu (erf form and tanh approximation), Mish, ReduceMax-20, DFT-20
    (axis as an input)."""
    g.opset = 20
    x = g.input("x", g.rng.uniform(-4.0, 4.0, (2, 3, 8)))
    g.output(g.node("Gelu", [x], "gelu"), (2, 3, 8))
    g.output(g.node("Gelu", [x], "gelu_tanh", approximate="tanh"), (2, 3, 8))
    g.output(g.node("Mish", [x], "mish"), (2, 3, 8))
    g.output(g.node("ReduceMax", [x, ints(g, "max.axes", [2])], "max", keepdims=0), (2, 3))
    real = g.node("Unsqueeze", [x, ints(g, "dft.unsqueeze", [3])], "real")
    g.output(g.node("DFT", [real, "", ints(g, "dft.axis", 2)], "dft", onesided=1), (2, 3, 5, 2))


def opset21_misc(g):
    """GroupNormalization-21 (scale and bias per channel), QuantizeLinear /
    DequantizeLinear-21 per tensor and per axis, If-21, and Flatten,
    Transpose, Squeeze, Unsqueeze, Constant, Size, Equal, CastLike as
    re-versioned at 21."""
    g.opset = 21
    x = g.input("x", g.rng.normal(0.0, 1.0, (1, 6, 3, 4)))
    gn = [x, g.const("gn.scale", g.rng.uniform(0.5, 1.5, 6)),
          g.const("gn.bias", g.rng.uniform(-0.5, 0.5, 6))]
    g.output(g.node("GroupNormalization", gn, "group_norm", num_groups=2), (1, 6, 3, 4))
    scale, zero = g.const("q.scale", 0.02), g.const("q.zero", 128, np.uint8)
    q = g.node("QuantizeLinear", [x, scale, zero], "quant")
    g.output(g.node("DequantizeLinear", [q, scale, zero], "dequant"), (1, 6, 3, 4))
    scales = g.const("qa.scale", g.rng.uniform(0.01, 0.03, 6))
    zeros = g.const("qa.zero", [-3, 0, 5, 1, -1, 2], np.int8)
    qa = g.node("QuantizeLinear", [x, scales, zeros], "quant_axis", axis=1)
    g.output(g.node("DequantizeLinear", [qa, scales, zeros], "dequant_axis", axis=1),
             (1, 6, 3, 4))
    t = g.node("Transpose", [x], "nhwc", perm=[0, 2, 3, 1])
    g.output(g.node("Flatten", [t], "flat", axis=2), (3, 24))
    sq = g.node("Squeeze", [x, ints(g, "squeeze.axes", [0])], "squeezed")
    g.output(g.node("Unsqueeze", [sq, ints(g, "unsqueeze.axes", [1])], "unsqueezed"),
             (6, 1, 3, 4))
    # If-21 whose branch holds an opset-20 op (Gelu): subgraphs are checked
    # and inferred with cuvil's schemas too.
    cond = g.node("Greater", [g.node("ReduceSum", [x], "total", keepdims=0),
                              g.const("zero", 0.0)], "positive")
    branch_out = lambda name: [helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                             (1, 6, 3, 4))]
    then_g = helper.make_graph([helper.make_node("Gelu", [x], ["then_y"], name="then_gelu")],
                               "then", [], branch_out("then_y"))
    else_g = helper.make_graph([helper.make_node("Neg", [x], ["else_y"], name="else_neg")],
                               "else", [], branch_out("else_y"))
    g.output(g.node("If", [cond], "branch", then_branch=then_g, else_branch=else_g),
             (1, 6, 3, 4))
    # Constant, Size, Equal and CastLike as re-versioned at 19 and 21.
    half = g.node("Constant", [], "half", value_float=0.5)
    g.output(g.node("Mul", [x, half], "halved"), (1, 6, 3, 4))
    size = g.node("Cast", [g.node("Size", [x], "size")], "size_float", to=TensorProto.FLOAT)
    g.output(size, ())
    rounded = g.node("Round", [g.node("Mul", [x, g.const("two", 2.0)], "doubled")], "rounded")
    same = g.node("Equal", [rounded, g.const("one_f", 1.0)], "is_one")
    g.output(g.node("CastLike", [same, x], "is_one_float"), (1, 6, 3, 4))


MODELS = (opset18_reduce, opset18_split_pad, opset18_resize, opset18_scatter, opset18_norm_pool,
          opset19_misc, opset20_misc, opset21_misc)


# ---- Bad-input fixtures: versions and operators cuvil refuses ---------------


def _fixture(path, nodes, opsets, ir=8, inits=(), out_shape=(1, 4)):
    """A model of input x [1, 4] and output y, written without ONNX's
    checker (which knows none of these versions)."""
    graph = helper.make_graph(
        nodes, path.stem, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], list(inits))
    model = helper.make_model(graph, producer_name="cuvil-gen_models",
                              opset_imports=[helper.make_opsetid(d, v) for d, v in opsets])
    model.ir_version = ir
    path.write_bytes(model.SerializeToString())


def write_bad(bad):
    """Writes into the directory bad (see tests/lit/opsets.test)."""
    relu = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    _fixture(bad / "opset99.onnx", relu, [("", 99)])
    _fixture(bad / "opset0.onnx", relu, [("", 0)])
    _fixture(bad / "ml_opset9.onnx", relu, [("", 18), ("ai.onnx.ml", 9)])
    _fixture(bad / "ir11.onnx", relu, [("", 21)], ir=11)
    _fixture(bad / "twice.onnx", relu, [("", 13), ("ai.onnx", 18)])
    _fixture(bad / "custom_domain.onnx",
             [helper.make_node("Frobnicate", ["x"], ["y"], name="frob", domain="com.acme")],
             [("", 18), ("com.acme", 1)])
    _fixture(bad / "unimported_domain.onnx",
             [helper.make_node("Frobnicate", ["x"], ["y"], name="frob", domain="com.acme")],
             [("", 18)])
    _fixture(bad / "ml_op.onnx",
             [helper.make_node("Normalizer", ["x"], ["y"], name="norm", domain="ai.onnx.ml")],
             [("", 18), ("ai.onnx.ml", 3)])
    # Operators of opsets 18-20 that cuvil does not compile (no schema of
    # ONNX 1.12 knows them either).
    _fixture(bad / "unknown_new_ops.onnx",
             [helper.make_node("BitwiseNot", ["x"], ["t"], name="bits"),
              helper.make_node("ImageDecoder", ["t"], ["y"], name="decode")],
             [("", 20)])
    # An operator cuvil compiles, used below the opset that introduced it.
    _fixture(bad / "gelu_opset17.onnx",
             [helper.make_node("Gelu", ["x"], ["y"], name="gelu")], [("", 17)])
    # Known at their opsets, but with what cuvil's kernels do not do: one
    # run lists them all.
    scale = helper.make_tensor("scale", TensorProto.FLOAT, [1, 2], [0.5, 0.25])
    _fixture(bad / "refused_newer.onnx", [
        helper.make_node("Gelu", ["x"], ["g"], name="gelu_erfc", approximate="erfc"),
        helper.make_node("Unsqueeze", ["g", "axes01"], ["g4"], name="to4d"),
        helper.make_node("Resize", ["g4", "", "", "sizes"], ["p"], name="resize_policy",
                         axes=[2, 3], keep_aspect_ratio_policy="bogus"),
        helper.make_node("Flatten", ["p"], ["f"], name="flat"),
        helper.make_node("QuantizeLinear", ["x", "scale"], ["q"], name="quant_blocked",
                         axis=1, block_size=2),
        helper.make_node("DequantizeLinear", ["q", "scale"], ["d"], name="dequant_blocked",
                         axis=1, block_size=2),
        helper.make_node("Add", ["d", "f"], ["y"], name="sum"),
    ], [("", 21)], ir=10, inits=[scale, helper.make_tensor("axes01", TensorProto.INT64, [2], [0, 1]),
                             helper.make_tensor("sizes", TensorProto.INT64, [2], [1, 4])],
        out_shape=(1, 4))
