#!/usr/bin/python3
"""Generate cuvil's end-to-end test models and the CLI's bad-input fixtures.

    gen_models.py OUT_DIR     write every model and fixture into OUT_DIR
    gen_models.py --list      print the model names, one per line

For each model, OUT_DIR/<name>/ receives:
  model.onnx      opset 13, IR version 7 (loadable by ONNX 1.12 and ONNX Runtime);
                  the models of opset_models.py use opsets 18 to 21
  input_<i>.bin   raw little-endian in C order, one file per graph input: float32,
                  or the input's own type for an exported model (EXPORTED)
  manifest.json   {"inputs": [{"name", "shape", "dtype"}], "outputs": [names]},
                  and "dims": {name: value} for a model with symbolic input
                  dimensions (cuvilc build --dim name=value)

The models of EXPORTED (exported_models.py) were exported by other tools
(PyTorch: see torch_einsum.py) and are committed beside this script; they are
copied as they are, with dynamic dimensions, and get inputs of the sizes
EXPORTED gives.

OUT_DIR/bad/ receives the fixtures for the CLI's error tests: truncated.onnx,
not_onnx.onnx, unsupported_op.onnx and huge_arena.onnx, and those of
opset_models.write_bad (opset and IR versions, domains, newer operators).

Output is deterministic: each model draws its weights and inputs from a numpy
generator seeded with the CRC-32 of its name, so reruns give identical bytes.
Weights are scaled like a real initialisation (Kaiming normal), and every
BatchNormalization has non-trivial statistics (mean != 0, var != 1).
"""

import argparse
import json
import pathlib
import sys
import warnings
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

import opset_models
import quant_models
from exported_models import EXPORTED, write_exported

OPSET = 13
IR_VERSION = 7


