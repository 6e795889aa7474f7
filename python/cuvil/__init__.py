"""cuvil: compile ONNX models (or torch modules) with cuvilc and call them
from Python with numpy arrays, on the host or on a board under QEMU.

    import cuvil, numpy as np
    fn = cuvil.compile("kws.onnx", input_shape=(1, 1, 49, 10), target="host")
    y = fn(np.random.randn(1, 1, 49, 10).astype(np.float32))

See docs/python.md."""

from ._board import RunStats
from ._errors import CuvilError, ToolNotFoundError
from ._model import Model, compile, load  # noqa: A004 (compile is the API's name)
from ._tensor import TensorInfo

__all__ = ["compile", "load", "Model", "TensorInfo", "RunStats", "CuvilError",
           "ToolNotFoundError"]
__version__ = "0.1.0"
