#!/usr/bin/python3
"""Export torch_einsum.onnx: a PyTorch attention block written with
torch.einsum, with a dynamic batch dimension, for the e2e tests.

    /usr/bin/python3 tests/models/torch_einsum.py [OUT]   (needs python3-torch)

The exported file is committed beside this script (the build machines need
no PyTorch); gen_models.py copies it into the e2e models with test inputs for
a batch of EXPORTED_BATCH and the dimension value cuvilc gets with --dim.
Rerun this only to change the model: weights come from torch.manual_seed(0).

The block: a fused q/k/v projection (nn.Linear), per-head scores
"bhqd,bhkd->bhqk" (a batched product with a transposed operand), softmax,
"bhqk,bhkd->bhqd" (a plain batched product), the output projection, and a
per-position gate "bsd,sd->bs" (no matrix product: the strided kernel).
PyTorch exports each torch.einsum as one ONNX Einsum node.
"""

import math
import pathlib
import sys

import torch

DIM, HEADS, SEQ = 16, 2, 5
OUT = pathlib.Path(__file__).resolve().parent / "torch_einsum.onnx"


class EinsumAttention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(DIM, 3 * DIM)
        self.proj = torch.nn.Linear(DIM, DIM)
        self.gate = torch.nn.Parameter(torch.randn(SEQ, DIM) / math.sqrt(DIM))

    def forward(self, x):  # x: [batch, SEQ, DIM]
        head = DIM // HEADS
        # reshape(-1, ...) keeps the batch dynamic without a Shape chain.
        qkv = self.qkv(x).reshape(-1, SEQ, 3, HEADS, head).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]  # [batch, HEADS, SEQ, head]
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(head)
        ctx = torch.einsum("bhqk,bhkd->bhqd", scores.softmax(-1), v)
        y = self.proj(ctx.transpose(1, 2).reshape(-1, SEQ, DIM))
        return y, torch.einsum("bsd,sd->bs", y, self.gate)


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    torch.manual_seed(0)
    model = EinsumAttention().eval()
    example = torch.randn(3, SEQ, DIM)
    torch.onnx.export(model, (example,), str(out), opset_version=13,
                      input_names=["x"], output_names=["y", "gated"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"},
                                    "gated": {0: "batch"}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
