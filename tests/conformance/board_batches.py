"""Conformance tests on a board, many per image: run_conformance.py's board
path.

A backend test is a model of a few nodes; on a board, linking its image and
booting QEMU for it cost more than compiling it. So each test is compiled
on its own (prepare: `cuvilc build --name t<N>`), then the tests are run in
batches, one image per batch: runtime-baremetal's runner.c is compiled
against each test's header as the function cuvil_case_t<N> rather than
main (one compiler run for the batch), and the image's main calls each
test's runner once per test_data_set, on the files in that data set's
directory, printing where each call starts and what it returned. One QEMU
boot then runs the whole batch.

A test's verdict is its own: its runner's return code and messages, its
outputs. When a batch does not link, or its image does not finish (a
trap, a hang), each of its tests runs again in an image of its own, so
the failure is reported against the test that caused it, with the step
and tool output run_e2e.py gives.
"""

import re
import shutil

import run_e2e

# Tests per image, and the arena bytes of one image's models: models each
# have their own arena, and together they must fit the target's arena region
# (u74-mc's L2 LIM holds 2 MiB).
BATCH_TESTS = 24
BATCH_ARENA_BYTES = 1 << 20
# runner.c's IO_ALIGN: each input and output starts on this boundary.
IO_ALIGN = 64

CASE_START = re.compile(r"^cuvil: case (\d+) start\r?$", re.MULTILINE)
CASE_END = re.compile(r"^cuvil: case (\d+) rc=(-?\d+)\r?$", re.MULTILINE)
RUNNER_ERROR = re.compile(r"^cuvil: error: .*$", re.MULTILINE)


def step_error(err):
    """run_e2e's CaseError text in one line: the step, what failed, and the
    first line of the tool's output that reports an error, if any."""
    head, *rest = str(err).splitlines()
    output = [line.removeprefix("  | ") for line in rest if line.startswith("  | ")]
    detail = next((line for line in output if "error" in line.lower()), None)
    return f"{head}: {detail.strip()}" if detail else head


class Test:
    """One backend test compiled for a board: its model in case_dir
    (t<N>.o, placed by t<N>.ld; model.h names it for runner.c), the I/O
    pool its runner needs, and one directory of input files per data set."""

    def __init__(self, name, case_dir, model, data_sets, arena_bytes, io_pool_bytes):
        self.name = name  # <folder>/<test>
        self.case_dir = case_dir
        self.model = model  # t<N>
        self.data_sets = data_sets
        self.arena_bytes = arena_bytes
        self.io_pool_bytes = io_pool_bytes

    @property
    def entry(self):
        return f"cuvil_case_{self.model}"

    def data_dir(self, data_set):
        return self.case_dir / data_set.name


def alias_header(header, model):
    """runner.c's model.h for a model built as `model`: includes its header
    and names each CUVIL_<MODEL>_* macro and cuvil_<model>_* identifier the
    header defines as runner.c spells it (CUVIL_MODEL_*, cuvil_model_*)."""
    text = header.read_text()
    upper = model.upper()
    macros = sorted(set(re.findall(rf"^#define (CUVIL_{upper}_\w+)", text, re.MULTILINE)))
    names = sorted(set(re.findall(rf"\b(cuvil_{model}_\w+)", text)))
    lines = [f"/* runner.c's view of {header.name} (tests/conformance/board_batches.py) */",
             f'#include "{header.name}"']
    lines += [f"#define CUVIL_MODEL_{m[len(upper) + 7:]} {m}" for m in macros]
    lines += [f"#define cuvil_model_{n[len(model) + 7:]} {n}" for n in names]
    return "\n".join(lines) + "\n"


