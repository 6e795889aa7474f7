#!/usr/bin/python3
"""Weight blobs for update tests and demos: a retrained twin of a model, and
damaged copies of a .cuvw blob.

    cuvw.py twin MODEL_DIR OUT_DIR [--seed N] [--node NODE]
    cuvw.py corrupt IN.cuvw OUT.cuvw [--fix-crc]

twin: OUT_DIR gets MODEL_DIR's model.onnx with every float initializer
multiplied elementwise by factors drawn from [0.5, 1.5] (seeded: the same
twin every time), which keeps the structure (and the sign of every weight,
so variances stay positive), MODEL_DIR's inputs and manifest.json, and ONNX
Runtime's outputs for it (ref_<i>.bin, tests/reference/run_ort.js).

corrupt: OUT is IN with one byte of its data block flipped, which init
refuses as CUVIL_ERR_BLOB_CHECKSUM; with --fix-crc the blob's CRC-32 is
rewritten to match, so that only the SHA-256 tells (CUVIL_ERR_BLOB_DIGEST
where it is verified).

The offsets come from the FlatBuffers layout of schema/weights.fbs: the
root table's fields are header (0), tensors (1), data_crc32 (2), data (3),
data_sha256 (4); the header's first field is schema_version.
"""

import argparse
import pathlib
import shutil
import struct
import subprocess
import sys
import zlib

REPO = pathlib.Path(__file__).resolve().parents[1]
RUN_ORT = REPO / "tests" / "reference" / "run_ort.js"


def _field(blob, table, index):
    """Position of field `index` of the table at `table` (0 if absent)."""
    vtable = table - struct.unpack_from("<i", blob, table)[0]
    size = struct.unpack_from("<H", blob, vtable)[0]
    if 4 + 2 * index + 2 > size:
        return 0
    offset = struct.unpack_from("<H", blob, vtable + 4 + 2 * index)[0]
    return table + offset if offset else 0


def _follow(blob, at):
    return at + struct.unpack_from("<I", blob, at)[0]


def _root(blob):
    return struct.unpack_from("<I", blob, 0)[0]


def data_block(blob):
    """(offset, length) of the data block."""
    vec = _follow(blob, _field(blob, _root(blob), 3))
    return vec + 4, struct.unpack_from("<I", blob, vec)[0]


def crc_field(blob):
    """Offset of data_crc32."""
    return _field(blob, _root(blob), 2)


def version_field(blob):
    """Offset of header.schema_version."""
    return _field(blob, _follow(blob, _field(blob, _root(blob), 0)), 0)


def corrupt(blob, fix_crc=False):
    """A copy of blob with the middle byte of its data flipped."""
    out = bytearray(blob)
    start, length = data_block(out)
    out[start + length // 2] ^= 0x10
    if fix_crc:
        struct.pack_into("<I", out, crc_field(out), zlib.crc32(out[start:start + length]))
    return bytes(out)


def make_twin(model_dir, out_dir, seed=14, node="node"):
    """The retrained twin of model_dir in out_dir (see the module doc)."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    rng = np.random.default_rng(seed)
    model = onnx.load(model_dir / "model.onnx")
    for init in model.graph.initializer:
        if init.data_type == onnx.TensorProto.FLOAT:
            w = numpy_helper.to_array(init)
            factors = rng.uniform(0.5, 1.5, size=w.shape).astype(np.float32)
            init.CopyFrom(numpy_helper.from_array(w * factors, init.name))
    shutil.rmtree(out_dir, ignore_errors=True)
    out_dir.mkdir(parents=True)
    onnx.save(model, out_dir / "model.onnx")
    for f in model_dir.glob("input_*.bin"):
        shutil.copyfile(f, out_dir / f.name)
    shutil.copyfile(model_dir / "manifest.json", out_dir / "manifest.json")
    subprocess.run([node, RUN_ORT, out_dir], check=True, capture_output=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    twin = sub.add_parser("twin")
    twin.add_argument("model_dir", type=pathlib.Path)
    twin.add_argument("out_dir", type=pathlib.Path)
    twin.add_argument("--seed", type=int, default=14)
    twin.add_argument("--node", default="node")
    bad = sub.add_parser("corrupt")
    bad.add_argument("blob", type=pathlib.Path)
    bad.add_argument("out", type=pathlib.Path)
    bad.add_argument("--fix-crc", action="store_true")
    args = parser.parse_args()
    if args.command == "twin":
        make_twin(args.model_dir, args.out_dir, args.seed, args.node)
    else:
        args.out.write_bytes(corrupt(args.blob.read_bytes(), args.fix_crc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
