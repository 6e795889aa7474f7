#!/usr/bin/python3
"""End-to-end model tests: compile each test model with cuvilc, run it, compare
every output with ONNX Runtime's.

    run_e2e.py --cuvilc PATH --models DIR --work DIR --targets host,a78,u74-mc
               [--model NAME]...

--models is the directory tests/models/gen_models.py wrote, with reference
outputs from tests/reference/run_ort.js; every subdirectory holding a
manifest.json is a model. For each target and model, in WORK/<target>/<model>:

  1. cuvilc build model.onnx --target T --name model --out model.o
     (also writes model.h and model.ld); model.o must have no undefined symbols;
  2. build tests/e2e/runner.c against it: natively for `host`; for a board
     target, with the runtime library (runtime-baremetal/runtime.mk, built
     once per target into WORK/runtime-<target>) and the target's base linker
     script, which INCLUDEs cuvil-models.ld, which INCLUDEs model.ld; the
     image must contain no heap functions;
  3. run it: natively, or with the [qemu] command of targets/<target>.toml
     plus `-icount shift=0` (deterministic instruction counts), with the case
     directory as working directory for semihosting file I/O;
  4. compare out_<i>.bin with ref_<i>.bin: numpy.allclose(atol=1e-4, rtol=1e-3).

Prints `PASS target/model (...)` or `FAIL target/model: reason` per case, then
`N passed, M failed`. Exits 0 if all passed, 1 if any failed, 2 on usage errors.
"""

import argparse
import json
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import tomllib

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
RUNNER = pathlib.Path(__file__).resolve().parent / "runner.c"
TARGETS_DIR = REPO / "targets"
RUNTIME_MK = REPO / "runtime-baremetal" / "runtime.mk"
LINKER_SCRIPTS = REPO / "linker-scripts"

ATOL = 1e-4
RTOL = 1e-3
TOOL_TIMEOUT_S = 600
RUN_TIMEOUT_S = 120
HOST_CC = "cc"
CROSS_CC = "clang-19"
NM = "llvm-nm-19"
HEAP_FUNCTIONS = {"malloc", "free", "calloc", "realloc", "sbrk"}
RUN_OK = re.compile(r"^cuvil: run ok(?: cycles=(\d+) instret=(\d+))?\r?$", re.MULTILINE)


class CaseError(Exception):
    """A step of a test case failed; the message says which and why."""


def run(cmd, what, cwd=None, timeout=TOOL_TIMEOUT_S):
    """Run cmd; on failure raise CaseError with the tail of its output."""
    cmd = [str(c) for c in cmd]
    try:
        # No stdin: QEMU's -nographic console would otherwise take the terminal.
        proc = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, errors="replace", timeout=timeout)
    except FileNotFoundError:
        raise CaseError(f"{what}: cannot execute '{cmd[0]}'") from None
    except subprocess.TimeoutExpired:
        raise CaseError(f"{what}: timed out after {timeout} s\n  $ {shlex.join(cmd)}") from None
    if proc.returncode != 0:
        lines = (proc.stdout + proc.stderr).strip().splitlines()[-20:]
        raise CaseError(f"{what}: exit code {proc.returncode}\n  $ {shlex.join(cmd)}\n"
                        + "".join(f"  | {line}\n" for line in lines).rstrip())
    return proc


def symbol_names(binary):
    """Names of the symbols that `binary` defines or references."""
    return set(run([NM, "-j", binary], f"{NM} {binary.name}").stdout.split())


class HostTarget:
    """The build machine: the runner is a native executable using stdio. It
    links the C library, so only model.o is checked for heap use."""

    name = "host"

    def prepare(self, work_root):
        """Nothing to build ahead of the cases."""

    def build(self, case_dir):
        exe = case_dir / "run"
        run([HOST_CC, "-O2", "-DCUVIL_HOST", "-I", case_dir, RUNNER, case_dir / "model.o",
             "-o", exe], "build runner")
        return exe

    def command(self, exe):
        return [exe]


