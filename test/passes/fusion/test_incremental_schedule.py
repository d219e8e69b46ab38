"""The fusion engine's incremental schedule makes the same groups as rebuilding it after each group.

`Schedule` keeps finish times, remaining paths and the critical-path length up to date locally
after each group (passes/fusion/engine.py). The reference here is the direct schedule: rebuilt
from the whole block after every group. Both runs must give the same IR and remarks, on
random graphs and on the bench models.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from random_graphs import ge_graphs
from xdsl.ir import Block, Operation

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights
from ge.passes import remarks
from ge.passes.fusion import engine
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context, parse_module, print_module


class ReferenceSchedule:
    """The direct schedule: every value computed from the whole block."""

    def __init__(self, block: Block, time: Callable[[Operation], float]):
        order = list(block.ops)
        self.position = {op: i for i, op in enumerate(order)}
        finish: dict = {}
        tail: dict = {}
        for op in order:
            start = max((finish.get(v.owner, 0.0) for v in op.operands), default=0.0)
            finish[op] = start + time(op)
        for op in reversed(order):
            tail[op] = time(op) + max((tail.get(u.operation, 0.0) for r in op.results for u in r.uses), default=0.0)
        self.finish, self.tail = finish, tail
        self.length = max(finish.values(), default=0.0)
        self.stale = False

    def path_through(self, candidate, group_time: float) -> float:
        inside = candidate.member_set()
        ready = max((self.finish.get(v.owner, 0.0) for v in candidate.external_inputs()), default=0.0)
        after = max(
            (self.tail.get(u.operation, 0.0) for v in candidate.outputs for u in v.uses if u.operation not in inside),
            default=0.0,
        )
        return ready + group_time + after


PRE = "infer-shapes,canonicalize-ge,assign-formats"


def fused(text: str, weights, monkeypatch, incremental: bool, pipeline: str) -> tuple[str, list[str]]:
    with monkeypatch.context() as m:
        if not incremental:
            m.setattr(engine, "INCREMENTAL_SCHEDULE", False)
            m.setattr(engine, "Schedule", ReferenceSchedule)
        module = parse_module(text, "<test>")
        if weights is not None:
            attach_weights(module, weights)
        with remarks.collected() as got:
            apply_all(make_context(), module, parse_passes(pipeline))
        return print_module(module), [str(r) for r in got]


def same_both_ways(module, weights, monkeypatch, pipeline="ge-optimize{level=3}") -> int:
    text = print_module(module)
    new = fused(text, weights, monkeypatch, True, pipeline)
    old = fused(text, weights, monkeypatch, False, pipeline)
    assert new[0] == old[0]
    assert new[1] == old[1]
    return sum(r.startswith("remark: fuse-ops: applied") for r in new[1])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ge_graphs(max_ops=30))
def test_random_graphs_fuse_the_same(monkeypatch, graph):
    module, weights, _ = graph
    same_both_ways(module, weights, monkeypatch)


@pytest.mark.parametrize(
    "build",
    [
        lambda: models.gpt2(batch=1, seq=16, layers=3, hidden=32, heads=2, vocab=64),
        lambda: models.bert_base(batch=1, seq=16, layers=2, hidden=32, heads=2, intermediate=64, vocab=64),
        lambda: models.mobilenet_v2(batch=1),
    ],
    ids=["gpt2", "bert", "mobilenet_v2"],
)
def test_models_fuse_the_same(monkeypatch, build):
    module, weights = import_model(build())
    attach_weights(module, weights)
    assert same_both_ways(module, weights, monkeypatch) > 0
