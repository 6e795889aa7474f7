#!/usr/bin/python3
"""End-to-end model tests: compile each test model with cuvilc, run it, compare
every output with ONNX Runtime's.

    run_e2e.py --cuvilc PATH --models DIR --work DIR
               [--targets host,a78,u74-mc] [--variant NAME]... [--model NAME]...

--models is the directory tests/models/gen_models.py wrote, with reference
outputs from tests/reference/run_ort.js; every subdirectory holding a
manifest.json is a model. --targets names targets built with their default
placement; --variant names a placement variant (see VARIANTS): a board target
built with other cuvilc placement flags, e.g. u74-mc-flash, the u74-mc with its
weights in flash. For each target (or variant) T and model, in WORK/T/<model>:

  1. cuvilc build model.onnx --target T --name model --out model.o, plus the
     variant's flags, --dim NAME=N for each of the manifest's "dims" and
     --loop-bound NODE=K for each of its "loop_bounds" (also
     writes model.h and model.ld); model.o must have no undefined symbols
     (but the runtime's team, RUNTIME_SYMBOLS);
  2. build runtime-baremetal/runner/runner.c against it: natively for `host`; for a board
     target, with the runtime library (runtime-baremetal/runtime.mk, built
     once per target or variant into WORK/runtime-T, so that tests running at
     the same time never share one) and the target's base linker script,
     which INCLUDEs cuvil-models.ld, which INCLUDEs model.ld; the image must
     contain no heap functions; for a variant, each output section it names
     must lie inside the memory region it names (by the image's section
     headers, as llvm-readelf prints them);
  3. run it: natively, or with the [qemu] command of targets/<target>.toml
     plus `-icount shift=0` (deterministic instruction counts), with the case
     directory as working directory for semihosting file I/O;
  4. compare out_<i>.bin with ref_<i>.bin: numpy.allclose(atol=1e-4, rtol=1e-3);
  5. a multicore build (--cores, variants *-cores4) must have run on a team
     of that many cores (`cuvil: team cores=N`), or, in variant
     a78-cores4-serial, its shares on one core, the last first;
  6. the runner measures the stack init and run_v use (painted stack) and
     fails if either exceeds the figure model.h states; PASS lines show
     `stack=run measured/stated`.

Prints `PASS target/model (...)` or `FAIL target/model: reason` per case, then
`N passed, M failed`. Exits 0 if all passed, 1 if any failed, 2 on usage errors.
"""

import argparse
import dataclasses
import json
import pathlib
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tomllib

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
RUNNER = REPO / "runtime-baremetal" / "runner" / "runner.c"
TARGETS_DIR = REPO / "targets"
RUNTIME_MK = REPO / "runtime-baremetal" / "runtime.mk"
LINKER_SCRIPTS = REPO / "linker-scripts"

ATOL = 1e-4
RTOL = 1e-3
# Quantized outputs: the share of elements that must be within one
# quantization step of ORT's, and the most steps any may differ by.
LSB_AGREEMENT = 0.99
LSB_WORST = 2
TOOL_TIMEOUT_S = 600
RUN_TIMEOUT_S = 120
HOST_CC = "cc"
CROSS_CC = "clang-19"
# An ELF64 section header; the section type of a symbol table; the
# section index of an undefined symbol.
ELF_SECTION = struct.Struct("<IIQQQQIIQQ")
SHT_SYMTAB = 2
SHN_UNDEF = 0
READELF = "llvm-readelf-19"
HEAP_FUNCTIONS = {"malloc", "free", "calloc", "realloc", "sbrk"}
RUN_OK = re.compile(r"^cuvil: run ok(?: cycles=(\d+) instret=(\d+))?\r?$", re.MULTILINE)
# The runner's stack check (it fails by itself when measured > stated).
TEAM = re.compile(r"^cuvil: team cores=(\d+)\r?$", re.MULTILINE)
TEAM_SERIAL = re.compile(r"^cuvil: team shares=(\d+) sum=(\d+) ", re.MULTILINE)
STACK = re.compile(r"^cuvil: stack (init|run) stated=(\d+|none) measured=(\d+)\r?$", re.MULTILINE)
# A line of `llvm-readelf -S -W`: [Nr] Name Type Address Off Size ...
SECTION_HEADER = re.compile(
    r"^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s", re.MULTILINE)


