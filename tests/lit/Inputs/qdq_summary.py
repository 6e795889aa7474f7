"""Prints what a QDQ model holds, for FileCheck: the ONNX checker's
verdict, the op types with their counts, each DequantizeLinear's input
type and axis, and the float initializers left (weights must not be)."""
import sys
from collections import Counter

import onnx
from onnx import TensorProto

model = onnx.load(sys.argv[1])
onnx.checker.check_model(model, full_check=True)
print("checker: ok")
g = model.graph
print("ops:", " ".join(f"{op}={n}" for op, n in sorted(Counter(n.op_type for n in g.node).items())))
inits = {t.name: t for t in g.initializer}
for n in g.node:
    if n.op_type == "DequantizeLinear" and n.input[0] in inits:
        t = inits[n.input[0]]
        axis = [a.i for a in n.attribute if a.name == "axis"]
        print(f"weight {n.input[0]}: {TensorProto.DataType.Name(t.data_type)} dims={list(t.dims)} "
              f"axis={axis[0] if axis else '-'}")
big_float = [t.name for t in g.initializer if t.data_type == TensorProto.FLOAT and len(t.dims) > 1]
print("float weights left:", " ".join(big_float) or "none")
print("metadata:", " ".join(p.key for p in model.metadata_props))
