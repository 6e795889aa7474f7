"""cuvil.compile(), cuvil.load() and the callable they return."""

import hashlib
import json
import os
import pathlib
import shutil
import tempfile
import weakref
import zipfile

import numpy as np

from . import _source, _tool
from ._board import BoardRunner
from ._errors import CuvilError
from ._host import HostLibrary
from ._tensor import TensorInfo

# Version of the .cuv layout written by Model.save().
FORMAT = 1
# cuvilc options the package sets itself.
_RESERVED = {"out", "header", "linker_script", "name", "report", "target", "dim"}
HOST_TARGETS = ("host", "host-avx512")
# The options of `cuvilc build --quantize int8` that `cuvilc quantize` takes.
QUANTIZE_OPTIONS = {"quantize", "calibrate", "calibration_method", "percentile",
                    "validate", "keep_float", "max_accuracy_drop"}


def _flags(build_options):
    """cuvilc build flags for keyword options: calibration_method="entropy"
    -> --calibration-method entropy; True -> the bare flag; a list ->
    comma-separated; a dict -> the flag once per item, NAME=VALUE
    (loop_bound={"/Loop": 8} -> --loop-bound /Loop=8)."""
    flags = []
    for key, value in build_options.items():
        if key in _RESERVED:
            raise TypeError(f"cuvil.compile: '{key}' is set by cuvil itself")
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif isinstance(value, dict):
            for name, item in value.items():
                flags += [flag, f"{name}={item}"]
        elif isinstance(value, (list, tuple)):
            flags += [flag, ",".join(str(v) for v in value)]
        else:
            flags += [flag, str(value)]
    return flags


def _calibration(value, directory):
    """--calibrate's directory: a path as is; a sequence of samples written
    in the layout docs/quantization.md describes: an array per sample (one
    .npy file each), or a tuple of arrays per sample for a model with
    several inputs (a subdirectory each, input_<i>.npy inside)."""
    if isinstance(value, (str, os.PathLike)):
        return value
    samples = pathlib.Path(directory) / "calibration"
    samples.mkdir()
    count = 0
    for count, sample in enumerate(value, 1):
        if isinstance(sample, np.ndarray):
            np.save(samples / f"sample_{count:05d}.npy", sample)
        elif isinstance(sample, (tuple, list)) and all(
                isinstance(a, np.ndarray) for a in sample):
            sub = samples / f"sample_{count:05d}"
            sub.mkdir()
            for i, a in enumerate(sample):
                np.save(sub / f"input_{i}.npy", a)
        else:
            raise TypeError("calibrate: give a directory (see docs/quantization.md) or a "
                            "sequence of samples, each a numpy array (or a tuple of "
                            "arrays, one per input)")
    if not count:
        raise CuvilError("calibrate: no samples")
    return samples


class Model:
    """A compiled model. Call it with numpy arrays (positionally, in the
    model's input order, or by input name); it returns one array, or a
    tuple when the model has several outputs."""

    def __init__(self, name, target, report, files, work, build_args=()):
        #: The model's name: its file's stem ("model" for a ModelProto or a module).
        self.name = name
        self.target = target
        self.report = report
        self._files = files  # role -> path in self._work
        self._work = work
        self._build_args = list(build_args)
        iface = report["interface"]
        self.inputs = tuple(TensorInfo.from_report(e) for e in iface["inputs"])
        self.outputs = tuple(TensorInfo.from_report(e) for e in iface["outputs"])
        #: Counters of the last call on a board (None on the host).
        self.last_run = None
        if target in HOST_TARGETS:
            self._run = HostLibrary(files["library"], report)
        else:
            self._run = BoardRunner(files["onnx"], target, build_args, self.inputs,
                                    self.outputs)
        # The temporary directory lives as long as the model (the library
        # stays mapped until then).
        self._cleanup = weakref.finalize(self, shutil.rmtree, work, True)

    @property
    def profile(self):
        """Built with profile=True, the per-layer table (docs/profiling.md):
        on the host, this thread's calls so far (nanoseconds); on a board,
        the last call (cycles and instructions). None otherwise."""
        if isinstance(self._run, HostLibrary):
            return self._run.profile()
        return self.last_run.profile if self.last_run else None

    @property
    def arena_bytes(self):
        return self.report["arena"]["bytes"]

    @property
    def weight_bytes(self):
        return self.report["weights"]["blob_bytes"]

    def __repr__(self):
        ins = ", ".join(f"{i.name}: {i.dtype}{list(i.shape)}" for i in self.inputs)
        outs = ", ".join(f"{o.name}: {o.dtype}{list(o.shape)}" for o in self.outputs)
        return f"<cuvil.Model {self.name} on {self.target}: ({ins}) -> ({outs})>"

    def __call__(self, *args, copy=True, **named):
        if named:
            if args:
                raise TypeError("give the inputs positionally or by name, not both")
            unknown = sorted(set(named) - {i.name for i in self.inputs})
            if unknown:
                raise TypeError(f"unknown input(s) {', '.join(unknown)}; the model's inputs "
                                f"are {', '.join(i.name for i in self.inputs)}")
            missing = [i.name for i in self.inputs if i.name not in named and not i.optional]
            if missing:
                raise TypeError(f"missing input(s) {', '.join(missing)}")
            # An optional input not named is left out.
            args = tuple(named.get(i.name) for i in self.inputs)
        if isinstance(self._run, HostLibrary):
            outs = self._run(args, copy)
        else:
            outs, self.last_run = self._run(args, copy)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def save(self, path):
        """Writes one .cuv file (a zip archive): the object and, for the host,
        its shared library; the build report (interface, memory plan); and,
        for a board, the ONNX model `cuvilc run` boots."""
        meta = {"format": FORMAT, "name": self.name, "target": self.target, "build_args": self._build_args,
                "report": self.report, "files": {}}
        path = pathlib.Path(path)
        partial = path.with_name(path.name + ".partial")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as z:
            for role, file in self._files.items():
                data = pathlib.Path(file).read_bytes()
                meta["files"][role] = {"name": pathlib.Path(file).name,
                                       "sha256": hashlib.sha256(data).hexdigest()}
                z.writestr(pathlib.Path(file).name, data)
            z.writestr("cuvil.json", json.dumps(meta, indent=1))
        partial.replace(path)  # no half-written file under the real name