class CaseError(Exception):
    """A step of a test case failed; the message says which and why."""


@dataclasses.dataclass(frozen=True)
class Variant:
    """A board target built with other placement flags for cuvilc, and the
    memory region (of the target's file) that each named output section of the
    linked image must lie in."""

    target: str
    cuvilc_flags: list
    section_regions: dict
    defines: tuple = ()  # the runner's preprocessor definitions (NAME=VALUE)


VARIANTS = {
    # Weights in the QSPI flash that QEMU's sifive_u maps at 0x20000000
    # (execute in place), the arena in the L2 LIM.
    "u74-mc-flash": Variant("u74-mc", ["--weights-region", "FLASH"], {
        ".cuvil.model.weights": "FLASH",
        ".cuvil.model.arena.L2LIM": "L2LIM",
    }),
    # The debugging build: canaries after every arena buffer, checked after
    # every step (a violation fails the run with the step's node).
    "host-checked": Variant("host", ["--checked"], {}),
    # The same on the boards (not in ctest: the host pass covers the code).
    "a78-checked": Variant("a78", ["--checked"], {}),
    "u74-mc-checked": Variant("u74-mc", ["--checked"], {}),
    # Four cores (QEMU -smp of the target file): convolutions in shares on
    # every core through the runtime's team (cuvil/team.h).
    "a78-cores4": Variant("a78", ["--cores", "4"], {}),
    "u74-mc-cores4": Variant("u74-mc", ["--cores", "4"], {}),
    # The same shares one after another on one core, the last first
    # (runner.c's CUVIL_RUNNER_TEAM_MEASURE): a share storing past its part
    # (the a78 kernels store ahead inside a plane) spoils a finished one.
    "a78-cores4-serial": Variant("a78", ["--cores", "4"], {},
                                 ("CUVIL_RUNNER_TEAM_MEASURE=1",)),
}

# What a model object may leave to the runtime library: the team of a
# multicore build.
RUNTIME_SYMBOLS = {"cuvil_team_run"}


def run(cmd, what, cwd=None, timeout=TOOL_TIMEOUT_S):
    """Run cmd; on failure raise CaseError with the tail of its output."""
    cmd = [str(c) for c in cmd]
    try:
        # No stdin: QEMU's -nographic console would otherwise take the terminal.
        proc = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, errors="replace", timeout=timeout)
    except OSError as err:  # missing, not executable, being replaced by a rebuild...
        raise CaseError(f"{what}: cannot execute '{cmd[0]}': {err.strerror}") from None
    except subprocess.TimeoutExpired:
        raise CaseError(f"{what}: timed out after {timeout} s\n  $ {shlex.join(cmd)}") from None
    if proc.returncode != 0:
        lines = (proc.stdout + proc.stderr).strip().splitlines()[-20:]
        raise CaseError(f"{what}: exit code {proc.returncode}\n  $ {shlex.join(cmd)}\n"
                        + "".join(f"  | {line}\n" for line in lines).rstrip())
    return proc


