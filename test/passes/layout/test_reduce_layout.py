"""reduce-spatial and reduce-nz: a ReduceMean or ReduceSum carries NC1HWC0 over H and W and
FRACTAL_NZ over any axes but the last (a token mixer's mean over tokens, a sum over the batch),
C0 lanes apart; a reduction along the last axis cuts across the lanes and converts. One op class
with two follow rules: the greedy sweep and the whole-graph choice each pick the rule of the format
that arrives. The mutation drops the axis condition and sees the last-axis mean take FRACTAL_NZ."""

from __future__ import annotations

import numpy as np

from ge.ge_dialects import ge
from ge.ge_dialects.ge.layout import FRACTAL_NZ
from ge.ge_dialects.ge.types import format_of
from ge.interpreter.runner import run
from ge.passes.layout import assign_formats, rules
from ge.passes.layout.assign_formats import AssignFormatsPass
from ge.tools.common import parse_module

IR = """
func.func @main(%x: tensor<32x16x32xf32>, %w: tensor<32x64xf32>, %u: tensor<64x48xf32>) -> (tensor<32x48xf32>, tensor<32x1x64xf32>, tensor<16x64xf32>, tensor<32x16x1xf32>) {
  %rows = ge.constant dense<[1]> : tensor<1xi64>
  %batch = ge.constant dense<[0]> : tensor<1xi64>
  %cols = ge.constant dense<[-1]> : tensor<1xi64>
  %a = ge.matmul %x, %w : (tensor<32x16x32xf32>, tensor<32x64xf32>) -> tensor<32x16x64xf32>
  %m = ge.reduce_mean %a, axes = %rows {keepdims = 0 : i64} : (tensor<32x16x64xf32>, tensor<1xi64>) -> tensor<32x64xf32>
  %h = ge.matmul %m, %u : (tensor<32x64xf32>, tensor<64x48xf32>) -> tensor<32x48xf32>
  %k = ge.reduce_sum %a, axes = %rows {keepdims = 1 : i64} : (tensor<32x16x64xf32>, tensor<1xi64>) -> tensor<32x1x64xf32>
  %b = ge.reduce_sum %a, axes = %batch {keepdims = 0 : i64} : (tensor<32x16x64xf32>, tensor<1xi64>) -> tensor<16x64xf32>
  %c = ge.reduce_mean %a, axes = %cols {keepdims = 1 : i64} : (tensor<32x16x64xf32>, tensor<1xi64>) -> tensor<32x16x1xf32>
  func.return %h, %k, %b, %c : tensor<32x48xf32>, tensor<32x1x64xf32>, tensor<16x64xf32>, tensor<32x16x1xf32>
}
"""
REDUCTIONS = (ge.ReduceMeanOp, ge.ReduceSumOp)


def _assigned(choice: str = "greedy"):
    module = parse_module(IR, "<test>")
    AssignFormatsPass(choice=choice).apply(None, module)
    module.verify()
    return module


def _stored(module) -> list[str | None]:
    found = []
    for op in module.walk():
        if isinstance(op, REDUCTIONS):
            fmt = format_of(op.results[0].type)
            found.append(None if fmt is None else fmt.storage.data)
    return found


def test_rows_and_batch_reductions_stay_fractal_and_a_last_axis_mean_converts():
    assert _stored(_assigned()) == [FRACTAL_NZ, FRACTAL_NZ, FRACTAL_NZ, None]


def test_the_whole_graph_choice_keeps_fractal_only_the_mean_the_next_matmul_reads():
    """The last-axis mean needs the matmul's result in ND: the sums read that conversion and return
    their results as they are, instead of converting them back for the graph's outputs."""
    assert _stored(_assigned("whole-graph")) == [FRACTAL_NZ, None, None, None]


def test_the_outputs_are_those_before_the_pass():
    rng = np.random.default_rng(0)
    inputs = {
        "arg0": rng.standard_normal((32, 16, 32)).astype(np.float32),
        "arg1": rng.standard_normal((32, 64)).astype(np.float32),
        "arg2": rng.standard_normal((64, 48)).astype(np.float32),
    }
    before = run(parse_module(IR, "<test>"), inputs)
    after = run(_assigned("whole-graph"), inputs)
    for name, value in before.items():
        np.testing.assert_allclose(after[name], value, rtol=1e-5, atol=1e-5)


def test_mutation_a_reduction_without_the_axis_condition_cuts_the_lanes(monkeypatch):
    unchecked = rules.follow(
        "reduce-nz", REDUCTIONS, (FRACTAL_NZ,), ("data",), ("reduced",), full_shape=rules.leaves_matrix
    )
    table = tuple(unchecked if r.name == "reduce-nz" else r for r in rules.RULES)
    monkeypatch.setattr(assign_formats, "RULES", table)
    assert _stored(_assigned()) == [FRACTAL_NZ, FRACTAL_NZ, FRACTAL_NZ, FRACTAL_NZ]
