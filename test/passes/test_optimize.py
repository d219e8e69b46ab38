"""ge-optimize on the test models: every pass keeps the numbers (the differential checker runs the
interpreter after each one), and O3 reaches the kernel counts the optimization issue asks for."""

import pytest
from hypothesis import HealthCheck, given, settings
from random_graphs import ge_graphs
from test_mixed_precision import TOLERANCE as PRECISION_TOLERANCE

from ge.ge_dialects import fused
from ge.interpreter.differential import DifferentialChecker, relative_error
from ge.interpreter.runner import run
from ge.passes.fusion.census import census
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all
from ge.tools.common import make_context

#: Pass by pass on the small models (every op, layout and fusion pattern of the full ones, so every
#: rewrite fires); the opset-13 spellings (Split, Squeeze and ReduceMean take attributes) likewise.
CHECKED = {
    "resnet50": {},
    "mobilenet_v2": {},
    "bert_base": {},
    "gpt2": {},
    "bert_base_opset13": {"opset": 13},
    "gpt2_opset13": {"opset": 13},
}
FULL_SIZE = ["resnet50", "mobilenet_v2", "bert_base", "gpt2"]


def model_of(case: str) -> str:
    return case.removesuffix("_opset13")


def optimized(references, case, level=3):
    """The small model after ge-optimize{level}, every pass checked against the one before."""
    name, options = model_of(case), CHECKED[case]
    module = references.module(name, **options)
    inputs = references.model(name, **options)[1]
    checker = DifferentialChecker.start(module, inputs)
    apply_all(make_context(), module, [GeOptimizePass(level=level)], observers=[checker])
    checker.finish()
    module.verify()
    return module, inputs, checker.reference, checker.reports


def ops_named(module, name):
    return sum(1 for op in module.walk() if op.name == name)


@pytest.mark.parametrize("case", list(CHECKED))
def test_o3_keeps_outputs_pass_by_pass(case, references):
    module, inputs, reference, reports = optimized(references, case)
    # Element-wise |after-before| <= 1e-5 + 1e-4*|before|, each pass and the end against the start.
    assert reports and all(r.ok for r in reports), [str(r) for r in reports]
    assert reports[-1].stage == "end vs start"
    final = run(module, inputs)
    for key in reference:
        assert relative_error(reference[key], final[key]) <= 1e-4


@pytest.mark.parametrize("name", list(FULL_SIZE))
def test_o3_keeps_outputs_at_full_size(name, references):
    """Full size once per model (the depth and widths the small models do not have): the imported
    graph's outputs against onnxruntime's, and O3's against the imported graph's, end to end."""
    import numpy as np

    pytest.importorskip("onnxruntime")
    reference = references.outputs(name, "full")
    session = references.onnxruntime(name, "full")
    names = [o.name for o in session.get_outputs()]
    oracle = dict(zip(names, session.run(names, references.model(name, "full")[1])))
    assert set(reference) == set(oracle)
    for key, want in oracle.items():
        np.testing.assert_allclose(reference[key], want, rtol=1e-4, atol=1e-5, err_msg=f"{name}:{key}")
    final = references.outputs(name, "full", level=3)
    for key in reference:
        assert relative_error(reference[key], final[key]) <= 1e-4, key


def test_resnet50_o3_folds_and_fuses_every_conv_block(references):
    """Full size: the kernel counts are the optimization issue's, at 224x224."""
    module = references.module("resnet50", "full", level=3)
    counts = census(module)
    assert ops_named(module, "ge.batch_norm") == 0
    top = counts.ops
    assert top["ge.relu"] == 0 and top["ge.add"] == 0 and top["ge.batch_norm"] == 0
    assert counts.kernels <= 58, counts
    assert counts.trans_data == 1  # the image into NC1HWC0; the pooled features' view joins the flatten


def test_bert_o3_kernel_count(references):
    """Full size: 12 layers, one attention group each."""
    counts = census(references.module("bert_base", "full", level=3))
    assert counts.kernels <= 200, counts
    assert counts.groups["attention_layout"] == 12


@pytest.mark.parametrize("name, layer_norms, gelus, attentions", [("bert_base", 5, 2, 2), ("gpt2", 5, 2, 2)])
def test_decomposed_blocks_are_recognized(name, layer_norms, gelus, attentions, references):
    module = references.module(name, level=2, opset=13)
    assert ops_named(module, "ge.layer_norm") == layer_norms
    assert ops_named(module, "ge.gelu") == gelus
    assert ops_named(module, "ge.attention") == attentions
    assert ops_named(module, "ge.erf") == 0 and ops_named(module, "ge.softmax") == 0


def test_levels_do_what_they_say(references):
    o0 = references.module("gpt2", level=0, opset=13)
    assert ops_named(o0, "ge.attention") == 0
    assert census(o0).kernels == census(references.module("gpt2", opset=13)).kernels
    o1 = references.module("gpt2", level=1, opset=13)
    assert ops_named(o1, "ge.attention") == 0 and not any(isinstance(op, fused.GroupOp) for op in o1.walk())
    o2 = references.module("gpt2", level=2, opset=13)
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
@pytest.mark.parametrize("name", FULL_SIZE)
def test_o3_in_reduced_precision_stays_within_tolerance(name, mode, references):
    """The whole O3 pipeline in fp16 / bf16 against the f32 graph at O0 (the same tolerances as
    mixed-precision alone: layouts and fusion add no error of their own). On the small models: what
    O3 adds is structural (casts across layouts and groups); test_mixed_precision holds the error of
    the full depth to these tolerances."""
    module, inputs = references.module(name), references.model(name)[1]
    reference = run(module, inputs)
    GeOptimizePass(level=3, precision_mode=mode).apply(make_context(), module)
    module.verify()
    outputs = run(module, inputs)
    worst = max(relative_error(reference[k], outputs[k]) for k in reference)
    assert 0 < worst <= PRECISION_TOLERANCE[mode], (name, mode, worst)


def program(module) -> list[tuple[str, ...]]:
    """The O3 program as kernels in order: a group's rule and member ops, or an op's name, each with
    the storage formats of its results (what the layout passes chose)."""
    from xdsl.dialects import func

    from ge.ge_dialects.ge.layout import storage_of

    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    kernels = []
    for op in fn.body.block.ops:
        if op.name in ("ge.constant", "func.return"):
            continue
        what = (op.rule.data, *(m.name for m in op.body.block.ops)) if isinstance(op, fused.GroupOp) else (op.name,)
        kernels.append((*what, *(storage_of(r.type) for r in op.results)))
    return kernels


@pytest.mark.parametrize("name", FULL_SIZE)
def test_the_small_model_has_the_full_ones_program_structure(name, references):
    """What `models.SMALL` promises: at O3 the small model has every op, fusion pattern and storage
    format of the full one. The CNNs have all their layers, so their programs are the same kernel for
    kernel; the transformers have two of their layers, so every kernel of theirs appears in the full
    program and the other way round."""
    small, full = program(references.module(name, level=3)), program(references.module(name, "full", level=3))
    if name in ("resnet50", "mobilenet_v2"):
        assert small == full
    else:
        assert set(small) == set(full)


def test_a_small_size_that_changes_the_program_is_caught(references):
    """Mutation: a BERT too narrow for the matmul layouts (hidden 8, one head) compiles to other
    kernels than the full one, and the comparison above sees it."""
    narrow = program(references.module("bert_base", level=3, hidden=8, heads=1, intermediate=16))
    assert set(narrow) != set(program(references.module("bert_base", "full", level=3)))
