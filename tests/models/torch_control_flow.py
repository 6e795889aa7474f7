#!/usr/bin/python3
"""Export torch_vad.onnx, torch_stream.onnx, torch_until.onnx,
torch_scores.onnx and torch_refine.onnx: models with
the control flow PyTorch's exporter leaves in scripted models, for the
end-to-end tests.

    /usr/bin/python3 tests/models/torch_control_flow.py [OUT_DIR]   (needs python3-torch)

Both are scripted (torch.jit.script), so Python `if`s become ONNX `If`
nodes and `for` loops over a length computed from the input ONNX `Loop`s.

torch_vad, a voice-activity detector like the widely deployed ones it
mimics, has two `If`s:
- a shape test: when the number of samples is not a multiple of 32, the
  input is zero-padded to the next one. The condition depends only on the
  input's length (symbolic dimension `samples`): `--dim samples=N` decides
  it at compile time, and the two branches have different shapes;
- a sample-rate switch: the run-time int64 input `sr` picks the 16 kHz
  network (frames of 32 samples) or the 8 kHz one (frames of 16 samples).
  Both are a Linear projection, a 1-layer LSTM (hidden 32, state h/c as
  inputs and outputs) and a sigmoid of the last step.
Its states are `Optional[Tensor]` arguments, zeros when None (the first
call of a stream): PyTorch exports each as an input of ONNX optional type,
tested by `OptionalHasElement` under an `If` whose else branch reads it
with `OptionalGetElement`. The caller may leave them out (NULL).

torch_stream, a streaming recurrent cell, runs a `Loop` over the input's
frames of 16 samples: its trip count is `samples // 16`, which `--dim`
fixes, and each iteration slices its frame at an offset computed from the
iteration number.

torch_until, an iterative refinement, runs a recurrent cell up to 8 times
and breaks out of the loop once an update changes the state by less than
the float input `limit`. PyTorch exports a `for` loop with a `break` as a
`Loop` with an unbounded trip count (INT64_MAX), a counter carried as a
state and the condition `counter + 1 < 8 and not broken`; the `break`
test is an `If` inside the body. The number of iterations is a run-time
value: 8 when `limit` is 0, fewer when it is larger.

torch_scores, a frame classifier, returns the class scores of every frame
(`every_frame` true) or of the last one only: the run-time `If` gives its
output `y` the shape [1, frames, 4] in one branch and [1, 1, 4] in the
other. The object plans `y` for the larger, and the caller asks for the
shape after the run (cuvil_<name>_output_shape).

torch_refine, an iterative refinement whose caller chooses the number of
steps, runs a recurrent cell `steps` times (the int64 input) and breaks out
early once an update is below `tol`. PyTorch exports it as a `Loop` whose
trip count is unbounded and whose condition compares the counter with the
run-time `steps`: nothing in the model bounds it, so it compiles only with
`--loop-bound /Loop=K`, and a run asking for more than K steps (that does
not break earlier) stops with CUVIL_ERR_LOOP_BOUND.

The exported files are committed beside this script (the build machines
need no PyTorch); rerun this only to change the models.
"""

import pathlib
import sys
from typing import Optional, Tuple

import torch

HERE = pathlib.Path(__file__).resolve().parent


class Detector(torch.nn.Module):
    def __init__(self, frame: int):
        super().__init__()
        self.frame = frame
        self.proj = torch.nn.Linear(frame, 16)
        self.lstm = torch.nn.LSTM(16, 32, batch_first=True)
        self.out = torch.nn.Linear(32, 1)

    def forward(self, x, h, c) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        frames = x.reshape(x.shape[0], -1, self.frame)
        z = torch.relu(self.proj(frames))
        y, (h2, c2) = self.lstm(z, (h, c))
        return torch.sigmoid(self.out(y[:, -1])), h2, c2


