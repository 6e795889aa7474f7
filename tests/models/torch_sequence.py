#!/usr/bin/python3
"""Export torch_encoder.onnx and torch_lstm.onnx: sequence models as
PyTorch exports them, with the sequence length a symbolic dimension
(`seq`), for the end-to-end tests (gen_models.py's EXPORTED gives `seq` a
value other than the traced one, so nothing the trace fixed goes unseen).

    /usr/bin/python3 tests/models/torch_sequence.py [OUT_DIR]   (needs python3-torch)

- torch_encoder: nn.TransformerEncoder, 2 layers, d_model 64, 4 heads,
  feed-forward 128, opset 14. Its attention reshapes take their targets
  from Shape -> Gather -> Concat chains, so ONNX shape inference leaves the
  Q x K^T MatMul without a shape (cuvil resolves it after folding).
- torch_lstm: a keyword spotter, 2-layer LSTM (10 features, hidden 64) and
  a linear classifier of the last step, opset 14.

The exported files are committed beside this script (the build machines
need no PyTorch); rerun this only to change the models.
"""

import pathlib
import sys

import torch

HERE = pathlib.Path(__file__).resolve().parent


class Encoder(torch.nn.Module):
    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128,
                                                 dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, num_layers=2,
                                                   enable_nested_tensor=False)

    def forward(self, x):
        return self.encoder(x)


class KeywordSpotter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = torch.nn.LSTM(10, 64, num_layers=2, batch_first=True)
        self.classify = torch.nn.Linear(64, 12)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.classify(y[:, -1])


def export(module, example, path, output_axes):
    torch.onnx.export(module.eval(), (example,), str(path), opset_version=14,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {1: "seq"}, "y": output_axes})


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    torch.manual_seed(0)
    export(Encoder(), torch.randn(1, 32, 64), out / "torch_encoder.onnx", {1: "seq"})
    export(KeywordSpotter(), torch.randn(1, 49, 10), out / "torch_lstm.onnx", {})
    return 0


if __name__ == "__main__":
    sys.exit(main())
