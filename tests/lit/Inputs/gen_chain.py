#!/usr/bin/python3
"""Write a long chain model: the shape of an unrolled RNN or a generated pipeline.

    gen_chain.py OUT.onnx --nodes N [--width W]

The graph is x[1, W] -> N nodes, each reading only the previous one's result,
-> y. The ops cycle through Add, Relu, Mul, Sigmoid, Reshape (a view) and Sub,
so the chain goes through in-place reuse, views and plain kernels; the two
constants are shared by every node that needs one, so the file stays small.
"""

import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPS = ["Add", "Relu", "Mul", "Sigmoid", "Reshape", "Sub"]


def make_chain(nodes, width):
    inits = [
        numpy_helper.from_array(np.full((1, width), 0.5, dtype=np.float32), "c"),
        numpy_helper.from_array(np.array([1, width], dtype=np.int64), "shape"),
    ]
    graph_nodes = []
    prev = "x"
    for i in range(nodes):
        op = OPS[i % len(OPS)]
        out = "y" if i == nodes - 1 else f"h{i}"
        if op in ("Add", "Mul", "Sub"):
            ins = [prev, "c"]
        elif op == "Reshape":
            ins = [prev, "shape"]
        else:
            ins = [prev]
        graph_nodes.append(helper.make_node(op, ins, [out], name=f"n{i}"))
        prev = out
    graph = helper.make_graph(
        graph_nodes,
        "chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=7)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the .onnx file to write")
    parser.add_argument("--nodes", type=int, required=True, help="chain length (>= 1)")
    parser.add_argument("--width", type=int, default=16, help="elements per tensor")
    args = parser.parse_args()
    if args.nodes < 1 or args.width < 1:
        parser.error("--nodes and --width must be at least 1")
    onnx.save(make_chain(args.nodes, args.width), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
