"""ge-optimize on the test models: every pass keeps the numbers (the differential checker runs the
interpreter after each one), and O3 reaches the kernel counts the optimization issue asks for."""

import pytest
from hypothesis import HealthCheck, given, settings
from random_graphs import ge_graphs
from test_mixed_precision import TOLERANCE as PRECISION_TOLERANCE

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import fused
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.differential import DifferentialChecker, relative_error
from ge.interpreter.runner import run
from ge.passes.fusion.census import census
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all
from ge.tools.common import make_context

BUILDERS = {
    "resnet50": models.resnet50,
    "mobilenet_v2": models.mobilenet_v2,
    "bert_base": models.bert_base,
    "gpt2": models.gpt2,
    # the opset-13 spellings (Split, Squeeze and ReduceMean take attributes) at the small size: the
    # spelling is what they test; the full-size numerics are the default-opset models'
    "bert_base_opset13": lambda: models.small("bert_base", opset=13),
    "gpt2_opset13": lambda: models.small("gpt2", opset=13),
}


@pytest.fixture(scope="module")
def model_cache():
    return {}


def imported(name, cache):
    if name not in cache:
        model = BUILDERS[name]()
        cache[name] = (model, models.random_inputs(model, 0))
    model, inputs = cache[name]
    module, weights = import_model(model)
    attach_weights(module, weights)
    return module, inputs


def optimized(name, cache, level=3, checked=True):
    """The model after ge-optimize{level}, every pass checked against the one before."""
    module, inputs = imported(name, cache)
    checker = DifferentialChecker.start(module, inputs)
    reference = checker.reference
    if checked:
        apply_all(make_context(), module, [GeOptimizePass(level=level)], observers=[checker])
        checker.finish()
    else:
        GeOptimizePass(level=level).apply(make_context(), module)
    module.verify()
    return module, inputs, reference, checker.reports


def ops_named(module, name):
    return sum(1 for op in module.walk() if op.name == name)


@pytest.mark.parametrize("name", list(BUILDERS))
def test_o3_keeps_outputs_pass_by_pass(name, model_cache):
    module, inputs, reference, reports = optimized(name, model_cache)
    # Element-wise |after-before| <= 1e-5 + 1e-4*|before|, each pass and the end against the start.
    assert reports and all(r.ok for r in reports), [str(r) for r in reports]
    assert reports[-1].stage == "end vs start"
    final = run(module, inputs)
    for key in reference:
        assert relative_error(reference[key], final[key]) <= 1e-4


def test_resnet50_o3_folds_and_fuses_every_conv_block(model_cache):
    module, *_ = optimized("resnet50", model_cache, checked=False)
    counts = census(module)
    assert ops_named(module, "ge.batch_norm") == 0
    top = counts.ops
    assert top["ge.relu"] == 0 and top["ge.add"] == 0 and top["ge.batch_norm"] == 0
    assert counts.kernels <= 58, counts
    assert counts.trans_data == 2


def test_bert_o3_kernel_count(model_cache):
    module, *_ = optimized("bert_base", model_cache, checked=False)
    counts = census(module)
    assert counts.kernels <= 200, counts
    assert counts.groups["attention_layout"] == 12


@pytest.mark.parametrize(
    "name, layer_norms, gelus, attentions", [("bert_base_opset13", 5, 2, 2), ("gpt2_opset13", 5, 2, 2)]
)
def test_decomposed_blocks_are_recognized(name, layer_norms, gelus, attentions, model_cache):
    module, *_ = optimized(name, model_cache, level=2, checked=False)
    assert ops_named(module, "ge.layer_norm") == layer_norms
    assert ops_named(module, "ge.gelu") == gelus
    assert ops_named(module, "ge.attention") == attentions
    assert ops_named(module, "ge.erf") == 0 and ops_named(module, "ge.softmax") == 0


def test_levels_do_what_they_say(model_cache):
    o0, *_ = optimized("gpt2_opset13", model_cache, level=0, checked=False)
    assert (
        ops_named(o0, "ge.attention") == 0
        and census(o0).kernels == census(imported("gpt2_opset13", model_cache)[0]).kernels
    )
    o1, *_ = optimized("gpt2_opset13", model_cache, level=1, checked=False)
    assert ops_named(o1, "ge.attention") == 0 and not any(isinstance(op, fused.GroupOp) for op in o1.walk())
    o2, *_ = optimized("gpt2_opset13", model_cache, level=2, checked=False)
    assert ops_named(o2, "ge.attention") == 2 and not any(isinstance(op, fused.GroupOp) for op in o2.walk())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ge_graphs())
def test_o3_keeps_outputs_on_random_graphs(graph):
    module, _weights, inputs = graph
    checker = DifferentialChecker.start(module, inputs)
    apply_all(make_context(), module, [GeOptimizePass(level=3)], observers=[checker])
    checker.finish()
    module.verify()
    assert all(r.ok for r in checker.reports), [str(r) for r in checker.reports]


@pytest.mark.parametrize("mode", list(PRECISION_TOLERANCE))
@pytest.mark.parametrize("name", ["resnet50", "mobilenet_v2", "bert_base", "gpt2"])
def test_o3_in_reduced_precision_stays_within_tolerance(name, mode, model_cache):
    """The whole O3 pipeline in fp16 / bf16 against the f32 graph at O0 (the same tolerances as
    mixed-precision alone: layouts and fusion add no error of their own)."""
    module, inputs = imported(name, model_cache)
    reference = run(module, inputs)
    GeOptimizePass(level=3, precision_mode=mode).apply(make_context(), module)
    module.verify()
    outputs = run(module, inputs)
    worst = max(relative_error(reference[k], outputs[k]) for k in reference)
    assert 0 < worst <= PRECISION_TOLERANCE[mode], (name, mode, worst)