def elf_symbols(path):
    """{name: defined?} of the symbol table of `path`, a 64-bit
    little-endian ELF file (every e2e target's). Read here, not with
    llvm-nm: starting a tool linked to libLLVM takes about as long as a
    small case's QEMU run, and the conformance suite has thousands."""
    data = pathlib.Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4:6] != b"\x02\x01":
        raise CaseError(f"{path.name}: not a 64-bit little-endian ELF file")
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    headers = [ELF_SECTION.unpack_from(data, shoff + i * shentsize) for i in range(shnum)]
    symbols = {}
    for _, kind, _, _, offset, size, link, _, _, entsize in headers:
        if kind != SHT_SYMTAB:
            continue
        strings = headers[link][4]
        for entry in range(offset + entsize, offset + size, entsize):  # after the null symbol
            name_at, _, _, section = struct.unpack_from("<IBBH", data, entry)
            start = strings + name_at
            name = data[start:data.index(b"\0", start)].decode(errors="replace")
            if name:
                symbols[name] = symbols.get(name, False) or section != SHN_UNDEF
    return symbols


def symbol_names(binary):
    """Names of the symbols that `binary` defines or references."""
    return set(elf_symbols(binary))


class HostTarget:
    """The build machine: the runner is a native executable using stdio. It
    links the C library, so only model.o is checked for heap use."""

    def __init__(self, name="host", cpu="x86-64-v3", features=""):
        self.name = name
        self.cpu = cpu  # an x86-64 level, as -march takes it
        self.features = features  # LLVM's: "+avx512vnni,..."
        self.label = self.name  # of its cases: WORK/<label>/<model>
        self.cuvilc_flags = []
        # CPU features this machine lacks, of the level and the target's
        # own (LLVM's "+avx512vnni,...").
        self.lacks = host_cpu_lacks(cpu, features)

    def prepare(self, work_root):
        """Nothing to build ahead of the cases."""

    def build(self, case_dir, defines=()):
        """The runner, with the preprocessor definitions `defines` (NAME=VALUE)."""
        exe = case_dir / "run"
        run([HOST_CC, "-O2", "-pthread", "-DCUVIL_HOST", *(f"-D{d}" for d in defines), "-I", case_dir,
             RUNNER, case_dir / "model.o", "-o", exe], "build runner")
        return exe

    def command(self, exe):
        return [exe]


