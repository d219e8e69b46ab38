"""Broadcasting in NC1HWC0: an operand stored in NC1HWC0 itself may broadcast along N, H and W (a
squeeze-excite scale [N, C, 1, 1] repeats whole C0 blocks), read in its storage with no TransData;
one that broadcasts along C (inside a block) converts. The mutation tests break each condition.
Both products feed convs, so that carrying NC1HWC0 through them pays wherever it is allowed."""

from __future__ import annotations

import numpy as np

from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import NC1HWC0
from ge.ge_dialects.ge.types import format_of
from ge.interpreter.runner import run
from ge.passes.layout import planning, rules
from ge.passes.layout.assign_formats import AssignFormatsPass
from ge.tools.common import parse_module

IR = """
func.func @main(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x1x1xf32>, %v: tensor<16x16x1x1xf32>, %u: tensor<1x8x1x1xf32>) -> (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) {
  %a = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  %axes = ge.constant dense<[2, 3]> : tensor<2xi64>
  %hw = ge.constant dense<[2, 3]> : tensor<2xi64>
  %p = ge.reduce_mean %a, axes = %hw {keepdims = 1 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<2xi64>) -> tensor<1x16x1x1xf32, #ge.fmt<NCHW>>
  %q = ge.conv %p, %v : (tensor<1x16x1x1xf32, #ge.fmt<NCHW>>, tensor<16x16x1x1xf32>) -> tensor<1x16x1x1xf32, #ge.fmt<NCHW>>
  %s = ge.sigmoid %q : (tensor<1x16x1x1xf32, #ge.fmt<NCHW>>) -> tensor<1x16x1x1xf32, #ge.fmt<NCHW>>
  %m = ge.mul %a, %s : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x1x1xf32, #ge.fmt<NCHW>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  %t = ge.conv %x, %u : (tensor<1x8x4x4xf32>, tensor<1x8x1x1xf32>) -> tensor<1x1x4x4xf32, #ge.fmt<NCHW>>
  %n = ge.mul %a, %t : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1x1x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  %mo = ge.conv %m, %v : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<16x16x1x1xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  %no = ge.conv %n, %v : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<16x16x1x1xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  func.return %mo, %no : tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
}
"""


def _assigned():
    module = parse_module(IR, "<test>")
    AssignFormatsPass().apply(None, module)
    module.verify()
    return module


def _storage(value) -> str | None:
    fmt = format_of(value.type)
    return None if fmt is None else fmt.storage.data


def _muls(module) -> tuple[ge.MulOp, ge.MulOp]:
    scaled, masked = (op for op in module.walk() if isinstance(op, ge.MulOp))
    return scaled, masked


def test_a_channel_scale_stored_in_nc1hwc0_is_read_in_its_storage():
    scaled, _ = _muls(_assigned())
    assert _storage(scaled.results[0]) == NC1HWC0
    assert isinstance(scaled.operands[1].owner, ge.SigmoidOp)  # no TransData between
    assert _storage(scaled.operands[1]) == NC1HWC0


def test_a_broadcast_along_c_inside_a_block_converts():
    _, masked = _muls(_assigned())
    assert _storage(masked.results[0]) != NC1HWC0
    assert isinstance(masked.operands[1].owner, ge.TransDataOp)


def test_the_outputs_are_those_before_the_pass():
    rng = np.random.default_rng(0)
    shapes = {"arg0": (1, 8, 4, 4), "arg1": (16, 8, 1, 1), "arg2": (16, 16, 1, 1), "arg3": (1, 8, 1, 1)}
    inputs = {k: rng.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    before = run(parse_module(IR, "<test>"), inputs)
    after = run(_assigned(), inputs)
    for name, value in before.items():
        np.testing.assert_allclose(after[name], value, rtol=1e-6, atol=1e-6)


# -- mutations ---------------------------------------------------------------------------------------


def test_mutation_without_the_channel_condition_a_broadcast_along_c_stays_blocked(monkeypatch):
    loose = {
        **rules.BROADCASTS,
        NC1HWC0: planning.Broadcast("channel vectors", rules.channel_vector, lambda s, r: True),
    }
    monkeypatch.setattr("ge.passes.layout.assign_formats.BROADCASTS", loose)
    _, masked = _muls(_assigned())
    assert _storage(masked.results[0]) == NC1HWC0  # what the second test refuses


def test_mutation_a_stored_broadcast_left_unannotated_gets_a_trans_data(monkeypatch):
    monkeypatch.setattr(planning, "_stored_broadcasts", lambda op, a, planner: [])
    scaled, _ = _muls(_assigned())
    assert isinstance(scaled.operands[1].owner, ge.TransDataOp)  # what the first test refuses
