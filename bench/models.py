#!/usr/bin/python3
"""Generate the benchmark models: the MLPerf Tiny architectures, an MLP and
MobileNetV2, with fixed weights and inputs.

    models.py OUT_DIR [--only NAME,...]   write the models into OUT_DIR
    models.py --list                      print the model names

Each model lands in OUT_DIR/<name>/ in the layout tests/models/gen_models.py
writes (model.onnx, input_<i>.bin, manifest.json), built with its Graph
class: weights and inputs come from a numpy generator seeded with the CRC-32
of the model's name, so every run writes identical bytes. The architectures
follow their reference definitions (layer counts, widths, strides, kernel
sizes, activations); only the weights are synthetic, initialised like a
trained network's scale (Kaiming normal, BatchNormalization with non-trivial
statistics) so the activations stay in a realistic range. The *_int8
models are INT8 twins in the QDQ form (see tests/models/quant_models.py).
"""

import argparse
import pathlib
import sys

import numpy as np
import onnx

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "models"))
import gen_models  # noqa: E402  (the test models' Graph builder)
from gen_models import Graph  # noqa: E402
import quant_models  # noqa: E402  (the INT8 models, in the QDQ form)


def relu6(g, x, name):
    return g.node("Clip", [x, g.const(name + ".min", 0.0), g.const(name + ".max", 6.0)], name)


def conv_bn(g, x, name, cin, cout, kernel, stride=1, group=1, act="relu"):
    """Conv (no bias) + BatchNormalization + activation, 'same' padding."""
    pad = kernel // 2
    x = g.conv(x, name, cin, cout, (kernel, kernel), bias=False, group=group,
               strides=[stride, stride], pads=[pad] * 4)
    x = g.batchnorm(x, name + "_bn", cout)
    if act == "relu":
        return g.node("Relu", [x], name + "_relu")
    if act == "relu6":
        return relu6(g, x, name + "_relu6")
    return x


def classifier(g, x, channels, classes, softmax=True):
    x = g.node("Flatten", [g.node("GlobalAveragePool", [x], "gap")], "flatten", axis=1)
    x = g.linear(x, "fc", channels, classes)
    return g.node("Softmax", [x], "probs", axis=1) if softmax else x


def mlp(g):
    """784-128-10 perceptron (MNIST), batch 1."""
    x = g.input("input", g.rng.uniform(0.0, 1.0, (1, 784)))
    h = g.node("Relu", [g.linear(x, "fc1", 784, 128)], "relu1")
    g.output(g.linear(h, "fc2", 128, 10))


def ds_cnn(g):
    """MLPerf Tiny keyword spotting: DS-CNN (small) on 49x10 MFCC features.
    Conv 10x4 stride 2 (64) + BN + Relu, four depthwise-separable blocks of
    64 channels, average pool, 12 classes."""
    x = g.input("input", g.rng.normal(0.0, 1.0, (1, 1, 49, 10)))
    # Keras 'same' padding for a 10x4 kernel with stride 2 on 49x10: the
    # output is 25x5; total padding 9 rows (4 top, 5 bottom) and 2 columns.
    x = g.conv(x, "conv1", 1, 64, (10, 4), bias=False, strides=[2, 2], pads=[4, 1, 5, 1])
    x = g.node("Relu", [g.batchnorm(x, "conv1_bn", 64)], "conv1_relu")
    for block in range(1, 5):
        x = conv_bn(g, x, f"dw{block}", 64, 64, 3, group=64)
        x = conv_bn(g, x, f"pw{block}", 64, 64, 1)
    g.output(classifier(g, x, 64, 12))