class BoardTarget:
    """A bare-metal target, run under QEMU with semihosting."""

    def __init__(self, name, config):
        self.name = name
        self.label = name  # of its cases: WORK/<label>/<model>
        self.cuvilc_flags = []
        self.section_regions = {}  # output section -> region it must lie in
        self.regions = {r["name"]: (r["origin"], r["length"])
                        for r in config["memory"]["region"]}
        self.qemu = shlex.split(config["qemu"]["command"])
        self.base_script = LINKER_SCRIPTS / config["qemu"]["base_linker_script"]
        self.cc = CROSS_CC  # compiles the runtime and the harness, and links
        self.rt = None  # runtime.mk's output variables, set by prepare()

    def prepare(self, work_root):
        """Build (or bring up to date) this target's runtime library."""
        make = ["make", "--no-print-directory", "-f", RUNTIME_MK, f"CUVIL_TARGET={self.name}",
                f"CC={self.cc}", f"CUVIL_RT_BUILD={work_root / f'runtime-{self.label}'}",
                f"CUVIL_LINKER_SCRIPT={self.base_script}"]
        names = ("CUVIL_RT_LIB", "CUVIL_RT_CFLAGS", "CUVIL_RT_LDFLAGS", "CUVIL_RT_LDLIBS")
        query = [*make, "-s", "--eval", "cuvil-e2e-print-%: ; @echo '$($*)'",
                 *(f"cuvil-e2e-print-{n}" for n in names)]
        values = run(query, "query runtime.mk's variables").stdout.splitlines()
        self.rt = {n: shlex.split(v) for n, v in zip(names, values, strict=True)}
        run([*make, *self.rt["CUVIL_RT_LIB"]], "build the runtime library")

    def build(self, case_dir, source=RUNNER, models=("model",), defines=(), fragments=None):
        """Compile source against the headers in case_dir, with the
        preprocessor definitions `defines` (NAME=VALUE), and link it with the
        models' objects (<name>.o, placed by <name>.ld, or by the fragments
        named in `fragments`, such as a `cuvilc link-plan` one) into
        image.elf."""
        source_o = case_dir / f"{source.stem}.o"
        self.compile(source, source_o, case_dir, defines)
        return self.link(case_dir, [source_o, *(case_dir / f"{m}.o" for m in models)],
                         fragments or [f"{m}.ld" for m in models])

    def compile(self, source, obj, include_dir, defines=()):
        """Compile source into obj with the runtime's flags, the headers of
        include_dir and the definitions `defines` (NAME=VALUE)."""
        run([self.cc, *self.rt["CUVIL_RT_CFLAGS"], "-O2", *(f"-D{d}" for d in defines),
             "-I", include_dir, "-c", source, "-o", obj], f"compile {source.name}")

    def compile_all(self, sources, out_dir):
        """Compile each of sources into out_dir/<stem>.o with the runtime's
        flags, in one command (the driver still starts a compiler per
        file)."""
        run([self.cc, *self.rt["CUVIL_RT_CFLAGS"], "-O2", "-c", *sources],
            f"compile {len(sources)} sources", cwd=out_dir)

    def link(self, image_dir, objects, fragments):
        """Link objects with the runtime into image_dir/image.elf, the
        models placed by the linker-script fragments (paths, relative to
        image_dir or absolute); checks that the image has no heap functions
        and that section_regions hold."""
        # The base script INCLUDEs cuvil-models.ld; the linker finds it and
        # the models' scripts in its working directory.
        (image_dir / "cuvil-models.ld").write_text("".join(f"INCLUDE {f}\n" for f in fragments))
        image = image_dir / "image.elf"
        run([self.cc, *self.rt["CUVIL_RT_LDFLAGS"], "-L", image_dir, *objects,
             *self.rt["CUVIL_RT_LDLIBS"], "-o", image],
            "link image", cwd=image_dir)
        heap = sorted(HEAP_FUNCTIONS & symbol_names(image))
        if heap:
            raise CaseError(f"image.elf contains heap functions: {', '.join(heap)}")
        self.check_sections(image)
        return image

    def check_sections(self, image):
        """CaseError unless each section of section_regions lies in its region."""
        if self.section_regions:
            check_placement(image, self.section_regions, self.regions)

    def command(self, image):
        return [*self.qemu, "-icount", "shift=0", "-kernel", image.name]


def check_placement(image, placement, regions):
    """CaseError unless each section of placement ({section: region}) lies
    in its region of regions ({region: (origin, length)}); returns the
    sections' {name: (address, size)}."""
    listing = run([READELF, "-S", "-W", image], f"{READELF} -S {image.name}").stdout
    sections = {m[1]: (int(m[2], 16), int(m[3], 16)) for m in SECTION_HEADER.finditer(listing)}
    for section, region in placement.items():
        if section not in sections:
            raise CaseError(f"{image.name} has no section {section}")
        address, size = sections[section]
        origin, length = regions[region]
        if not origin <= address <= address + size <= origin + length:
            raise CaseError(f"{section} [{address:#x}, {address + size:#x}) is not inside "
                            f"region {region} [{origin:#x}, {origin + length:#x})")
    return sections


