"""concat-channels: a concat along C stays NC1HWC0 only when every channel offset is a multiple of
C0 (each operand but the last has C % C0 = 0): a C0 block then holds channels of one operand, and
the concat copies whole C1 blocks. The mutation test builds the rule without that condition and
sees the unaligned concat take NC1HWC0, which the first test refuses."""

from __future__ import annotations

import pytest

from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import NC1HWC0
from ge.ge_dialects.ge.types import format_of
from ge.passes.layout import assign_formats, rules
from ge.passes.layout.assign_formats import AssignFormatsPass
from ge.passes.layout.planning import follow
from ge.tools.common import parse_module

IR = """
func.func @main(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x1x1xf32>, %v: tensor<4x8x1x1xf32>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW>> {
  %a = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  %n = ge.conv %x, %v : (tensor<1x8x4x4xf32>, tensor<4x8x1x1xf32>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW>>
  %c = ge.concat %n, %a {axis = 1 : i64} : (tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x20x4x4xf32, #ge.fmt<NCHW>>
  func.return %c : tensor<1x20x4x4xf32, #ge.fmt<NCHW>>
}
"""


def _concat_storage() -> str | None:
    module = parse_module(IR, "<test>")
    AssignFormatsPass().apply(None, module)
    concat = next(op for op in module.walk() if isinstance(op, ge.ConcatOp))
    fmt = format_of(concat.concat_result.type)
    return None if fmt is None else fmt.storage.data


def test_a_concat_at_an_unaligned_channel_offset_is_not_nc1hwc0():
    assert _concat_storage() != NC1HWC0


def test_mutation_without_the_channel_condition_the_unaligned_concat_takes_nc1hwc0(monkeypatch):
    unchecked = follow(
        "concat-channels",
        (ge.ConcatOp,),
        (NC1HWC0,),
        ("inputs",),
        ("concat_result",),
        full_shape=rules.along_concat_axis,
    )
    table = tuple(unchecked if r.name == "concat-channels" else r for r in rules.RULES)
    monkeypatch.setattr(assign_formats, "RULES", table)
    with pytest.raises(AssertionError):
        test_a_concat_at_an_unaligned_channel_offset_is_not_nc1hwc0()
