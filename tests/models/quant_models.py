"""Quantized test models, written the way other tools write them.

gen_models.py imports MODELS from here. Each model is float in, float out
and quantized inside:

  qdq_cnn     the QDQ form as ONNX Runtime's static quantizer writes it
              (QuantFormat.QDQ, activations uint8 asymmetric, weights int8
              symmetric per output channel on axis 0, biases int32 of scale
              x_scale * w_scale behind a DequantizeLinear, Relu/Clip between
              the product and its QuantizeLinear, ops that only move values
              between a DQ and a Q of the same parameters): 3x3 Conv,
              MaxPool, depthwise 3x3, 1x1 Conv with Clip(0, 6), a float
              GlobalAveragePool
              island, then a Gemm (transB=1, per-tensor weights);
  qdq_matmul  MatMul of a [1, 6, 24] activation by int8 weights per column
              (axis 1, as the quantizer writes MatMul weights), uint8
              weights with a zero point in the second MatMul;
  qlinear_s8  the QOperator form with int8 activations (symmetric, zero
              point 0, as TensorFlow's converter writes them): QLinearConv
              3x3 with bias, depthwise QLinearConv, QLinearMatMul.

Scales come from min/max calibration on the model's own input, computed
here with numpy (the float model is simple enough to evaluate), so values
spread over the whole 8-bit range as after a real calibration. The graph
carries the reference's expected agreement: manifest "lsb" gives each
output's quantization step (run_e2e.py allows one step of difference).
"""

import numpy as np
from onnx import numpy_helper


def _qrange(dtype):
    return (0, 255) if dtype == np.uint8 else (-128, 127)


def _act_params(values, dtype):
    """Min/max calibration, as the quantizer's MinMax calibrator: the range
    always includes 0; int8 activations are symmetric (zero point 0)."""
    lo, hi = min(float(values.min()), 0.0), max(float(values.max()), 0.0)
    if dtype == np.int8:
        scale = max(abs(lo), abs(hi)) / 127.0 or 1.0
        return np.float32(scale), 0
    scale = (hi - lo) / 255.0 or 1.0
    return np.float32(scale), int(np.clip(round(-lo / scale), 0, 255))


def _quant(values, scale, zp, dtype):
    lo, hi = _qrange(dtype)
    return np.clip(np.rint(values / scale) + zp, lo, hi).astype(dtype)


def _fake(values, scale, zp, dtype):
    return (_quant(values, scale, zp, dtype).astype(np.float32) - zp) * scale


def _conv(x, w, b, stride, pad, group):
    """NCHW convolution in numpy (float64); pad: one value, or ONNX's
    [top, left, bottom, right]."""
    t, l, bo, r = [pad] * 4 if np.isscalar(pad) else pad
    xp = np.pad(x, ((0, 0), (0, 0), (t, bo), (l, r)))
    m, cg, kh, kw = w.shape
    win = np.lib.stride_tricks.sliding_window_view(xp, (kh, kw), axis=(2, 3))
    win = win[:, :, ::stride, ::stride]  # n, c, oh, ow, kh, kw
    mg = m // group
    outs = []
    for gi in range(group):
        xs = win[:, gi * cg:(gi + 1) * cg]
        ws = w[gi * mg:(gi + 1) * mg]
        outs.append(np.einsum("nchwij,mcij->nmhw", xs, ws))
    return np.concatenate(outs, axis=1) + b.reshape(1, -1, 1, 1)


