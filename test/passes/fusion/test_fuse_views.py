"""fuse-views: a reshape that moves no byte joins the kernel next to it as addressing. Its kernel
does the work of the others members alone (the view is no Vector work, a Cube kernel stays a Cube
kernel), GPT-2's head reshapes leave its kernel count, and the outputs stay the same at the ge and
the stream level; mutations show the checks catch a view taken for work or a reshape not taken
for a view."""

from __future__ import annotations

import numpy as np
import pytest

from ge.device import engines
from ge.device.ir_work import ops_work
from ge.ge_dialects import fused
from ge.ge_dialects.ge.base import GeOp
from ge.ge_dialects.ge.weights import clone_with_weights
from ge.interpreter.runner import run
from ge.passes.fuse_views import FuseViewsPass
from ge.passes.fusion.census import census
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context, parse_module

MATMUL_RESHAPE = """
func.func @main(%a: tensor<6x8xf32>, %b: tensor<8x4xf32>) -> tensor<2x3x4xf32> {
  %s = ge.constant dense<[2, 3, 4]> : tensor<3xi64>
  %0 = ge.matmul %a, %b : (tensor<6x8xf32>, tensor<8x4xf32>) -> tensor<6x4xf32>
  %1 = ge.reshape %0, %s : (tensor<6x4xf32>, tensor<3xi64>) -> tensor<2x3x4xf32>
  func.return %1 : tensor<2x3x4xf32>
}
"""


def _ops(module):
    return {op.name: op for op in module.walk() if isinstance(op, GeOp)}


def test_a_view_in_a_kernel_is_no_work_and_leaves_a_cube_kernel_a_cube_kernel():
    ops = _ops(parse_module(MATMUL_RESHAPE, "<test>"))
    mm, reshape = ops["ge.matmul"], ops["ge.reshape"]
    assert reshape.is_view() and not mm.is_view()
    alone, joined = (
        ops_work(m, [mm.operands[0], mm.operands[1]], [m[-1].results[0]], "cube", 1) for m in ([mm], [mm, reshape])
    )
    assert (joined.cube_macs, joined.vector_elems) == (alone.cube_macs, alone.vector_elems)
    assert engines.group_engine("cube+elementwise", [mm, reshape]) == "cube"
    assert engines.boundary_conversions([reshape]) == []  # alone it is a copy kernel, with work


def test_mutation_a_view_taken_for_work_is_caught(monkeypatch):
    monkeypatch.setattr(GeOp, "is_view", lambda self: False)
    with pytest.raises(AssertionError):
        test_a_view_in_a_kernel_is_no_work_and_leaves_a_cube_kernel_a_cube_kernel()


def test_the_pass_joins_the_view_and_keeps_the_outputs():
    module = parse_module(MATMUL_RESHAPE, "<test>")
    inputs = {"arg0": np.arange(48, dtype=np.float32).reshape(6, 8), "arg1": np.ones((8, 4), np.float32)}
    before = run(module, inputs)
    FuseViewsPass().apply(make_context(), module)
    module.verify()
    (group,) = [op for op in module.walk() if isinstance(op, fused.GroupOp)]
    assert [m.name for m in group.members if isinstance(m, GeOp)] == ["ge.matmul", "ge.reshape"]
    (want,) = before.values()
    (got,) = run(module, inputs).values()
    np.testing.assert_array_equal(got, want)


@pytest.fixture(scope="module")
def gpt2_split():
    """(model, before, after): transformers' GPT-2 of the corpus at O3 up to fuse-views, and after it."""
    from bench import corpus

    model = corpus.load("gpt2")
    passes = GeOptimizePass(level=3).sub_passes()
    at = next(i for i, p in enumerate(passes) if isinstance(p, FuseViewsPass))
    before = clone_with_weights(corpus.imported(model))
    apply_all(make_context(), before, passes[:at])
    after = clone_with_weights(before)
    apply_all(make_context(), after, passes[at:])
    return model, before, after


def test_gpt2_launches_fewer_kernels_with_the_same_outputs_at_the_stream_level(gpt2_split):
    """The corpus GPT-2 (transformers, eager attention): its reshapes join their kernels."""
    from bench import corpus

    model, before, after = gpt2_split
    assert census(after).kernels <= census(before).kernels - 8
    inputs = corpus.inputs(model)
    expected = run(before, inputs)
    lowered = clone_with_weights(after)
    apply_all(make_context(), lowered, parse_passes("lower-to-tasks,plan-memory,lower-to-streams{streams=2}"))
    got = run(lowered, inputs)
    for name, value in expected.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-5)
