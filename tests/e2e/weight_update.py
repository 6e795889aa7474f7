#!/usr/bin/python3
"""Weight-only updates: an object built from one model runs the weights of the
same model retrained, and refuses weights of another structure or damaged ones.

    weight_update.py --cuvilc PATH --models DIR --work DIR --node NODE
                     --targets host,a78,u74-mc [--model cnn]

From the test model (default cnn) in --models, in WORK/twins/ this makes:
  retrained  the same graph with every float initializer multiplied by
             factors in [0.5, 1.5] (seeded, scripts/cuvw.py twin): other
             weights, same structure, with ONNX Runtime's outputs;
  other      the same graph with a Neg after its first output: another
             structure with the very same weights.
For each target, in WORK/<target>/: cuvilc builds the model and each twin
with --weights external=*.cuvw (--name model); the model's and the
retrained twin's headers must state the same structure hash and different
weight digests, the other twin's another hash. runtime-baremetal/runner/
runner.c, built once against the model's object with -DCUVIL_RUNNER_WEIGHTS
(init takes the blob in weights.cuvw), then runs with:
  the model's own blob       outputs equal to ORT's for the model;
  the retrained blob         outputs equal to ORT's for the retrained twin;
  the other twin's blob      init returns CUVIL_ERR_BLOB_STRUCTURE (-13);
  the retrained blob with one data byte flipped
                             init returns CUVIL_ERR_BLOB_CHECKSUM (-16);
  the retrained blob marked schema version 1
                             init returns CUVIL_ERR_BLOB_VERSION (-12).
On the boards the runner also prints what checking the blob costs
(instructions, CRC-32 alone and with the SHA-256), shown in the PASS line.

Signed weights: the model and the retrained twin are built again with
--sign-key (a 32-byte key), and the retrained twin once more with another
key. The runner, built with -DCUVIL_RUNNER_KEY against the signed model
(init_signed with the key in key.bin), runs:
  the signed retrained blob  outputs equal to ORT's for the retrained twin;
  the unsigned retrained blob, the one signed with the other key, and the
  signed one with a data byte flipped
                             init_signed returns CUVIL_ERR_BLOB_SIGNATURE (-20).

Prints `PASS target (...)` or `FAIL target: reason` per target, then
`N passed, M failed`. Exits 0 if all passed, 1 if any failed, 2 on usage errors.
"""

import argparse
import json
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tomllib

import onnx
from onnx import helper

import run_e2e

sys.path.insert(0, str(run_e2e.REPO / "scripts"))
import cuvw  # noqa: E402  (scripts/cuvw.py: twins and damaged blobs)

RUN_ORT = run_e2e.REPO / "tests" / "reference" / "run_ort.js"
STATUS = re.compile(r"cuvil_model_init(?:_signed)? returned (-?\d+)")
VERIFY = re.compile(r"^cuvil: verify bytes=(\d+) crc32 instret=(\d+) sha256 instret=(\d+)",
                    re.MULTILINE)
SIGNATURE = re.compile(r"^cuvil: verify signature instret=(\d+)", re.MULTILINE)
HEADER_MACRO = r"^#define CUVIL_MODEL_{} (\S+)"
REFUSALS = (("other", "structure", -13), ("corrupt", "one flipped data byte", -16),
            ("version1", "schema version 1", -12))
SIGNED_REFUSALS = (("unsigned", "no signature", -20), ("other_key", "another key's signature", -20),
                   ("tampered", "a signature and one flipped data byte", -20))
# Fixed keys: the test needs two different ones, not secret ones.
KEY = bytes(range(1, 33))
OTHER_KEY = bytes(range(101, 133))


def make_twins(model_dir, twins, node):
    """WORK/twins/{retrained,other}: model.onnx, inputs, manifest; ORT's
    outputs for the retrained one (scripts/cuvw.py twin)."""
    shutil.rmtree(twins, ignore_errors=True)
    cuvw.make_twin(model_dir, twins / "retrained", node=node)
    other = onnx.load(model_dir / "model.onnx")
    out = other.graph.output[0]
    inner = out.name + "_before_neg"
    for n in other.graph.node:
        n.output[:] = [inner if o == out.name else o for o in n.output]
    other.graph.node.append(helper.make_node("Neg", [inner], [out.name]))
    d = twins / "other"
    d.mkdir(parents=True)
    onnx.save(other, d / "model.onnx")


def header_macro(header, name):
    m = re.search(HEADER_MACRO.format(name), header.read_text(), re.MULTILINE)
    if not m:
        raise run_e2e.CaseError(f"{header.name} defines no CUVIL_MODEL_{name}")
    return m[1]


def build(cuvilc, target, model_dir, out_dir, key=None):
    """cuvilc build with external weights into out_dir (model.o, .h, .cuvw),
    signed with key (bytes) if given."""
    out_dir.mkdir(parents=True)
    sign = []
    if key is not None:
        (out_dir / "sign.key").write_bytes(key)
        sign = ["--sign-key", out_dir / "sign.key"]
    run_e2e.cuvilc_build([cuvilc, "build", model_dir / "model.onnx", "--target", target.name,
                          "--name", "model", "--out", out_dir / "model.o",
                          "--weights", f"external={out_dir / 'model.cuvw'}", *sign],
                         f"cuvilc build {model_dir.name}")
    return out_dir / "model.cuvw"


def expect_refusals(target, image, build_dir, blobs, cases, entry):
    """Each (name, what, status) of cases: the runner given blobs[name]
    exits non-zero with `entry` returning that status."""
    for name, what, want in cases:
        rc, out = run_with(target, image, build_dir, blobs[name])
        got = STATUS.search(out)
        if rc == 0 or not got or int(got[1]) != want:
            raise run_e2e.CaseError(f"a blob with {what}: expected {entry} to return {want}, "
                                    f"the runner exited {rc}:\n{out}")


