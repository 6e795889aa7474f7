#!/usr/bin/python3
"""Export torch_source.onnx: a small PyTorch module exported with
verbose=True, so that every ONNX node carries the Python stack it was
traced from in its doc_string (the source locations `cuvilc build
--dump-ir-format json` reports).

    /usr/bin/python3 tests/models/torch_source.py [OUT]   (needs python3-torch)

The exported file is committed beside this script (the build machines need
no PyTorch); rerun this only to change the model. tests/lit/dump-json.test
expects the lines of the forward() below: keep them where they are or
update the test.
"""

import pathlib
import sys

import torch

OUT = pathlib.Path(__file__).resolve().parent / "torch_source.onnx"


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.fc1(x))  # line 30
        return torch.softmax(self.fc2(h), dim=-1)  # line 31


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    torch.manual_seed(0)
    torch.onnx.export(Classifier().eval(), torch.zeros(1, 8), str(out), verbose=True,
                      opset_version=17, input_names=["x"], output_names=["probs"],
                      export_modules_as_functions=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
