"""The whole-graph format choice (format_choice.py): per component of format-agnostic ops, the
labelling with the least modeled conversion time, under the follow rules' own conditions.

- a residual add whose skip arrives logical and whose result leaves logical computes in NCHW: one
  TransData (the conv's result) instead of the greedy sweep's two around the add;
- on random conv graphs the outputs equal those before the pass, and the conversions' modeled time
  is never above the greedy choice's (hypothesis);
- a component above max-component-ops keeps the greedy choice and says so.
The mutations drop what the program rests on (the readers outside a component, the one-mode
constraint) and see the choice get worse than the greedy one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.target_attr import module_target
from ge.interpreter.runner import run
from ge.passes import remarks
from ge.passes.fusion.cost import CostModel
from ge.passes.layout import format_choice
from ge.passes.layout.assign_formats import AssignFormatsPass
from ge.passes.layout.format_choice import ConversionCost
from ge.target import load_target
from ge.tools.common import parse_module
from ge.tools.ge_run import random_inputs

RESIDUAL = """
builtin.module attributes {ge.target = #ge.target<"ascend910">} {
func.func @main(%x: tensor<1x16x8x8xf32>, %y: tensor<1x16x8x8xf32>) -> tensor<1x1024xf32> {
  %w = ge.constant dense<5.000000e-01> : tensor<16x16x1x1xf32>
  %c = ge.conv %x, %w : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32> loc("/conv")
  %a = ge.add %c, %y : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("/add")
  %r = ge.relu %a : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> loc("/relu")
  %s = ge.constant dense<[1, 1024]> : tensor<2xi64>
  %f = ge.reshape %r, %s : (tensor<1x16x8x8xf32>, tensor<2xi64>) -> tensor<1x1024xf32> loc("/flatten")
  func.return %f : tensor<1x1024xf32>
}
}
"""
"""On the 910, whose TransDataTo5HD takes no f32: every conversion here is a kernel of its own (on
the 910B the add would convert the skip in its UB, and either choice would compute it in NC1HWC0)."""


def _assigned(ir: str, **options):
    module = parse_module(ir, "<test>")
    AssignFormatsPass(**options).apply(None, module)
    module.verify()
    return module


def _trans_data(module) -> list[ge.TransDataOp]:
    return [op for op in module.walk() if isinstance(op, ge.TransDataOp)]


def _inputs(module) -> dict[str, np.ndarray]:
    return random_inputs(module, seed=0)


_COSTS = {name: ConversionCost(CostModel(load_target(name))) for name in ("ascend910", "ascend910b")}


def conversion_us(module) -> float:
    """The modeled time of the module's TransData, as the choice weighs it on the module's target."""
    cost = _COSTS[module_target(module) or "ascend910b"]
    return sum(cost(td.src, td.src.type, td.dst.type) for td in _trans_data(module))


def test_a_residual_leaving_logical_converts_once_before_the_add():
    whole, greedy = _assigned(RESIDUAL), _assigned(RESIDUAL, choice="greedy")
    assert len(_trans_data(whole)) == 3  # x and w into the conv, its result out
    assert len(_trans_data(greedy)) == 4  # ... and y in, the relu's result out instead of the conv's
    assert conversion_us(whole) < conversion_us(greedy)
    (add,) = [op for op in whole.walk() if isinstance(op, ge.AddOp)]
    assert isinstance(add.operands[0].owner, ge.TransDataOp)  # the conv's result, converted once


def test_the_residual_remarks_say_the_choice():
    with remarks.collected() as found:
        _assigned(RESIDUAL)
    lines = [str(r) for r in found]
    assert any(
        "rejected elementwise on [/add]" in line and "the whole-graph choice computes it in its origin format" in line
        for line in lines
    ), lines
    assert any("insert on [/add]" in line and "the whole-graph choice" in line for line in lines), lines


def test_the_residual_outputs_are_those_before_the_pass():
    inputs = _inputs(parse_module(RESIDUAL, "<test>"))
    want = run(parse_module(RESIDUAL, "<test>"), inputs)
    got = run(_assigned(RESIDUAL), inputs)
    for key, value in want.items():
        np.testing.assert_array_equal(got[key], value)


def test_a_component_above_the_limit_is_placed_greedily_with_a_remark():
    with remarks.collected() as found:
        limited = _assigned(RESIDUAL, max_component_ops=1)
    assert len(_trans_data(limited)) == len(_trans_data(_assigned(RESIDUAL, choice="greedy")))
    assert any("more than max-component-ops=1: their formats are chosen op by op" in str(r) for r in found)


def test_an_unknown_choice_is_one_line():
    with pytest.raises(DiagnosticException, match=r"^assign-formats: choice=best is not one of whole-graph, greedy$"):
        _assigned(RESIDUAL, choice="best")


# -- random conv graphs --------------------------------------------------------------------------------

T = "tensor<1x16x4x4xf32>"
UNARY = ("relu", "sigmoid", "neg", "abs")


@st.composite
def conv_graphs(draw) -> str:
    """A random graph of 1x1 convs (NC1HWC0 anchors), elementwise ops (followers), transposes of H
    and W (no rule: logical) and a reduce-mean over H and W broadcast back (a squeeze-excite
    scale), on [1, 16, 4, 4]; some values are outputs."""
    lines = ["  %w = ge.constant dense<1.250000e-01> : tensor<16x16x1x1xf32>"]
    lines.append("  %hw = ge.constant dense<[2, 3]> : tensor<2xi64>")
    values = ["%x", "%y"]
    for i in range(draw(st.integers(3, 12))):
        kind = draw(st.sampled_from(("conv", "unary", "add", "mul", "transpose", "scale")))
        a = draw(st.sampled_from(values))
        name = f"%v{i}"
        if kind == "conv":
            lines.append(f"  {name} = ge.conv {a}, %w : ({T}, tensor<16x16x1x1xf32>) -> {T}")
        elif kind == "unary":
            op = draw(st.sampled_from(UNARY))
            lines.append(f"  {name} = ge.{op} {a} : ({T}) -> {T}")
        elif kind in ("add", "mul"):
            b = draw(st.sampled_from(values))
            lines.append(f"  {name} = ge.{kind} {a}, {b} : ({T}, {T}) -> {T}")
        elif kind == "transpose":
            lines.append(f"  {name} = ge.transpose {a} {{perm = array<i64: 0, 1, 3, 2>}} : ({T}) -> {T}")
        else:
            s = f"%s{i}"
            lines.append(
                f"  {s} = ge.reduce_mean {a}, axes = %hw {{keepdims = 1 : i64}} : ({T}, tensor<2xi64>) "
                "-> tensor<1x16x1x1xf32>"
            )
            lines.append(f"  {name} = ge.mul {a}, {s} : ({T}, tensor<1x16x1x1xf32>) -> {T}")
        values.append(name)
    outputs = sorted(set([values[-1], *draw(st.lists(st.sampled_from(values[2:]), max_size=2))]))
    types = ", ".join([T] * len(outputs))
    head = f"func.func @main(%x: {T}, %y: {T}) -> ({types}) {{"
    return "\n".join([head, *lines, f"  func.return {', '.join(outputs)} : {types}", "}"])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_graphs())
def test_random_graphs_keep_their_outputs_and_convert_no_longer_than_greedily(ir):
    inputs = _inputs(parse_module(ir, "<test>"))
    want = run(parse_module(ir, "<test>"), inputs)
    with remarks.collected() as found:
        whole = _assigned(ir)
    assert not [r for r in found if r.kind == "note"], "the sweep refused a choice its rule had allowed"
    got = run(whole, inputs)
    for key, value in want.items():
        np.testing.assert_allclose(got[key], value, rtol=1e-6, atol=1e-6)
    assert conversion_us(whole) <= conversion_us(_assigned(ir, choice="greedy")) + 1e-9, ir


# -- mutations ---------------------------------------------------------------------------------------


def test_mutation_without_the_readers_outside_the_choice_keeps_the_format_to_the_end(monkeypatch):
    monkeypatch.setattr(format_choice.FormatChoice, "_needs", lambda self, value, inside: [])
    assert len(_trans_data(_assigned(RESIDUAL))) == 4  # what the first test refuses


def test_mutation_with_conversions_free_the_format_flows_on_as_greedily(monkeypatch):
    monkeypatch.setattr(format_choice.ConversionCost, "__call__", lambda self, value, source, target: 0.0)
    assert len(_trans_data(_assigned(RESIDUAL))) == 4  # only the tie-breaker left: carry the format


def test_mutation_taking_the_least_chosen_mode_converts_more(monkeypatch):
    monkeypatch.setattr(format_choice.np, "argmax", np.argmin)  # each op's other mode
    assert len(_trans_data(_assigned(RESIDUAL))) == 4  # what the first test refuses


def test_ge_optimize_refuses_an_unknown_layout_choice_in_one_line():
    from ge.passes.ge_optimize import GeOptimizePass

    with pytest.raises(
        DiagnosticException, match=r"^ge-optimize: layout_choice 'best' is not one of whole-graph, greedy$"
    ):
        GeOptimizePass(layout_choice="best").sub_passes()


def test_mutation_modes_the_rules_did_not_allow_are_refused_in_the_sweep_with_a_note(monkeypatch):
    """A concat at channel offset 12 has no NC1HWC0 mode; a choice that gives it one anyway is
    refused by concat-channels in the sweep, and the pass says so."""
    unaligned = """
