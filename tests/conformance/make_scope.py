#!/usr/bin/python3
"""Writes tests/conformance/scope.txt: every ONNX backend test of Debian's
libonnx-testdata, in or out of cuvil's conformance scope, and why.

    /usr/bin/python3 tests/conformance/make_scope.py [--data DIR] [--out FILE]

A test is in scope unless its model, inspected here (op types and domains of
every node, subgraphs included; element types of the graph's inputs, outputs,
value_info and initializers; the values of its inputs where an op's behaviour
depends on them), falls into one of the groups of REASONS. Whether cuvil
compiles or passes a test plays no part. The first matching reason, in the
order of REASONS, is the one recorded. Output is sorted and deterministic.
"""

import argparse
import pathlib
import sys

import onnx
from onnx import numpy_helper

DATA = pathlib.Path("/usr/share/libonnx-testdata/data")
FOLDERS = ("node", "simple", "pytorch-converted", "pytorch-operator")
OUT = pathlib.Path(__file__).resolve().parent / "scope.txt"

# tag -> one-sentence definition; checked in this order.
REASONS = {
    "training": "Training-only operators (domain ai.onnx.preview.training: Adagrad, Adam, "
                "Momentum, Gradient), which an inference compiler never meets.",
    "random": "Random generators (RandomNormal[Like], RandomUniform[Like], Bernoulli, "
              "Multinomial) and Dropout in training mode with a nonzero ratio: the expected "
              "output is one draw of a random process, not a function of the inputs.",
    "non-tensor": "Sequence, optional, map or string values (Sequence*, the Optional "
                  "constructor, SplitToSequence, ConcatFromSequence, string ops, string or "
                  "non-tensor types anywhere in the graph): bare-metal targets run dense "
                  "numeric tensors only. An optional tensor as a graph input stays in scope "
                  "(a tensor the caller may leave out, as PyTorch exports an "
                  "Optional[Tensor] argument), with OptionalHasElement and "
                  "OptionalGetElement on it.",
    "data-dependent-shape": "Operators whose output shape depends on input values with no "
                            "static bound (NonZero, Unique, NonMaxSuppression, Compress), "
                            "which a static arena cannot plan.",
    "loop": "Loop: its trip count and termination condition are tensor values, so the "
            "number of iterations and the shapes of its scan outputs are unbounded at "
            "compile time (If and Scan, whose shapes are static, stay in scope).",
    "float64": "Double-precision or complex tensors among the graph's inputs, outputs or "
               "initializers: the targets have no use for float64/complex inference and "
               "cuvil does not offer it; tests made only of operators cuvil also compiles in "
               "float64 (Einsum, whose backend tests are all float64) stay in scope.",
}

TRAINING_DOMAIN = "ai.onnx.preview.training"
RANDOM_OPS = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike",
              "Bernoulli", "Multinomial"}
NON_TENSOR_OPS = {"SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase",
                  "SequenceInsert", "SequenceLength", "SequenceMap", "SplitToSequence",
                  "ConcatFromSequence", "Optional",
                  "StringNormalizer", "RegexFullMatch", "StringConcat", "StringSplit"}
DATA_DEPENDENT_OPS = {"NonZero", "Unique", "NonMaxSuppression", "Compress"}
LOOP_OPS = {"Loop"}
WIDE_TYPES = {onnx.TensorProto.DOUBLE, onnx.TensorProto.COMPLEX64, onnx.TensorProto.COMPLEX128}
# Operators whose every backend test is float64, which cuvil compiles in
# float64 too: a test made of them alone stays in scope.
FLOAT64_OPS = {"Einsum"}


def graphs(graph):
    """graph and, recursively, every subgraph of its nodes' attributes."""
    yield graph
    for node in graph.node:
        for attr in node.attribute:
            for sub in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                yield from graphs(sub)


def value_types(graph):
    """TypeProtos of the graph's declared values (inputs, outputs, value_info)."""
    for value in (*graph.input, *graph.output, *graph.value_info):
        yield value.type


def non_tensor_values(graph):
    """Names of the graph's declared values that are not tensors, an optional
    tensor graph input aside."""
    inputs = {v.name for v in graph.input}
    for value in (*graph.input, *graph.output, *graph.value_info):
        kind = value.type.WhichOneof("value")
        if kind == "tensor_type":
            continue
        if (kind == "optional_type" and value.name in inputs
                and value.type.optional_type.elem_type.WhichOneof("value") == "tensor_type"):
            continue
        yield value.name


