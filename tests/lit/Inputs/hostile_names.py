#!/usr/bin/python3
"""Writes a small model whose names try to become code, and a C program that
checks they arrived in the generated header as data.

    hostile_names.py OUT_DIR

OUT_DIR/hostile.onnx: y = Relu(x) + c, z = -x, where the tensor and node
names hold "*/", '"', '\\', newlines, bytes that are not UTF-8, a 10 KB name,
C keywords, and cuvil's own names. OUT_DIR/check.c includes hostile.h,
compares every NAME macro with the exact bytes of the name, runs the model,
and prints "names ok" and the outputs.
"""
import pathlib
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = pathlib.Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)

# Protobuf's Python API only takes valid UTF-8: the model is written with
# placeholders of the same length, replaced by raw bytes afterwards.
NON_UTF8 = b"bad\xff\xfe\xc3(end"
PLACEHOLDER = b"P" * len(NON_UTF8)
LONG = "L" * 10000 + "*/"

names = {
    "x": 'in */ "quoted" \\ back\nslash ??/ /* open',
    "y": PLACEHOLDER.decode(),
    "z": "int",  # a C keyword: the parameter must get another name
    "c": "CUVIL_OK",
    "relu": LONG,
    "add": "m",  # the run function's own parameter name
    "neg": "cuvil_hostile_run",
}
c = numpy_helper.from_array(np.array([0.5, -1.0, 2.0], np.float32), names["c"])
nodes = [
    helper.make_node("Relu", [names["x"]], ["r"], name=names["relu"]),
    helper.make_node("Add", ["r", names["c"]], [names["y"]], name=names["add"]),
    helper.make_node("Neg", [names["x"]], [names["z"]], name=names["neg"]),
]
graph = helper.make_graph(
    nodes, "g*/\"",
    [helper.make_tensor_value_info(names["x"], TensorProto.FLOAT, [3])],
    [helper.make_tensor_value_info(names["y"], TensorProto.FLOAT, [3]),
     helper.make_tensor_value_info(names["z"], TensorProto.FLOAT, [3])],
    [c])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
data = model.SerializeToString()
assert data.count(PLACEHOLDER) >= 1
(out / "hostile.onnx").write_bytes(data.replace(PLACEHOLDER, NON_UTF8))


def c_bytes(b: bytes) -> str:
    return "{" + ", ".join(str(v) for v in b) + "}"


x_name = names["x"].encode()
check = f"""
#include "hostile.h"
#include <stdio.h>
#include <string.h>

static int same(const char *got, const unsigned char *want, size_t n) {{
  return strlen(got) == n && memcmp(got, want, n) == 0;
}}

int main(void) {{
  static const unsigned char x[] = {c_bytes(x_name)};
  static const unsigned char y[] = {c_bytes(NON_UTF8)};
  if (!same(CUVIL_HOSTILE_INPUT_0_NAME, x, sizeof x) ||
      !same(CUVIL_HOSTILE_OUTPUT_0_NAME, y, sizeof y) ||
      strcmp(CUVIL_HOSTILE_OUTPUT_1_NAME, "int") != 0) {{
    puts("names differ");
    return 1;
  }}
  puts("names ok");
  cuvil_hostile_t m;
  if (cuvil_hostile_init(&m, NULL, NULL, 0) != CUVIL_OK)
    return 2;
  float in[3] = {{1.0f, -2.0f, 3.0f}}, y0[3], z0[3];
  if (cuvil_hostile_run(&m, in, y0, z0) != CUVIL_OK)
    return 3;
  printf("y %g %g %g\\nz %g %g %g\\n", y0[0], y0[1], y0[2], z0[0], z0[1],
         z0[2]);
  return 0;
}}
"""
(out / "check.c").write_text(check)
