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
