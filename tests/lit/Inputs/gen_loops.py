#!/usr/bin/python3
"""Write the Loop models of loops.test into OUT_DIR.

    gen_loops.py OUT_DIR

- loop_for.onnx: a `for` loop of 3 iterations (constant trip count, true
  condition passed through the body): a carried state s' = 0.5 s + x + i
  and a scan output 2 s' per iteration (stacked to [3, 2, 3]).
- loop_shape.onnx: the trip count is x's first dimension (symbolic `n`),
  through Shape -> Gather: --dim n=N fixes it.
- loop_while.onnx: the body computes its condition (i < 2): a while loop.
- loop_runtime.onnx: the trip count is a graph input.
"""

import pathlib
import sys

import onnx
from onnx import TensorProto, helper


def body(cond_out_nodes, cond_out):
    """s' = 0.5 s + x + float(i); scan = 2 s'."""
    nodes = [
        helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["s", "half"], ["hs"]),
        helper.make_node("Add", ["hs", "x"], ["hsx"]),
        helper.make_node("Add", ["hsx", "fi"], ["s_out"]),
        helper.make_node("Add", ["s_out", "s_out"], ["scan"]),
        *cond_out_nodes,
    ]
    return helper.make_graph(
        nodes, "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info(cond_out, TensorProto.BOOL, []),
         helper.make_tensor_value_info("s_out", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("scan", TensorProto.FLOAT, None)])


def model(name, trips_nodes, trips, x_shape, cond_out_nodes=(), cond_out="c_out", extra_inputs=()):
    pass_through = [helper.make_node("Identity", ["c"], ["c_out"])] if not cond_out_nodes else []
    nodes = [
        helper.make_node("Constant", [], ["half"], value=helper.make_tensor("h", TensorProto.FLOAT, [], [0.5])),
        helper.make_node("Constant", [], ["true"], value=helper.make_tensor("t", TensorProto.BOOL, [], [1])),
        helper.make_node("Constant", [], ["s0"], value=helper.make_tensor("z", TensorProto.FLOAT, [], [0.0])),
        helper.make_node("Expand", ["s0", "x_shape"], ["s_init"]),
        helper.make_node("Shape", ["x"], ["x_shape"]),
        *trips_nodes,
        helper.make_node("Loop", [trips, "true", "s_init"], ["s_final", "scans"], name="loop",
                         body=body(list(cond_out_nodes) + pass_through, cond_out)),
    ]
    # Shape before Expand: keep the nodes in order.
    nodes[3], nodes[4] = nodes[4], nodes[3]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape), *extra_inputs],
        [helper.make_tensor_value_info("s_final", TensorProto.FLOAT, ["a", "b"]),
         helper.make_tensor_value_info("scans", TensorProto.FLOAT, ["trips", "a", "b"])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    return m


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    three = [helper.make_node("Constant", [], ["m"], value=helper.make_tensor("m3", TensorProto.INT64, [], [3]))]
    onnx.save(model("loop_for", three, "m", [2, 3]), out / "loop_for.onnx")
    from_shape = [
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z0", TensorProto.INT64, [], [0])),
        helper.make_node("Gather", ["x_shape", "zero"], ["m"], axis=0),
    ]
    onnx.save(model("loop_shape", from_shape, "m", ["n", 4]), out / "loop_shape.onnx")
    two = [helper.make_node("Constant", [], ["two"], value=helper.make_tensor("t2", TensorProto.INT64, [], [2])),
           helper.make_node("Less", ["i", "two"], ["c_less"])]
    onnx.save(model("loop_while", three, "m", [2, 3], cond_out_nodes=two, cond_out="c_less"),
              out / "loop_while.onnx")
    onnx.save(model("loop_runtime", [], "m", [2, 3],
                    extra_inputs=[helper.make_tensor_value_info("m", TensorProto.INT64, [])]),
              out / "loop_runtime.onnx")
    return 0


if __name__ == "__main__":
    sys.exit(main())
