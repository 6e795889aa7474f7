#!/usr/bin/python3
"""A cuvil model linked into a firmware cuvil did not write: the test model
cnn, compiled by cuvilc with the firmware's own memory names, linked with
ld.lld into the minimal firmware of tests/e2e/foreign/ (its own startup
file, linker script and memory names, no cuvil runtime, no libc), run
under QEMU, its output compared with ONNX Runtime's by the firmware itself,
for one instance of the model and for two on separate arenas.

    foreign_firmware.py --cuvilc PATH --models DIR --work DIR --targets u74-mc,a78

For each board target, two builds: one naming the firmware's regions with
--regions-from (the firmware's linker script, matched by address) and one
with --region-map (and, on u74-mc, --arena-regions in the firmware's name).
Each build's fragment must place the model only in the firmware's regions,
the image must link, its arena and weights must lie where the firmware's
MEMORY block puts them, and the firmware must exit 0 ("outputs match").

Prints `PASS target/case (...)` or `FAIL target/case: reason` per case, then
`N passed, M failed`. Exits 0 if all passed, 1 if any failed, 2 on usage errors.
"""

import pathlib
import re
import shutil
import sys
import tomllib

import run_e2e

FOREIGN = pathlib.Path(__file__).resolve().parent / "foreign"
LINKER = "ld.lld-19"
MODEL = "cnn"

# Per board: the startup file, the firmware's linker script, and its
# regions as (name, origin, length), which the checks below hold the
# image's model sections to.
BOARDS = {
    "u74-mc": ("start_riscv64.S", "firmware-u74-mc.ld",
               {"sram": (0x08000000, 2 << 20), "ram": (0x80000000, 512 << 20)}),
    "a78": ("start_aarch64.S", "firmware-a78.ld",
            {"dram": (0x40200000, 256 << 20)}),
}

# Per board: (case, cuvilc flags, {model section: firmware region}).
CASES = {
    "u74-mc": [
        ("regions-from", ["--regions-from", FOREIGN / "firmware-u74-mc.ld"],
         {".cuvil.net.arena.L2LIM": "sram", ".cuvil.net.weights": "ram"}),
        ("region-map", ["--region-map", "DDR=ram", "--arena-regions", "ram"],
         {".cuvil.net.arena.DDR": "ram", ".cuvil.net.weights": "ram"}),
    ],
    "a78": [
        ("regions-from", ["--regions-from", FOREIGN / "firmware-a78.ld"],
         {".cuvil.net.arena.RAM": "dram", ".cuvil.net.weights": "dram"}),
        ("region-map", ["--region-map", "RAM=dram"],
         {".cuvil.net.arena.RAM": "dram", ".cuvil.net.weights": "dram"}),
    ],
}

PLACEMENT = re.compile(r"\}\s*>\s*(\w+)")
# llvm-readelf -S -W: "[Nr] Name Type Address Off Size ES Flg ..."
SECTION_FLAGS = re.compile(r"^\s*\[\s*\d+\]\s+(\S+)\s+(\S+)\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S*)",
                           re.MULTILINE)
OK_LINE = "foreign firmware: outputs match ONNX Runtime, two instances"


def run_case(cuvilc, board, config, model_dir, case_dir, flags, placements):
    start, script, regions = BOARDS[board.name]
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    run_e2e.cuvilc_build([cuvilc, "build", model_dir / "model.onnx", "--target", board.name,
                          "--name", "net", "--out", case_dir / "net.o", *flags],
                         "cuvilc build")
    # The fragment speaks the firmware's language only.
    used = set(PLACEMENT.findall((case_dir / "net.ld").read_text()))
    if not used or not used <= set(regions):
        raise run_e2e.CaseError(f"net.ld places sections in {sorted(used)}, the firmware "
                                f"has {sorted(regions)}")
    # Nothing global but constants: the object's only writable sections
    # are its (NOBITS) arenas; all other state is in the caller's context.
    listing = run_e2e.run([run_e2e.READELF, "-S", "-W", case_dir / "net.o"], "readelf").stdout
    writable = [m[1] for m in SECTION_FLAGS.finditer(listing)
                if "W" in m[3] and not (m[1].startswith(".cuvil.net.arena.") and m[2] == "NOBITS")]
    if writable:
        raise run_e2e.CaseError(f"net.o has writable sections {writable}: state outside the "
                                f"model's context")
    arch = ["--target=" + config["llvm"]["triple"],
            *config["llvm"]["clang_flags"].split()]
    cflags = [*arch, "-ffreestanding", "-fno-builtin", "-O2", "-Wall", "-Werror",
              "-I", case_dir]
    objects = []
    for source, defines in ((start, []), ("main.c", []),
                            ("data.S", [f'-DINPUT_FILE="{model_dir / "input_0.bin"}"',
                                        f'-DEXPECTED_FILE="{model_dir / "ref_0.bin"}"'])):
        obj = case_dir / (pathlib.Path(source).stem + ".o")
        run_e2e.run([run_e2e.CROSS_CC, *cflags, *defines, "-c", FOREIGN / source, "-o", obj],
                    f"compile {source}")
        objects.append(obj)
    image = case_dir / "firmware.elf"
    # The firmware's script INCLUDEs net.ld, found in the case directory.
    run_e2e.run([LINKER, "-T", FOREIGN / script, "-L", case_dir, *objects,
                 case_dir / "net.o", "-o", image], "link", cwd=case_dir)
    sections = run_e2e.check_placement(image, placements, regions)
    qemu = [*board.qemu, "-kernel", image.name]
    proc = run_e2e.run(qemu, "run", cwd=case_dir, timeout=run_e2e.RUN_TIMEOUT_S)
    # QEMU writes the semihosting console (SYS_WRITE0) to stderr.
    if OK_LINE not in proc.stdout + proc.stderr:
        raise run_e2e.CaseError(f"the firmware exited 0 without printing '{OK_LINE}'")
    return ", ".join(f"{s} in {r} at {sections[s][0]:#x}" for s, r in placements.items())


def main():
    args = run_e2e.test_arguments(__doc__, targets_required=True).parse_args()
    try:
        if not args.cuvilc.is_file():
            raise ValueError(f"cuvilc not found at {args.cuvilc}")
        names = [t for t in args.targets.split(",") if t]
        unknown = [t for t in names if t not in BOARDS]
        if unknown or not names:
            raise ValueError(f"--targets: {', '.join(unknown) or 'none'} (known: "
                             f"{', '.join(BOARDS)})")
        run_e2e.find_models(args.models, [MODEL])
        configs = {}
        for name in names:
            with (run_e2e.TARGETS_DIR / f"{name}.toml").open("rb") as f:
                configs[name] = tomllib.load(f)
    except (ValueError, OSError, tomllib.TOMLDecodeError) as err:
        print(f"foreign_firmware: error: {err}", file=sys.stderr)
        return 2
    cuvilc = args.cuvilc.resolve()
    work = args.work.resolve()
    model_dir = args.models.resolve() / MODEL

    def case(name, case, flags, placements):
        return lambda: run_case(cuvilc, run_e2e.load_target(name), configs[name], model_dir,
                                work / name / case, flags, placements)

    return run_e2e.run_cases((f"{name}/{c}", case(name, c, flags, placements))
                             for name in names for c, flags, placements in CASES[name])


if __name__ == "__main__":
    sys.exit(main())
