"""adjust-hw-layout: the graph's inputs and outputs in NC1HWC0 (GE's is_input_adjust_hw_layout /
is_output_adjust_hw_layout). The caller still gives and gets logical arrays (the runner converts at
the boundary), so the outputs are those of the graph compiled without the options, at the ge level
and at the stream level; the modeled device runs no TransData kernel."""

from __future__ import annotations

import numpy as np
import pytest

from ge.interpreter.runner import main_function, run
from ge.interpreter.stream_executor import simulate_module
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import load_target
from ge.tools.common import make_context, parse_module

IR = """
func.func @main(%x: tensor<1x3x16x16xf32> {ge.name = "image"}) -> (tensor<1x16x8x8xf32> {ge.name = "features"}) {
  %w = ge.constant dense<0.125> : tensor<16x3x3x3xf32>
  %v = ge.constant dense<0.0625> : tensor<16x16x1x1xf32>
  %y = ge.conv %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x16x16xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x8x8xf32>
  %r = ge.relu %y : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
  %z = ge.conv %r, %v : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  func.return %z : tensor<1x16x8x8xf32>
}
"""
LOWER = "lower-to-tasks,plan-memory,lower-to-streams"


def _compiled(adjust: bool, lowered: bool):
    module = parse_module(IR, "<test>")
    GeOptimizePass(level=3, adjust_input_hw_layout=adjust, adjust_output_hw_layout=adjust).apply(make_context(), module)
    if lowered:
        apply_all(make_context(), module, parse_passes(LOWER))
    return module


def _conversions(module) -> int:
    result = simulate_module(module, load_target("ascend910b"))
    return sum(t.work.op_type == "trans_data" for t in result.tasks)


@pytest.mark.parametrize("lowered", [False, True], ids=["ge", "stream"])
def test_the_outputs_are_those_of_the_graph_without_the_options(lowered):
    feeds = {"image": np.random.default_rng(0).standard_normal((1, 3, 16, 16)).astype(np.float32)}
    want = run(_compiled(False, lowered), feeds)
    got = run(_compiled(True, lowered), feeds)
    np.testing.assert_allclose(got["features"], want["features"], rtol=1e-6, atol=1e-6)


def test_the_signature_is_stored_and_the_device_runs_no_conversion():
    adjusted, plain = _compiled(True, True), _compiled(False, True)
    signature = main_function(adjusted).function_type
    assert "NC1HWC0" in str(signature.inputs.data[0]) and "NC1HWC0" in str(signature.outputs.data[0])
    assert (_conversions(plain), _conversions(adjusted)) == (2, 0)


@pytest.mark.parametrize("name", ["convmixer", "deeplabv3"])
def test_corpus_models_equal_onnxruntime_with_their_boundaries_in_nc1hwc0(name):
    """Models nobody here wrote: ConvMixer's image input and DeepLabV3's (also its feature map
    output) in NC1HWC0, compiled to the stream level, equal onnxruntime; the device runs fewer
    TransData than without the options."""
    from bench import corpus

    c = corpus.case(name)
    counts = []
    for adjust in (False, True):
        module = corpus.imported(c.model)
        GeOptimizePass(level=3, adjust_input_hw_layout=adjust, adjust_output_hw_layout=adjust).apply(
            make_context(), module
        )
        lowered = corpus.lowered(module)
        outcome = corpus.outcome(c, lowered)
        assert outcome.ok, outcome
        counts.append(_conversions(lowered))
    stored = main_function(lowered).function_type.inputs.data[0]
    assert "NC1HWC0" in str(stored)
    assert counts[1] < counts[0]