def resnet8(g):
    """MLPerf Tiny image classification: ResNet-8 on CIFAR-10 (32x32x3).
    Stem conv 16, three residual stacks (16, 32, 64 filters; strides 1, 2, 2;
    1x1 projection shortcuts where the shape changes), average pool, 10 classes."""

    def block(x, name, cin, cout, stride):
        h = conv_bn(g, x, name + "_conv1", cin, cout, 3, stride)
        h = conv_bn(g, h, name + "_conv2", cout, cout, 3, act=None)
        if stride == 1 and cin == cout:
            shortcut = x
        else:
            shortcut = conv_bn(g, x, name + "_proj", cin, cout, 1, stride, act=None)
        return g.node("Relu", [g.node("Add", [h, shortcut], name + "_add")], name + "_relu")

    x = g.input("input", g.rng.uniform(0.0, 1.0, (1, 3, 32, 32)))
    x = conv_bn(g, x, "stem", 3, 16, 3)
    x = block(x, "stack1", 16, 16, 1)
    x = block(x, "stack2", 16, 32, 2)
    x = block(x, "stack3", 32, 64, 2)
    g.output(classifier(g, x, 64, 10))


def mobilenet_v1_025(g):
    """MLPerf Tiny visual wake words: MobileNetV1, width multiplier 0.25, on
    96x96x3; 13 depthwise-separable blocks, average pool, 2 classes."""
    x = g.input("input", g.rng.uniform(0.0, 1.0, (1, 3, 96, 96)))
    x = conv_bn(g, x, "conv0", 3, 8, 3, stride=2)
    # (output channels, stride) of the 13 blocks at width 1.0, scaled by 0.25.
    blocks = [(64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1), (512, 1),
              (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1)]
    cin = 8
    for i, (width, stride) in enumerate(blocks, start=1):
        cout = width // 4
        x = conv_bn(g, x, f"dw{i}", cin, cin, 3, stride, group=cin)
        x = conv_bn(g, x, f"pw{i}", cin, cout, 1)
        cin = cout
    g.output(classifier(g, x, cin, 2))


def autoencoder(g):
    """MLPerf Tiny anomaly detection: the fully connected autoencoder on 640
    inputs (5 frames x 128 mel bins): 4 x (128 Dense + BN + Relu), an 8-wide
    bottleneck, 4 x (128 Dense + BN + Relu), a 640 Dense output."""
    x = g.input("input", g.rng.normal(0.0, 1.0, (1, 640)))
    widths = [128, 128, 128, 128, 8, 128, 128, 128, 128]
    fin = 640
    for i, width in enumerate(widths, start=1):
        x = g.linear(x, f"dense{i}", fin, width)
        x = g.node("Relu", [g.batchnorm(x, f"dense{i}_bn", width)], f"dense{i}_relu")
        fin = width
    g.output(g.linear(x, "dense_out", fin, 640))


def mobilenet_v2(g):
    """MobileNetV2, width 1.0, on 224x224x3: stem conv 32 stride 2, 17
    inverted residual blocks (expansion 6 except the first), 1x1 conv to 1280,
    average pool, 1000 classes; Relu6 as Clip(0, 6)."""
    x = g.input("input", g.rng.uniform(0.0, 1.0, (1, 3, 224, 224)))
    x = conv_bn(g, x, "stem", 3, 32, 3, stride=2, act="relu6")
    # (expansion t, output channels c, repeats n, first stride s)
    settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                (6, 160, 3, 2), (6, 320, 1, 1)]
    cin = 32
    index = 0
    for t, c, n, s in settings:
        for r in range(n):
            index += 1
            name = f"block{index}"
            stride = s if r == 0 else 1
            hidden = cin * t
            h = x
            if t != 1:
                h = conv_bn(g, h, name + "_expand", cin, hidden, 1, act="relu6")
            h = conv_bn(g, h, name + "_dw", hidden, hidden, 3, stride, group=hidden, act="relu6")
            h = conv_bn(g, h, name + "_project", hidden, c, 1, act=None)
            if stride == 1 and cin == c:
                h = g.node("Add", [x, h], name + "_add")
            x = h
            cin = c
    x = conv_bn(g, x, "head", cin, 1280, 1, act="relu6")
    g.output(classifier(g, x, 1280, 1000))