class BoardTarget:
    """A bare-metal target, run under QEMU with semihosting."""

    def __init__(self, name, config):
        self.name = name
        self.qemu = shlex.split(config["qemu"]["command"])
        self.base_script = LINKER_SCRIPTS / config["qemu"]["base_linker_script"]
        self.rt = None  # runtime.mk's output variables, set by prepare()

    def prepare(self, work_root):
        """Build (or bring up to date) this target's runtime library."""
        make = ["make", "--no-print-directory", "-f", RUNTIME_MK, f"CUVIL_TARGET={self.name}",
                f"CC={CROSS_CC}", f"CUVIL_RT_BUILD={work_root / f'runtime-{self.name}'}",
                f"CUVIL_LINKER_SCRIPT={self.base_script}"]
        names = ("CUVIL_RT_LIB", "CUVIL_RT_CFLAGS", "CUVIL_RT_LDFLAGS", "CUVIL_RT_LDLIBS")
        query = [*make, "-s", "--eval", "cuvil-e2e-print-%: ; @echo '$($*)'",
                 *(f"cuvil-e2e-print-{n}" for n in names)]
        values = run(query, "query runtime.mk's variables").stdout.splitlines()
        self.rt = {n: shlex.split(v) for n, v in zip(names, values, strict=True)}
        run([*make, *self.rt["CUVIL_RT_LIB"]], "build the runtime library")

    def build(self, case_dir):
        runner_o = case_dir / "runner.o"
        run([CROSS_CC, *self.rt["CUVIL_RT_CFLAGS"], "-O2", "-I", case_dir, "-c", RUNNER,
             "-o", runner_o], "compile runner")
        # The base script INCLUDEs cuvil-models.ld; the linker finds it and
        # model.ld in its working directory.
        (case_dir / "cuvil-models.ld").write_text("INCLUDE model.ld\n")
        image = case_dir / "image.elf"
        run([CROSS_CC, *self.rt["CUVIL_RT_LDFLAGS"], "-L", case_dir, runner_o,
             case_dir / "model.o", *self.rt["CUVIL_RT_LDLIBS"], "-o", image],
            "link image", cwd=case_dir)
        heap = sorted(HEAP_FUNCTIONS & symbol_names(image))
        if heap:
            raise CaseError(f"image.elf contains heap functions: {', '.join(heap)}")
        return image

    def command(self, image):
        return [*self.qemu, "-icount", "shift=0", "-kernel", image.name]


def load_target(name):
    if name == "host":
        return HostTarget()
    path = TARGETS_DIR / f"{name}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in TARGETS_DIR.glob("*.toml"))
        raise ValueError(f"unknown target '{name}' (known: {', '.join(known)})")
    with path.open("rb") as f:
        config = tomllib.load(f)
    if "qemu" not in config:
        raise ValueError(f"{path}: no [qemu] section: cannot run tests for target '{name}'")
    return BoardTarget(name, config)


def compare(model_dir, case_dir, output_names):
    """Largest absolute error over all outputs; CaseError on a mismatch."""
    worst = 0.0
    for i, name in enumerate(output_names):
        ref_path = model_dir / f"ref_{i}.bin"
        out_path = case_dir / f"out_{i}.bin"
        if not ref_path.is_file():
            raise CaseError(f"missing {ref_path}: run tests/reference/run_ort.js {model_dir}")
        if not out_path.is_file():
            raise CaseError(f"the runner did not write {out_path.name} (output '{name}')")
        ref = np.fromfile(ref_path, dtype="<f4")
        out = np.fromfile(out_path, dtype="<f4")
        if out.size != ref.size:
            raise CaseError(f"output '{name}': {out.size} elements, ONNX Runtime gives {ref.size}")
        err = np.abs(out.astype(np.float64) - ref)
        close = np.isclose(out, ref, atol=ATOL, rtol=RTOL)
        if not close.all():
            k = int(np.argmax(np.where(np.isnan(err), np.inf, err)))
            raise CaseError(
                f"output '{name}': {np.count_nonzero(~close)} of {ref.size} elements differ; "
                f"worst at flat index {k}: got {out[k]!r}, expected {ref[k]!r}")
        worst = max(worst, float(err.max()))
    return worst


