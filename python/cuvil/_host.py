"""A host model: the object cuvilc built for the build machine, linked into a
shared library by ld.lld and called through ctypes.

The generated entry points take a caller-owned instance (cuvil_<name>_t)
and the arenas it computes in. Each Python thread gets its own instance
and arenas, initialised on its first call, so concurrent calls on one
model never share scratch memory; the weights are read-only and shared.
ctypes releases the GIL for the duration of a foreign call."""

import ctypes
import threading

import numpy as np

from ._errors import CuvilError
from ._tensor import TensorInfo, check_input

# runtime-baremetal/include/cuvil/status.h, for the messages.
def status_name(code, report):
    """The name of status `code` (CUVIL_ERR_...), from the build report's
    table of the runtime's status codes (cuvil/status.h)."""
    names = {v: k for k, v in report["interface"].get("status", {}).items()}
    return names.get(code, f"status {code}")


def _aligned(nbytes, alignment):
    """A zeroed byte array of nbytes starting on `alignment`."""
    raw = np.zeros(nbytes + alignment, dtype=np.uint8)
    start = -raw.ctypes.data % alignment
    return raw[start:start + nbytes]


class _Instance:
    """One cuvil_<name>_t with its own arenas, and the pointer arrays its
    thread's calls pass (one call at a time per thread)."""

    def __init__(self, lib):
        iface = lib.report["interface"]
        self.state = (ctypes.c_uint64 * ((iface["context_bytes"] + 7) // 8))()
        align = lib.report["arena"]["alignment"]
        arenas = lib.report["arenas"] or [{"bytes": 0}]
        self.arenas = [_aligned(max(a["bytes"], 1), align) for a in arenas]
        pointers = (ctypes.c_void_p * len(self.arenas))(
            *(a.ctypes.data for a in self.arenas))
        status = lib.init(self.state, pointers, None, 0)
        if status != 0:
            raise CuvilError(f"{lib.prefix}_init failed: {status_name(status, lib.report)}")
        self.in_ptrs = (ctypes.c_void_p * max(len(lib.inputs), 1))()
        self.out_ptrs = (ctypes.c_void_p * max(len(lib.outputs), 1))()
        # What a zero-size tensor points at: the model checks for null.
        self.empty = np.empty(1, np.uint8)


class HostLibrary:
    """The shared library of one host model and its entry points."""

    def __init__(self, so_path, report):
        self.report = report
        iface = report["interface"]
        if not iface.get("context_bytes"):
            raise CuvilError("the build report has no instance size (context_bytes): "
                             "rebuild with this version of cuvilc")
        self.prefix = iface["prefix"]
        self.inputs = tuple(TensorInfo.from_report(e) for e in iface["inputs"])
        self.outputs = tuple(TensorInfo.from_report(e) for e in iface["outputs"])
        try:
            self._dll = ctypes.CDLL(str(so_path))
            self.init = self._dll[f"{self.prefix}_init"]
            self.run_v = self._dll[f"{self.prefix}_run_v"]
        except (OSError, AttributeError) as e:
            raise CuvilError(f"{so_path}: cannot load the model library: {e}") from e
        self.init.restype = self.run_v.restype = ctypes.c_int
        self.init.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                              ctypes.c_ulong]
        self.run_v.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        # Outputs whose shape a run-time branch picks: asked after each run.
        self.output_shape = None
        if any(o.varies for o in self.outputs):
            self.output_shape = self._dll[f"{self.prefix}_output_shape"]
            self.output_shape.restype = ctypes.c_int
            self.output_shape.argtypes = [ctypes.c_void_p, ctypes.c_uint,
                                          ctypes.POINTER(ctypes.c_int64)]
        self._local = threading.local()

    def _instance(self):
        inst = getattr(self._local, "instance", None)
        if inst is None:
            inst = self._local.instance = _Instance(self)
        return inst

    def profile(self):
        """A profile=True build: the calling thread's table, summed over its
        calls so far, in the form of `cuvilc run --profile --json`'s
        "profile" (counters in nanoseconds); None without profile=True."""
        prof = self.report["interface"].get("profile")
        if prof is None:
            return None
        state = bytes(self._instance().state)
        words = np.frombuffer(state, dtype="<u8")
        runs = int(words[prof["runs_offset"] // 8])
        first = prof["table_offset"] // 8
        steps = []
        for i, step in enumerate(prof["steps"]):
            entry = {"step": i, "node": step["name"], "origins": step["origins"]}
            for c, counter in enumerate(prof["counters"]):
                entry[counter] = int(words[first + 2 * i + c])
            steps.append(entry)
        return {"counters": prof["counters"], "runs": runs, "steps": steps}

    def __call__(self, args, copy):
        if len(args) != len(self.inputs):
            raise TypeError(f"the model takes {len(self.inputs)} inputs "
                            f"({', '.join(i.name for i in self.inputs)}), got {len(args)}")
        inst = self._instance()
        # The checked arrays stay referenced until the call returns.
        arrays = [check_input(info, a, i, copy)
                  for i, (info, a) in enumerate(zip(self.inputs, args))]
        outs = [np.empty(o.shape, dtype=o.dtype) for o in self.outputs]
        for ptrs, buffers in ((inst.in_ptrs, arrays), (inst.out_ptrs, outs)):
            for i, a in enumerate(buffers):
                # None: an optional input left out, which run reads as NULL.
                ptrs[i] = None if a is None else (a if a.nbytes else inst.empty).ctypes.data
        status = self.run_v(inst.state, inst.in_ptrs, inst.out_ptrs)
        if status != 0:
            raise CuvilError(f"{self.prefix}_run_v failed: "
                             f"{status_name(status, self.report)}")
        for i, info in enumerate(self.outputs):
            if info.varies:  # the first bytes, in the shape of the branch run took
                dims = (ctypes.c_int64 * 16)()
                rank = self.output_shape(inst.state, i, dims)
                if rank < 0 or rank > 16:
                    raise CuvilError(f"{self.prefix}_output_shape failed: "
                                     f"{status_name(rank, self.report)}")
                shape = tuple(dims[:rank])
                outs[i] = outs[i].reshape(-1)[:int(np.prod(shape))].reshape(shape).copy()
        return outs