# CPU flags (/proc/cpuinfo) that code for an x86-64 level needs.
X86_LEVEL_FLAGS = {"x86-64-v4": ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")}
# The /proc/cpuinfo names of LLVM's x86 features where they differ.
X86_FEATURE_FLAGS = {"avx512vnni": "avx512_vnni"}


def host_cpu_lacks(cpu, features=""):
    """The flags of x86-64 level `cpu` and of the LLVM features `features`
    ("+avx512vnni,...") this machine's CPU lacks."""
    needed = list(X86_LEVEL_FLAGS.get(cpu, ()))
    needed += [X86_FEATURE_FLAGS.get(f[1:], f[1:]) for f in features.split(",")
               if f.startswith("+")]
    try:
        text = pathlib.Path("/proc/cpuinfo").read_text()
    except OSError:
        return needed
    flags = set(next((l.split(":", 1)[1].split() for l in text.splitlines()
                      if l.startswith("flags")), []))
    return [f for f in needed if f not in flags]


def load_target(name):
    path = TARGETS_DIR / f"{name}.toml"
    if not path.is_file():
        known = sorted(p.stem for p in TARGETS_DIR.glob("*.toml"))
        raise ValueError(f"unknown target '{name}' (known: {', '.join(known)})")
    with path.open("rb") as f:
        config = tomllib.load(f)
    # Targets of the build machine itself (x86-64 Linux): native runners.
    if "qemu" not in config and config["llvm"]["triple"].startswith("x86_64-") \
            and "linux" in config["llvm"]["triple"]:
        return HostTarget(name, config["llvm"]["cpu"], config["llvm"].get("features", ""))
    if "qemu" not in config:
        raise ValueError(f"{path}: no [qemu] section: cannot run tests for target '{name}'")
    return BoardTarget(name, config)


def runnable(targets):
    """The targets this machine can run: a host target whose CPU level it
    lacks (host-avx512 without AVX-512) is reported skipped and left out."""
    for target in targets:
        if getattr(target, "lacks", None):
            print(f"SKIP {target.label}: this CPU lacks {', '.join(target.lacks)}", flush=True)
    return [t for t in targets if not getattr(t, "lacks", None)]


def load_variant(name):
    variant = VARIANTS[name]
    target = load_target(variant.target)
    missing = sorted(set(variant.section_regions.values())
                     - set(getattr(target, "regions", {})))
    if missing:
        raise ValueError(f"variant '{name}': target '{target.name}' has no region "
                         f"{', '.join(missing)}")
    target.label = name
    target.cuvilc_flags = variant.cuvilc_flags
    target.section_regions = variant.section_regions
    target.defines = variant.defines
    return target


def compare(model_dir, case_dir, output_names, lsb=None):
    """Largest absolute error over all outputs; CaseError on a mismatch.

    An output of a quantized model (lsb: {name: quantization step}) may
    differ from ONNX Runtime's where the two round a requantization
    differently, and such a difference can grow by a step or so through the
    layers after it (docs/quantization.md): at least LSB_AGREEMENT of its
    elements must be within one step of ORT's, and all within LSB_WORST."""
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
        step = (lsb or {}).get(name)
        if step is None:
            close = np.isclose(out, ref, atol=ATOL, rtol=RTOL)
        else:
            close = err <= step * (LSB_WORST + 0.001)
            within = np.count_nonzero(err <= step * 1.001)
            if close.all() and within < LSB_AGREEMENT * ref.size:
                raise CaseError(f"output '{name}': only {within} of {ref.size} elements within "
                                f"one step of ONNX Runtime's (at least {LSB_AGREEMENT:.0%} must)")
        if not close.all():
            k = int(np.argmax(np.where(np.isnan(err), np.inf, err)))
            raise CaseError(
                f"output '{name}': {np.count_nonzero(~close)} of {ref.size} elements differ; "
                f"worst at flat index {k}: got {out[k]!r}, expected {ref[k]!r}")
        worst = max(worst, float(err.max()))
    return worst


def run_case(cuvilc, target, model_dir, case_dir):
    """Compile, build, run and check one model; returns (max_abs_err, run_info)."""
    manifest = json.loads((model_dir / "manifest.json").read_text())
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    for i in range(len(manifest["inputs"])):
        shutil.copyfile(model_dir / f"input_{i}.bin", case_dir / f"input_{i}.bin")

    compile_model(cuvilc, target, model_dir, case_dir)
    defines = getattr(target, "defines", ())
    info = run_image(target, target.build(case_dir, defines=defines), case_dir,
                     serial="CUVIL_RUNNER_TEAM_MEASURE=1" in defines)
    if set(info["stack"]) != {"init", "run"}:
        raise CaseError("the runner did not print both stack figures")
    unstated = [e for e, (stated, _) in info["stack"].items() if stated is None]
    if unstated:
        raise CaseError(f"model.h states no stack figure for {', '.join(unstated)} "
                        "(its comment says why)")
    return compare(model_dir, case_dir, manifest["outputs"], manifest.get("lsb")), info


def cuvilc_build(cmd, what, expected=(), **kwargs):
    """Run a cuvilc build (as run does) that must also print no warning but
    those the model's manifest expects (its "expected_warnings" substrings):
    LLVM's "loop not unrolled", for one, means a kernel loop whose bounds did
    not fold to constants and which now runs slowly."""
    proc = run(cmd, what, **kwargs)
    warnings = [line for line in proc.stderr.splitlines()
                if "warning" in line and not any(e in line for e in expected)]
    if warnings:
        raise CaseError(f"{what} printed warnings:\n"
                        + "".join(f"  | {line}\n" for line in warnings[:5]).rstrip())
    return proc


def compile_model(cuvilc, target, model_dir, case_dir, name="model", expected_warnings=()):
    """cuvilc build into case_dir/<name>.o (and .h, .ld), without warnings but
    expected_warnings and those of the model's manifest (substrings); the
    object must have no undefined symbols but the runtime's (RUNTIME_SYMBOLS)."""
    model_o = case_dir / f"{name}.o"
    manifest = model_dir / "manifest.json"
    facts = json.loads(manifest.read_text()) if manifest.is_file() else {}
    dims = facts.get("dims", {})
    dim_flags = [f for n, v in sorted(dims.items()) for f in ("--dim", f"{n}={v}")]
    dim_flags += [f for n, k in sorted(facts.get("loop_bounds", {}).items())
                  for f in ("--loop-bound", f"{n}={k}")]
    cuvilc_build([cuvilc, "build", model_dir / "model.onnx", "--target", target.name, "--name",
                  name, "--out", model_o, *target.cuvilc_flags, *dim_flags],
                 f"cuvilc build {model_dir.name}",
                 (*facts.get("expected_warnings", ()), *expected_warnings))
    undefined = sorted(n for n, defined in elf_symbols(model_o).items()
                       if not defined and n not in RUNTIME_SYMBOLS)
    if undefined:
        raise CaseError(f"{model_o.name} has undefined symbols: {', '.join(undefined)}")


def run_image(target, exe, case_dir, serial=False):
    """Run exe in case_dir; returns {"instret": count or None, "stack":
    {entry: (stated, measured)}} from what it prints. A multicore build must
    have run on a team of its cores, or with serial (the runner's team
    measurement) have run its shares on one core."""
    stdout = run(target.command(exe), "run", cwd=case_dir, timeout=RUN_TIMEOUT_S).stdout
    ok = RUN_OK.search(stdout)
    if not ok:
        raise CaseError(f"{exe.name} exited 0 without printing 'cuvil: run ok'")
    stack = {m[1]: (None if m[2] == "none" else int(m[2]), int(m[3]))
             for m in STACK.finditer(stdout)}
    header = case_dir / "model.h"
    workers = header.is_file() and re.search(r"^#define CUVIL_\w+_WORKERS (\d+)$",
                                             header.read_text(), re.MULTILINE)
    if workers and int(workers[1]) > 1 and serial:
        shares = TEAM_SERIAL.search(stdout)
        if not shares or shares[1] != workers[1]:
            raise CaseError(f"a {workers[1]}-core build did not report its shares "
                            "(cuvil: team shares=N ...)")
    elif workers and int(workers[1]) > 1:
        team = TEAM.search(stdout)
        if not team or team[1] != workers[1]:
            raise CaseError(f"a {workers[1]}-core build ran on "
                            f"{team[1] if team else 'no'} team of cores")
    return {"instret": int(ok.group(2)) if ok.group(2) else None, "stack": stack}


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


def board_targets(args, script, models, boards=None):
    """The targets --targets names, for a test script (its file name, for
    messages) that runs `models` on boards only (or on those of `boards`);
    ValueError unless cuvilc, the targets and the models are there."""
    if not args.cuvilc.is_file():
        raise ValueError(f"cuvilc not found at {args.cuvilc}")
    targets = [load_target(t) for t in args.targets.split(",") if t]
    if not targets:
        raise ValueError("--targets names no target")
    bad = [t.name for t in targets
           if isinstance(t, HostTarget) or (boards is not None and t.name not in boards)]
    if bad:
        runs = f"the boards {', '.join(boards)}" if boards else "board targets only"
        raise ValueError(f"{script} runs {runs}, not {', '.join(bad)}")
    find_models(args.models, list(models))
    return targets


def run_cases(cases):
    """Run each (label, case) of cases: case() returns what the PASS line
    says, or raises CaseError. Prints `PASS label (...)` or `FAIL label:
    reason` per case, then the totals; returns the exit status."""
    passed = failed = 0
    for label, case in cases:
        try:
            detail = case()
        except CaseError as reason:
            print(f"FAIL {label}: {reason}", flush=True)
            failed += 1
            continue
        print(f"PASS {label} ({detail})", flush=True)
        passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


def test_arguments(doc, targets_required=False):
    """The arguments every end-to-end test script takes: --cuvilc, --models,
    --work and --targets; doc's first paragraph is the description."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--cuvilc", required=True, type=pathlib.Path, help="the cuvilc executable")
    parser.add_argument("--models", required=True, type=pathlib.Path,
                        help="directory written by gen_models.py, with reference outputs")
    parser.add_argument("--work", required=True, type=pathlib.Path, help="scratch directory")
    parser.add_argument("--targets", required=targets_required, default="",
                        help="comma-separated targets, e.g. host,a78,u74-mc")
    return parser


def parse_args():
    parser = test_arguments(__doc__)
    parser.add_argument("--variant", action="append", default=[], choices=sorted(VARIANTS),
                        help="also test this placement variant (repeatable)")
    parser.add_argument("--model", action="append", default=[], metavar="NAME",
                        help="test only this model (repeatable)")
    return parser.parse_args()


def main():
    args = parse_args()
    try:
        if not args.cuvilc.is_file():
            raise ValueError(f"cuvilc not found at {args.cuvilc}")
        targets = [load_target(t) for t in args.targets.split(",") if t]
        targets += [load_variant(v) for v in args.variant]
        if not targets:
            raise ValueError("neither --targets nor --variant names a target")
        models = find_models(args.models, args.model)
    except (ValueError, tomllib.TOMLDecodeError) as err:
        print(f"run_e2e: error: {err}", file=sys.stderr)
        return 2
    cuvilc = args.cuvilc.resolve()
    work = args.work.resolve()

    targets = runnable(targets)
    if not targets:
        return 77  # every target skipped: ctest's SKIP_RETURN_CODE
    passed = failed = 0
    for target in targets:
        try:
            target.prepare(work)
        except CaseError as err:
            print(f"run_e2e: error: target {target.label}: {err}", flush=True)
            for model_dir in models:
                print(f"FAIL {target.label}/{model_dir.name}: target setup failed (see above)")
            failed += len(models)
            continue
        for model_dir in models:
            case = f"{target.label}/{model_dir.name}"
            try:
                max_err, info = run_case(cuvilc, target, model_dir.resolve(), work / case)
            except CaseError as reason:
                print(f"FAIL {case}: {reason}", flush=True)
                failed += 1
                continue
            instret = info["instret"]
            extra = f", instret={instret}" if instret is not None else ""
            stated, measured = info["stack"]["run"]
            extra += f", stack={measured}/{stated}"
            print(f"PASS {case} (max_abs_err={max_err:.3g}{extra})", flush=True)
            passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