def dense(g, x, name, fin, fout):
    """A PyTorch nn.Linear on a [batch, seq, features] tensor as exported:
    MatMul by the transposed weight, then Add of the bias."""
    w = g.const(name + ".weight", g.kaiming((fin, fout), fin))
    return g.node("Add", [g.node("MatMul", [x, w], name + "_matmul"),
                          g.const(name + ".bias", g.bias(fout))], name)


def layer_norm(g, x, name, d):
    scale = g.const(name + ".weight", g.rng.uniform(0.8, 1.2, d))
    shift = g.const(name + ".bias", g.rng.normal(0.0, 0.1, d))
    return g.node("LayerNormalization", [x, scale, shift], name, axis=-1, epsilon=1e-5)


def gelu(g, x, name):
    """GELU as PyTorch exports it below opset 20: x * 0.5 * (1 + erf(x / sqrt 2))."""
    e = g.node("Erf", [g.node("Div", [x, g.const(name + ".sqrt2", 2.0 ** 0.5)], name + "_div")],
               name + "_erf")
    e = g.node("Add", [e, g.const(name + ".one", 1.0)], name + "_add")
    return g.node("Mul", [g.node("Mul", [x, e], name + "_mul"), g.const(name + ".half", 0.5)],
                  name)


def encoder_layer(g, x, name, seq, d, heads):
    """A post-norm transformer encoder layer (nn.TransformerEncoderLayer with
    GELU, feed-forward 4 d) in the form PyTorch exports it: one MatMul + Add
    per projection, heads split by Reshape + Transpose, attention as
    MatMul, scale, Softmax, MatMul, then LayerNormalization after each
    residual Add."""
    dh = d // heads
    split = g.const(name + ".split", [1, seq, heads, dh], np.int64)

    def project_heads(which, perm):
        h = dense(g, x, f"{name}_{which}", d, d)
        h = g.node("Reshape", [h, split], f"{name}_{which}_split")
        return g.node("Transpose", [h], f"{name}_{which}_heads", perm=perm)

    q = project_heads("q", [0, 2, 1, 3])   # [1, heads, seq, dh]
    k = project_heads("k", [0, 2, 3, 1])   # [1, heads, dh, seq]
    v = project_heads("v", [0, 2, 1, 3])
    scores = g.node("MatMul", [q, k], name + "_scores")
    scores = g.node("Mul", [scores, g.const(name + ".scale", 1.0 / dh ** 0.5)],
                    name + "_scaled")
    probs = g.node("Softmax", [scores], name + "_softmax", axis=-1)
    ctx = g.node("MatMul", [probs, v], name + "_context")
    ctx = g.node("Transpose", [ctx], name + "_context_t", perm=[0, 2, 1, 3])
    ctx = g.node("Reshape", [ctx, g.const(name + ".merge", [1, seq, d], np.int64)],
                 name + "_merge")
    x = layer_norm(g, g.node("Add", [x, dense(g, ctx, name + "_out", d, d)], name + "_res1"),
                   name + "_norm1", d)
    h = gelu(g, dense(g, x, name + "_ff1", d, 4 * d), name + "_gelu")
    h = dense(g, h, name + "_ff2", 4 * d, d)
    return layer_norm(g, g.node("Add", [x, h], name + "_res2"), name + "_norm2", d)


def transformer(d, seq, layers=2, heads=4):
    """A transformer encoder: `layers` encoder layers of width d, `heads`
    heads, on a [1, seq, d] embedding (opset 17, for LayerNormalization)."""
    def build(g):
        g.opset = 17
        x = g.input("input", g.rng.normal(0.0, 1.0, (1, seq, d)))
        for i in range(layers):
            x = encoder_layer(g, x, f"layer{i}", seq, d, heads)
        g.output(x)
    build.__name__ = f"transformer_d{d}_s{seq}"
    return build