class VoiceActivity(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net16k = Detector(32)
        self.net8k = Detector(16)

    def forward(self, x, sr, h: Optional[torch.Tensor] = None, c: Optional[torch.Tensor] = None):
        if x.shape[1] % 32 != 0:
            x = torch.nn.functional.pad(x, [0, 32 - x.shape[1] % 32])
        if h is None:
            h = torch.zeros(1, 1, 32)
        if c is None:
            c = torch.zeros(1, 1, 32)
        if sr == 16000:
            p, h, c = self.net16k(x, h, c)
        else:
            p, h, c = self.net8k(x, h, c)
        return p, h, c


class Stream(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wx = torch.nn.Linear(16, 24)
        self.wh = torch.nn.Linear(24, 24)
        self.out = torch.nn.Linear(24, 4)

    def forward(self, x, h):
        for t in range(x.shape[1] // 16):
            h = torch.tanh(self.wx(x[:, t * 16:(t + 1) * 16]) + self.wh(h))
        return self.out(h), h


class Until(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wx = torch.nn.Linear(8, 16)
        self.wh = torch.nn.Linear(16, 16)
        self.out = torch.nn.Linear(16, 3)

    def forward(self, x, h, limit):
        for _ in range(8):
            h2 = torch.tanh(self.wx(x) + 0.5 * self.wh(h))
            delta = (h2 - h).abs().max()
            h = h2
            if bool(delta < limit):
                break
        return self.out(h), h


class Refine(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wx = torch.nn.Linear(8, 16)
        self.wh = torch.nn.Linear(16, 16)
        self.out = torch.nn.Linear(16, 3)

    def forward(self, x, h, steps, tol):
        for _ in range(int(steps)):
            h2 = torch.tanh(self.wx(x) + 0.5 * self.wh(h))
            delta = (h2 - h).abs().max()
            h = h2
            if bool(delta < tol):
                break
        return self.out(h), h


class Scores(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(8, 16)
        self.out = torch.nn.Linear(16, 4)

    def forward(self, x, every_frame):
        h = torch.tanh(self.enc(x))
        if bool(every_frame):
            y = torch.softmax(self.out(h), dim=-1)
        else:
            y = torch.softmax(self.out(h[:, -1:]), dim=-1)
        return y, h.mean(dim=1)


def main():
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else HERE
    torch.manual_seed(0)
    model = torch.jit.script(VoiceActivity().eval())
    example = (torch.randn(1, 256), torch.tensor(16000), torch.zeros(1, 1, 32), torch.zeros(1, 1, 32))
    # Opset 16: the optional types need 15 at least.
    torch.onnx.export(model, example, str(out / "torch_vad.onnx"), opset_version=16,
                      input_names=["x", "sr", "h", "c"], output_names=["p", "hn", "cn"],
                      dynamic_axes={"x": {1: "samples"}})
    torch.manual_seed(1)
    stream = torch.jit.script(Stream().eval())
    torch.onnx.export(stream, (torch.randn(1, 64), torch.zeros(1, 24)),
                      str(out / "torch_stream.onnx"), opset_version=14,
                      input_names=["x", "h"], output_names=["y", "hn"],
                      dynamic_axes={"x": {1: "samples"}})
    torch.manual_seed(2)
    until = torch.jit.script(Until().eval())
    torch.onnx.export(until, (torch.randn(1, 8), torch.zeros(1, 16), torch.tensor(0.1)),
                      str(out / "torch_until.onnx"), opset_version=14,
                      input_names=["x", "h", "limit"], output_names=["y", "hn"])
    torch.manual_seed(3)
    scores = torch.jit.script(Scores().eval())
    torch.onnx.export(scores, (torch.randn(1, 12, 8), torch.tensor(True)),
                      str(out / "torch_scores.onnx"), opset_version=14,
                      input_names=["x", "every_frame"], output_names=["y", "summary"],
                      dynamic_axes={"x": {1: "frames"}})
    torch.manual_seed(4)
    refine = torch.jit.script(Refine().eval())
    torch.onnx.export(refine, (torch.randn(1, 8), torch.zeros(1, 16), torch.tensor(4), torch.tensor(0.1)),
                      str(out / "torch_refine.onnx"), opset_version=14,
                      input_names=["x", "h", "steps", "tol"], output_names=["y", "hn"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
