"""Post-training quantization end to end: float test models quantized by
`cuvilc quantize`, then compiled, run on each target and compared with
ONNX Runtime running the same QDQ model.

  run_ptq.py --cuvilc CUVILC --models MODELS --work DIR --targets host,a78,u74-mc
             [--model NAME ...]

For each float model of MODELS (written by gen_models.py), calibration
inputs are drawn with a fixed seed from the distribution of the model's own
test input (its mean and spread), `cuvilc quantize` writes
WORK/models/<name>_int8/model.onnx, run_ort.js computes its reference
outputs, and run_e2e.py compiles and runs it on every target. Each output
may differ from ORT by the quantization step of the last quantized tensor
before it (run_e2e.py's "lsb" comparison: ORT and cuvil may round a
requantization differently, docs/quantization.md).
"""
import argparse
import json
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

HERE = pathlib.Path(__file__).resolve().parent
RUN_ORT = HERE.parent / "reference" / "run_ort.js"
RUN_E2E = HERE / "run_e2e.py"
# Models covering what the quantizer plans: Conv+BatchNormalization+Relu,
# MaxPool, Flatten, Gemm (cnn); depthwise and pointwise Conv (dwsep);
# residual Add (resblock); a Gemm chain (mlp).
DEFAULT_MODELS = ["cnn", "dwsep", "resblock", "mlp"]
SAMPLES = 32


def step_before(model, output):
    """The scale of the DequantizeLinear nearest above output (through
    single-input float ops such as Softmax or Relu), or None."""
    producer = {o: n for n in model.graph.node for o in n.output}
    inits = {t.name: t for t in model.graph.initializer}
    name = output
    for _ in range(16):
        node = producer.get(name)
        if node is None:
            return None
        if node.op_type == "DequantizeLinear":
            scale = numpy_helper.to_array(inits[node.input[1]])
            return float(np.max(scale))
        activations = [i for i in node.input if i and i not in inits]
        if len(activations) != 1:
            return None
        name = activations[0]
    return None


def quantize(cuvilc, src, dst):
    manifest = json.loads((src / "manifest.json").read_text())
    rng = np.random.default_rng(7)
    cal = dst.parent.parent / "calibration" / src.name
    shutil.rmtree(cal, ignore_errors=True)
    for k in range(SAMPLES):
        sample = cal / f"sample_{k:03d}"
        sample.mkdir(parents=True)
        for i, inp in enumerate(manifest["inputs"]):
            own = np.fromfile(src / f"input_{i}.bin", dtype=inp["dtype"])
            data = rng.normal(own.mean(), own.std() + 1e-3, inp["shape"]).astype(inp["dtype"])
            np.save(sample / f"{inp['name']}.npy", data)
    dst.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([str(cuvilc), "quantize", str(src / "model.onnx"), "--calibrate",
                           str(cal), "--out", str(dst / "model.onnx")],
                          capture_output=True, text=True)
    print(proc.stderr, end="")
    if proc.returncode != 0:
        raise RuntimeError(f"cuvilc quantize {src.name}: exit code {proc.returncode}")
    model = onnx.load(dst / "model.onnx")
    if not any(n.op_type == "QuantizeLinear" for n in model.graph.node):
        raise RuntimeError(f"{src.name}: the quantized model has no QuantizeLinear")
    for i in range(len(manifest["inputs"])):
        shutil.copyfile(src / f"input_{i}.bin", dst / f"input_{i}.bin")
    lsb = {}
    for name in manifest["outputs"]:
        step = step_before(model, name)
        if step is None:
            raise RuntimeError(f"{src.name}: output '{name}' is not quantized")
        lsb[name] = step
    manifest["lsb"] = lsb
    (dst / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cuvilc", required=True, type=pathlib.Path)
    ap.add_argument("--models", required=True, type=pathlib.Path)
    ap.add_argument("--work", required=True, type=pathlib.Path)
    ap.add_argument("--targets", required=True)
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--node", default="node")
    args = ap.parse_args()
    out = args.work.resolve() / "models"
    shutil.rmtree(out, ignore_errors=True)
    names = args.model or DEFAULT_MODELS
    try:
        for name in names:
            quantize(args.cuvilc.resolve(), args.models / name, out / f"{name}_int8")
        subprocess.run([args.node, str(RUN_ORT)] + [str(out / f"{n}_int8") for n in names],
                       check=True)
    except (RuntimeError, subprocess.CalledProcessError) as err:
        print(f"run_ptq: error: {err}", file=sys.stderr)
        return 1
    return subprocess.run([sys.executable, str(RUN_E2E), "--cuvilc", str(args.cuvilc),
                           "--models", str(out), "--work", str(args.work / "run"),
                           "--targets", args.targets]).returncode


if __name__ == "__main__":
    sys.exit(main())
