"""The model's inputs and outputs as cuvilc's build report describes them,
and the checks an argument passes before the model may read it."""

import dataclasses

import numpy as np

# cuvil's element types (ir/DType.cpp names) as numpy dtypes. f16 and bf16
# are stored as 16-bit words; bf16 has no numpy type, so it is uint16.
_NUMPY = {
    "f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": np.uint16,
    "i8": np.int8, "u8": np.uint8, "i16": np.int16, "u16": np.uint16,
    "i32": np.int32, "u32": np.uint32, "i64": np.int64, "u64": np.uint64,
    "bool": np.bool_,
}


@dataclasses.dataclass(frozen=True)
class TensorInfo:
    """One input or output of a compiled model."""
    name: str
    dtype: np.dtype
    shape: tuple
    nbytes: int
    # An input the caller may leave out (None): an ONNX optional input, as
    # PyTorch exports an Optional[Tensor] argument.
    optional: bool = False
    # An output whose shape the branch of an If picks at run time: `shape`
    # is the larger; each call's array has the shape of the branch taken.
    varies: bool = False

    @classmethod
    def from_report(cls, entry):
        if entry["dtype"] not in _NUMPY:
            raise ValueError(f"unknown element type {entry['dtype']}")
        return cls(entry["name"], np.dtype(_NUMPY[entry["dtype"]]),
                   tuple(entry["shape"]), entry["bytes"], entry.get("optional", False),
                   "branch_shapes" in entry)


def check_input(info, value, index, copy):
    """`value` as an array the model can read: the same array when it is
    contiguous, aligned and of the input's dtype and shape; a copy when it
    is not contiguous or aligned (unless copy=False). Wrong dtypes and
    shapes are errors: the model never guesses a conversion. None leaves an
    optional input out (returned as None)."""
    what = f"input {index} ('{info.name}')"
    if value is None:
        if not info.optional:
            raise TypeError(f"{what} is None; only an optional input (an ONNX optional "
                            "type the model tests, PyTorch's Optional[Tensor]) may be left out")
        return None
    if not isinstance(value, np.ndarray):
        try:
            value = np.asarray(value, dtype=info.dtype)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: cannot convert {type(value).__name__} to "
                            f"{info.dtype}: {e}") from e
    if value.dtype != info.dtype:
        raise TypeError(f"{what}: expected dtype {info.dtype}, got {value.dtype} "
                        f"(convert it first, e.g. x.astype(np.{info.dtype}))")
    if value.shape != info.shape:
        raise ValueError(f"{what}: expected shape {info.shape}, got {value.shape}")
    if not (value.flags.c_contiguous and value.flags.aligned):
        if not copy:
            raise ValueError(f"{what}: the array is not C-contiguous and aligned, and "
                             "copy=False forbids copying it (np.ascontiguousarray makes one)")
        value = np.ascontiguousarray(value)
    return value
