#!/usr/bin/python3
"""Write the malformed models of tests/lit/malformed-models.test into OUT_DIR.

    gen_malformed.py OUT_DIR

One file per class of malformed input, each small and built with onnx.helper:
  huge_input.onnx          an input of 2^63 elements (2^62 x 2)
  negative_dim.onnx        an input with a negative dimension
  huge_constant.onnx       ConstantOfShape of 2^31 x 2^31 x 4 elements
  output_without_shape.onnx  a graph output and a value_info entry with only an
                           element type (newer exporters): accepted, the shapes
                           come from inference
  output_not_inferable.onnx  a shapeless output of an op shape inference
                           does not know
  input_without_shape.onnx a graph input with only an element type
  missing_initializer.onnx a Gemm whose weight initializer is missing
  dangling_input.onnx      a node input that nothing defines (a misspelt name)
  cycle.onnx               two nodes that read each other's output
  out_of_order.onnx        nodes listed users first (acyclic)
  optional_unguarded.onnx  an optional input (ONNX optional type, as PyTorch
                           exports an Optional[Tensor]) tested with
                           OptionalHasElement but also read when absent
  optional_sequence.onnx   an optional input holding a sequence
  branch_shapes_read.onnx  an If under a run-time condition whose branches
                           give different shapes, read by another node
"""

import pathlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, inits=(), value_info=(), domains=()):
    graph = helper.make_graph(nodes, "malformed", inputs, outputs, list(inits),
                              value_info=list(value_info))
    imports = [helper.make_opsetid("", 13)] + [helper.make_opsetid(d, 1) for d in domains]
    return helper.make_model(graph, opset_imports=imports, ir_version=7)


def tensor(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    x4 = [tensor("x", [1, 4])]
    y4 = [tensor("y", [1, 4])]

    def save(m, name):
        # Bypass onnx.save's checks: these models are meant to be wrong.
        (out / name).write_bytes(m.SerializeToString())

    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
               [tensor("x", [2**62, 2])], [tensor("y", [2**62, 2])]), "huge_input.onnx")

    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
               [tensor("x", [-5, 4])], [tensor("y", [-5, 4])]), "negative_dim.onnx")

    shape = numpy_helper.from_array(np.array([2**31, 2**31, 4], dtype=np.int64), "shape")
    save(model([helper.make_node("ConstantOfShape", ["shape"], ["big"], name="fill"),
                helper.make_node("ReduceSum", ["big"], ["y"], name="sum", keepdims=0)],
               [], [tensor("y", [])], [shape]), "huge_constant.onnx")

    save(model([helper.make_node("Relu", ["x"], ["h"], name="relu"),
                helper.make_node("Sigmoid", ["h"], ["y"], name="sig")],
               x4, [tensor("y", None)], value_info=[tensor("h", None)]),
         "output_without_shape.onnx")

    save(model([helper.make_node("Mystery", ["x"], ["y"], name="magic", domain="com.example")],
               x4, [tensor("y", None)], domains=["com.example"]), "output_not_inferable.onnx")

    save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
               [tensor("x", None)], y4), "input_without_shape.onnx")

    bias = numpy_helper.from_array(np.zeros(3, dtype=np.float32), "fc.bias")
    save(model([helper.make_node("Gemm", ["x", "fc.weight", "fc.bias"], ["y"], name="fc", transB=1)],
               x4, [tensor("y", [1, 3])], [bias]), "missing_initializer.onnx")

    save(model([helper.make_node("Relu", ["x"], ["h1"], name="relu"),
                helper.make_node("Add", ["h1", "h_1"], ["y"], name="add")],
               x4, y4), "dangling_input.onnx")

    save(model([helper.make_node("Relu", ["b"], ["a"], name="relu"),
                helper.make_node("Add", ["a", "x"], ["b"], name="add"),
                helper.make_node("Identity", ["b"], ["y"], name="out")],
               x4, y4), "cycle.onnx")

    save(model([helper.make_node("Sigmoid", ["h"], ["y"], name="sig"),
                helper.make_node("Relu", ["x"], ["h"], name="relu")],
               x4, y4), "out_of_order.onnx")

    optional = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [1, 4]))
    save(helper.make_model(
        helper.make_graph(
            [helper.make_node("OptionalHasElement", ["h"], ["has"], name="has"),
             helper.make_node("OptionalGetElement", ["h"], ["h1"], name="get"),
             helper.make_node("Add", ["x", "h1"], ["y"], name="add")],
            "optional", [*x4, helper.make_value_info("h", optional)],
            [*y4, helper.make_tensor_value_info("has", TensorProto.BOOL, [])]),
        opset_imports=[helper.make_opsetid("", 16)], ir_version=8), "optional_unguarded.onnx")
    sequence = helper.make_optional_type_proto(
        helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [1, 4])))
    save(helper.make_model(
        helper.make_graph(
            [helper.make_node("OptionalHasElement", ["s"], ["y"], name="has")],
            "optional", [helper.make_value_info("s", sequence)],
            [helper.make_tensor_value_info("y", TensorProto.BOOL, [])]),
        opset_imports=[helper.make_opsetid("", 16)], ir_version=8), "optional_sequence.onnx")
    starts, ends, axes = ([helper.make_tensor(n, TensorProto.INT64, [1], [v])]
                          for n, v in (("s", 0), ("e", 2), ("a", 1)))
    head = helper.make_graph(
        [helper.make_node("Constant", [], [n], value=t[0]) for n, t in
         (("s", starts), ("e", ends), ("a", axes))] +
        [helper.make_node("Slice", ["x", "s", "e", "a"], ["h"])],
        "head", [], [tensor("h", [1, 2])])
    whole = helper.make_graph([helper.make_node("Relu", ["x"], ["w"])], "whole", [],
                              [tensor("w", [1, 4])])
    save(helper.make_model(
        helper.make_graph(
            [helper.make_node("If", ["all"], ["pick"], name="pick", then_branch=whole,
                              else_branch=head),
             helper.make_node("Sigmoid", ["pick"], ["y"], name="after")],
            "branches", [*x4, helper.make_tensor_value_info("all", TensorProto.BOOL, [])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]),
        opset_imports=[helper.make_opsetid("", 13)], ir_version=7), "branch_shapes_read.onnx")
    return 0


if __name__ == "__main__":
    sys.exit(main())
