"""fuse-trans-data: a TransData between ND and FRACTAL_NZ joins the kernel next to it on a target
whose MTE converts on the move (the 910B), keeps the numbers, and is timed in that kernel: free on
the 910B, Vector work on the 910. Views join on every target, and so does a conversion beside a
copy kernel (a transpose: one copy for both index maps). GPT-2 (small) is compiled at O3 up to the pass and run before and
after it, at the ge level and lowered to streams."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ge.device import engines
from ge.device.ir_work import ops_work, work_time
from ge.ge_dialects import fused, ge
from ge.ge_dialects.ge.weights import clone_with_weights
from ge.interpreter.runner import run
from ge.passes import remarks
from ge.passes.fuse_trans_data import FuseTransDataPass
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import load_target
from ge.tools.common import make_context, parse_module

LOWER = "lower-to-tasks,plan-memory,lower-to-streams{streams=2}"

MATMUL_IR = """
func.func @main(%x: tensor<32x64xf32>, %w: tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<48x32xf32> {
  %nz = ge.trans_data %x {src_format = "ND", dst_format = "FRACTAL_NZ"} : (tensor<32x64xf32>) -> tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %m = ge.matmul %nz, %w : (tensor<32x64xf32, #ge.fmt<ND, FRACTAL_NZ>>, tensor<64x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %r = ge.relu %m : (tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>
  %nd = ge.trans_data %r {src_format = "FRACTAL_NZ", dst_format = "ND"} : (tensor<32x48xf32, #ge.fmt<ND, FRACTAL_NZ>>) -> tensor<32x48xf32>
  %t = ge.transpose %nd {perm = array<i64: 1, 0>} : (tensor<32x48xf32>) -> tensor<48x32xf32>
  func.return %t : tensor<48x32xf32>
}
"""


def _fused(ir: str = MATMUL_IR, target: str = "ascend910b"):
    module = parse_module(ir, "<test>")
    FuseTransDataPass(target=target).apply(make_context(), module)
    module.verify()
    return module


def _trans_data(module) -> list[ge.TransDataOp]:
    """The TransData left as kernels of their own (not inside a group)."""
    return [
        op for op in module.walk() if isinstance(op, ge.TransDataOp) and not isinstance(op.parent_op(), fused.GroupOp)
    ]


@pytest.fixture(scope="module")
def gpt2_split(references):
    """(before, after): GPT-2 (small) at O3 up to fuse-trans-data, and after it."""
    passes = GeOptimizePass(level=3).sub_passes()
    at = next(i for i, p in enumerate(passes) if isinstance(p, FuseTransDataPass))
    before = clone_with_weights(references.module("gpt2"))
    apply_all(make_context(), before, passes[:at])
    after = clone_with_weights(before)
    apply_all(make_context(), after, passes[at:])
    return before, after


def test_gpt2_loses_its_nd_nz_trans_data_and_keeps_its_outputs(gpt2_split, references):
    before, after = gpt2_split
    nd_nz = [op for op in _trans_data(before) if op.converts_nd_nz()]
    assert len(nd_nz) >= 6  # around the head reshapes of two layers
    assert [op for op in _trans_data(after) if op.converts_nd_nz()] == []
    _, inputs = references.model("gpt2")
    expected = run(before, inputs)
    got = run(after, inputs)
    for name, value in expected.items():
        np.testing.assert_array_equal(got[name], value)  # the same arithmetic, in the same layouts


def test_gpt2_stream_level_equals_the_ge_level(gpt2_split, references):
    _, after = gpt2_split
    _, inputs = references.model("gpt2")
    lowered = clone_with_weights(after)
    apply_all(make_context(), lowered, parse_passes(LOWER))
    expected = run(after, inputs)
    got = run(lowered, inputs)
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-6, atol=1e-6)


def test_the_conversions_join_the_matmul_and_the_transpose():
    module = _fused()
    assert _trans_data(module) == []
    groups = [op for op in module.walk() if isinstance(op, fused.GroupOp)]
    assert [(g.pattern.data, g.rule.data) for g in groups] == [
        ("cube+elementwise", "with_trans_data"),
        ("elementwise", "with_trans_data"),
    ]


def test_a_cube_op_with_its_conversion_is_a_cube_kernel_timed_as_the_load():
    module = _fused()
    group = next(op for op in module.walk() if isinstance(op, fused.GroupOp))
    members = group.members
    assert engines.group_engine(group.pattern.data, members) == "cube"
    work = ops_work(members, list(group.inputs), list(group.results), "cube", 1)
    assert work.moved_layout_elems == 32 * 64
    alone = ops_work([m for m in members if not isinstance(m, ge.TransDataOp)], [], [], "cube", 1)
    assert work.vector_elems == alone.vector_elems  # the conversion is no Vector work of its own
    free = work_time(work, load_target("ascend910b"))
    on_the_vector = work_time(work, load_target("ascend910"))
    without = dataclasses.replace(work, moved_layout_elems=0)
    assert free == pytest.approx(work_time(without, load_target("ascend910b")))
    assert on_the_vector > work_time(without, load_target("ascend910"))


def test_a_trans_data_inside_a_kernel_is_not_a_conversion_on_the_move():
    """Between two members (a relu's result read by a transpose) the layout changes in the UB."""
    module = parse_module(MATMUL_IR, "<test>")
    ops = list(module.walk())
    relu, transpose = (next(op for op in ops if isinstance(op, c)) for c in (ge.ReluOp, ge.TransposeOp))
    nd = next(op for op in ops if isinstance(op, ge.TransDataOp) and op.p("src_format") == "FRACTAL_NZ")
    assert engines.boundary_conversions([relu, nd, transpose]) == []
    assert engines.boundary_conversions([relu, nd]) == [nd]  # it writes the kernel's output
    assert engines.boundary_conversions([nd]) == []  # a TransData kernel of its own


def test_on_the_910_only_the_copy_takes_its_conversion():
    """No ND2NZ on the 910's MTE: the matmul's input stays a TransData kernel; the NZ -> ND before
    the transpose is done in the transpose's copy."""
    module = _fused(target="ascend910")
    (left,) = _trans_data(module)
    assert left.p("dst_format") == "FRACTAL_NZ"
    groups = [op for op in module.walk() if isinstance(op, fused.GroupOp)]
    assert [g.pattern.data for g in groups] == ["elementwise"]


NC1HWC0_IR = """
func.func @main(%y: tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x2x2xf32, #ge.fmt<NCHW>> {
  %r = ge.relu %y : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
  %c = ge.trans_data %r {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x16x4x4xf32, #ge.fmt<NCHW>>
  %m = ge.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x16x2x2xf32, #ge.fmt<NCHW>>
  func.return %m : tensor<1x16x2x2xf32, #ge.fmt<NCHW>>
}
"""


def test_a_blocked_to_nchw_conversion_beside_no_copy_stays_a_kernel():
    """A max pool compares values (CopiesElements, not MovesData): no copy to join; and the 910's
    TransDataTo5HD takes no f32, so neither the relu nor the pool converts it in the UB."""
    assert len(_trans_data(_fused(NC1HWC0_IR, "ascend910"))) == 1


def _half(ir: str) -> str:
    return ir.replace("xf32", "xf16")


def test_a_conversion_beside_a_vector_kernel_joins_it_where_transdata_to_5hd_takes_the_width():
    """NCHW <-> NC1HWC0 next to a Vector kernel is done in its UB by TransDataTo5HD: f32 on the
    910B, f16 on both targets; the 910's f32 stays a kernel."""
    assert _trans_data(_fused(NC1HWC0_IR, "ascend910b")) == []
    assert _trans_data(_fused(_half(NC1HWC0_IR), "ascend910")) == []
    with remarks.collected() as found:
        assert len(_trans_data(_fused(NC1HWC0_IR, "ascend910"))) == 1
    assert any("TransDataTo5HD takes elements of at most 16 bits here, not 32" in str(r) for r in found)


def test_a_conversion_joined_to_a_vector_kernel_is_its_vector_work():
    module = _fused(NC1HWC0_IR, "ascend910b")
    (group,) = [op for op in module.walk() if isinstance(op, fused.GroupOp)]
    conversions = [m for m in group.members if isinstance(m, ge.TransDataOp)]
    assert len(conversions) == 1 and any(isinstance(m, ge.MaxPoolOp) for m in group.members)  # a prologue
    work = ops_work(group.members, list(group.inputs), list(group.results), "vector", 1)
    pool = sum(m.vector_elements() for m in group.members if isinstance(m, ge.MaxPoolOp))
    assert work.vector_elems == pool + 16 * 4 * 4 and work.moved_layout_elems == 0  # the conversion's own work


def test_mutation_a_conversion_not_taken_for_5hd_stays_beside_a_vector_kernel(monkeypatch):
    monkeypatch.setattr(ge.TransDataOp, "converts_5hd", lambda self: False)
    assert len(_trans_data(_fused(NC1HWC0_IR, "ascend910b"))) == 1


def test_mutation_a_join_blind_to_the_element_width_converts_f32_on_the_910(monkeypatch):
    monkeypatch.setattr("ge.passes.fuse_trans_data.element_bits", lambda td: 8)
    assert _trans_data(_fused(NC1HWC0_IR, "ascend910")) == []


def test_a_conversion_beside_a_copy_joins_it_on_every_target():
    ir = NC1HWC0_IR.replace(
        "ge.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}",
        "ge.transpose %c {perm = array<i64: 0, 1, 3, 2>}",
    ).replace("1x16x2x2xf32", "1x16x4x4xf32")
    for target in ("ascend910", "ascend910b"):
        assert _trans_data(_fused(ir, target)) == []


VIEW_IR = """
func.func @main(%y: tensor<1x@Cx1x1xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x@Cx1x1xf32, #ge.fmt<NCHW>> {
  %r = ge.relu %y : (tensor<1x@Cx1x1xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x@Cx1x1xf32, #ge.fmt<NCHW, NC1HWC0>>
  %c = ge.trans_data %r {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x@Cx1x1xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x@Cx1x1xf32, #ge.fmt<NCHW>>
  %s = ge.sigmoid %c : (tensor<1x@Cx1x1xf32, #ge.fmt<NCHW>>) -> tensor<1x@Cx1x1xf32, #ge.fmt<NCHW>>
  func.return %s : tensor<1x@Cx1x1xf32, #ge.fmt<NCHW>>
}
"""


def _view(channels: int) -> str:
    return VIEW_IR.replace("@C", str(channels))


def test_pooled_features_in_whole_blocks_are_a_view_that_joins_on_every_target():
    for target in ("ascend910", "ascend910b"):
        assert _trans_data(_fused(_view(16), target)) == []


def test_pooled_features_in_a_padded_block_are_converted():
    """12 channels of f32 fill one and a half C0 = 8 blocks: the NC1HWC0 array is padded."""
    assert len(_trans_data(_fused(_view(12), "ascend910"))) == 1


def test_which_conversions_are_views():
    def trans_data(shape, src, dst):
        ir = f"""
func.func @main(%x: tensor<{shape}xf32, #ge.fmt<ND, {src}>>) -> tensor<{shape}xf32> {{
  %y = ge.trans_data %x {{src_format = "{src}", dst_format = "{dst}"}} : (tensor<{shape}xf32, #ge.fmt<ND, {src}>>) -> tensor<{shape}xf32>
  func.return %y : tensor<{shape}xf32>
}}"""
        return next(op for op in parse_module(ir, "<test>").walk() if isinstance(op, ge.TransDataOp))

    assert trans_data("32x8", "FRACTAL_NZ", "ND").is_view()  # one column of two whole fractals (C0 = 8)
    assert not trans_data("24x8", "FRACTAL_NZ", "ND").is_view()  # padded rows
    assert not trans_data("32x16", "FRACTAL_NZ", "ND").is_view()  # two column blocks, interleaved


# -- mutations: each check above catches the thing it guards ----------------------------------------


def test_mutation_a_pass_that_ignores_the_target_changes_the_910(monkeypatch):
    monkeypatch.setattr("ge.passes.fuse_trans_data.module_pass_target", lambda *a: load_target("ascend910b"))
    assert len(_trans_data(_fused(target="ascend910"))) != 1


def test_mutation_taking_every_conversion_for_nd_nz_joins_the_nc1hwc0_one(monkeypatch):
    monkeypatch.setattr(ge.TransDataOp, "converts_5hd", lambda self: False)  # the 910B's UB join aside
    monkeypatch.setattr(ge.TransDataOp, "converts_nd_nz", lambda self: True)
    assert len(_trans_data(_fused(NC1HWC0_IR))) != 1


def test_mutation_a_910_whose_mte_converted_on_the_move_would_charge_nothing():
    """The 910's extra time above comes from the target's fact, not from the work record alone."""
    module = _fused()
    group = next(op for op in module.walk() if isinstance(op, fused.GroupOp))
    work = ops_work(group.members, list(group.inputs), list(group.results), "cube", 1)
    without = dataclasses.replace(work, moved_layout_elems=0)
    a910 = load_target("ascend910")
    converting = dataclasses.replace(a910, mte=dataclasses.replace(a910.mte, nd_nz_on_the_move=True))
    assert work_time(work, converting) == pytest.approx(work_time(without, converting))


def test_mutation_a_view_test_without_the_block_condition_takes_a_padded_array_for_a_view(monkeypatch):
    monkeypatch.setattr(ge.TransDataOp, "is_view", lambda self: True)
    assert _trans_data(_fused(_view(12), "ascend910")) == []


def test_mutation_a_max_pool_taken_for_a_copy_absorbs_the_conversion(monkeypatch):
    monkeypatch.setattr("ge.passes.fuse_trans_data.is_copy", lambda op: isinstance(op, ge.MaxPoolOp))
    assert _trans_data(_fused(NC1HWC0_IR, "ascend910")) == []


@pytest.mark.parametrize("name, left", [("focalnet", 1), ("resnest", 1)])
def test_models_whose_conversions_join_vector_kernels_equal_onnxruntime_on_streams(name, left):
    """FocalNet's gates and ResNeSt's split attention: at O3 on the 910B their conversions join
    Vector kernels (TransDataTo5HD), leaving only the image's; the lowered program still equals
    onnxruntime (the corpus test checks these two at O0 only)."""
    from bench import corpus
    from ge.passes.fusion.census import census

    case = corpus.case(name)
    o3 = corpus.optimized(corpus.imported(case.model), 3)
    assert census(o3).trans_data == left
    assert corpus.outcome(case, corpus.lowered(o3)).ok