func.func @main(%x: tensor<1x8x4x4xf32>) -> tensor<1x16x4x4xf32> {
  %w = ge.constant dense<1.250000e-01> : tensor<12x8x1x1xf32>
  %v = ge.constant dense<2.500000e-01> : tensor<20x8x1x1xf32>
  %u = ge.constant dense<5.000000e-01> : tensor<16x32x1x1xf32>
  %a = ge.conv %x, %w : (tensor<1x8x4x4xf32>, tensor<12x8x1x1xf32>) -> tensor<1x12x4x4xf32>
  %b = ge.conv %x, %v : (tensor<1x8x4x4xf32>, tensor<20x8x1x1xf32>) -> tensor<1x20x4x4xf32>
  %c = ge.concat %a, %b {axis = 1 : i64} : (tensor<1x12x4x4xf32>, tensor<1x20x4x4xf32>) -> tensor<1x32x4x4xf32> loc("/concat")
  %e = ge.conv %c, %u : (tensor<1x32x4x4xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x4x4xf32>
  func.return %e : tensor<1x16x4x4xf32>
}
"""
    with remarks.collected() as found:
        _assigned(unaligned)
    assert not [r for r in found if r.kind == "note"]

    def allowed(self, op, rule, storage, tensors, results):
        return format_choice.Mode(
            storage,
            {v: format_choice.with_storage(v.type, storage) for v in tensors},
            {},
            {r: format_choice.with_storage(r.type, storage) for r in results},
        )

    monkeypatch.setattr(format_choice.FormatChoice, "_mode_in", allowed)
    with remarks.collected() as found:
        _assigned(unaligned)
    (note,) = [str(r) for r in found if r.kind == "note"]
    assert "note whole-graph on [/concat]: chosen for NC1HWC0, but ge.concat '/concat' does not carry" in note
