"""fuse-ops and lower-to-streams time kernels with the device model ge-run reports: a candidate's
estimate is the time ge-run's simulator gives the task it becomes."""

import pytest

from ge.ge_dialects import fused, task
from ge.interpreter.device import SimTask, simulate
from ge.interpreter.device.engines import stays_outside_tasks
from ge.interpreter.device.ir_work import kernel_work
from ge.passes.fuse_ops import FuseOpsPass
from ge.passes.fusion.cost import CostModel
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import load_target
from ge.tools.common import make_context, parse_module

# a conv with a bias and a relu, and a softmax on a short row scaled by a scalar constant (an
# immediate of its kernel, not an input): two groups of different engines
GRAPH = """
func.func @main(%x: tensor<1x16x28x28xf16>, %w: tensor<32x16x3x3xf16>, %b: tensor<1x32x1x1xf16>,
                %s: tensor<4x128xf16>) -> (tensor<1x32x28x28xf16>, tensor<4x128xf16>) {
  %half = ge.constant dense<0.5> : tensor<f16>
  %0 = ge.conv %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x28x28xf16>, tensor<32x16x3x3xf16>) -> tensor<1x32x28x28xf16> loc("/conv")
  %1 = ge.add %0, %b : (tensor<1x32x28x28xf16>, tensor<1x32x1x1xf16>) -> tensor<1x32x28x28xf16> loc("/bias")
  %2 = ge.relu %1 : (tensor<1x32x28x28xf16>) -> tensor<1x32x28x28xf16> loc("/relu")
  %3 = ge.softmax %s : (tensor<4x128xf16>) -> tensor<4x128xf16> loc("/softmax")
  %4 = ge.mul %3, %half : (tensor<4x128xf16>, tensor<f16>) -> tensor<4x128xf16> loc("/scale")
  func.return %2, %4 : tensor<1x32x28x28xf16>, tensor<4x128xf16>
}
"""


@pytest.mark.parametrize("target", ["ascend910", "ascend910b"])
def test_group_estimate_is_the_lowered_task_time(target):
    module = parse_module(GRAPH, "<test>")
    FuseOpsPass(target=target).apply(make_context(), module)
    fn = next(iter(module.ops))
    cost = CostModel(load_target(target))
    groups = [op for op in fn.body.block.ops if isinstance(op, fused.GroupOp)]
    assert len(groups) == 2
    estimates = [cost.op_time(g) for g in groups]
    apply_all(make_context(), module, parse_passes(f"lower-to-tasks{{target={target}}}"))
    kernels = [op for op in fn.body.block.ops if isinstance(op, task.KernelOp)]
    assert [k.engine.data for k in kernels] == ["cube+vector", "vector"]
    for estimate, kernel in zip(estimates, kernels):
        assert estimate == pytest.approx(cost.task_time(kernel), rel=1e-12)
        # and ge-run's simulator gives the task, alone on a stream of a sunk graph, that time
        result = simulate([SimTask(kernel_work(kernel), stream=0, launch=0)], target, "graph")
        assert result.tasks[0].duration == pytest.approx(estimate, rel=1e-9)


def test_candidate_estimate_matches_the_group_it_becomes():
    """The engine's time of a candidate (members, outputs, pattern class) and of the outlined group
    agree: same engine, block_dim and boundary (the scalar constant is an immediate, not an input)."""
    module = parse_module(GRAPH, "<test>")
    fn = next(iter(module.ops))
    cost = CostModel(load_target("ascend910b"))
    members = [op for op in fn.body.block.ops if op.name in ("ge.softmax", "ge.mul")]
    outputs = [members[-1].results[0]]
    before = cost.group_time("reduce+elementwise", members, outputs)
    group = fused.outline("reduce+elementwise", "reduce_elementwise", members, outputs)
    assert len(group.inputs) == 1  # the scalar is an immediate
    assert cost.op_time(group) == pytest.approx(before, rel=1e-12)


def test_constants_and_return_take_no_time():
    module = parse_module(GRAPH, "<test>")
    fn = next(iter(module.ops))
    cost = CostModel(load_target("ascend910b"))
    for op in fn.body.block.ops:
        if stays_outside_tasks(op):
            assert cost.op_time(op) == 0.0
        else:  # every task pays at least the device overhead
            assert cost.op_time(op) >= load_target("ascend910b").overheads.task_device_s


def test_fusion_saves_by_the_device_model():
    """The fused kernel is faster than its members as separate tasks (one overhead, no round trip of
    the conv's result through HBM), by the same model ge-run uses."""
    module = parse_module(GRAPH, "<test>")
    fn = next(iter(module.ops))
    cost = CostModel(load_target("ascend910b"))
    members = [op for op in fn.body.block.ops if op.name in ("ge.conv", "ge.add", "ge.relu")]
    separate = sum(cost.op_time(m) for m in members)
    fused_time = cost.group_time("cube+elementwise", members, [members[-1].results[0]])
    assert fused_time < separate - 2 * load_target("ascend910b").overheads.task_device_s
