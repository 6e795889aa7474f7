"""The model argument of cuvil.compile(): a path, an onnx.ModelProto or a
torch.nn.Module, written as an .onnx file cuvilc can read, and input_shape
turned into cuvilc's --dim values for the model's symbolic dimensions."""

import os
import pathlib

from ._errors import CuvilError

# The opset torch.onnx exports with: the newest Debian 12's torch (1.13)
# writes and cuvil imports.
TORCH_OPSET = 17


def _is_torch_module(model):
    try:
        import torch
    except ImportError:
        return False
    return isinstance(model, torch.nn.Module)


def _shapes(input_shape):
    """input_shape as a list of tuples, one per input (None: not given)."""
    if input_shape is None:
        return None
    if len(input_shape) and all(isinstance(d, int) for d in input_shape):
        return [tuple(input_shape)]
    return [tuple(s) for s in input_shape]


def write_onnx(model, input_shape, directory):
    """The model as an .onnx file in `directory` (a path is used as is) and
    the name cuvilc derives the C prefix from."""
    if isinstance(model, (str, os.PathLike)):
        path = pathlib.Path(model)
        if not path.is_file():
            raise CuvilError(f"{path}: no such model file")
        return path
    path = pathlib.Path(directory) / "model.onnx"
    if _is_torch_module(model):
        _export_torch(model, _shapes(input_shape), path)
        return path
    if type(model).__name__ == "ModelProto" and hasattr(model, "SerializeToString"):
        path.write_bytes(model.SerializeToString())
        return path
    raise TypeError("cuvil.compile: model must be a path to an .onnx file, an "
                    f"onnx.ModelProto or a torch.nn.Module, not {type(model).__name__}")


def _export_torch(module, shapes, path):
    import torch
    if not shapes:
        raise CuvilError("cuvil.compile: a torch module needs input_shape (the shape "
                         "of the example input torch.onnx.export traces with)")
    examples = tuple(torch.zeros(s, dtype=torch.float32) for s in shapes)
    was_training = module.training
    module.eval()
    try:
        torch.onnx.export(module, examples if len(examples) > 1 else examples[0], str(path),
                          opset_version=TORCH_OPSET,
                          input_names=[f"input_{i}" for i in range(len(examples))])
    except Exception as e:  # torch raises many kinds; the message is what matters
        raise CuvilError(f"torch.onnx.export failed: {e}") from e
    finally:
        module.train(was_training)


def dims_for(onnx_path, input_shape, dims):
    """cuvilc --dim values: `dims` (name -> size) plus those input_shape
    implies for the symbolic dimensions of the model's inputs. A fixed
    dimension input_shape contradicts is an error here, with both shapes."""
    result = dict(dims or {})
    shapes = _shapes(input_shape)
    if not shapes:
        return result
    try:
        import onnx
    except ImportError as e:
        raise CuvilError("input_shape needs the onnx package (Debian python3-onnx) "
                         "to read the model's inputs; pass dims={...} instead") from e
    try:
        graph = onnx.load(str(onnx_path), load_external_data=False).graph
    except Exception as e:
        raise CuvilError(f"{onnx_path}: not a readable ONNX model: {e}") from e
    weights = {t.name for t in graph.initializer}
    inputs = [i for i in graph.input if i.name not in weights]
    if len(shapes) > len(inputs):
        raise CuvilError(f"input_shape gives {len(shapes)} shapes but the model has "
                         f"{len(inputs)} inputs")
    for value, shape in zip(inputs, shapes):
        declared = value.type.tensor_type.shape.dim
        if len(declared) != len(shape):
            raise CuvilError(f"input '{value.name}': input_shape {shape} has rank "
                             f"{len(shape)}, the model's input has rank {len(declared)}")
        for d, size in zip(declared, shape):
            if d.HasField("dim_value"):
                if d.dim_value != size:
                    raise CuvilError(f"input '{value.name}': input_shape {shape} does not "
                                     f"match the model's fixed dimension {d.dim_value}")
            elif d.dim_param:
                if result.setdefault(d.dim_param, size) != size:
                    raise CuvilError(f"dimension '{d.dim_param}' is {result[d.dim_param]} "
                                     f"elsewhere but {size} in input '{value.name}'")
    return result
