"""cuvil.compile on the host: paths, ModelProtos and torch modules against
reference outputs; save/load; threads; every kind of bad argument."""

import concurrent.futures
import pathlib
import re
import subprocess

import numpy as np
import onnx
import pytest

import cuvil
from conftest import as_tuple, assert_matches, assert_matches_reference


@pytest.mark.parametrize("name", ["mlp", "cnn", "resblock", "broadcast", "shapes"])
def test_path_matches_onnx_runtime(case, name):
    c = case(name)
    fn = cuvil.compile(c.onnx)
    outs = as_tuple(fn(*c.inputs))
    for info, y in zip(fn.outputs, outs):
        assert y.dtype == info.dtype and y.shape == info.shape
    assert_matches_reference(c, outs)


def test_model_proto_and_named_inputs(case):
    c = case("broadcast")
    proto = onnx.load(str(c.onnx))
    fn = cuvil.compile(proto)
    named = {info.name: x for info, x in zip(fn.inputs, c.inputs)}
    by_name = as_tuple(fn(**named))
    for a, b in zip(by_name, as_tuple(fn(*c.inputs))):
        np.testing.assert_array_equal(a, b)
    assert_matches_reference(c, by_name)


def test_symbolic_dimension_from_input_shape(case):
    """A PyTorch export with a dynamic batch axis: input_shape fixes it."""
    c = case("torch_einsum")
    x = c.inputs[0]
    fn = cuvil.compile(c.onnx, input_shape=x.shape)
    assert fn.inputs[0].shape == x.shape
    assert_matches_reference(c, fn(x))


def test_optional_inputs_left_out(case):
    """torch_vad's LSTM states are Optional[Tensor] arguments: None leaves
    them out (NULL), by position or by not naming them; a required input
    cannot be left out."""
    c = case("torch_vad_16k_fresh")
    fn = cuvil.compile(c.onnx, dims=c.manifest["dims"])
    assert [i.optional for i in fn.inputs] == [False, False, True, True]
    x, sr, h, cell = c.inputs
    assert h is None and cell is None
    assert_matches_reference(c, as_tuple(fn(x, sr, None, None)))
    assert_matches_reference(c, as_tuple(fn(x=x, sr=sr)))
    given = as_tuple(fn(x, sr, np.ones((1, 1, 32), np.float32), None))
    assert not np.array_equal(given[1], as_tuple(fn(x, sr, None, None))[1])
    with pytest.raises(TypeError, match=r"input 0 \('x'\) is None; only an optional input"):
        fn(None, sr, None, None)


def test_loop_bound(case):
    """torch_refine's Loop has no bound of its own: loop_bound= gives one.
    A call within it matches ONNX Runtime; one whose loop would run past it
    raises, naming the status."""
    steps = case("torch_refine_steps")
    fn = cuvil.compile(steps.onnx, loop_bound=steps.manifest["loop_bounds"])
    assert_matches_reference(steps, as_tuple(fn(*steps.inputs)))
    x, h, _, _ = steps.inputs
    with pytest.raises(cuvil.CuvilError, match="CUVIL_ERR_LOOP_BOUND"):
        fn(x, h, np.array(20), np.array(0.0, np.float32))
    with pytest.raises(cuvil.CuvilError, match="--loop-bound /Loop=K"):
        cuvil.compile(steps.onnx)


def test_output_shape_from_a_run_time_branch(case):
    """torch_scores' output y is [1, 10, 4] or [1, 1, 4] as the run-time
    input every_frame picks: each call's array has the branch's shape."""
    every, last = case("torch_scores_all"), case("torch_scores_last")
    fn = cuvil.compile(every.onnx, dims=every.manifest["dims"])
    assert fn.outputs[0].varies and fn.outputs[0].shape == (1, 10, 4)
    y, _ = fn(*every.inputs)
    assert y.shape == (1, 10, 4)
    assert_matches_reference(every, fn(*every.inputs))
    y, _ = fn(*last.inputs)
    assert y.shape == (1, 1, 4)
    assert_matches_reference(last, fn(*last.inputs))


def test_torch_module():
    torch = pytest.importorskip("torch", reason="python3-torch is not installed")
    torch.manual_seed(0)
    module = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Flatten(), torch.nn.Linear(8 * 49 * 10, 12))
    fn = cuvil.compile(module, input_shape=(1, 1, 49, 10))
    x = np.random.default_rng(1).standard_normal((1, 1, 49, 10)).astype(np.float32)
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    assert_matches(fn(x), expected)


def test_int8_quantization_with_calibration_arrays(case):
    """quantize="int8" calibrates on the arrays given and builds the integer
    model: close to the float model, and the report says how it was done."""
    c = case("cnn")
    rng = np.random.default_rng(3)
    shape = c.inputs[0].shape
    samples = [rng.standard_normal(shape).astype(np.float32) for _ in range(16)]
    float_fn = cuvil.compile(c.onnx)
    int8_fn = cuvil.compile(c.onnx, quantize="int8", calibrate=samples)
    quant = int8_fn.report["quantization"]
    assert quant, "the report of a quantized build says how it was quantized"
    want = np.concatenate([float_fn(x) for x in samples])
    got = np.concatenate([int8_fn(x) for x in samples])
    assert not np.array_equal(got, want), "the integer model computes in int8"
    # The CNN's output is a softmax: probabilities within a few hundredths,
    # and the same class on nearly every sample.
    assert np.abs(got - want).max() <= 0.1, np.abs(got - want).max()
    agree = np.mean(got.argmax(axis=1) == want.argmax(axis=1))
    assert agree >= 0.85, agree
    with pytest.raises(cuvil.CuvilError, match="needs calibrate"):
        cuvil.compile(c.onnx, quantize="int8")
    with pytest.raises(TypeError, match="calibrate"):
        cuvil.compile(c.onnx, quantize="int8", calibrate=[1, 2])