def is_tensor_of(type_proto, elem_types):
    return (type_proto.WhichOneof("value") == "tensor_type"
            and type_proto.tensor_type.elem_type in elem_types)


def random_dropout(model, test_dir):
    """True if a Dropout node of the main graph runs in training mode with a
    nonzero ratio, judging by the test's first data set where the mode or the
    ratio is a graph input."""
    graph = model.graph
    dropouts = [n for n in graph.node if n.op_type == "Dropout" and len(n.input) >= 3
                and n.input[2]]
    if not dropouts:
        return False
    known = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    data_set = min(test_dir.glob("test_data_set_*"))
    for i, value in enumerate(graph.input):
        path = data_set / f"input_{i}.pb"
        if value.name not in known and path.is_file():
            known[value.name] = numpy_helper.to_array(onnx.load_tensor(path))
    for node in dropouts:
        training = known.get(node.input[2])
        ratio = known.get(node.input[1]) if node.input[1] else 0.5
        if training is not None and bool(training) and float(ratio) != 0.0:
            return True
    return False


def classify(test_dir):
    """The reason tag for which the test is out of scope, or None if in scope."""
    model = onnx.load(test_dir / "model.onnx")
    all_graphs = list(graphs(model.graph))
    nodes = [n for g in all_graphs for n in g.node]
    ops = {n.op_type for n in nodes}
    types = [t for g in all_graphs for t in value_types(g)]
    non_tensor = [n for g in all_graphs for n in non_tensor_values(g)]
    initializer_types = {t.data_type for g in all_graphs for t in g.initializer}

    if any(n.domain == TRAINING_DOMAIN for n in nodes):
        return "training"
    if ops & RANDOM_OPS or random_dropout(model, test_dir):
        return "random"
    if (ops & NON_TENSOR_OPS
            or non_tensor
            or any(is_tensor_of(t, {onnx.TensorProto.STRING}) for t in types)
            or onnx.TensorProto.STRING in initializer_types):
        return "non-tensor"
    if ops & DATA_DEPENDENT_OPS:
        return "data-dependent-shape"
    if ops & LOOP_OPS:
        return "loop"
    if ((any(is_tensor_of(t, WIDE_TYPES) for t in types) or initializer_types & WIDE_TYPES)
            and not ops <= FLOAT64_OPS):
        return "float64"
    return None


def scope_lines(data):
    lines = []
    for folder in FOLDERS:
        for test_dir in sorted((data / folder).iterdir()):
            if (test_dir / "model.onnx").is_file():
                reason = classify(test_dir)
                entry = f"{folder}/{test_dir.name}"
                lines.append(f"{entry} in" if reason is None else f"{entry} out {reason}")
    return lines


def header(lines):
    inside = sum(1 for line in lines if line.endswith(" in"))
    out = "".join(f"#   {tag}: {text}\n" for tag, text in REASONS.items())
    return (
        "# cuvil conformance scope over the ONNX backend test data of Debian's\n"
        f"# libonnx-testdata ({DATA}).\n"
        "# Generated by tests/conformance/make_scope.py: do not edit by hand.\n"
        "#\n"
        "# One line per test: `<folder>/<test> in`, or `<folder>/<test> out <reason>`.\n"
        "# Every test is in scope, supported by cuvil or not, unless it belongs to one\n"
        "# of these groups (a failing test is never out of scope):\n"
        f"{out}"
        "#\n"
        f"# {len(lines)} tests: {inside} in scope, {len(lines) - inside} out of scope.\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=pathlib.Path, default=DATA,
                        help=f"the test data root (default {DATA})")
    parser.add_argument("--out", type=pathlib.Path, default=OUT, help=f"default {OUT}")
    args = parser.parse_args()
    missing = [f for f in FOLDERS if not (args.data / f).is_dir()]
    if missing:
        print(f"make_scope.py: error: {args.data} has no {', '.join(missing)}: "
              "install libonnx-testdata", file=sys.stderr)
        return 2
    lines = scope_lines(args.data)
    args.out.write_text(header(lines) + "".join(f"{line}\n" for line in lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
