"""A board target: every call boots the model under the target's QEMU through
`cuvilc run`; the outputs match ONNX Runtime's and the run's counters are
reported."""

import numpy as np

import cuvil
from conftest import assert_matches_reference


def test_u74_mc_call_through_qemu(case, tmp_path):
    c = case("cnn")
    fn = cuvil.compile(c.onnx, target="u74-mc")
    assert fn.last_run is None
    assert_matches_reference(c, fn(*c.inputs))
    run = fn.last_run
    assert run.instructions > 0 and run.cycles >= run.instructions
    assert run.arena_bytes == fn.arena_bytes and run.weight_bytes == fn.weight_bytes
    # The deterministic counter: the same input runs the same instructions.
    fn(*c.inputs)
    assert fn.last_run.instructions == run.instructions
    fn.save(tmp_path / "cnn.cuv")
    again = cuvil.load(tmp_path / "cnn.cuv")
    np.testing.assert_array_equal(again(*c.inputs), fn(*c.inputs))


def test_optional_inputs_on_a_board(case):
    """An optional input left out (None) reaches the board as NULL
    (`cuvilc run --input none`)."""
    c = case("torch_vad_8k_fresh_h")
    fn = cuvil.compile(c.onnx, target="u74-mc", dims=c.manifest["dims"])
    assert c.inputs[2] is None
    assert_matches_reference(c, fn(*c.inputs))


def test_quantized_board_model_survives_save_and_load(case, tmp_path):
    """A board model quantized from calibration arrays keeps its QDQ model:
    after load() (the arrays long gone) it still boots, with the same result."""
    c = case("cnn")
    rng = np.random.default_rng(5)
    samples = [rng.standard_normal(c.inputs[0].shape).astype(np.float32) for _ in range(8)]
    fn = cuvil.compile(c.onnx, target="u74-mc", quantize="int8", calibrate=samples)
    host = cuvil.compile(c.onnx, quantize="int8", calibrate=samples)
    y = fn(*c.inputs)
    np.testing.assert_allclose(y, host(*c.inputs), atol=1e-6)
    fn.save(tmp_path / "q.cuv")
    del fn
    np.testing.assert_array_equal(cuvil.load(tmp_path / "q.cuv")(*c.inputs), y)


def test_profile_of_a_board_call(case):
    """profile=True on a board: the last call's per-layer cycles and
    instructions, adding up to (almost all of) the whole run."""
    c = case("cnn")
    fn = cuvil.compile(c.onnx, target="a78", profile=True)
    assert_matches_reference(c, fn(*c.inputs))
    prof = fn.profile
    assert prof["runs"] == 1 and prof["counters"] == ["cycles", "instructions"]
    assert [s["node"] for s in prof["steps"]][0] == "conv1"
    total = sum(s["instructions"] for s in prof["steps"])
    assert 0.98 * fn.last_run.instructions <= total <= fn.last_run.instructions
