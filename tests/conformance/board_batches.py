"""Conformance tests on a board, many per image: run_conformance.py's board
path.

A backend test is a model of a few nodes; on a board, linking its image and
booting QEMU for it cost more than compiling it. So each test is compiled
on its own (prepare: `cuvilc build --name t<N>`), then the tests are run in
batches, one image per batch: runtime-baremetal's runner.c is compiled
against each test's header as the function cuvil_case_t<N> rather than
main, and the image's main calls each test's runner once per
test_data_set, on the files in that data set's directory, printing where
each call starts and what it returned. One QEMU boot then runs the whole
batch.

The batch's runners and its main are one translation unit, batch.c, one
compiler run: a compiler process per runner took half the CPU time of a
board's conformance run (clang's start-up, some 0.1 s a file). runner.c
includes the test's header and defines file-scope names of its own, so
batch.c includes runner.c once per test with its static functions and
variables renamed for that test (runner_statics, read from runner.c) and
undefines, after each, the macros runner.c and the test's header alias
defined.

A test's verdict is its own: its runner's return code and messages, its
outputs. When a batch does not link, or its image does not finish (a
trap, a hang), each of its tests runs again in an image of its own, so
the failure is reported against the test that caused it, with the step
and tool output run_e2e.py gives.
"""

import re
import shutil
import sys

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


def runner_statics(text):
    """The names runner.c (its text) gives file scope with `static`, its
    functions and variables, less those it also defines as macros: one
    translation unit that includes it for several tests renames them per
    test. A static this misses makes batch.c fail to compile (a
    redefinition), never a wrong verdict."""
    text = text.replace("\\\n", " ")
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.DOTALL)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\])*'", "''", text)
    macros = set(re.findall(r"^\s*#\s*define\s+(\w+)", text, re.MULTILINE))
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    tokens = re.findall(r"[A-Za-z_]\w*|\S", code)
    names, statement, depth, body = [], [], 0, 0
    for token in tokens:
        if body:  # inside a function body
            body += {"{": 1, "}": -1}.get(token, 0)
            continue
        if token == "{" and depth == 0 and statement and statement[-1] == ")":
            names += declared_names(statement)
            statement, body = [], 1
            continue
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(token, 0)
        if token == ";" and depth == 0:
            names += declared_names(statement + [";"])
            statement = []
            continue
        statement.append(token)
    return sorted(set(names) - macros)


def declared_names(statement):
    """The declarators of a file-scope statement (tokens) that starts with
    `static`: each identifier at the outer level followed by `(`, `[`, `=`,
    `,` or `;`, with initializers and __attribute__ groups skipped."""
    if not statement or statement[0] != "static":
        return []
    tokens, i = [], 0
    while i < len(statement):
        if statement[i] != "__attribute__":
            tokens.append(statement[i])
            i += 1
            continue
        level, i = 0, i + 1
        while i < len(statement):
            level += {"(": 1, ")": -1}.get(statement[i], 0)
            i += 1
            if level == 0:
                break
    names, depth, initializer = [], 0, False
    for token, following in zip(tokens, tokens[1:] + [";"]):
        if depth == 0 and token in ("=", ","):
            initializer = token == "="
        elif (depth == 0 and not initializer and token not in C_KEYWORDS
              and re.fullmatch(r"[A-Za-z_]\w*", token) and following in "([=,;"):
            names.append(token)
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(token, 0)
    return names


C_KEYWORDS = {"static", "inline", "const", "volatile", "unsigned", "signed", "char", "short",
              "int", "long", "float", "double", "void", "struct", "union", "enum"}

RUNNER_TEXT = run_e2e.RUNNER.read_text()
RUNNER_STATICS = runner_statics(RUNNER_TEXT)
RUNNER_MACROS = sorted(set(re.findall(r"^\s*#\s*define\s+(\w+)", RUNNER_TEXT, re.MULTILINE)))


def runner_instance(test):
    """batch.c's lines for test's runner: runner.c included as the function
    test.entry against the test's header, its statics renamed; afterwards
    every macro it, the header alias and these lines defined is undefined."""
    header = test.case_dir / "model.h"
    alias = re.findall(r"^#define (\w+)", header.read_text(), re.MULTILINE)
    config = {"CUVIL_RUNNER_ENTRY": test.entry,
              "CUVIL_RUNNER_IO_POOL_BYTES": f"{test.io_pool_bytes}ul",
              "CUVIL_RUNNER_MODEL_HEADER": f'"{header}"'}
    lines = [f"/* The runner of {test.name}. */"]
    lines += [f"#define {name} {value}" for name, value in config.items()]
    lines += [f'#include "{header}"']
    lines += [f"#define {name} runner_{test.model}_{name}" for name in RUNNER_STATICS]
    lines += [f'#include "{run_e2e.RUNNER}"']
    undefine = sorted(set(config) | set(RUNNER_STATICS) | set(RUNNER_MACROS) | set(alias))
    lines += [f"#undef {name}" for name in undefine]
    return lines + [""]


def batch_source(tests, calls):
    """batch.c: the runners of tests, then main(), which makes the calls
    [(entry, dir)] in order, each framed by `cuvil: case K start` and
    `cuvil: case K rc=R`."""
    lines = ["/* A batch of conformance tests (tests/conformance/board_batches.py). */",
             '#include "cuvil/port.h"', ""]
    for test in tests:
        lines += runner_instance(test)
    lines += ["int main(void) {"]
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
    source = batch_dir / "batch.c"
    source.write_text(batch_source(
        tests, [(t.entry, f"{t.data_dir(d).relative_to(root)}/") for t, d in calls]))
    try:
        target.compile_all([source], batch_dir)
        image = target.link(batch_dir, [source.with_suffix(".o"),
                                        *(t.case_dir / f"{t.model}.o" for t in tests)],
                            [t.case_dir / f"{t.model}.ld" for t in tests])
        # QEMU runs in root, where the data sets' directories are: the
        # image by its full path (target.command names it for its own
        # directory).
        command = [*target.command(image)[:-1], str(image.resolve())]
        stdout = run_e2e.run(command, "run", cwd=root, timeout=run_e2e.RUN_TIMEOUT_S).stdout
    except run_e2e.CaseError as err:
        if len(tests) > 1:
            # Said, so that a batch.c that stops compiling (a static of
            # runner.c runner_statics misses) does not just make the run slow.
            print(f"conformance: {target.label} batch {label}: {step_error(err)}; "
                  "its tests run again, one image each", file=sys.stderr)
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
