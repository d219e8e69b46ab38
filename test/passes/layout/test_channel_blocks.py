"""split-channels and slice-channels: a split or slice of an image along C stays NC1HWC0 only in
whole C0 blocks (each channel offset a multiple of C0; a slice's range ending at a multiple of C0
or at C). Slicing H or W keeps the format. Each mutation test drops one condition and sees an
unaligned op take NC1HWC0, which the tests above refuse; the numbers are those before the pass.
The rules op by op (choice=greedy): the graph's outputs are logical, so the whole-graph choice
converts the conv's result once instead (test_format_choice.py holds it to the same conditions)."""

from __future__ import annotations

import numpy as np

from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import NC1HWC0
from ge.ge_dialects.ge.types import format_of
from ge.interpreter.runner import run
from ge.passes.layout import assign_formats, rules
from ge.passes.layout.assign_formats import AssignFormatsPass
from ge.tools.common import parse_module

IR = """
func.func @main(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x1x1xf32>) -> (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<1x12x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x2x4xf32, #ge.fmt<NCHW>>) {
  %a = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  %s0, %s1 = ge.split %a {axis = 1 : i64, num_outputs = 2 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) -> (tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>)
  %sizes = ge.constant dense<[4, 12]> : tensor<2xi64>
  %u0, %u1 = ge.split %a, split = %sizes {axis = 1 : i64} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<2xi64>) -> (tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<1x12x4x4xf32, #ge.fmt<NCHW>>)
  %c8 = ge.constant dense<8> : tensor<1xi64>
  %c16 = ge.constant dense<16> : tensor<1xi64>
  %c4 = ge.constant dense<4> : tensor<1xi64>
  %c12 = ge.constant dense<12> : tensor<1xi64>
  %one = ge.constant dense<1> : tensor<1xi64>
  %two = ge.constant dense<2> : tensor<1xi64>
  %zero = ge.constant dense<0> : tensor<1xi64>
  %aligned = ge.slice %a, %c8, %c16, axes = %one : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
  %unaligned = ge.slice %a, %c4, %c12, axes = %one : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x8x4x4xf32, #ge.fmt<NCHW>>
  %rows = ge.slice %a, %zero, %two, axes = %two : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x16x2x4xf32, #ge.fmt<NCHW>>
  func.return %s0, %s1, %u0, %u1, %aligned, %unaligned, %rows : tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x4x4x4xf32, #ge.fmt<NCHW>>, tensor<1x12x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x8x4x4xf32, #ge.fmt<NCHW>>, tensor<1x16x2x4xf32, #ge.fmt<NCHW>>
}
"""


def _assigned():
    module = parse_module(IR, "<test>")
    AssignFormatsPass(choice="greedy").apply(None, module)
    module.verify()
    return module


def _storage(value) -> str | None:
    fmt = format_of(value.type)
    return None if fmt is None else fmt.storage.data


def _stored(module, cls) -> list[str | None]:
    return [_storage(op.results[0]) for op in module.walk() if isinstance(op, cls)]


def test_a_split_in_whole_blocks_stays_nc1hwc0_and_an_unaligned_one_converts():
    assert _stored(_assigned(), ge.SplitOp) == [NC1HWC0, "NCHW"]


def test_a_slice_of_whole_channel_blocks_or_of_rows_stays_nc1hwc0():
    assert _stored(_assigned(), ge.SliceOp) == [NC1HWC0, "NCHW", NC1HWC0]


def test_the_outputs_are_those_before_the_pass():
    rng = np.random.default_rng(0)
    inputs = {"arg0": rng.standard_normal((1, 8, 4, 4)).astype(np.float32)}
    inputs["arg1"] = rng.standard_normal((16, 8, 1, 1)).astype(np.float32)
    before = run(parse_module(IR, "<test>"), inputs)
    after = run(_assigned(), inputs)
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value)


# -- mutations ---------------------------------------------------------------------------------------


UNCHECKED = {
    "split-channels": rules.follow(
        "split-channels", (ge.SplitOp,), (NC1HWC0,), ("input",), ("outputs",), full_shape=rules.along_split_axis
    ),
    "slice-channels": rules.follow(
        "slice-channels", (ge.SliceOp,), (NC1HWC0,), ("data",), ("output",), full_shape=rules.same_rank
    ),
}
"""The two rules without their block conditions."""


def _without_condition(monkeypatch, name: str) -> None:
    table = tuple(UNCHECKED[name] if r.name == name else r for r in rules.RULES)
    monkeypatch.setattr(assign_formats, "RULES", table)


def test_mutation_a_split_without_the_block_condition_splits_a_block(monkeypatch):
    _without_condition(monkeypatch, "split-channels")
    assert _stored(_assigned(), ge.SplitOp) == [NC1HWC0, NC1HWC0]


def test_mutation_a_slice_without_the_block_condition_cuts_a_block(monkeypatch):
    _without_condition(monkeypatch, "slice-channels")
    assert _stored(_assigned(), ge.SliceOp) == [NC1HWC0, NC1HWC0, NC1HWC0]
