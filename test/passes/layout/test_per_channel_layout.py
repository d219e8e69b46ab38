"""Per-channel ops carry NC1HWC0 (instance-norm-nc1hwc0, resize-spatial, pad-spatial), and a concat
whose channel offsets split C0 blocks stays NCHW with its conversions done in its own copy
(fuse-trans-data: Concat and Split move data). The outputs equal those before the passes at the ge
level and at the stream level; each mutation drops one condition and sees what the tests above
refuse. The crop and the channel shift feed convs, so that carrying NC1HWC0 through them would pay
and only their conditions keep them NCHW."""

from __future__ import annotations

import numpy as np
import pytest

from ge.ge_dialects import fused, ge
from ge.ge_dialects.ge.layout import NC1HWC0
from ge.ge_dialects.ge.types import format_of
from ge.interpreter.runner import run
from ge.passes import fuse_trans_data
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.layout import assign_formats, rules
from ge.passes.layout.assign_formats import AssignFormatsPass
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context, parse_module
from ge.tools.ge_run import random_inputs

LOWER = "lower-to-tasks,plan-memory,lower-to-streams{streams=2}"

PER_CHANNEL = """
func.func @main(%x: tensor<1x8x4x4xf32>, %w: tensor<16x8x1x1xf32>, %u: tensor<16x16x1x1xf32>, %g: tensor<16xf32>) -> (tensor<1x16x10x10xf32>, tensor<1x16x8x8xf32>, tensor<1x16x4x4xf32>) {
  %a = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x4x4xf32>
  %n = ge.instance_norm %a, %g, %g : (tensor<1x16x4x4xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<1x16x4x4xf32>
  %s = ge.constant dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>
  %r = ge.resize %n, scales = %s {mode = "linear"} : (tensor<1x16x4x4xf32>, tensor<4xf32>) -> tensor<1x16x8x8xf32>
  %hw = ge.constant dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>
  %p = ge.pad %r, %hw : (tensor<1x16x8x8xf32>, tensor<8xi64>) -> tensor<1x16x10x10xf32>
  %e = ge.conv %p, %u : (tensor<1x16x10x10xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x10x10xf32>
  %roi = ge.constant dense<[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]> : tensor<8xf32>
  %t = ge.resize %a, roi = %roi, scales = %s {coordinate_transformation_mode = "tf_crop_and_resize", mode = "linear"} : (tensor<1x16x4x4xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<1x16x8x8xf32>
  %k = ge.constant dense<[0, 8, 0, 0, 0, -8, 0, 0]> : tensor<8xi64>
  %z = ge.pad %a, %k : (tensor<1x16x4x4xf32>, tensor<8xi64>) -> tensor<1x16x4x4xf32>
  %tc = ge.conv %t, %u : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  %zc = ge.conv %z, %u : (tensor<1x16x4x4xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x4x4xf32>
  func.return %e, %tc, %zc : tensor<1x16x10x10xf32>, tensor<1x16x8x8xf32>, tensor<1x16x4x4xf32>
}
"""

UNALIGNED_CONCAT = """
func.func @main(%x: tensor<1x8x4x4xf32>, %w: tensor<12x8x1x1xf32>, %v: tensor<20x8x1x1xf32>, %u: tensor<16x32x1x1xf32>) -> tensor<1x16x4x4xf32> {
  %a = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<12x8x1x1xf32>) -> tensor<1x12x4x4xf32>
  %b = ge.conv %x, %v : (tensor<1x8x4x4xf32>, tensor<20x8x1x1xf32>) -> tensor<1x20x4x4xf32>
  %c = ge.concat %a, %b {axis = 1 : i64} : (tensor<1x12x4x4xf32>, tensor<1x20x4x4xf32>) -> tensor<1x32x4x4xf32>
  %e = ge.conv %c, %u : (tensor<1x32x4x4xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x4x4xf32>
  func.return %e : tensor<1x16x4x4xf32>
}
"""
"""GhostNet's pattern: two conv outputs concatenated at channel offset 12, not a multiple of C0 = 8."""


def _inputs(module) -> dict[str, np.ndarray]:
    return random_inputs(module, seed=0)


def _assigned(ir: str = PER_CHANNEL):
    module = parse_module(ir, "<test>")
    AssignFormatsPass().apply(None, module)
    module.verify()
    return module


def _stored(module, cls) -> list[str | None]:
    formats = [format_of(op.results[0].type) for op in module.walk() if isinstance(op, cls)]
    return [None if f is None else f.storage.data for f in formats]