class Graph:
    """One model under construction: its nodes, initializers, inputs (with test
    data) and outputs, and a generator seeded from its name for the weights."""

    def __init__(self, name):
        self.name = name
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))
        self.nodes = []
        self.initializers = []
        self.inputs = []  # (name, shape)
        self.input_data = []  # float32 arrays, in the order of self.inputs
        self.outputs = []
        self.opset = OPSET  # a model function may raise it (opset_models.py)
        self.output_shapes = {}
        self.lsb = {}  # output -> quantization step (quant_models.py)
        # cuvilc build warnings the model is meant to cause (substrings); the
        # e2e tests fail on any other warning.
        self.expected_warnings = []

    def input(self, name, data):
        """Add a graph input and the test data fed to it."""
        data = np.ascontiguousarray(data, dtype=np.float32)
        self.inputs.append((name, data.shape))
        self.input_data.append(data)
        return name

    def input_without_data(self, name, shape):
        self.inputs.append((name, shape))
        return name

    def const(self, name, data, dtype=np.float32):
        self.initializers.append(numpy_helper.from_array(np.asarray(data, dtype=dtype), name))
        return name

    def node(self, op, inputs, name, **attrs):
        """Add a node whose single output is named after the node."""
        self.nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def output(self, name, shape=None):
        """Add a graph output; models of opsets the bundled ONNX does not
        know give its shape (see to_model)."""
        self.outputs.append(name)
        if shape is not None:
            self.output_shapes[name] = shape

    # Layers built from several initializers and nodes.

    def kaiming(self, shape, fan_in):
        return self.rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)

    def bias(self, shape):
        return self.rng.uniform(-0.1, 0.1, shape)

    def conv(self, x, name, cin, cout, kernel, bias=True, group=1, **attrs):
        kh, kw = kernel
        fan_in = cin // group * kh * kw
        weight = self.kaiming((cout, cin // group, kh, kw), fan_in)
        inputs = [x, self.const(name + ".weight", weight)]
        if bias:
            inputs.append(self.const(name + ".bias", self.bias(cout)))
        return self.node("Conv", inputs, name, kernel_shape=[kh, kw], group=group, **attrs)

    def batchnorm(self, x, name, channels, epsilon=1e-5):
        stats = [
            self.const(name + ".weight", self.rng.uniform(0.5, 1.5, channels)),
            self.const(name + ".bias", self.rng.normal(0.0, 0.2, channels)),
            self.const(name + ".running_mean", self.rng.normal(0.0, 0.5, channels)),
            self.const(name + ".running_var", self.rng.uniform(0.5, 2.0, channels)),
        ]
        return self.node("BatchNormalization", [x, *stats], name, epsilon=epsilon)

    def linear(self, x, name, fin, fout):
        """A PyTorch nn.Linear as exported: Gemm with transB=1."""
        w = self.const(name + ".weight", self.kaiming((fout, fin), fin))
        b = self.const(name + ".bias", self.bias(fout))
        return self.node("Gemm", [x, w, b], name, transB=1)

    def to_model(self):
        """Build, shape-infer and check the model; outputs get inferred shapes.
        Above the opsets the bundled ONNX knows, its checker and inference
        cannot judge the model: the outputs carry the shapes the model
        function gave, and ONNX Runtime and cuvilc are the judges."""
        graph = helper.make_graph(
            self.nodes,
            self.name,
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in self.inputs],
            [helper.make_tensor_value_info(n, TensorProto.FLOAT, self.output_shapes.get(n))
             for n in self.outputs],
            self.initializers,
        )
        model = helper.make_model(
            graph,
            producer_name="cuvil-gen_models",
            opset_imports=[helper.make_opsetid("", self.opset)],
        )
        if self.opset > onnx.defs.onnx_opset_version():
            missing = [n for n in self.outputs if n not in self.output_shapes]
            if missing:
                raise RuntimeError(f"{self.name}: outputs {missing} need shapes at opset {self.opset}")
            model.ir_version = opset_models.ir_version(self.opset)
            return model
        model.ir_version = IR_VERSION
        model = shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        for out in model.graph.output:
            tensor_type = out.type.tensor_type
            dims = tensor_type.shape.dim
            if not tensor_type.HasField("shape") or not all(d.HasField("dim_value") for d in dims):
                raise RuntimeError(f"{self.name}: output '{out.name}' has no static shape")
        onnx.checker.check_model(model, full_check=True)
        return model


# ---- Models ---------------------------------------------------------------------


def mlp(g):
    """784-128-10 perceptron, batch 1, as PyTorch exports nn.Linear."""
    x = g.input("input", g.rng.uniform(0.0, 1.0, (1, 784)))
    h = g.node("Relu", [g.linear(x, "fc1", 784, 128)], "relu1")
    g.output(g.linear(h, "fc2", 128, 10))


def cnn(g):
    """Two Conv-BN-Relu-MaxPool stages (8, 16 channels), then a classifier."""
    x = g.input("input", g.rng.uniform(0.0, 1.0, (1, 1, 28, 28)))
    cin = 1
    for stage, cout in enumerate((8, 16), start=1):
        x = g.conv(x, f"conv{stage}", cin, cout, (3, 3), pads=[1, 1, 1, 1])
        x = g.batchnorm(x, f"bn{stage}", cout)
        x = g.node("Relu", [x], f"relu{stage}")
        x = g.node("MaxPool", [x], f"pool{stage}", kernel_shape=[2, 2], strides=[2, 2])
        cin = cout
    x = g.node("Flatten", [x], "flatten", axis=1)
    x = g.linear(x, "fc", 16 * 7 * 7, 10)
    g.output(g.node("Softmax", [x], "probs", axis=1))


def dwsep(g):
    """MobileNet depthwise-separable block: dw 3x3 + BN + Relu6, pw 1x1 + BN + Relu."""
    x = g.input("input", g.rng.normal(0.0, 1.0, (1, 8, 16, 16)))
    x = g.conv(x, "dw", 8, 8, (3, 3), bias=False, group=8, pads=[1, 1, 1, 1])
    x = g.batchnorm(x, "dw_bn", 8)
    relu6_lo = g.const("relu6.min", 0.0)
    relu6_hi = g.const("relu6.max", 6.0)
    x = g.node("Clip", [x, relu6_lo, relu6_hi], "relu6")
    x = g.conv(x, "pw", 8, 16, (1, 1), bias=False)
    x = g.batchnorm(x, "pw_bn", 16)
    x = g.node("Relu", [x], "pw_relu")
    x = g.node("GlobalAveragePool", [x], "gap")
    x = g.node("Flatten", [x], "flatten", axis=1)
    g.output(g.linear(x, "fc", 16, 4))


def broadcast(g):
    """Add/Sub/Mul/Div with numpy broadcasting and scalar initializers."""
    a = g.input("a", g.rng.normal(0.0, 1.0, (2, 3, 4, 5)))
    b = g.input("b", g.rng.normal(0.0, 1.0, (4, 1)))
    c = g.input("c", g.rng.normal(0.0, 1.0, (1, 3, 1, 5)))
    # Denominators kept away from zero so Div is well-conditioned.
    den = g.const("den", g.rng.uniform(0.5, 2.0, 5) * g.rng.choice([-1.0, 1.0], 5))
    half = g.const("half", 0.5)
    three = g.const("three", 3.0)
    g.output(g.node("Add", [a, b], "add_ab"))                       # [2,3,4,5] + [4,1]
    g.output(g.node("Mul", [b, c], "mul_bc"))                       # [4,1] * [1,3,1,5]
    diff = g.node("Sub", [c, a], "sub_ca")                          # broadcast left operand
    scaled = g.node("Mul", [diff, half], "mul_half")                # tensor * scalar
    shifted = g.node("Sub", [three, scaled], "sub_three")           # scalar - tensor
    g.output(g.node("Div", [shifted, den], "div_den"))              # [2,3,4,5] / [5]


def shapes(g):
    """Transpose, Reshape (0 and -1), Flatten, Concat, Softmax on a middle axis,
    and the ops that only rename or reshape: Unsqueeze, Squeeze, Dropout, Identity."""
    x = g.input("x", g.rng.normal(0.0, 1.0, (2, 3, 4, 5)))
    y = g.input("y", g.rng.normal(0.0, 1.0, (2, 4, 3)))
    t = g.node("Transpose", [x], "transpose", perm=[0, 2, 3, 1])                 # [2,4,5,3]
    g.output(g.node("Flatten", [t], "flatten", axis=2))                           # [8,15]
    shape = g.const("reshape.shape", [0, -1, 3], np.int64)
    r = g.node("Reshape", [t, shape], "reshape")                                  # [2,20,3]
    axes = g.const("axes", [1], np.int64)
    u = g.node("Unsqueeze", [y, axes], "unsqueeze")                               # [2,1,4,3]
    s = g.node("Squeeze", [u, axes], "squeeze")                                   # [2,4,3]
    d = g.node("Dropout", [s], "dropout")                                         # inference mode
    i = g.node("Identity", [d], "identity")
    k = g.const("concat.const", g.rng.normal(0.0, 1.0, (2, 1, 3)))
    cat = g.node("Concat", [r, i, k], "concat", axis=1)                           # [2,25,3]
    g.output(g.node("Softmax", [cat], "softmax", axis=1))


def shape_ops(g):
    """Shape computations that fold at compile time (PyTorch's flatten:
    Shape -> Gather -> Unsqueeze -> Concat -> Reshape; ConstantOfShape; Range)
    and the data-movement ops on run-time data: Slice, Gather, Pad, Expand,
    Tile, Split, Cast."""
    x = g.input("x", g.rng.normal(0.0, 2.0, (2, 3, 4, 5)))
    i64 = np.int64
    s = g.node("Shape", [x], "shape")
    n = g.node("Gather", [s, g.const("zero", 0, i64)], "batch", axis=0)
    u = g.node("Unsqueeze", [n, g.const("axis0", [0], i64)], "batch1")
    flat = g.node("Concat", [u, g.const("minus1", [-1], i64)], "flat_shape", axis=0)
    # ONNX's shape inference leaves [?,?]: cuvil resolves it after folding.
    f = g.node("Reshape", [x, flat], "flatten")
    g.output(g.node("Reshape", [f, g.const("flat2", [2, 60], i64)], "flat_out"))
    g.output(g.node("Slice", [x, g.const("starts", [3, -1], i64),
                              g.const("ends", [-100, 0], i64),
                              g.const("slice_axes", [3, 1], i64),
                              g.const("steps", [-2, -1], i64)], "slice"))         # [2,2,4,2]
    g.output(g.node("Gather", [x, g.const("idx", [[2, -1], [0, 0]], i64)],
                    "gather", axis=2))                                            # [2,3,2,2,5]
    g.output(g.node("Pad", [x, g.const("pads_r", [0, 0, 1, 2, 0, 0, 2, 1], i64)],
                    "pad_reflect", mode="reflect"))                               # [2,3,7,8]
    g.output(g.node("Pad", [x, g.const("pads_c", [0, 1, 0, -1, 0, 0, 1, 0], i64),
                            g.const("pad_value", 0.5)], "pad_const"))             # [2,4,5,4]
    col = g.node("Slice", [x, g.const("c0", [0], i64), g.const("c1", [1], i64),
                           g.const("c3", [3], i64)], "column")                    # [2,3,4,1]
    g.output(g.node("Expand", [col, g.const("to", [2, 3, 4, 6], i64)], "expand"))
    g.output(g.node("Tile", [x, g.const("reps", [1, 2, 1, 2], i64)], "tile"))     # [2,6,4,10]
    g.nodes.append(helper.make_node("Split", [x, g.const("parts", [2, 3], i64)],
                                    ["split_a", "split_b"], name="split", axis=3))
    g.output("split_a")
    g.output("split_b")
    ci = g.node("Cast", [x], "to_int", to=TensorProto.INT32)
    g.output(g.node("Cast", [ci], "to_float", to=TensorProto.FLOAT))
    half = helper.make_tensor("value", TensorProto.FLOAT, [1], [1.5])
    ones = g.node("ConstantOfShape", [s], "filled", value=half)
    ramp = g.node("Range", [g.const("r0", 0.0), g.const("r1", 5.0), g.const("r2", 1.0)],
                  "ramp")
    g.output(g.node("Add", [g.node("Add", [x, ones], "plus_filled"), ramp], "plus_ramp"))


def activations(g):
    """Sigmoid, Tanh, Relu and Clip (both, one or no bound) over [-10, 10]."""
    values = np.linspace(-10.0, 10.0, 256)
    x = g.input("x", g.rng.permutation(values).reshape(4, 64))
    g.output(g.node("Sigmoid", [x], "sigmoid"))
    g.output(g.node("Tanh", [x], "tanh"))
    g.output(g.node("Relu", [x], "relu"))
    lo = g.const("clip.min", -2.5)
    hi = g.const("clip.max", 3.0)
    g.output(g.node("Clip", [x, lo, hi], "clip_both"))
    g.output(g.node("Clip", [x, lo], "clip_min"))
    g.output(g.node("Clip", [x, "", hi], "clip_max"))
    g.output(g.node("Clip", [x], "clip_none"))


def pools(g):
    """MaxPool and AveragePool variants on odd spatial sizes, GlobalAveragePool."""
    x = g.input("x", g.rng.normal(0.0, 1.0, (1, 3, 13, 11)))
    g.output(g.node("MaxPool", [x], "maxpool", kernel_shape=[3, 3], pads=[1, 0, 2, 1],
                    strides=[2, 1], dilations=[2, 1]))
    g.output(g.node("AveragePool", [x], "avgpool_excl", kernel_shape=[3, 3],
                    pads=[1, 1, 1, 1], strides=[2, 2], count_include_pad=0))
    g.output(g.node("AveragePool", [x], "avgpool_incl", kernel_shape=[3, 2],
                    pads=[0, 1, 2, 1], strides=[1, 2], count_include_pad=1))
    g.output(g.node("AveragePool", [x], "avgpool_same", kernel_shape=[2, 3],
                    strides=[2, 2], auto_pad="SAME_UPPER"))
    g.output(g.node("GlobalAveragePool", [x], "gap"))


def matmul(g):
    """Batched MatMul with broadcasting, and Gemm with alpha/beta/transA and a row C."""
    a = g.input("a", g.rng.normal(0.0, 1.0, (2, 1, 3, 4)))
    b = g.input("b", g.rng.normal(0.0, 1.0, (5, 4, 6)))
    g.output(g.node("MatMul", [a, b], "matmul"))                                  # [2,5,3,6]
    p = g.input("p", g.rng.normal(0.0, 1.0, (7, 3)))                              # A^T: [K=7, M=3]
    w = g.const("gemm.b", g.kaiming((7, 5), 7))                                   # [K, N=5]
    c = g.const("gemm.c", g.bias((1, 5)))
    g.output(g.node("Gemm", [p, w, c], "gemm", alpha=0.5, beta=2.0, transA=1))     # [3,5]


def conv_variants(g):
    """Strided, dilated, asymmetric-padded, grouped, auto-padded and bias-free Conv."""
    x = g.input("x", g.rng.normal(0.0, 1.0, (1, 4, 15, 13)))
    g.output(g.conv(x, "conv_strided", 4, 6, (3, 3), strides=[2, 2], dilations=[2, 2],
                    pads=[1, 2, 0, 1]))
    g.output(g.conv(x, "conv_grouped", 4, 6, (3, 3), group=2, pads=[1, 1, 1, 1]))
    # No packed kernel takes a grouped convolution: cuvilc says so.
    g.expected_warnings.append("node 'conv_grouped' (Conv): runs on the slow reference kernel")
    g.output(g.conv(x, "conv_same_upper", 4, 5, (4, 3), strides=[2, 1], auto_pad="SAME_UPPER"))
    g.output(g.conv(x, "conv_same_lower", 4, 5, (4, 3), strides=[1, 2], auto_pad="SAME_LOWER"))
    g.output(g.conv(x, "conv_nobias", 4, 3, (3, 1), bias=False))


def standalone_bn(g):
    """BatchNormalization on a graph input: no Conv/Gemm to fold it into."""
    x = g.input("x", g.rng.normal(0.5, 2.0, (2, 6, 5, 7)))
    g.output(g.batchnorm(x, "bn", 6, epsilon=1e-3))


def conv_relu(g, x, name, cin, cout, kernel, **attrs):
    """Conv + Relu: the pair cuvil fuses into one kernel."""
    return g.node("Relu", [g.conv(x, name, cin, cout, kernel, **attrs)], name + "_relu")


def chain(g):
    """Eight Conv+Relu layers in a plain chain, channel counts varying."""
    x = g.input("input", g.rng.normal(0.0, 1.0, (1, 3, 16, 16)))
    widths = (8, 16, 12, 24, 8, 20, 4, 10)
    cin = 3
    for layer, cout in enumerate(widths, start=1):
        kernel = (1, 1) if layer % 3 == 0 else (3, 3)
        pad = kernel[0] // 2
        x = conv_relu(g, x, f"conv{layer}", cin, cout, kernel, pads=[pad] * 4)
        cin = cout
    g.output(x)


def resblock(g):
    """A small ResNet: stem Conv-BN-Relu, a basic block with an identity
    shortcut, one downsampling with a strided 1x1 projection shortcut, another
    identity block, then global average pooling and a classifier."""

    def conv_bn(x, name, cin, cout, kernel, stride=1):
        pad = kernel // 2
        x = g.conv(x, name, cin, cout, (kernel, kernel), bias=False, strides=[stride] * 2,
                   pads=[pad] * 4)
        return g.batchnorm(x, name + "_bn", cout)

    def basic_block(x, name, cin, cout, stride):
        h = g.node("Relu", [conv_bn(x, name + "_conv1", cin, cout, 3, stride)],
                   name + "_relu1")
        h = conv_bn(h, name + "_conv2", cout, cout, 3)
        if stride == 1 and cin == cout:
            shortcut = x
        else:
            shortcut = conv_bn(x, name + "_proj", cin, cout, 1, stride)
        return g.node("Relu", [g.node("Add", [h, shortcut], name + "_add")], name + "_relu2")

    x = g.input("input", g.rng.normal(0.0, 1.0, (1, 3, 16, 16)))
    x = g.node("Relu", [conv_bn(x, "stem", 3, 8, 3)], "stem_relu")
    x = basic_block(x, "block1", 8, 8, 1)
    x = basic_block(x, "block2", 8, 16, 2)
    x = basic_block(x, "block3", 16, 16, 1)
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    g.output(g.linear(x, "fc", 16, 10))


def input_residual(g):
    """A skip connection straight from the model input, added first: the
    fused residual operand is then the caller's buffer, not the arena. Odd
    map sizes put positions on every border path of the packed kernel."""
    x = g.input("input", g.rng.normal(0.0, 1.0, (1, 8, 9, 11)))
    h = g.conv(x, "conv", 8, 8, (3, 3), pads=[1] * 4)
    g.output(g.node("Relu", [g.node("Add", [x, h], "add")], "relu"))


def nhwc(g):
    """A graph as NHWC frameworks export it: an NHWC input transposed to NCHW
    for the convolutions and back, a transpose pair that undoes itself, one
    pair that composes into a single transpose, and NCHW -> NHWC of the
    pooled 1x1 map (which moves no element) before the classifier."""
    x = g.input("input", g.rng.normal(0.0, 1.0, (1, 10, 12, 3)))
    x = g.node("Transpose", [x], "to_nchw", perm=[0, 3, 1, 2])                    # [1,3,10,12]
    x = conv_relu(g, x, "conv1", 3, 8, (3, 3), pads=[1, 1, 1, 1])
    x = g.node("Transpose", [x], "to_nhwc", perm=[0, 2, 3, 1])                    # [1,10,12,8]
    x = g.node("Transpose", [x], "back_to_nchw", perm=[0, 3, 1, 2])               # [1,8,10,12]
    x = conv_relu(g, x, "conv2", 8, 8, (3, 3), strides=[2, 2], pads=[1, 1, 1, 1])
    t = g.node("Transpose", [x], "swap_hw", perm=[0, 1, 3, 2])                    # [1,8,6,5]
    g.output(g.node("Transpose", [t], "to_nwhc", perm=[0, 2, 3, 1]))              # [1,6,5,8]
    p = g.node("GlobalAveragePool", [x], "gap")                                   # [1,8,1,1]
    p = g.node("Transpose", [p], "gap_nhwc", perm=[0, 2, 3, 1])                   # [1,1,1,8]
    shape = g.const("flat.shape", [1, 8], np.int64)
    g.output(g.linear(g.node("Reshape", [p, shape], "flat"), "fc", 8, 4))


def fire(g):
    """SqueezeNet: a strided stem, two fire modules (squeeze 1x1, expand 1x1
    and 3x3 concatenated on channels) with a max pool between, and the
    1x1-conv classifier with global average pooling."""

    def fire_module(x, name, cin, squeeze, expand):
        s = conv_relu(g, x, name + "_squeeze", cin, squeeze, (1, 1))
        e1 = conv_relu(g, s, name + "_expand1x1", squeeze, expand, (1, 1))
        e3 = conv_relu(g, s, name + "_expand3x3", squeeze, expand, (3, 3), pads=[1, 1, 1, 1])
        return g.node("Concat", [e1, e3], name + "_concat", axis=1)

    x = g.input("input", g.rng.normal(0.0, 1.0, (1, 3, 32, 32)))
    x = conv_relu(g, x, "stem", 3, 16, (3, 3), strides=[2, 2], pads=[1, 1, 1, 1])
    x = fire_module(x, "fire1", 16, 4, 8)                                        # [1,16,16,16]
    x = g.node("MaxPool", [x], "pool", kernel_shape=[3, 3], strides=[2, 2])      # [1,16,7,7]
    x = fire_module(x, "fire2", 16, 6, 12)                                       # [1,24,7,7]
    x = conv_relu(g, x, "classifier", 24, 10, (1, 1))
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    g.output(g.node("Softmax", [x], "probs", axis=1))


def inception(g):
    """Two inception blocks, each four parallel branches concatenated on
    channels: 1x1; 1x1 -> 3x3; 1x1 -> 3x3 -> 3x3 (a factorised 5x5); and a
    3x3 stride-1 max pool -> 1x1."""

    def block(x, name, cin, c1, c3_reduce, c3, c5_reduce, c5, pool_proj):
        b1 = conv_relu(g, x, name + "_1x1", cin, c1, (1, 1))
        b2 = conv_relu(g, x, name + "_3x3_reduce", cin, c3_reduce, (1, 1))
        b2 = conv_relu(g, b2, name + "_3x3", c3_reduce, c3, (3, 3), pads=[1, 1, 1, 1])
        b3 = conv_relu(g, x, name + "_5x5_reduce", cin, c5_reduce, (1, 1))
        b3 = conv_relu(g, b3, name + "_5x5a", c5_reduce, c5, (3, 3), pads=[1, 1, 1, 1])
        b3 = conv_relu(g, b3, name + "_5x5b", c5, c5, (3, 3), pads=[1, 1, 1, 1])
        b4 = g.node("MaxPool", [x], name + "_pool", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        b4 = conv_relu(g, b4, name + "_pool_proj", cin, pool_proj, (1, 1))
        return g.node("Concat", [b1, b2, b3, b4], name + "_concat", axis=1)

    x = g.input("input", g.rng.normal(0.0, 1.0, (1, 8, 16, 16)))
    x = block(x, "inc1", 8, 4, 4, 8, 2, 4, 4)                                    # [1,20,16,16]
    x = block(x, "inc2", 20, 8, 6, 12, 2, 4, 4)                                  # [1,28,16,16]
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    g.output(g.linear(x, "fc", 28, 10))


MODELS = {
    f.__name__: f
    for f in (mlp, cnn, dwsep, broadcast, shapes, shape_ops, activations, pools, matmul, conv_variants,
              standalone_bn, chain, resblock, input_residual, nhwc, fire, inception,
              *opset_models.MODELS, *quant_models.MODELS)
}


def write_model(out_dir, name):
    g = Graph(name)
    MODELS[name](g)
    model = g.to_model()
    model_dir = out_dir / name
    model_dir.mkdir(parents=True, exist_ok=True)
    onnx.save(model, model_dir / "model.onnx")
    for i, data in enumerate(g.input_data):
        data.astype("<f4").tofile(model_dir / f"input_{i}.bin")
    manifest = {
        "inputs": [{"name": n, "shape": list(shape), "dtype": "float32"} for n, shape in g.inputs],
        "outputs": g.outputs,
    }
    if g.lsb:
        manifest["lsb"] = g.lsb
    if g.expected_warnings:
        manifest["expected_warnings"] = g.expected_warnings
    (model_dir / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return model


# ---- Bad-input fixtures for the CLI --------------------------------------------


def expect_unparseable(data, what):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # onnx warns before raising
            onnx.load_from_string(data)
    except Exception:  # protobuf's DecodeError; its module path varies by backend
        return
    raise RuntimeError(f"fixture {what} unexpectedly parses as an ONNX model")


def write_bad(out_dir, cnn_model):
    bad = out_dir / "bad"
    bad.mkdir(parents=True, exist_ok=True)

    cnn_bytes = cnn_model.SerializeToString()
    truncated = cnn_bytes[: len(cnn_bytes) // 2]
    expect_unparseable(truncated, "truncated.onnx")
    (bad / "truncated.onnx").write_bytes(truncated)

    text = b"This is a text file, not an ONNX model.\n"
    expect_unparseable(text, "not_onnx.onnx")
    (bad / "not_onnx.onnx").write_bytes(text)

    # Valid ONNX, but RandomUniformLike and RandomNormalLike are outside cuvil's op set
    # (random generators are out of the conformance scope, so they stay so).
    g = Graph("unsupported_op")
    x = g.input_without_data("x", (1, 10))
    h = g.node("RandomUniformLike", [x], "weird1")
    g.output(g.node("RandomNormalLike", [h], "weird2"))
    onnx.save(g.to_model(), bad / "unsupported_op.onnx")

    # Valid and supported, but the Relu result between input and output is an
    # intermediate of 2.4 GB that no arena region of any board holds. The file
    # itself is tiny (no initializers).
    g = Graph("huge_arena")
    x = g.input_without_data("x", (1, 600_000_000))
    g.output(g.node("Softmax", [g.node("Relu", [x], "h")], "y"))
    onnx.save(g.to_model(), bad / "huge_arena.onnx")

    opset_models.write_bad(bad)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("out_dir", nargs="?", type=pathlib.Path, help="directory to write into")
    group.add_argument("--list", action="store_true", help="print the model names and exit")
    args = parser.parse_args()

    if args.list:
        print("\n".join([*MODELS, *EXPORTED]))
        return 0

    models = {name: write_model(args.out_dir, name) for name in MODELS}
    for name in EXPORTED:
        write_exported(args.out_dir, name)
    write_bad(args.out_dir, models["cnn"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
