"""A board model: each call boots the model under the target's QEMU through
`cuvilc run` (a minimal firmware with cuvil's runtime; inputs and outputs
through semihosting) and reads the outputs back."""

import dataclasses
import json
import pathlib
import tempfile

import numpy as np

from . import _tool
from ._errors import CuvilError
from ._tensor import check_input


@dataclasses.dataclass(frozen=True)
class RunStats:
    """What `cuvilc run` measured for one call on a board (under
    `qemu -icount shift=0`, so both counts are deterministic)."""
    instructions: int
    cycles: int
    arena_bytes: int
    weight_bytes: int
    #: Built with profile=True: the per-layer table of the call, as
    #: `cuvilc run --profile --json` writes it (docs/profiling.md); else None.
    profile: dict = None


class BoardRunner:
    """Calls `cuvilc run` on the saved ONNX model with the build options."""

    def __init__(self, onnx_path, target, build_args, inputs, outputs):
        self.onnx_path = pathlib.Path(onnx_path)
        self.target = target
        self.build_args = list(build_args)
        self.inputs = inputs
        self.outputs = outputs

    def __call__(self, args, copy):
        if len(args) != len(self.inputs):
            raise TypeError(f"the model takes {len(self.inputs)} inputs, got {len(args)}")
        arrays = [check_input(info, a, i, copy)
                  for i, (info, a) in enumerate(zip(self.inputs, args))]
        with tempfile.TemporaryDirectory(prefix="cuvil-run-") as work:
            work = pathlib.Path(work)
            cmd = [_tool.cuvilc(), "run", self.onnx_path, "--target", self.target,
                   *self.build_args]
            for i, a in enumerate(arrays):
                if a is None:  # an optional input left out
                    cmd += ["--input", "none"]
                    continue
                np.save(work / f"input_{i}.npy", a)
                cmd += ["--input", work / f"input_{i}.npy"]
            out_dir = work / "out"
            cmd += ["--output-dir", out_dir, "--json", work / "run.json"]
            _tool.run(cmd, f"cuvilc run on {self.target}")
            summary = json.loads((work / "run.json").read_text())
            outs = []
            for info, entry in zip(self.outputs, summary["outputs"]):
                value = np.load(entry["file"])
                if value.dtype != info.dtype or (value.shape != info.shape and not info.varies):
                    raise CuvilError(f"cuvilc run wrote output '{info.name}' as "
                                     f"{value.dtype}{value.shape}, expected "
                                     f"{info.dtype}{info.shape}")
                outs.append(value)
        stats = RunStats(summary["instructions"], summary["cycles"],
                         summary["arena_bytes"], summary["weight_bytes"],
                         summary.get("profile"))
        return outs, stats