def test_save_load_round_trip(case, tmp_path):
    c = case("cnn")
    fn = cuvil.compile(c.onnx)
    fn.save(tmp_path / "cnn.cuv")
    assert not (tmp_path / "cnn.cuv.partial").exists()
    again = cuvil.load(tmp_path / "cnn.cuv")
    assert again.inputs == fn.inputs and again.outputs == fn.outputs
    np.testing.assert_array_equal(again(*c.inputs), fn(*c.inputs))


def test_corrupt_saved_model_is_refused(case, tmp_path):
    fn = cuvil.compile(case("mlp").onnx)
    fn.save(tmp_path / "m.cuv")
    data = bytearray((tmp_path / "m.cuv").read_bytes())
    (tmp_path / "bad.cuv").write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(cuvil.CuvilError, match="not a cuvil model file"):
        cuvil.load(tmp_path / "bad.cuv")
    (tmp_path / "text.cuv").write_text("hello")
    with pytest.raises(cuvil.CuvilError, match="text.cuv"):
        cuvil.load(tmp_path / "text.cuv")


def test_concurrent_calls_from_threads(case):
    """Every thread has its own instance and arenas: results equal the
    sequential ones for different inputs run at the same time."""
    c = case("cnn")
    fn = cuvil.compile(c.onnx)
    rng = np.random.default_rng(7)
    xs = [rng.standard_normal(c.inputs[0].shape).astype(np.float32) for _ in range(16)]
    expected = [fn(x) for x in xs]
    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        for _ in range(4):
            results = list(pool.map(fn, xs))
            for got, want in zip(results, expected):
                np.testing.assert_array_equal(got, want)


def test_non_contiguous_input_is_copied_or_refused(case):
    c = case("mlp")
    fn = cuvil.compile(c.onnx)
    x = c.inputs[0]
    wide = np.zeros((1, 2 * x.shape[1]), np.float32)
    wide[:, ::2] = x
    strided = wide[:, ::2]
    assert not strided.flags.c_contiguous
    np.testing.assert_array_equal(fn(strided), fn(x))
    with pytest.raises(ValueError, match="not C-contiguous"):
        fn(strided, copy=False)
    assert_matches_reference(c, fn(x.tolist()))  # a list is converted


def test_bad_arguments_raise_clear_errors(case, tmp_path):
    c = case("mlp")
    fn = cuvil.compile(c.onnx)
    x = c.inputs[0]
    with pytest.raises(ValueError, match=r"expected shape \(1, 784\), got \(784,\)"):
        fn(x.reshape(784))
    with pytest.raises(TypeError, match="expected dtype float32, got float64"):
        fn(x.astype(np.float64))
    with pytest.raises(TypeError, match="takes 1 inputs"):
        fn(x, x)
    with pytest.raises(TypeError, match="unknown input"):
        fn(nope=x)
    with pytest.raises(cuvil.CuvilError, match="unknown target 'no-such-board'"):
        cuvil.compile(c.onnx, target="no-such-board")
    with pytest.raises(cuvil.CuvilError, match="no such model file"):
        cuvil.compile(tmp_path / "missing.onnx")
    with pytest.raises(TypeError, match="must be a path"):
        cuvil.compile(42)
    with pytest.raises(cuvil.CuvilError, match="input_shape"):
        cuvil.compile(c.onnx, input_shape=(2, 784))
    with pytest.raises(cuvil.CuvilError, match="cuvilc build failed"):
        cuvil.compile(c.onnx, no_such_option=True)
    (tmp_path / "junk.onnx").write_bytes(b"\x08\x07junk")
    with pytest.raises(cuvil.CuvilError, match="junk.onnx"):
        cuvil.compile(tmp_path / "junk.onnx")


def test_version_matches_cuvilc():
    from cuvil import _tool
    out = subprocess.run([_tool.cuvilc(), "--version"], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["cuvilc", cuvil.__version__]


def test_profile_on_the_host(case):
    """profile=True: each thread's table sums its calls; steps are named after
    the layers and their ONNX nodes, and each took time."""
    c = case("cnn")
    fn = cuvil.compile(c.onnx, profile=True)
    assert cuvil.compile(c.onnx).profile is None
    assert_matches_reference(c, as_tuple(fn(*c.inputs)))
    fn(*c.inputs)
    prof = fn.profile
    assert prof["counters"] == ["nanoseconds"] and prof["runs"] == 2
    assert [s["node"] for s in prof["steps"]] == ["conv1", "pool1", "conv2", "pool2", "fc",
                                                  "probs"]
    assert prof["steps"][0]["origins"] == ["conv1", "bn1", "relu1"]
    assert all(s["nanoseconds"] > 0 for s in prof["steps"])
    # Another thread has its own instance, and table.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        assert pool.submit(lambda: fn.profile["runs"]).result() == 0


def test_status_names_come_from_the_runtime_header(case):
    """A failing init or run is reported by the status's name, which the
    build report takes from cuvil/status.h (not a copy in the package)."""
    from cuvil._host import status_name
    fn = cuvil.compile(case("mlp").onnx)
    header = (pathlib.Path(__file__).resolve().parents[2] / "runtime-baremetal" / "include"
              / "cuvil" / "status.h").read_text()
    codes = {m[1]: int(m[2]) for m in re.finditer(r"#define (CUVIL_ERR_\w+) \((-\d+)\)", header)}
    assert codes["CUVIL_ERR_BLOB_CHECKSUM"] == -16
    for name, value in codes.items():
        assert status_name(value, fn.report) == name
    assert status_name(-99, fn.report) == "status -99"
