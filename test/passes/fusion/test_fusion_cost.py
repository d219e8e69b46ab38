"""fuse-ops and lower-to-streams time kernels with the device model ge-run reports: a candidate's
estimate is the time ge-run's simulator gives the task it becomes."""

import pytest

from ge.device import SimTask, simulate
from ge.device.engines import stays_outside_tasks
from ge.device.ir_work import boundary_inputs, kernel_work
from ge.ge_dialects import fused, task
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


def _optimized(model, level):
    from ge.frontend.onnx_importer import import_model

    module, _ = import_model(model)
    apply_all(make_context(), module, parse_passes(f"ge-optimize{{level={level}}}"))
    return next(iter(module.ops))


@pytest.mark.parametrize("level", [1, 3])
def test_remembered_times_are_the_times_computed_afresh(level):
    """Kernels of one structure share a time; every op and group of two real models gets from the
    remembering cost model exactly what a new one computes (convs that differ only in strides or
    shapes, matmuls that differ only in a transposed operand, must not share)."""
    from ge.frontend import models

    target = load_target("ascend910b")
    for model in (models.small("resnet50"), models.gpt2(layers=2)):
        fn = _optimized(model, level)
        remembering = CostModel(target)
        ops = [op for op in fn.body.block.ops if not stays_outside_tasks(op)]
        assert ops
        for op in ops:
            assert remembering.op_time(op) == CostModel(target).op_time(op), op.name
        # the memo did serve: far fewer structures than ops
        assert len(remembering._kernel_times) < len(ops)


def test_structure_tells_apart_what_the_time_depends_on():
    from ge.passes.fusion.cost import kernel_structure

    module = parse_module(
        """
func.func @main(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = ge.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = ge.add %x, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = ge.add %y, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = ge.transpose %0 {perm = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<8x4xf32>
  %4 = ge.softmax %0 {axis = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = ge.softmax %0 {axis = 1 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0, %1, %2, %3, %4, %5 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
""",
        "<test>",
    )
    add_xy, add_xx, add_yx, transpose, softmax_0, softmax_1 = list(next(iter(module.ops)).body.block.ops)[:6]

    def key(op):
        return kernel_structure([op], boundary_inputs([op]), op.results, "vector")

    assert key(add_xy) == key(add_yx)  # alike ops on other values
    assert key(add_xy) != key(add_xx)  # one value read twice is one input
    assert key(add_xy) != key(transpose)
    assert key(softmax_0) != key(softmax_1)  # properties
    # an input that is also an output is one tensor
    (x,) = boundary_inputs([transpose])
    assert kernel_structure([transpose], [x], [x], "vector") != kernel_structure(
        [transpose], [x], [add_xx.results[0]], "vector"
    )
    assert kernel_structure([add_xy], boundary_inputs([add_xy]), add_xy.results, "cube") != key(add_xy)