def test_instance_norm_resize_and_a_spatial_pad_carry_nc1hwc0():
    module = _assigned()
    assert _stored(module, ge.InstanceNormOp) == [NC1HWC0]
    assert _stored(module, ge.ResizeOp) == [NC1HWC0, None]  # tf_crop_and_resize converts
    assert _stored(module, ge.PadOp) == [NC1HWC0, None]  # the shift along C converts


@pytest.fixture(scope="module")
def compiled():
    """Each IR before the passes, at O3 and at the stream level, on the 910B and the 910."""
    out = {}
    for name, ir in (("per_channel", PER_CHANNEL), ("concat", UNALIGNED_CONCAT)):
        for target in ("ascend910b", "ascend910"):
            o3 = parse_module(ir, "<test>")
            GeOptimizePass(level=3, target=target).apply(make_context(), o3)
            streams = parse_module(ir, "<test>")
            GeOptimizePass(level=3, target=target).apply(make_context(), streams)
            apply_all(make_context(), streams, parse_passes(LOWER))
            out[name, target] = (parse_module(ir, "<test>"), o3, streams)
    return out


@pytest.mark.parametrize("target", ["ascend910b", "ascend910"])
@pytest.mark.parametrize("name", ["per_channel", "concat"])
def test_the_outputs_are_those_before_the_passes(compiled, name, target):
    before, o3, streams = compiled[name, target]
    inputs = _inputs(before)
    want = run(before, inputs)
    for module in (o3, streams):
        got = run(module, inputs)
        for key, value in want.items():
            np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-5)


def _lone_trans_data(module) -> list[ge.TransDataOp]:
    return [
        op for op in module.walk() if isinstance(op, ge.TransDataOp) and not isinstance(op.parent_op(), fused.GroupOp)
    ]


@pytest.mark.parametrize("target", ["ascend910b", "ascend910"])
def test_an_unaligned_concat_does_its_conversions_in_its_own_copy(compiled, target):
    _, o3, _ = compiled["concat", target]
    # only the graph input's and output's conversions stay kernels
    assert [op.p("src_format") for op in _lone_trans_data(o3)] == ["ND", NC1HWC0]
    (copy,) = [
        g for g in o3.walk() if isinstance(g, fused.GroupOp) and any(isinstance(m, ge.ConcatOp) for m in g.members)
    ]
    conversions = [m for m in copy.members if isinstance(m, ge.TransDataOp)]
    assert len(conversions) == 3  # both operands and the result


# -- mutations ---------------------------------------------------------------------------------------


def test_mutation_a_pad_without_its_condition_shifts_channels_in_blocks(monkeypatch):
    unchecked = rules.follow(
        "pad-spatial", (ge.PadOp,), (NC1HWC0,), ("data",), ("output",), full_shape=rules.spatial_only
    )
    monkeypatch.setattr(
        assign_formats, "RULES", tuple(unchecked if r.name == "pad-spatial" else r for r in rules.RULES)
    )
    assert _stored(_assigned(), ge.PadOp) == [NC1HWC0, NC1HWC0]


def test_mutation_a_resize_without_its_condition_takes_the_crop(monkeypatch):
    monkeypatch.setattr(rules, "resizes_spatially", lambda op, options: None)
    unchecked = rules.follow(
        "resize-spatial", (ge.ResizeOp,), (NC1HWC0,), ("X",), ("Y",), full_shape=rules.spatial_only
    )
    monkeypatch.setattr(
        assign_formats, "RULES", tuple(unchecked if r.name == "resize-spatial" else r for r in rules.RULES)
    )
    assert _stored(_assigned(), ge.ResizeOp) == [NC1HWC0, NC1HWC0]


def _o3_lone_trans_data() -> int:
    module = parse_module(UNALIGNED_CONCAT, "<test>")
    GeOptimizePass(level=3).apply(make_context(), module)
    return len(_lone_trans_data(module))


def test_mutation_a_concat_taken_for_no_copy_keeps_its_three_conversions(monkeypatch):
    real = fuse_trans_data.is_copy

    def no_concat(op) -> bool:
        members = op.members if isinstance(op, fused.GroupOp) else [op]
        return real(op) and not any(isinstance(m, ge.ConcatOp) for m in members)

    monkeypatch.setattr(fuse_trans_data, "is_copy", no_concat)
    assert _o3_lone_trans_data() == 5


def test_mutation_a_copy_that_takes_one_conversion_leaves_the_second_operands(monkeypatch):
    real = fuse_trans_data.is_copy
    monkeypatch.setattr(fuse_trans_data, "is_copy", lambda op: not isinstance(op, fused.GroupOp) and real(op))
    assert _o3_lone_trans_data() == 4