class _Q:
    """Builds a quantized model on a gen_models.Graph, tracking the float
    value (after fake quantization) of every activation for calibration."""

    def __init__(self, g, act_type):
        self.g, self.act = g, act_type
        self.values = {}

    def _params(self, name, values, dtype=None):
        dtype = dtype or self.act
        scale, zp = _act_params(values, dtype)
        s = self.g.const(name + ".scale", scale)
        z = self.g.const(name + ".zero_point", zp, dtype)
        return (scale, zp, dtype), s, z

    def qdq(self, name, values):
        """Q then DQ of activation `name` (holding values): returns the DQ
        output's name, whose value is the fake-quantized one."""
        p, s, z = self._params(name, values)
        q = self.g.node("QuantizeLinear", [name, s, z], name + "_QuantizeLinear")
        dq = self.g.node("DequantizeLinear", [q, s, z], name + "_DequantizeLinear")
        self.values[dq] = _fake(values, *p)
        return dq

    def same(self, y, dq, values):
        """Q then DQ of op output y with the parameters of the activation
        behind dq, as the quantizer writes ops that only move values."""
        node = next(n for n in self.g.nodes if n.output[0] == dq)
        q = self.g.node("QuantizeLinear", [y, *node.input[1:]], y + "_QuantizeLinear")
        out = self.g.node("DequantizeLinear", [q, *node.input[1:]], y + "_DequantizeLinear")
        scale, zp = self._scale_of(dq), int(self._zero_point_of(dq))
        self.values[out] = _fake(values, scale, zp, self.act)
        return out

    def weight(self, name, w, axis, dtype=np.int8, zero_point=0):
        """DQ of a constant weight, per channel along axis (None: per
        tensor); int8 symmetric, or uint8 with a zero point."""
        red = tuple(i for i in range(w.ndim) if i != axis) if axis is not None else None
        amax = np.max(np.abs(w), axis=red)
        lo, hi = _qrange(dtype)
        scale = (amax / (min(hi - zero_point, zero_point - lo))).astype(np.float32)
        shape = [1] * w.ndim
        if axis is not None:
            shape[axis] = -1
        zp = np.full(np.shape(scale), zero_point)
        q = _quant(w, scale.reshape(shape), zp.reshape(shape) if axis is not None else zero_point, dtype)
        attrs = {"axis": axis} if axis is not None else {}
        inputs = [self.g.const(name + "_quantized", q, dtype), self.g.const(name + "_scale", scale),
                  self.g.const(name + "_zero_point", zp, dtype)]
        dq = self.g.node("DequantizeLinear", inputs, name + "_DequantizeLinear", **attrs)
        return dq, (q.astype(np.float32) - zp.reshape(shape)) * scale.reshape(shape), scale

    def bias(self, name, b, x_scale, w_scale):
        """int32 bias of scale x_scale * w_scale behind a DQ (axis 0)."""
        scale = (np.float32(x_scale) * w_scale).astype(np.float32)
        q = np.rint(b / scale).astype(np.int32)
        inputs = [self.g.const(name + "_quantized", q, np.int32), self.g.const(name + "_scale", scale),
                  self.g.const(name + "_zero_point", np.zeros_like(q), np.int32)]
        dq = self.g.node("DequantizeLinear", inputs, name + "_DequantizeLinear", axis=0)
        return dq, q.astype(np.float32) * scale

    def conv(self, x, name, cout, kernel, stride=1, group=1, act=None, pads=None):
        """Conv of DQ output x: kernel k or (kh, kw), 'same' padding for
        odd kernels unless pads ([top, left, bottom, right]) says."""
        xv = self.values[x]
        cin = xv.shape[1]
        kh, kw = (kernel, kernel) if np.isscalar(kernel) else kernel
        w = self.g.kaiming((cout, cin // group, kh, kw), cin // group * kh * kw)
        x_scale = self._scale_of(x)
        wdq, wv, wscale = self.weight(name + ".weight", w, 0)
        bdq, bv = self.bias(name + ".bias", self.g.bias(cout), x_scale, wscale)
        pads = pads or [kh // 2, kw // 2, kh // 2, kw // 2]
        y = self.g.node("Conv", [x, wdq, bdq], name, kernel_shape=[kh, kw],
                        strides=[stride, stride], pads=pads, group=group)
        yv = _conv(xv, wv, bv, stride, pads, group)
        return self._activation(y, yv, act)

    def add(self, a, b, name, act=None):
        """Add of two DQ outputs (a residual connection), then act."""
        y = self.g.node("Add", [a, b], name)
        return self._activation(y, self.values[a] + self.values[b], act)

    def linear(self, x, name, fout, act=None):
        """Gemm (transB=1, per-channel weights) of DQ output x [1, fin]."""
        xv = self.values[x]
        w = self.g.kaiming((fout, xv.shape[1]), xv.shape[1])
        wdq, wv, wscale = self.weight(name + ".weight", w, 0)
        bdq, bv = self.bias(name + ".bias", self.g.bias(fout), self._scale_of(x), wscale)
        y = self.g.node("Gemm", [x, wdq, bdq], name, transB=1)
        return self._activation(y, xv @ wv.T + bv, act)

    def global_avgpool(self, x):
        """GlobalAveragePool of DQ output x with its own QDQ, then Flatten
        between a DQ and a Q of the same parameters, as the quantizer
        writes them."""
        pooled = self.qdq(self.g.node("GlobalAveragePool", [x], "gap"),
                          self.values[x].mean(axis=(2, 3), keepdims=True))
        flat = self.g.node("Flatten", [pooled], "flatten", axis=1)
        return self.same(flat, pooled, self.values[pooled].reshape(1, -1))

    def _activation(self, y, yv, act):
        if act == "relu":
            y, yv = self.g.node("Relu", [y], y + "_relu"), np.maximum(yv, 0)
        elif act == "relu6":
            lo, hi = self.g.const(y + ".min", np.float32(0)), self.g.const(y + ".max", np.float32(6))
            y, yv = self.g.node("Clip", [y, lo, hi], y + "_clip"), np.clip(yv, 0, 6)
        return self.qdq(y, yv)

    def _param_of(self, dq, i):
        node = next(n for n in self.g.nodes if n.output[0] == dq)
        tensor = next(t for t in self.g.initializers if t.name == node.input[i])
        return numpy_helper.to_array(tensor).reshape(-1)[0]

    def _scale_of(self, dq):
        """The scale of the activation behind DQ node output `dq`."""
        return self._param_of(dq, 1)

    def _zero_point_of(self, dq):
        return self._param_of(dq, 2)


def qdq_cnn(g):
    q = _Q(g, np.uint8)
    xv = g.rng.uniform(-1.0, 1.0, (1, 3, 12, 12)).astype(np.float32)
    x = q.qdq(g.input("input", xv), xv)
    x = q.conv(x, "conv1", 16, 3, act="relu")
    v = q.values[x]
    pooled = v.reshape(1, 16, 6, 2, 6, 2).max(axis=(3, 5))
    x = q.same(g.node("MaxPool", [x], "pool", kernel_shape=[2, 2], strides=[2, 2]), x, pooled)
    x = q.conv(x, "dw", 16, 3, group=16, act="relu")
    x = q.conv(x, "pw", 24, 1, act="relu6")
    x = q.add(x, q.conv(x, "res", 24, 3), "residual", act="relu")
    flat = q.global_avgpool(x)
    w = g.kaiming((10, 24), 24)
    wdq, wv, wscale = q.weight("fc.weight", w, None)
    bdq, bv = q.bias("fc.bias", g.bias(10), q._scale_of(flat), np.full(10, wscale, np.float32))
    y = g.node("Gemm", [flat, wdq, bdq], "fc", transB=1)
    out = q.qdq(y, q.values[flat] @ wv.T + bv)
    g.output(g.node("Identity", [out], "logits"))
    g.lsb["logits"] = float(q._scale_of(out))


def qdq_matmul(g):
    q = _Q(g, np.uint8)
    xv = g.rng.normal(0.0, 1.0, (1, 6, 24)).astype(np.float32)
    x = q.qdq(g.input("input", xv), xv)
    w1, w1v, _ = q.weight("mm1.weight", g.kaiming((24, 16), 24), 1)
    h = g.node("MatMul", [x, w1], "mm1")
    h = q.qdq(g.node("Relu", [h], "mm1_relu"), np.maximum(q.values[x] @ w1v, 0))
    w2, w2v, _ = q.weight("mm2.weight", g.kaiming((16, 8), 16), None, np.uint8, 131)
    y = q.qdq(g.node("MatMul", [h, w2], "mm2"), q.values[h] @ w2v)
    g.output(g.node("Identity", [y], "output"))
    g.lsb["output"] = float(q._scale_of(y))


def qlinear_s8(g):
    i8 = np.int8
    xv = g.rng.uniform(-2.0, 2.0, (1, 4, 9, 9)).astype(np.float32)
    x_scale, x_zp = _act_params(xv, i8)
    c = g.const
    x = g.node("QuantizeLinear", [g.input("input", xv), c("x.scale", x_scale), c("x.zp", x_zp, i8)], "quant")
    xf = _fake(xv, x_scale, x_zp, i8)

    def qlinear_conv(x, xf, x_scale, name, cout, group):
        cin = xf.shape[1]
        w = g.kaiming((cout, cin // group, 3, 3), cin // group * 9)
        wscale = (np.max(np.abs(w), axis=(1, 2, 3)) / 127).astype(np.float32)
        wq = _quant(w, wscale.reshape(-1, 1, 1, 1), 0, i8)
        bq = np.rint(g.bias(cout) / (x_scale * wscale)).astype(np.int32)
        yv = _conv(xf, wq * wscale.reshape(-1, 1, 1, 1), bq * x_scale * wscale, 1, 1, group)
        y_scale, y_zp = _act_params(yv, i8)
        inputs = [x, c(name + ".x_scale", x_scale), c(name + ".x_zp", 0, i8), c(name + ".w", wq, i8),
                  c(name + ".w_scale", wscale), c(name + ".w_zp", np.zeros(cout), i8),
                  c(name + ".y_scale", y_scale), c(name + ".y_zp", y_zp, i8), c(name + ".b", bq, np.int32)]
        y = g.node("QLinearConv", inputs, name, kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=group)
        return y, _fake(yv, y_scale, y_zp, i8), y_scale

    y, yf, y_scale = qlinear_conv(x, xf, x_scale, "conv", 8, 1)
    y, yf, y_scale = qlinear_conv(y, yf, y_scale, "dw", 8, 8)
    flat = g.node("Reshape", [y, c("shape", [1, 8 * 81], np.int64)], "flatten")
    w = g.kaiming((8 * 81, 10), 8 * 81)
    wscale = (np.max(np.abs(w), axis=0) / 127).astype(np.float32)
    wq = _quant(w, wscale, 0, i8)
    outv = yf.reshape(1, -1) @ (wq * wscale)
    o_scale, o_zp = _act_params(outv, i8)
    inputs = [flat, c("mm.a_scale", y_scale), c("mm.a_zp", 0, i8), c("mm.b", wq, i8), c("mm.b_scale", wscale),
              c("mm.b_zp", np.zeros(10), i8), c("mm.y_scale", o_scale), c("mm.y_zp", o_zp, i8)]
    y = g.node("QLinearMatMul", inputs, "mm")
    g.output(g.node("DequantizeLinear", [y, c("out.scale", o_scale), c("out.zp", o_zp, i8)], "output"))
    g.lsb["output"] = float(o_scale)


def qdq_direct(g):
    """Convolutions that a78's kernel on the channel-interleaved image
    takes, at the shapes its output stage handles apart: a panel of 4
    channels after full ones (12 and 20 outputs), rows shorter than a block
    of 12 positions, stride 2 with asymmetric padding, maps whose last
    outputs are too few for a 16-byte store; int8 activations and a
    residual sum between them."""
    q = _Q(g, np.int8)
    xv = g.rng.uniform(-1.0, 1.0, (1, 6, 9, 11)).astype(np.float32)
    x = q.qdq(g.input("input", xv), xv)
    a = q.conv(x, "c1", 12, 3, act="relu")
    x = q.add(a, q.conv(a, "c2", 12, 3), "residual")
    x = q.conv(x, "c3", 20, 3, stride=2, pads=[0, 1, 1, 0])  # 4 x 5
    x = q.conv(x, "c4", 8, (2, 3), pads=[1, 1, 0, 1])  # 4 x 5
    g.output(g.node("Identity", [x], "output"))
    g.lsb["output"] = float(q._scale_of(x))


def ds_cnn_int8(g):
    """The benchmark's DS-CNN (bench/models.py) as a quantizer leaves it:
    BatchNormalization folded into the convolutions, QDQ around every
    layer, uint8 activations, int8 per-channel weights."""
    q = _Q(g, np.uint8)
    xv = g.rng.normal(0.0, 1.0, (1, 1, 49, 10)).astype(np.float32)
    x = q.qdq(g.input("input", xv), xv)
    x = q.conv(x, "conv1", 64, (10, 4), stride=2, pads=[4, 1, 5, 1], act="relu")
    for block in range(1, 5):
        x = q.conv(x, f"dw{block}", 64, 3, group=64, act="relu")
        x = q.conv(x, f"pw{block}", 64, 1, act="relu")
    y = q.linear(q.global_avgpool(x), "fc", 12)
    g.output(g.node("Identity", [y], "logits"))
    g.lsb["logits"] = float(q._scale_of(y))


def resnet8_int8(g):
    """The benchmark's ResNet-8 on 32x32x3 (bench/models.py), quantized as
    ds_cnn_int8: the residual Adds in the QDQ form, Relu after them."""
    q = _Q(g, np.uint8)
    xv = g.rng.uniform(-1.0, 1.0, (1, 3, 32, 32)).astype(np.float32)
    x = q.qdq(g.input("input", xv), xv)
    x = q.conv(x, "stem", 16, 3, act="relu")
    for name, cin, cout, stride in (("stack1", 16, 16, 1), ("stack2", 16, 32, 2), ("stack3", 32, 64, 2)):
        h = q.conv(x, name + "_conv1", cout, 3, stride=stride, act="relu")
        h = q.conv(h, name + "_conv2", cout, 3)
        shortcut = x if stride == 1 and cin == cout else q.conv(x, name + "_proj", cout, 1, stride=stride)
        x = q.add(h, shortcut, name + "_add", act="relu")
    y = q.linear(q.global_avgpool(x), "fc", 10)
    g.output(g.node("Identity", [y], "logits"))
    g.lsb["logits"] = float(q._scale_of(y))


def mobilenet_v1_025_int8(g):
    """The benchmark's MobileNetV1 0.25 on 96x96 (bench/models.py),
    quantized as ds_cnn_int8, Relu6 as Clip(0, 6)."""
    q = _Q(g, np.uint8)
    xv = g.rng.uniform(-1.0, 1.0, (1, 3, 96, 96)).astype(np.float32)
    x = q.qdq(g.input("input", xv), xv)
    x = q.conv(x, "conv1", 8, 3, stride=2, act="relu6")
    layers = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2)] + [(128, 1)] * 5 + [(256, 2), (256, 1)]
    cin = 8
    for i, (cout, stride) in enumerate(layers):
        x = q.conv(x, f"dw{i}", cin, 3, stride=stride, group=cin, act="relu6")
        x = q.conv(x, f"pw{i}", cout, 1, act="relu6")
        cin = cout
    y = q.linear(q.global_avgpool(x), "fc", 2)
    g.output(g.node("Identity", [y], "logits"))
    g.lsb["logits"] = float(q._scale_of(y))


MODELS = (qdq_cnn, qdq_matmul, qlinear_s8, qdq_direct)
# The INT8 benchmark models (bench/models.py imports them).
BENCH = (ds_cnn_int8, resnet8_int8, mobilenet_v1_025_int8)