def compile(model, input_shape=None, target="host", dims=None, quantize=None,
            **build_options):
    """Compiles `model` (a path, an onnx.ModelProto or a torch.nn.Module)
    with cuvilc for `target` and returns a callable Model.

    input_shape: the shape of the input (a tuple), or one per input (a list
    of tuples): needed for a torch module (the example input it is traced
    with) and fixes the model's symbolic dimensions; dims: symbolic
    dimensions by name ({"seq": 49}). quantize="int8" quantizes a float
    model first (needs calibrate=, a directory or a list of input arrays).
    Other keywords are cuvilc build options: kernels="portable",
    checked=True, calibration_method="entropy", ... (`cuvilc build --help`).
    """
    work = tempfile.mkdtemp(prefix="cuvil-")
    try:
        onnx_path = _source.write_onnx(model, input_shape, work)
        all_dims = _source.dims_for(onnx_path, input_shape, dims)
        dim_args = []
        for name, size in sorted(all_dims.items()):
            dim_args += ["--dim", f"{name}={size}"]
        if quantize is not None:
            if "calibrate" not in build_options:
                raise CuvilError("quantize='int8' needs calibrate= (a directory of inputs "
                                 "or a list of numpy arrays)")
            build_options = dict(build_options, quantize=quantize,
                                 calibrate=_calibration(build_options["calibrate"], work))
            if target not in HOST_TARGETS:
                # A board call builds the model again (`cuvilc run`), maybe after
                # load() when the calibration data is gone: quantize once, here,
                # and keep the QDQ model it gives.
                quant = {k: build_options.pop(k) for k in list(build_options)
                         if k in QUANTIZE_OPTIONS}
                quant.pop("quantize")
                quantized = pathlib.Path(work) / "quantized.onnx"
                _tool.run([_tool.cuvilc(), "quantize", onnx_path, "--out", quantized,
                           *_flags(quant), *dim_args], "cuvilc quantize")
                onnx_path = quantized
        args = _flags(build_options) + dim_args
        model_obj = pathlib.Path(work) / "model.o"
        report_path = pathlib.Path(work) / "model.json"
        _tool.run([_tool.cuvilc(), "build", onnx_path, "--target", target, "--out", model_obj,
                   "--name", "model", "--report", report_path, *args], "cuvilc build")
        files = {"object": model_obj, "header": model_obj.with_suffix(".h")}
        if target in HOST_TARGETS:
            files["library"] = pathlib.Path(work) / "model.so"
            _tool.run([_tool.linker(), "-shared", "-o", files["library"], model_obj],
                      "linking the model into a shared library")
        else:
            # The board path boots the model through `cuvilc run`, which builds it again
            # from the ONNX file with the same options.
            files["onnx"] = pathlib.Path(work) / "source.onnx"
            shutil.copyfile(onnx_path, files["onnx"])
        report = json.loads(report_path.read_text())
        name = pathlib.Path(model).stem if isinstance(model, (str, os.PathLike)) else "model"
        return Model(name, target, report, files, work, args)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def load(path):
    """A Model from a file Model.save() wrote; no compiler run."""
    path = pathlib.Path(path)
    work = tempfile.mkdtemp(prefix="cuvil-")
    try:
        try:
            with zipfile.ZipFile(path) as z:
                meta = json.loads(z.read("cuvil.json"))
                if meta.get("format") != FORMAT:
                    raise CuvilError(f"{path}: .cuv format {meta.get('format')}, this "
                                     f"cuvil reads format {FORMAT}")
                files = {}
                for role, entry in meta["files"].items():
                    data = z.read(entry["name"])
                    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
                        raise CuvilError(f"{path}: {entry['name']} is corrupt "
                                         "(checksum mismatch)")
                    files[role] = pathlib.Path(work) / pathlib.Path(entry["name"]).name
                    files[role].write_bytes(data)
        except (zipfile.BadZipFile, KeyError, ValueError) as e:
            raise CuvilError(f"{path}: not a cuvil model file: {e}") from e
        return Model(meta["name"], meta["target"], meta["report"], files, work,
                     meta["build_args"])
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
