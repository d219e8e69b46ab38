"""The op facts and target numbers the training calibration rests on, each with the mutation that
breaks it: batch norm's backward reads its data twice in training mode, a reduction to a small
result splits its input over the Vector cores, and the checkpoint planner weighs recomputed work
with the module's own target."""

from __future__ import annotations

import dataclasses
import math

import pytest
from xdsl.context import Context

from ge.device import engines, ir_work
from ge.device.ir_work import work_time
from ge.ge_dialects import ge
from ge.ge_dialects.ge.norm_grad import BatchNormGradOp
from ge.interpreter.runner import main_function
from ge.passes import checkpoint, checkpoint_budget
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import load_target
from ge.tools.common import parse_module

_BN_GRAD = """
func.func @main(%dy: tensor<8x64x28x28xf32>, %x: tensor<8x64x28x28xf32>, %s: tensor<64xf32>) -> tensor<8x64x28x28xf32> {{
  %dx, %ds, %db = ge.batch_norm_grad %dy, %x, %s, %s, %s {{training_mode = {mode} : i64}} : (tensor<8x64x28x28xf32>, tensor<8x64x28x28xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<8x64x28x28xf32>, tensor<64xf32>, tensor<64xf32>)
  func.return %dx : tensor<8x64x28x28xf32>
}}
"""

_DATA_BYTES = 2 * 8 * 64 * 28 * 28 * 4  # dy and x, f32


def _bn_grad(mode: int) -> BatchNormGradOp:
    fn = main_function(parse_module(_BN_GRAD.format(mode=mode), "bn_grad.mlir"))
    op = next(o for o in fn.body.block.ops if isinstance(o, BatchNormGradOp))
    return op


def _reread(op: BatchNormGradOp) -> int:
    return ir_work.ops_work([op], list(op.operands), list(op.results), "vector", 32).reread_bytes


def check_bn_backward_reads_its_data_twice() -> None:
    assert _reread(_bn_grad(1)) == _DATA_BYTES  # the second pass reads dy and x again
    assert _reread(_bn_grad(0)) == 0  # inference-mode statistics: one pass


def test_bn_backward_reads_its_data_twice_in_training_mode():
    check_bn_backward_reads_its_data_twice()
    op = _bn_grad(1)
    target = load_target("ascend910")
    once = ir_work.ops_work([op], list(op.operands), list(op.results), "vector", 32)
    assert work_time(once, target) > work_time(dataclasses.replace(once, reread_bytes=0), target)


def test_mutation_one_pass_bn_backward_is_caught(monkeypatch):
    monkeypatch.setattr(BatchNormGradOp, "input_passes", lambda self: 1)
    with pytest.raises(AssertionError):
        check_bn_backward_reads_its_data_twice()


_REDUCE = """
func.func @main(%x: tensor<12288x1024xf32>) -> tensor<1024xf32> {
  %axes = ge.constant dense<0> : tensor<1xi64>
  %r = ge.reduce_sum %x, axes = %axes {keepdims = 0 : i64} : (tensor<12288x1024xf32>, tensor<1xi64>) -> tensor<1024xf32>
  func.return %r : tensor<1024xf32>
}
"""


def check_a_reduction_splits_its_input_over_the_cores(target_name: str) -> None:
    """A [12288, 1024] f32 sum over rows (BERT-Large's bias gradients at batch 96, seq 128) has a
    4 KiB result: one slab by its output, 48 MiB by its input, so every Vector core takes a part."""
    target = load_target(target_name)
    fn = main_function(parse_module(_REDUCE, "reduce.mlir"))
    op = next(o for o in fn.body.block.ops if isinstance(o, ge.ReduceSumOp))
    blocks, _ = engines.geometry([op], [op.operands[0]], list(op.results), "vector", target)
    assert blocks == target.cores.vector_core, (blocks, target.cores.vector_core)


@pytest.mark.parametrize("target_name", ["ascend910", "ascend910b"])
def test_a_reduction_splits_its_input_over_the_cores(target_name):
    check_a_reduction_splits_its_input_over_the_cores(target_name)


def test_mutation_a_reduction_sized_by_its_output_is_caught(monkeypatch):
    real = engines.geometry
    monkeypatch.setattr(
        engines, "geometry", lambda members, inputs, outputs, engine, target: real(members, [], outputs, engine, target)
    )
    with pytest.raises(AssertionError):
        check_a_reduction_splits_its_input_over_the_cores("ascend910b")


def test_the_checkpoint_weight_is_the_targets():
    """Cube MACs per Vector element, all cores: the 910's 32 AI cores share one kind of core, the
    910B has 24 Cube and 48 Vector cores."""
    assert checkpoint_budget.vector_weight(load_target("ascend910")) == pytest.approx(16)
    assert checkpoint_budget.vector_weight(load_target("ascend910b")) == pytest.approx(8)


_TRAIN = """
builtin.module attributes {{ge.target = #ge.target<"{target}">}} {{
  func.func @main(%x: tensor<64x128xf32> {{ge.name = "x"}}) -> (tensor<f32> {{ge.name = "loss"}}) {{
    %w1 = ge.constant parameter<"w1"> dense<0.01> : tensor<128x128xf32>
    %w2 = ge.constant parameter<"w2"> dense<0.02> : tensor<128x128xf32>
    %h = ge.matmul %x, %w1 : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
    %a = ge.tanh %h : (tensor<64x128xf32>) -> tensor<64x128xf32>
    %y = ge.matmul %a, %w2 : (tensor<64x128xf32>, tensor<128x128xf32>) -> tensor<64x128xf32>
    %b = ge.tanh %y : (tensor<64x128xf32>) -> tensor<64x128xf32>
    %loss = ge.reduce_mean %b {{keepdims = 0 : i64}} : (tensor<64x128xf32>) -> tensor<f32>
    func.return %loss : tensor<f32>
  }}
}}
"""


def _planner_weight(target_name: str, monkeypatch) -> float:
    seen: list[float] = []
    real = checkpoint_budget.build_problem

    def spy(forward, backward, always, stash, weight):
        seen.append(weight)
        return real(forward, backward, always, stash, weight)

    monkeypatch.setattr(checkpoint_budget, "build_problem", spy)
    module = parse_module(_TRAIN.format(target=target_name), "train.mlir")
    apply_all(Context(), module, parse_passes("autodiff,checkpoint{policy=budget budget_mib=100}"))
    assert len(seen) == 1
    return seen[0]


def check_the_planner_reads_the_modules_target(monkeypatch) -> None:
    for name in ("ascend910", "ascend910b"):
        assert math.isclose(_planner_weight(name, monkeypatch), checkpoint_budget.vector_weight(load_target(name)))


def test_the_checkpoint_planner_weighs_work_with_the_modules_target(monkeypatch):
    check_the_planner_reads_the_modules_target(monkeypatch)


def test_mutation_a_planner_on_a_fixed_target_is_caught(monkeypatch):
    fixed = load_target("ascend910b")
    real = checkpoint.choose_budget
    monkeypatch.setattr(checkpoint, "choose_budget", lambda *args: real(*args[:-1], fixed))
    with pytest.raises(AssertionError):
        check_the_planner_reads_the_modules_target(monkeypatch)
