"""fuse-trans-data on the 910 (no ND <-> NZ on the move): an attention whose heads are whole
FRACTAL_NZ column blocks (head dim a multiple of C0) loads its q, k and v and stores its output as
the NZ tiles of the projections they are heads of, so the conversions between the projections' NZ
and the heads' ND join the attention kernel and cost nothing there; with a head dim that splits a
C0 block they stay kernels. GPT-2 (one layer, f32: C0 = 8) with head dims 16 and 12; outputs equal
before the passes, at O3 and at the stream level."""

from __future__ import annotations

import numpy as np
import pytest

from ge.device.ir_work import ops_work
from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import fused, ge
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.runner import run
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context

LOWER = "lower-to-tasks,plan-memory,lower-to-streams{streams=2}"
HEAD_DIMS = {16: 64, 12: 48}
"""Head dim -> hidden size at 4 heads."""


def _gpt(head_dim: int):
    model = models.gpt2(batch=1, seq=16, layers=1, hidden=HEAD_DIMS[head_dim], heads=4, vocab=64)
    module, weights = import_model(model)
    attach_weights(module, weights)
    return module, models.random_inputs(model, seed=0)


def _o3(module):
    optimized = clone_with_weights(module)
    GeOptimizePass(level=3, target="ascend910").apply(make_context(), optimized)
    optimized.verify()
    return optimized


@pytest.fixture(scope="module")
def compiled():
    """Per head dim: (imported, O3 on the 910, inputs)."""
    out = {}
    for head_dim in HEAD_DIMS:
        module, inputs = _gpt(head_dim)
        out[head_dim] = module, _o3(module), inputs
    return out


def _lone_trans_data(module) -> list[ge.TransDataOp]:
    return [
        op for op in module.walk() if isinstance(op, ge.TransDataOp) and not isinstance(op.parent_op(), fused.GroupOp)
    ]


def _attention(module) -> fused.GroupOp:
    (group,) = [g for g in module.walk() if isinstance(g, fused.GroupOp) and g.pattern.data == "attention"]
    return group


def test_whole_block_heads_take_their_conversion_into_the_attention(compiled):
    _, o3, _ = compiled[16]
    group = _attention(o3)
    joined = [m for m in group.members if isinstance(m, ge.TransDataOp)]
    assert [(t.p("src_format"), t.p("dst_format")) for t in joined] == [("ND", "FRACTAL_NZ")]  # the merged heads
    # left: the projection's NZ -> ND before the Split of q, k and v (a split is no head)
    assert [(t.p("src_format"), t.p("dst_format")) for t in _lone_trans_data(o3)] == [("FRACTAL_NZ", "ND")]


def test_the_joined_conversion_costs_the_attention_nothing(compiled):
    _, o3, _ = compiled[16]
    group = _attention(o3)
    work = ops_work(group.members, list(group.inputs), list(group.results), "cube+vector", 1)
    assert work.moved_layout_elems == 0


def test_heads_that_split_a_c0_block_keep_their_conversions_as_kernels(compiled):
    _, o3, _ = compiled[12]
    assert not [m for m in _attention(o3).members if isinstance(m, ge.TransDataOp)]
    assert len(_lone_trans_data(o3)) == 2


@pytest.mark.parametrize("head_dim", sorted(HEAD_DIMS))
def test_outputs_equal_before_the_passes_at_o3_and_on_streams(compiled, head_dim):
    imported, o3, inputs = compiled[head_dim]
    want = run(imported, inputs)
    lowered = clone_with_weights(o3)
    apply_all(make_context(), lowered, parse_passes(LOWER))
    for module in (o3, lowered):
        got = run(module, inputs)
        for key, value in want.items():
            np.testing.assert_allclose(got[key], value, rtol=1e-5, atol=1e-5)


# -- mutations ---------------------------------------------------------------------------------------


def test_mutation_taking_every_head_dim_for_whole_blocks_joins_the_split_ones(compiled, monkeypatch):
    monkeypatch.setattr(ge.AttentionOp, "fractal_heads", lambda self: True)
    imported, _, _ = compiled[12]
    assert len(_lone_trans_data(_o3(imported))) == 1  # what the third test refuses


def test_mutation_heads_of_another_matrix_are_not_joined(compiled, monkeypatch):
    monkeypatch.setattr(ge.AttentionOp, "projection", lambda self, head: (None, None))
    imported, _, _ = compiled[16]
    assert len(_lone_trans_data(_o3(imported))) == 2  # the first test's join needs the matrix to agree