def run_signed(cuvilc, target, model_dir, twins, case_dir, unsigned):
    """The signed-weights runs (see the module's doc); unsigned: the
    retrained twin's unsigned blob."""
    build_dir = case_dir / "signed_model"
    build(cuvilc, target, model_dir, build_dir, KEY)
    signed = build(cuvilc, target, twins / "retrained", case_dir / "signed_retrained", KEY).read_bytes()
    other_key = build(cuvilc, target, twins / "retrained", case_dir / "other_key", OTHER_KEY).read_bytes()
    for f in model_dir.glob("input_*.bin"):
        shutil.copyfile(f, build_dir / f.name)
    (build_dir / "key.bin").write_bytes(KEY)
    image = target.build(build_dir, defines=["CUVIL_RUNNER_WEIGHTS=1", "CUVIL_RUNNER_KEY=1"])
    rc, out = run_with(target, image, build_dir, signed)
    if rc != 0 or not run_e2e.RUN_OK.search(out):
        raise run_e2e.CaseError(f"with the signed retrained blob the runner failed ({rc}):\n{out}")
    run_e2e.compare(twins / "retrained", build_dir,
                    json.loads((model_dir / "manifest.json").read_text())["outputs"])
    refused = {"unsigned": unsigned, "other_key": other_key, "tampered": cuvw.corrupt(signed, fix_crc=True)}
    expect_refusals(target, image, build_dir, refused, SIGNED_REFUSALS, "init_signed")
    cost = SIGNATURE.search(out)
    return cost[1] if cost else None


def run_with(target, image, case_dir, blob):
    """Run image with blob as weights.cuvw: (exit code, stdout)."""
    (case_dir / "weights.cuvw").write_bytes(blob)
    proc = subprocess.run(target.command(image), cwd=case_dir, capture_output=True, text=True,
                          timeout=run_e2e.RUN_TIMEOUT_S)
    return proc.returncode, proc.stdout


def run_target(cuvilc, target, model_dir, twins, case_dir):
    shutil.rmtree(case_dir, ignore_errors=True)
    blobs = {}
    for name, src in (("model", model_dir), ("retrained", twins / "retrained"),
                      ("other", twins / "other")):
        blobs[name] = build(cuvilc, target, src, case_dir / name).read_bytes()
    hashes = {n: header_macro(case_dir / n / "model.h", "STRUCTURE_HASH") for n in blobs}
    digests = {n: header_macro(case_dir / n / "model.h", "WEIGHTS_SHA256") for n in blobs}
    if hashes["model"] != hashes["retrained"] or hashes["model"] == hashes["other"]:
        raise run_e2e.CaseError(f"structure hashes: {hashes}")
    if digests["model"] == digests["retrained"] or digests["model"] != digests["other"]:
        raise run_e2e.CaseError(f"weight digests: {digests}")

    build_dir = case_dir / "model"
    for f in model_dir.glob("input_*.bin"):
        shutil.copyfile(f, build_dir / f.name)
    image = target.build(build_dir, defines=["CUVIL_RUNNER_WEIGHTS=1"])
    outputs = json.loads((model_dir / "manifest.json").read_text())["outputs"]
    cost = None
    for name, refs in (("model", model_dir), ("retrained", twins / "retrained")):
        for f in build_dir.glob("out_*.bin"):
            f.unlink()
        rc, out = run_with(target, image, build_dir, blobs[name])
        if rc != 0 or not run_e2e.RUN_OK.search(out):
            raise run_e2e.CaseError(f"with the {name} blob the runner failed ({rc}):\n{out}")
        run_e2e.compare(refs, build_dir, outputs)
        cost = VERIFY.search(out) or cost

    version1 = bytearray(blobs["retrained"])
    struct.pack_into("<I", version1, cuvw.version_field(version1), 1)
    refused = {"other": blobs["other"], "corrupt": cuvw.corrupt(blobs["retrained"]),
               "version1": bytes(version1)}
    expect_refusals(target, image, build_dir, refused, REFUSALS, "init")
    signature = run_signed(cuvilc, target, model_dir, twins, case_dir, blobs["retrained"])
    if cost:
        return (f"verify {cost[1]} bytes: crc32 {cost[2]} instructions, "
                f"with sha256 {cost[3]}, signature {signature}")
    return "host"


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuvilc", required=True, type=pathlib.Path)
    parser.add_argument("--models", required=True, type=pathlib.Path)
    parser.add_argument("--work", required=True, type=pathlib.Path)
    parser.add_argument("--node", default="node")
    parser.add_argument("--targets", required=True)
    parser.add_argument("--model", default="cnn")
    return parser.parse_args()


def main():
    args = parse_args()
    try:
        targets = [run_e2e.load_target(t) for t in args.targets.split(",") if t]
        run_e2e.find_models(args.models, [args.model])
    except (ValueError, tomllib.TOMLDecodeError) as err:
        print(f"weight_update: error: {err}", file=sys.stderr)
        return 2
    cuvilc = args.cuvilc.resolve()
    work = args.work.resolve()
    model_dir = args.models.resolve() / args.model
    make_twins(model_dir, work / "twins", args.node)
    passed = failed = 0
    for target in targets:
        try:
            target.prepare(work)
            note = run_target(cuvilc, target, model_dir, work / "twins", work / target.label)
            print(f"PASS {target.label} ({note})", flush=True)
            passed += 1
        except (run_e2e.CaseError, subprocess.SubprocessError, OSError) as err:
            print(f"FAIL {target.label}: {err}", flush=True)
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