def lstm_kws(g):
    """LSTM keyword spotter: 49 frames of 10 MFCC features, 2 LSTM layers of
    hidden size 64 (torch.nn.LSTM as exported: gates i, o, f, c, both
    biases), a 12-class classifier of the last step's hidden state."""
    steps, features, hidden = 49, 10, 64
    x = g.input("input", g.rng.normal(0.0, 1.0, (steps, 1, features)))
    fin = features
    for i in range(2):
        name = f"lstm{i}"
        scale = 1.0 / hidden ** 0.5  # PyTorch's uniform(-1/sqrt(h), 1/sqrt(h))
        w = g.const(name + ".W", g.rng.uniform(-scale, scale, (1, 4 * hidden, fin)))
        r = g.const(name + ".R", g.rng.uniform(-scale, scale, (1, 4 * hidden, hidden)))
        b = g.const(name + ".B", g.rng.uniform(-scale, scale, (1, 8 * hidden)))
        y, y_h = name + "_y", name + "_h"
        g.nodes.append(onnx.helper.make_node("LSTM", [x, w, r, b], [y, y_h], name=name,
                                             hidden_size=hidden))
        x = g.node("Squeeze", [y, g.const(name + ".axes", [1], np.int64)], name + "_squeeze")
        fin = hidden
    last = g.node("Reshape", [y_h, g.const("last.shape", [1, hidden], np.int64)], "last")
    g.output(g.linear(last, "fc", hidden, 12))


MODELS = {
    "mlp": mlp,
    "ds_cnn": ds_cnn,
    "resnet8": resnet8,
    "mobilenet_v1_025": mobilenet_v1_025,
    "autoencoder": autoencoder,
    "mobilenet_v2": mobilenet_v2,
    # The sequence models of issue 17.
    **{f.__name__: f for f in (transformer(64, 32), transformer(128, 128))},
    "lstm_kws": lstm_kws,
    # INT8 twins of two of the above, quantized as ONNX Runtime's quantizer
    # writes them (tests/models/quant_models.py).
    **{f.__name__: f for f in quant_models.BENCH},
}


def conv_stack(depth):
    """A plain stack of `depth` 3x3 convolutions with ReLU on a 16x16 map,
    each layer one channel wider than the one before (16, 17, ...), so that
    no two layers share a shape and each gets code of its own: the model
    for the compile-time scaling figure (run_bench.py bench_depth), not a
    benchmark model."""
    def build(g):
        x = g.input("input", g.rng.uniform(-1.0, 1.0, (1, 16, 16, 16)))
        for i in range(depth):
            x = g.conv(x, f"conv{i}", 16 + i, 17 + i, (3, 3), pads=[1] * 4)
            x = g.node("Relu", [x], f"relu{i}")
        g.output(x)
    build.__name__ = f"conv_stack_{depth}"
    return build


# The compile-time scaling pair: the deeper stack has 4x the layers.
DEPTH_STACKS = {f"conv_stack_{d}": conv_stack(d) for d in (6, 24)}


def write(out_dir, name):
    """Write one model (via the test generator's writer); returns its path."""
    gen_models.MODELS[name] = MODELS[name] if name in MODELS else DEPTH_STACKS[name]
    gen_models.write_model(out_dir, name)
    return out_dir / name / "model.onnx"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out_dir", nargs="?", type=pathlib.Path, help="directory to write into")
    parser.add_argument("--list", action="store_true", help="print the model names and exit")
    parser.add_argument("--only", help="comma-separated model names (default: all)")
    args = parser.parse_args()
    if args.list:
        print("\n".join(MODELS))
        return 0
    if args.out_dir is None:
        parser.error("OUT_DIR is required")
    names = args.only.split(",") if args.only else list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s): {', '.join(unknown)} (known: {', '.join(MODELS)})")
    for name in names:
        path = write(args.out_dir, name)
        print(f"{path} ({onnx.load(path).graph.node.__len__()} nodes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
