#!/usr/bin/python3
"""ONNX backend conformance: compile each in-scope ONNX backend test with
cuvilc, run it on each target, compare its outputs with the test's own.

    run_conformance.py --cuvilc PATH --work DIR --targets host,a78,u74-mc
                       [--scope FILE] [--data DIR] [--filter REGEX] [--subset FILE]
                       [--jobs N] [--results FILE.json] [--exit-zero]
                       [--write-subset FILE [--subset-cap N]]

The tests are those of Debian's libonnx-testdata (--data, default
/usr/share/libonnx-testdata/data): <folder>/<test>/model.onnx with
test_data_set_*/input_<i>.pb and output_<i>.pb (serialized TensorProtos).
--scope (default: scope.txt beside this script) says which are in scope;
every in-scope test runs, or those whose name (<folder>/<test>) matches
--filter, or those listed in --subset (one name a line, `#` comments).

For each test and target T, in WORK/T/<folder>/<test>, with the steps and
tools of tests/e2e/run_e2e.py:

  1. cuvilc build model.onnx --target T --name model --out model.o (on a
     board --name t<N>, N the test's number in this run); a
     rejected model fails with cuvilc's first error line as the reason,
     marked `unsupported:` when cuvilc says the model uses something it does
     not support;
  2. build runtime-baremetal/runner/runner.c against it (natively for host, with the
     target's runtime library, built once up front, for a board);
  3. for each test_data_set: write its inputs as raw little-endian bytes
     (input_<i>.bin; bool as one byte), run the image (natively or under
     QEMU), and compare each out_<i>.bin with output_<i>.pb: floating-point
     outputs with the backend suite's tolerance (numpy.allclose, rtol 1e-3,
     atol 1e-7, NaN where NaN is expected), other types exactly.

On a board, steps 2 and 3 run in batches once every test is compiled: up
to 24 tests' runners in one image, one QEMU boot (board_batches.py, where
the model is built as `t<N>` and the files of each data set are in
WORK/T/<folder>/<test>/<data set>/). A batch that does not link or finish
runs again one test per image, so each verdict stays the test's own.
selftest.py checks that spoiled test data fails.

Verdicts per test and target: `pass`, `fail` (cuvil compiled, built, ran or
computed something wrong: the reason says which) or `error` (the test could
not be run: the target's setup failed, or the test data is unreadable).
Prints one line per test and target as tests finish, then the totals per
target and, last, `N passed, M failed` over all targets (M counts errors
too). --results writes every verdict as JSON (read by
scripts/conformance_report.py). --write-subset writes the tests that passed
on every selected target, at most --subset-cap per op, as a --subset file.
Exits 0 if every selected test passed (or with --exit-zero), 1 if any
failed, 2 on usage errors.
"""

import argparse
import concurrent.futures
import json
import pathlib
import re
import shutil
import sys
import time
import tomllib

import numpy as np
import onnx
from onnx import numpy_helper

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "e2e"))
import run_e2e  # noqa: E402  (the e2e driver's targets and steps)
from board_batches import step_error  # noqa: E402
import board_batches  # noqa: E402

# The backend tests feed a Conv's or Gemm's weights as graph inputs, so
# cuvilc cannot pack them and rightly says the node runs on the reference
# kernel; any other warning still fails the test.
EXPECTED_WARNINGS = ("runs on the slow reference kernel",)

DATA = pathlib.Path("/usr/share/libonnx-testdata/data")
SCOPE = HERE / "scope.txt"
RTOL = 1e-3
ATOL = 1e-7
SUBSET_CAP = 2
# runtime-baremetal/runner/runner.c's default CUVIL_RUNNER_IO_POOL_BYTES (its
# IO_ALIGN is board_batches.IO_ALIGN).
RUNNER_IO_POOL_DEFAULT = 1 << 20
SCOPE_LINE = re.compile(r"^(\S+/\S+) (?:(in)|out (\S+))$")
# cuvilc's words for a model that uses something it does not implement.
UNSUPPORTED = re.compile(r"\bnot supported\b|\bunsupported\b|\bonly\b.* (?:is|are) supported\b"
                         r"|\bsupports\b|must be a (?:compile-time )?constant")
FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16,
               onnx.TensorProto.DOUBLE}


class TestError(Exception):
    """The test could not be run at all (verdict `error`)."""


class DataSet:
    """One test_data_set: input bytes as the runner reads them, and the
    expected outputs as (data_type, array) pairs."""

    def __init__(self, directory, optional=()):
        self.name = directory.name
        self.inputs = [input_bytes(p, i < len(optional) and optional[i])
                       for i, p in enumerate(numbered(directory, "input"))]
        self.outputs = []
        for p in numbered(directory, "output"):
            tensor = load_tensor(p)
            self.outputs.append((tensor.data_type, numpy_helper.to_array(tensor)))


def load_tensor(path):
    return load(onnx.load_tensor, path)


def input_bytes(path, optional):
    """An input's bytes for the runner. For an input of optional type
    (an OptionalProto file): its tensor's, or none at all when it holds
    nothing, which the runner passes as NULL."""
    if not optional:
        return raw_bytes(load_tensor(path))

    def load_optional(name):
        value = onnx.OptionalProto()
        value.ParseFromString(pathlib.Path(name).read_bytes())
        return value

    value = load(load_optional, path)
    if value.elem_type == onnx.OptionalProto.UNDEFINED:
        return b""
    if value.elem_type != onnx.OptionalProto.TENSOR:
        raise TestError(f"{path}: an optional that holds no tensor")
    return raw_bytes(value.tensor_value)


def optional_inputs(model):
    """Per graph input of the model (initializers aside): whether its type
    is optional."""
    weights = {t.name for t in model.graph.initializer}
    return [v.type.HasField("optional_type") for v in model.graph.input if v.name not in weights]


def load(loader, path):
    """loader(path); TestError if the file is missing or unreadable."""
    try:
        return loader(str(path))
    except Exception as err:  # protobuf raises several types on garbage
        raise TestError(f"cannot read {path}: {err}") from None


def numbered(directory, stem):
    """directory/<stem>_0.pb, <stem>_1.pb, ... while they exist."""
    paths = []
    while (directory / f"{stem}_{len(paths)}.pb").is_file():
        paths.append(directory / f"{stem}_{len(paths)}.pb")
    return paths


def raw_bytes(tensor):
    """The tensor's elements as raw little-endian bytes (bool: one byte each;
    bfloat16: numpy_helper gives its 16-bit patterns)."""
    array = numpy_helper.to_array(tensor)
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    return np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tobytes()


def as_float(data_type, array):
    """Expected float outputs as float64 (bfloat16 arrives as bit patterns)."""
    if data_type == onnx.TensorProto.BFLOAT16:
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return array.astype(np.float64)


def compare_output(index, data_type, expected, path):
    """None if out_<index>.bin at path matches expected, else the reason."""
    if not path.is_file():
        return f"output {index}: the runner did not write {path.name}"
    stored = np.uint8 if expected.dtype == np.bool_ else expected.dtype
    got = np.fromfile(path, dtype=np.dtype(stored).newbyteorder("<"))
    if got.size != expected.size:
        return f"output {index}: {got.size} elements, expected {expected.size}"
    want = expected.reshape(-1).astype(stored)
    if data_type in FLOAT_TYPES:
        got, want = as_float(data_type, got), as_float(data_type, want)
        close = np.isclose(got, want, rtol=RTOL, atol=ATOL, equal_nan=True)
    else:
        close = got == want
    if close.all():
        return None
    k = int(np.flatnonzero(~close)[0])
    return (f"output {index}: {np.count_nonzero(~close)} of {want.size} elements differ; "
            f"first at flat index {k}: got {got[k]!r}, expected {want[k]!r}")


def cuvilc_error(err, model):
    """The first `error:` line cuvilc printed, from run_e2e's CaseError text
    (its output lines are quoted as `  | ...`), without the model's path."""
    lines = [line.removeprefix("  | ") for line in str(err).splitlines()]
    first = next((line for line in lines if line.startswith("error:")), None)
    if first is None:
        return lines[0]
    first = first.removeprefix("error: ").removeprefix(f"{model}: ")
    return f"unsupported: {first}" if UNSUPPORTED.search(first) else f"cuvilc: {first}"


