#!/usr/bin/python3
"""Write the Loop models of loops.test into OUT_DIR.

    gen_loops.py OUT_DIR

- loop_for.onnx: a `for` loop of 3 iterations (constant trip count, true
  condition passed through the body): a carried state s' = 0.5 s + x + i
  and a scan output 2 s' per iteration (stacked to [3, 2, 3]).
- loop_shape.onnx: the trip count is x's first dimension (symbolic `n`),
  through Shape -> Gather: --dim n=N fixes it.
- loop_while.onnx: the body computes its condition (i < 2): a while loop
  with a scan output.
- loop_runtime.onnx: the trip count is a graph input.
- loop_until.onnx: a while loop without scan outputs, bounded by a trip
  count of 6: it stops after iteration i when i >= k (k an int64 input) or
  when the state's largest element reaches the float input `limit`.
- loop_gate.onnx: a `for` loop of 4 iterations whose condition on entry is
  the bool input `go` (no scan outputs): it runs 4 times or not at all.
- loop_counted.onnx: the trip count is the int64 input `m`, and the body's
  condition i < 4 bounds the loop to 5 iterations: it runs min(m, 5) times.
- loop_open.onnx: the trip count is the int64 input `m` and the condition
  stays true: nothing in the model bounds it (--loop-bound does).
- loop_settle.onnx: a while loop without a trip count: it runs until the
  state's largest element reaches the float input `limit`.

And the inputs of loop_until, loop_gate and loop_counted as .npy files:
x.npy, k<K>.npy (K = 0, 2, 10: also loop_counted's m), limit<L>.npy
(L = 3, 100), go<G>.npy (G = 0, 1), and k5.npy.
"""

import pathlib
import sys

import numpy as np
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


def scalar(name, value_type):
    return helper.make_tensor_value_info(name, value_type, [])


def stopping_loop(name, cond_nodes, cond_out, trips, entry_cond, inputs):
    """A Loop without scan outputs: s' = 0.5 s + x + float(i), trip count
    `trips` (None: the graph input m; "": none), the condition on entry `entry_cond`
    (a graph value), and the body's condition cond_out computed by
    cond_nodes."""
    body_graph = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["s", "half"], ["hs"]),
         helper.make_node("Add", ["hs", "x"], ["hsx"]),
         helper.make_node("Add", ["hsx", "fi"], ["s_out"]),
         *cond_nodes],
        "body",
        [scalar("i", TensorProto.INT64), scalar("c", TensorProto.BOOL),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, [2, 3])],
        [scalar(cond_out, TensorProto.BOOL),
         helper.make_tensor_value_info("s_out", TensorProto.FLOAT, [2, 3])])
    nodes = [
        helper.make_node("Constant", [], ["half"], value=helper.make_tensor("h", TensorProto.FLOAT, [], [0.5])),
        helper.make_node("Constant", [], ["true"], value=helper.make_tensor("t", TensorProto.BOOL, [], [1])),
        *([] if trips is None or trips == "" else
          [helper.make_node("Constant", [], ["m"], value=helper.make_tensor("mt", TensorProto.INT64, [], [trips]))]),
        helper.make_node("Mul", ["x", "half"], ["s_init"]),
        helper.make_node("Loop", ["" if trips == "" else "m", entry_cond, "s_init"], ["s_final"], name="loop",
                         body=body_graph),
    ]
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]), *inputs],
        [helper.make_tensor_value_info("s_final", TensorProto.FLOAT, [2, 3])])
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
    until = [helper.make_node("Less", ["i", "k"], ["below_k"]),
             helper.make_node("ReduceMax", ["s_out"], ["top"], keepdims=0),
             helper.make_node("Less", ["top", "limit"], ["below_limit"]),
             helper.make_node("And", ["below_k", "below_limit"], ["go_on"])]
    onnx.save(stopping_loop("loop_until", until, "go_on", 6, "true",
                            [scalar("k", TensorProto.INT64), scalar("limit", TensorProto.FLOAT)]),
              out / "loop_until.onnx")
    onnx.save(stopping_loop("loop_gate", [helper.make_node("Identity", ["c"], ["c_out"])], "c_out", 4,
                            "go", [scalar("go", TensorProto.BOOL)]),
              out / "loop_gate.onnx")
    four = [helper.make_node("Constant", [], ["four"], value=helper.make_tensor("f4", TensorProto.INT64, [], [4])),
            helper.make_node("Less", ["i", "four"], ["below_four"])]
    onnx.save(stopping_loop("loop_counted", four, "below_four", None, "true", [scalar("m", TensorProto.INT64)]),
              out / "loop_counted.onnx")
    onnx.save(stopping_loop("loop_open", [helper.make_node("Identity", ["c"], ["c_out"])], "c_out", None, "true",
                            [scalar("m", TensorProto.INT64)]),
              out / "loop_open.onnx")
    settle = [helper.make_node("ReduceMax", ["s_out"], ["top"], keepdims=0),
              helper.make_node("Less", ["top", "limit"], ["go_on"])]
    onnx.save(stopping_loop("loop_settle", settle, "go_on", "", "true", [scalar("limit", TensorProto.FLOAT)]),
              out / "loop_settle.onnx")
    rng = np.random.default_rng(1)
    np.save(out / "x.npy", rng.uniform(-1.0, 1.0, (2, 3)).astype(np.float32))
    for k in (0, 2, 5, 10):
        np.save(out / f"k{k}.npy", np.array(k, np.int64))
    for limit in (3, 100):
        np.save(out / f"limit{limit}.npy", np.array(limit, np.float32))
    for go in (0, 1):
        np.save(out / f"go{go}.npy", np.array(go, np.bool_))
    return 0


if __name__ == "__main__":
    sys.exit(main())