def run_case(cuvilc, target, model_dir, case_dir):
    """Compile, build, run and check one model; returns (max_abs_err, instret or None)."""
    manifest = json.loads((model_dir / "manifest.json").read_text())
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    for i in range(len(manifest["inputs"])):
        shutil.copyfile(model_dir / f"input_{i}.bin", case_dir / f"input_{i}.bin")

    model_o = case_dir / "model.o"
    run([cuvilc, "build", model_dir / "model.onnx", "--target", target.name, "--name", "model",
         "--out", model_o], "cuvilc build")
    undefined = run([NM, "-u", "-j", model_o], f"{NM} -u model.o").stdout.split()
    if undefined:
        raise CaseError(f"model.o has undefined symbols: {', '.join(undefined)}")

    exe = target.build(case_dir)
    stdout = run(target.command(exe), "run", cwd=case_dir, timeout=RUN_TIMEOUT_S).stdout
    ok = RUN_OK.search(stdout)
    if not ok:
        raise CaseError("the runner exited 0 without printing 'cuvil: run ok'")
    instret = int(ok.group(2)) if ok.group(2) else None
    return compare(model_dir, case_dir, manifest["outputs"]), instret


def find_models(models_root, wanted):
    available = sorted(p.parent.name for p in models_root.glob("*/manifest.json"))
    if not available:
        raise ValueError(f"no models in {models_root}: "
                         "generate them with tests/models/gen_models.py")
    unknown = [m for m in wanted if m not in available]
    if unknown:
        raise ValueError(f"unknown model(s) {', '.join(unknown)} "
                         f"(available: {', '.join(available)})")
    return [models_root / m for m in (wanted or available)]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuvilc", required=True, type=pathlib.Path, help="the cuvilc executable")
    parser.add_argument("--models", required=True, type=pathlib.Path,
                        help="directory written by gen_models.py, with reference outputs")
    parser.add_argument("--work", required=True, type=pathlib.Path, help="scratch directory")
    parser.add_argument("--targets", required=True,
                        help="comma-separated targets, e.g. host,a78,u74-mc")
    parser.add_argument("--model", action="append", default=[], metavar="NAME",
                        help="test only this model (repeatable)")
    return parser.parse_args()


def main():
    args = parse_args()
    try:
        if not args.cuvilc.is_file():
            raise ValueError(f"cuvilc not found at {args.cuvilc}")
        targets = [load_target(t) for t in args.targets.split(",") if t]
        if not targets:
            raise ValueError("--targets names no target")
        models = find_models(args.models, args.model)
    except (ValueError, tomllib.TOMLDecodeError) as err:
        print(f"run_e2e: error: {err}", file=sys.stderr)
        return 2
    cuvilc = args.cuvilc.resolve()
    work = args.work.resolve()

    passed = failed = 0
    for target in targets:
        try:
            target.prepare(work)
        except CaseError as err:
            print(f"run_e2e: error: target {target.name}: {err}", flush=True)
            for model_dir in models:
                print(f"FAIL {target.name}/{model_dir.name}: target setup failed (see above)")
            failed += len(models)
            continue
        for model_dir in models:
            case = f"{target.name}/{model_dir.name}"
            try:
                max_err, instret = run_case(cuvilc, target, model_dir.resolve(), work / case)
            except CaseError as reason:
                print(f"FAIL {case}: {reason}", flush=True)
                failed += 1
                continue
            extra = f", instret={instret}" if instret is not None else ""
            print(f"PASS {case} (max_abs_err={max_err:.3g}{extra})", flush=True)
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