def io_pool_bytes(data_sets):
    """Bytes runner.c's I/O pool needs for the largest data set (each buffer
    rounded up to its 64-byte alignment), and at least its default 1 MiB."""
    def aligned(size):
        return -(-size // board_batches.IO_ALIGN) * board_batches.IO_ALIGN

    return max([RUNNER_IO_POOL_DEFAULT] + [
        sum(aligned(len(data)) for data in d.inputs)
        + sum(aligned(expected.nbytes) for _, expected in d.outputs) for d in data_sets])


def run_on_target(cuvilc, target, test_dir, data_sets, case_dir):
    """(verdict, reason) of one test on the host."""
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    try:
        run_e2e.compile_model(cuvilc, target, test_dir, case_dir,
                              expected_warnings=EXPECTED_WARNINGS)
    except run_e2e.CaseError as err:
        return "fail", cuvilc_error(err, test_dir / "model.onnx")
    try:
        pool = io_pool_bytes(data_sets)
        image = target.build(case_dir, defines=[f"CUVIL_RUNNER_IO_POOL_BYTES={pool}"])
        for data_set in data_sets:
            for old in case_dir.glob("out_*.bin"):
                old.unlink()
            for i, data in enumerate(data_set.inputs):
                (case_dir / f"input_{i}.bin").write_bytes(data)
            run_e2e.run_image(target, image, case_dir)
            for i, (data_type, expected) in enumerate(data_set.outputs):
                reason = compare_output(i, data_type, expected, case_dir / f"out_{i}.bin")
                if reason:
                    return "fail", f"{data_set.name}: {reason}"
    except run_e2e.CaseError as err:
        return "fail", step_error(err)
    return "pass", ""


def op_types(model):
    """Sorted op types of the model's nodes, subgraphs included."""
    ops = set()
    pending = [model.graph]
    while pending:
        graph = pending.pop()
        for node in graph.node:
            ops.add(node.op_type)
            for attr in node.attribute:
                pending.extend([attr.g] if attr.HasField("g") else [])
                pending.extend(attr.graphs)
    return sorted(ops)


def prepare_on_board(cuvilc, target, test_dir, name, data_sets, case_dir, model):
    """A board_batches.Test of one test on a board, or its (verdict, reason)
    if it does not compile."""
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    try:
        return board_batches.prepare(cuvilc, target, test_dir, name, data_sets, case_dir, model,
                                     EXPECTED_WARNINGS)
    except run_e2e.CaseError as err:
        if str(err).startswith("cuvilc build"):
            return "fail", cuvilc_error(err, test_dir / "model.onnx")
        return "fail", step_error(err)


def judge(test, data_set):
    """None if the outputs a board wrote for data_set are right, else why."""
    for i, (data_type, expected) in enumerate(data_set.outputs):
        reason = compare_output(i, data_type, expected, test.data_dir(data_set) / f"out_{i}.bin")
        if reason:
            return reason
    return None


def run_test(cuvilc, targets, ready, data_root, work, name, number):
    """{"ops": [...], "targets": {label: {"verdict", "reason"}}} for one
    test, and {label: board_batches.Test} for the boards it is to run on
    (their verdicts come from run_boards)."""
    test_dir = data_root / name
    verdicts = {}
    pending = {}
    try:
        model = load(onnx.load, test_dir / "model.onnx")
        ops = op_types(model)
        optional = optional_inputs(model)
        data_sets = [DataSet(d, optional) for d in sorted(test_dir.glob("test_data_set_*"))]
        if not data_sets:
            raise TestError(f"{test_dir} has no test_data_set_*")
    except TestError as err:
        return {"ops": [], "targets": {t.label: {"verdict": "error", "reason": str(err)}
                                       for t in targets}}, pending
    for target in targets:
        if not ready[target.label]:
            verdicts[target.label] = {"verdict": "error", "reason": "target setup failed"}
            continue
        case_dir = work / target.label / name
        if isinstance(target, run_e2e.BoardTarget):
            outcome = prepare_on_board(cuvilc, target, test_dir, name, data_sets, case_dir,
                                       f"t{number}")
            if isinstance(outcome, board_batches.Test):
                pending[target.label] = outcome
                continue
            verdict, reason = outcome
        else:
            verdict, reason = run_on_target(cuvilc, target, test_dir, data_sets, case_dir)
        verdicts[target.label] = {"verdict": verdict, "reason": reason}
    return {"ops": ops, "targets": verdicts}, pending


def run_boards(pool, targets, work, pending):
    """Runs the compiled tests of pending ({label: [Test]}) in batches
    (board_batches), the batches in pool; yields (label, test name, verdict,
    reason) as batches finish."""
    futures = {}
    for target in targets:
        tests = pending.get(target.label, [])
        for number, batch in enumerate(board_batches.batches(tests)):
            future = pool.submit(board_batches.run_batch, target, work / target.label,
                                 f"b{number}", batch, judge)
            futures[future] = target.label
    for future in concurrent.futures.as_completed(futures):
        for name, (verdict, reason) in future.result().items():
            yield futures[future], name, verdict, reason


def read_scope(path):
    """{test: None if in scope, else the out-of-scope reason tag}."""
    scope = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        match = SCOPE_LINE.match(line)
        if not match:
            raise ValueError(f"{path}:{number}: expected `<folder>/<test> in` or "
                             f"`<folder>/<test> out <reason>`, got '{line}'")
        scope[match[1]] = None if match[2] else match[3]
    return scope


def read_subset(path, scope):
    names = [line.split("#")[0].strip() for line in path.read_text().splitlines()]
    names = [n for n in names if n]
    unknown = [n for n in names if n not in scope]
    if unknown:
        raise ValueError(f"{path}: not in the scope file: {', '.join(unknown)}")
    outside = [n for n in names if scope[n] is not None]
    if outside:
        raise ValueError(f"{path}: out of scope: {', '.join(outside)}")
    return sorted(set(names))


def select_tests(args, scope):
    if args.subset:
        names = read_subset(args.subset, scope)
    else:
        names = sorted(n for n, reason in scope.items() if reason is None)
    if args.filter:
        names = [n for n in names if args.filter.search(n)]
    if not names:
        raise ValueError("no test selected")
    missing = [n for n in names if not (args.data / n / "model.onnx").is_file()]
    if missing:
        raise ValueError(f"not in {args.data}: {', '.join(missing[:5])}"
                         f"{' ...' if len(missing) > 5 else ''}")
    return names


def write_subset(path, results, labels, cap):
    """Writes the tests that passed on every target of `labels`, choosing per
    op (in name order) up to `cap` tests that contain it, fewest ops first."""
    passing = sorted((name for name, r in results.items()
                      if all(r["targets"][t]["verdict"] == "pass" for t in labels)),
                     key=lambda n: (len(results[n]["ops"]), n))
    chosen = []
    covered = {}
    for op in sorted({op for n in passing for op in results[n]["ops"]}):
        covered[op] = [n for n in chosen if op in results[n]["ops"]]
        for name in passing:
            if len(covered[op]) >= cap:
                break
            if op in results[name]["ops"] and name not in covered[op]:
                chosen.append(name)
                covered[op].append(name)
    lines = [
        "# ONNX backend tests run by `make conformance-quick`: each passes on",
        f"# {', '.join(labels)}. Written by `run_conformance.py --write-subset` from the",
        f"# tests that pass today, at most {cap} per op (fewest ops first); the op -> tests",
        "# mapping shows every op cuvil passes a test of:",
        *(f"#   {op}: {' '.join(names)}" for op, names in sorted(covered.items())),
        *sorted(chosen),
    ]
    path.write_text("\n".join(lines) + "\n")
    return len(chosen)


def print_verdict(label, name, verdict):
    if verdict["verdict"] == "pass":
        print(f"PASS {label}/{name}", flush=True)
    else:
        print(f"{verdict['verdict'].upper()} {label}/{name}: {verdict['reason']}", flush=True)


def print_totals(results, labels):
    """Per-target totals, then `N passed, M failed`; returns M."""
    passed_all = failed_all = 0
    print(f"--- {len(results)} tests")
    for label in labels:
        verdicts = [r["targets"][label]["verdict"] for r in results.values()]
        passed, failed, errors = (verdicts.count(v) for v in ("pass", "fail", "error"))
        print(f"{label}: {passed} passed, {failed} failed, {errors} errors")
        passed_all += passed
        failed_all += failed + errors
    print(f"{passed_all} passed, {failed_all} failed")
    return failed_all


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuvilc", required=True, type=pathlib.Path, help="the cuvilc executable")
    parser.add_argument("--work", required=True, type=pathlib.Path, help="scratch directory")
    parser.add_argument("--targets", required=True,
                        help="comma-separated targets, e.g. host,a78,u74-mc")
    parser.add_argument("--scope", type=pathlib.Path, default=SCOPE,
                        help=f"scope file (default {SCOPE})")
    parser.add_argument("--data", type=pathlib.Path, default=DATA,
                        help=f"ONNX backend test data (default {DATA})")
    parser.add_argument("--filter", type=re.compile, metavar="REGEX",
                        help="only tests whose <folder>/<test> name matches")
    parser.add_argument("--subset", type=pathlib.Path, metavar="FILE",
                        help="only the tests this file lists")
    parser.add_argument("--jobs", type=int, default=2, help="tests run at once (default 2)")
    parser.add_argument("--results", type=pathlib.Path, metavar="FILE.json",
                        help="write every verdict here")
    parser.add_argument("--write-subset", type=pathlib.Path, metavar="FILE",
                        help="write the tests passing on every target, as a --subset file")
    parser.add_argument("--exit-zero", action="store_true",
                        help="exit 0 even if tests fail (for runs that feed the report)")
    parser.add_argument("--subset-cap", type=int, default=SUBSET_CAP,
                        help=f"tests per op in --write-subset (default {SUBSET_CAP})")
    args = parser.parse_args()
    if args.jobs < 1 or args.subset_cap < 1:
        parser.error("--jobs and --subset-cap must be at least 1")
    return args


def main():
    args = parse_args()
    try:
        if not args.cuvilc.is_file():
            raise ValueError(f"cuvilc not found at {args.cuvilc}")
        labels = [t for t in args.targets.split(",") if t]
        if not labels or len(set(labels)) != len(labels):
            raise ValueError(f"--targets '{args.targets}' must name distinct targets")
        targets = [run_e2e.load_target(t) for t in labels]
        scope = read_scope(args.scope)
        names = select_tests(args, scope)
    except (ValueError, OSError, tomllib.TOMLDecodeError) as err:
        print(f"run_conformance: error: {err}", file=sys.stderr)
        return 2
    targets = run_e2e.runnable(targets)
    labels = [t.label for t in targets]
    if not targets:
        return 77  # every target skipped: ctest's SKIP_RETURN_CODE
    cuvilc = args.cuvilc.resolve()
    work = args.work.resolve()
    data_root = args.data.resolve()
    start = time.monotonic()

    ready = {}
    for target in targets:
        try:
            target.prepare(work)
            ready[target.label] = True
        except run_e2e.CaseError as err:
            print(f"run_conformance: error: target {target.label}: {err}", flush=True)
            ready[target.label] = False

    results = {}
    pending = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_test, cuvilc, targets, ready, data_root, work, name, number):
                   name for number, name in enumerate(names)}
        for future in concurrent.futures.as_completed(futures):
            name = futures[future]
            results[name], waiting = future.result()
            for label, verdict in results[name]["targets"].items():
                print_verdict(label, name, verdict)
            for label, test in waiting.items():
                pending.setdefault(label, []).append(test)
        for tests in pending.values():
            tests.sort(key=lambda t: t.name)
        for label, name, verdict, reason in run_boards(pool, targets, work, pending):
            results[name]["targets"][label] = {"verdict": verdict, "reason": reason}
            print_verdict(label, name, results[name]["targets"][label])

    results = dict(sorted(results.items()))
    if args.results:
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(
            {"targets": labels, "tests": results}, indent=1, sort_keys=True) + "\n")
    if args.write_subset:
        count = write_subset(args.write_subset, results, labels, args.subset_cap)
        print(f"wrote {count} tests to {args.write_subset}")
    print(f"--- wall time {time.monotonic() - start:.0f} s")
    failed = print_totals(results, labels)
    return 1 if failed and not args.exit_zero else 0


if __name__ == "__main__":
    sys.exit(main())