def prepare(cuvilc, target, test_dir, name, data_sets, case_dir, model, expected_warnings):
    """Compile one test for a board: a Test, or raises run_e2e.CaseError
    (from cuvilc: its `what` starts with `cuvilc build`)."""
    run_e2e.compile_model(cuvilc, target, test_dir, case_dir, name=model,
                          expected_warnings=expected_warnings)
    header = case_dir / f"{model}.h"
    (case_dir / "model.h").write_text(alias_header(header, model))
    text = header.read_text()
    prefix = f"CUVIL_{model.upper()}_"
    arena = re.search(rf"^#define {prefix}ARENA_SIZE (\d+)u", text, re.MULTILINE)
    if not arena:
        raise run_e2e.CaseError(f"{header.name} states no {prefix}ARENA_SIZE")
    # The runner's I/O pool: the inputs and outputs as the header sizes them,
    # each aligned, which is what runner.c checks it against (a data set's
    # file of another size is the runner's error to report).
    lists = re.findall(rf"^#define {prefix}(?:INPUT|OUTPUT)_BYTES_LIST {{(.*)}}$", text,
                       re.MULTILINE)
    pool = sum(-(-int(n.strip().rstrip("u")) // IO_ALIGN) * IO_ALIGN
               for line in lists for n in line.split(",") if n.strip())
    test = Test(name, case_dir, model, data_sets, int(arena[1]), max(pool, IO_ALIGN))
    for data_set in data_sets:
        data_dir = test.data_dir(data_set)
        data_dir.mkdir()
        for i, data in enumerate(data_set.inputs):
            (data_dir / f"input_{i}.bin").write_bytes(data)
    return test


def batches(tests):
    """tests in batches of at most BATCH_TESTS whose arenas fit
    BATCH_ARENA_BYTES (a larger model alone)."""
    batch, arena = [], 0
    for test in tests:
        if batch and (len(batch) == BATCH_TESTS or arena + test.arena_bytes > BATCH_ARENA_BYTES):
            yield batch
            batch, arena = [], 0
        batch.append(test)
        arena += test.arena_bytes
    if batch:
        yield batch


def runner_source(test):
    """runner.c as test's runner (a file of the batch's directory)."""
    return "".join([f"/* The runner of {test.name} (tests/conformance/board_batches.py). */\n",
                    f"#define CUVIL_RUNNER_ENTRY {test.entry}\n",
                    f"#define CUVIL_RUNNER_IO_POOL_BYTES {test.io_pool_bytes}ul\n",
                    f'#define CUVIL_RUNNER_MODEL_HEADER "{test.case_dir / "model.h"}"\n',
                    f'#include "{run_e2e.RUNNER}"\n'])


def batch_source(calls):
    """main() of a batch: calls [(entry, dir)] in order, each framed by
    `cuvil: case K start` and `cuvil: case K rc=R`."""
    entries = sorted({entry for entry, _ in calls})
    lines = ["/* A batch of conformance tests (tests/conformance/board_batches.py). */",
             '#include "cuvil/port.h"', ""]
    lines += [f"int {entry}(const char *dir);" for entry in entries]
    lines += ["", "int main(void) {"]
    for k, (entry, directory) in enumerate(calls):
        lines += [f'  cuvil_printf("cuvil: case {k} start\\n");',
                  f'  cuvil_printf("cuvil: case {k} rc=%d\\n", {entry}("{directory}"));']
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def run_batch(target, root, label, tests, judge):
    """Runs tests (Test objects of one target, their case directories under
    root, QEMU's working directory) in one image in root/batches/<label>;
    returns {test name: (verdict, reason)}. judge(test, data_set) is None if
    the outputs in the data set's directory are right, else the reason."""
    calls = [(t, d) for t in tests for d in t.data_sets]
    batch_dir = root / "batches" / label
    shutil.rmtree(batch_dir, ignore_errors=True)
    batch_dir.mkdir(parents=True)
    for test, data_set in calls:
        for old in test.data_dir(data_set).glob("out_*.bin"):
            old.unlink()
    sources = [batch_dir / "batch.c"]
    sources[0].write_text(batch_source(
        [(t.entry, f"{t.data_dir(d).relative_to(root)}/") for t, d in calls]))
    for test in tests:
        sources.append(batch_dir / f"runner_{test.model}.c")
        sources[-1].write_text(runner_source(test))
    try:
        target.compile_all(sources, batch_dir)
        image = target.link(batch_dir, [*(s.with_suffix(".o") for s in sources),
                                        *(t.case_dir / f"{t.model}.o" for t in tests)],
                            [t.case_dir / f"{t.model}.ld" for t in tests])
        # QEMU runs in root, where the data sets' directories are: the
        # image by its full path (target.command names it for its own
        # directory).
        command = [*target.command(image)[:-1], str(image.resolve())]
        stdout = run_e2e.run(command, "run", cwd=root, timeout=run_e2e.RUN_TIMEOUT_S).stdout
    except run_e2e.CaseError as err:
        if len(tests) > 1:
            return alone(target, root, label, tests, judge)
        return {tests[0].name: ("fail", step_error(err))}
    starts = {int(m[1]): m.end() for m in CASE_START.finditer(stdout)}
    ends = {int(m[1]): (m.start(), int(m[2])) for m in CASE_END.finditer(stdout)}
    if set(ends) != set(range(len(calls))) or set(starts) != set(ends):
        if len(tests) > 1:
            return alone(target, root, label, tests, judge)
        return {tests[0].name: ("fail", "run: the image stopped before its last test_data_set")}
    verdicts = {}
    for k, (test, data_set) in enumerate(calls):
        if test.name in verdicts:
            continue  # an earlier data set failed
        end, rc = ends[k]
        output = stdout[starts[k]:end]
        if rc != 0:
            error = RUNNER_ERROR.search(output)
            verdicts[test.name] = ("fail", f"{data_set.name}: run: "
                                   + (error[0] if error else f"the runner returned {rc}"))
        elif not run_e2e.RUN_OK.search(output):
            verdicts[test.name] = ("fail", f"{data_set.name}: run: no 'cuvil: run ok'")
        else:
            reason = judge(test, data_set)
            if reason:
                verdicts[test.name] = ("fail", f"{data_set.name}: {reason}")
    for test in tests:
        verdicts.setdefault(test.name, ("pass", ""))
    return verdicts


def alone(target, root, label, tests, judge):
    """Each test in an image of its own (a batch failed as a whole)."""
    verdicts = {}
    for i, test in enumerate(tests):
        verdicts.update(run_batch(target, root, f"{label}-{i}", [test], judge))
    return verdicts
