"""Shared fixtures of the Python package's tests (run by ctest as
`python_api`; see tests/CMakeLists.txt). The package is imported from the
source tree's python/ and drives the cuvilc of the build tree: $CUVILC,
set by ctest. $CUVIL_TEST_MODELS is the e2e models directory (model.onnx,
input_<i>.bin and ONNX Runtime's ref_<i>.bin per model)."""

import json
import os
import pathlib
import sys

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))

# The e2e tests' tolerance against ONNX Runtime (tests/e2e/run_e2e.py).
ATOL = 1e-4
RTOL = 1e-3


@pytest.fixture(scope="session")
def models_dir():
    path = os.environ.get("CUVIL_TEST_MODELS")
    if not path or not pathlib.Path(path).is_dir():
        pytest.fail("CUVIL_TEST_MODELS must name the e2e models directory "
                    "(ctest sets it; build the e2e_models target first)")
    return pathlib.Path(path)


class Case:
    """One e2e model: its file, inputs and ONNX Runtime's outputs."""

    def __init__(self, directory):
        self.dir = directory
        self.onnx = directory / "model.onnx"
        self.manifest = json.loads((directory / "manifest.json").read_text())
        # None: an optional input the case leaves out.
        self.inputs = [None if e.get("absent") else
                       np.fromfile(directory / f"input_{i}.bin", np.dtype(e["dtype"]))
                       .reshape(e["shape"]) for i, e in enumerate(self.manifest["inputs"])]

    def reference(self, index, like):
        """ONNX Runtime's output `index`, shaped as `like`."""
        return np.fromfile(self.dir / f"ref_{index}.bin", like.dtype).reshape(like.shape)


@pytest.fixture(scope="session")
def case(models_dir):
    return lambda name: Case(models_dir / name)


def assert_matches(actual, expected):
    np.testing.assert_allclose(actual, expected, atol=ATOL, rtol=RTOL)


def as_tuple(outputs):
    """A model's result as a tuple (one output comes back as an array)."""
    return outputs if isinstance(outputs, tuple) else (outputs,)


def assert_matches_reference(c, outputs):
    """Every output of a call equals ONNX Runtime's within the tolerance."""
    outputs = as_tuple(outputs)
    assert len(outputs) == len(c.manifest["outputs"])
    for i, y in enumerate(outputs):
        assert_matches(y, c.reference(i, y))
