"""fold-constants, merge-constants and infer-shapes: numerics kept on random graphs and on the four
reference models, plus the rules a lit test cannot reach (a non-pure ge op, idempotence)."""

from __future__ import annotations

import collections
import hashlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from numerics import apply_passes, assert_pass_keeps_numerics, op_counts
from random_graphs import ge_graphs
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp, TensorType, f32
from xdsl.interpreter import impl, register_impls
from xdsl.ir import Block, Region
from xdsl.irdl import irdl_op_definition, operand_def, result_def
from xdsl.rewriter import Rewriter

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import tensor
from ge.ge_dialects.ge.weights import constant_array, weights_of
from ge.interpreter import ge as ge_functions
from ge.interpreter.kernels.checked import kernel_impl
from ge.passes import remarks
from ge.passes.fold_constants import FoldConstantsPass
from ge.tools.common import print_module

PROPERTY = settings(
    max_examples=75,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
CLEANUP = "fold-constants,merge-constants,cse,dce"
INFERENCE_CLEANUP = "fold-constants,merge-constants{parameters=true},cse,dce"
"""The models are run as they are (inference): their parameters (initializers) merge as constants."""


def compute_ops(module: ModuleOp) -> int:
    return sum(n for name, n in op_counts(module).items() if name != "ge.constant")


def total_ops(module: ModuleOp) -> int:
    return sum(op_counts(module).values())


# -- property tests on random graphs -------------------------------------------------------------------


@PROPERTY
@given(ge_graphs())
def test_fold_constants_keeps_numerics(graph):
    module, weights, inputs = graph
    with remarks.collected() as found:
        after = assert_pass_keeps_numerics(module, weights, inputs, "fold-constants")
    assert total_ops(after) <= total_ops(module)
    folded = sum(1 for r in found if r.kind == "applied")
    assert compute_ops(after) == compute_ops(module) - folded
    # nothing foldable is left: a second run applies nothing
    with remarks.collected() as again:
        apply_passes(after, None, "fold-constants")
    assert not [r for r in again if r.kind == "applied"]


@PROPERTY
@given(ge_graphs())
def test_fold_constants_with_tight_guards_keeps_numerics(graph):
    module, weights, inputs = graph
    with remarks.collected() as found:
        assert_pass_keeps_numerics(module, weights, inputs, "fold-constants{max-elements=8 growth-factor=1.0}")
    for r in found:
        assert r.kind != "applied" or "folded into a constant of" in r.reason


@PROPERTY
@given(ge_graphs())
def test_merge_constants_keeps_numerics_and_leaves_no_duplicates(graph):
    module, weights, inputs = graph
    after = assert_pass_keeps_numerics(module, weights, inputs, "merge-constants")
    seen = set()
    for op in after.walk():
        if isinstance(op, ge.ConstantOp):
            value = constant_array(op)
            key = (op.output.type, hashlib.sha256(np.ascontiguousarray(value).tobytes()).digest())
            assert key not in seen, f"two constants of {op.output.type} hold equal values"
            seen.add(key)
    assert compute_ops(after) == compute_ops(module)


def loosen(module: ModuleOp) -> ModuleOp:
    """Every f32 result of a (non-constant) ge op made all-`?` (rank and format kept); i64 shape
    values stay exact, as their consumers need a static length."""
    for op in list(module.walk()):
        if isinstance(op, ge.GeOp) and not isinstance(op, ge.ConstantOp):
            for result in list(op.results):
                t = result.type
                if t.element_type == f32:
                    Rewriter.replace_value_with_new_type(
                        result, TensorType(t.element_type, [DYNAMIC_INDEX] * len(t.get_shape()), t.encoding)
                    )
    for fn in module.walk():
        if isinstance(fn, func.FuncOp):
            ret = fn.body.blocks.first.last_op
            fn.function_type = func.FunctionType.from_lists(
                list(fn.function_type.inputs.data), list(ret.arguments.types)
            )
    module.verify()
    return module


@PROPERTY
@given(ge_graphs())
def test_infer_shapes_recovers_loosened_types(graph):
    module, weights, inputs = graph
    exact = print_module(module)
    loose = apply_passes(module, weights, [])
    loosen(loose)
    after = assert_pass_keeps_numerics(loose, weights, inputs, "infer-shapes")
    assert print_module(after) == exact
    assert print_module(apply_passes(after, weights, "infer-shapes")) == exact  # idempotent


@PROPERTY
@given(ge_graphs())
def test_cleanup_pipeline_keeps_numerics(graph):
    module, weights, inputs = graph
    after = assert_pass_keeps_numerics(module, weights, inputs, CLEANUP + ",infer-shapes")
    assert total_ops(after) <= total_ops(module)
    assert compute_ops(after) <= compute_ops(module)
    # the shape subgraphs folded, so infer-shapes left no `?` behind
    for op in after.walk():
        for r in op.results:
            assert DYNAMIC_INDEX not in r.type.get_shape(), f"{op.name} still has {r.type}"


# -- rules lit cannot reach ----------------------------------------------------------------------------


@irdl_op_definition
class ImpureAddOp(ge.GeOp):
    """An add without the Pure trait (e.g. an op that writes a device register as it runs)."""

    name = "ge.test_impure_add"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    z = result_def(TensorType)

    @classmethod
    def infer(cls, a):
        return ge.AddOp.infer(a)


@register_impls
class WithImpureAdd(ge_functions.GeFunctions):
    """The ge functions plus a kernel for ImpureAddOp: only its missing Pure trait keeps it unfolded."""

    run_impure_add = impl(ImpureAddOp)(kernel_impl(lambda op, ins: np.add(ins["a"], ins["b"])))


def test_non_pure_op_is_not_folded(monkeypatch):
    monkeypatch.setattr(ge_functions, "GeFunctions", WithImpureAdd)  # what folding builds its interpreter with
    block = Block()
    a = ge.ConstantOp.inline(np.ones(4, np.float32))
    b = ge.ConstantOp.inline(np.full(4, 2, np.float32))
    impure = ImpureAddOp.create({"a": a.output, "b": b.output}, name="/impure")
    pure = ge.AddOp.create({"a": a.output, "b": b.output}, name="/pure")
    block.add_ops([a, b, impure, pure, func.ReturnOp(impure.results[0], pure.results[0])])
    t = tensor(f32, (4,))
    module = ModuleOp([func.FuncOp("main", ([], [t, t]), Region(block))])
    with remarks.collected() as found:
        FoldConstantsPass().apply(None, module)
    names = [op.name for op in module.walk()]
    assert "ge.test_impure_add" in names and "ge.add" not in names
    rejected = [r for r in found if r.kind == "rejected"]
    assert len(rejected) == 1 and rejected[0].nodes == ("/impure",) and "not pure" in rejected[0].reason


def test_fold_keeps_weight_format_and_location():
    """A folded weight-sized result keeps the op's node name and, as a weight, its format."""
    block = Block(arg_types=[])
    w = ge.ConstantOp.weight("w", tensor(f32, (1, 2, 4, 4)))
    k = ge.ConstantOp.weight("k", tensor(f32, (3, 2, 1, 1)))
    conv = ge.ConvOp.create({"X": w.output, "W": k.output}, name="/conv")
    block.add_ops([w, k, conv, func.ReturnOp(conv.results[0])])
    module = ModuleOp([func.FuncOp("main", ([], [conv.results[0].type]), Region(block))])
    weights = {"w": np.arange(32, dtype=np.float32).reshape(1, 2, 4, 4), "k": np.ones((3, 2, 1, 1), np.float32)}
    after = assert_pass_keeps_numerics(module, weights, {}, "fold-constants")
    (const,) = [op for op in after.walk() if isinstance(op, ge.ConstantOp)]
    assert str(const.output.type) == "tensor<1x3x4x4xf32, #ge.fmt<NCHW>>"
    assert const.weight_key == "/conv" and "/conv" in print_module(after)


# -- the reference models -------------------------------------------------------------------------------

MODEL_NAMES = ["resnet50", "mobilenet_v2", "bert_base", "gpt2"]


@pytest.fixture(scope="module", params=MODEL_NAMES)
def imported(request, references):
    """The small models (every op and constant pattern of the full ones; what folds is per layer)."""
    module = references.module(request.param)
    return request.param, module, weights_of(module), references.model(request.param)[1]


def test_models_cleanup_keeps_outputs_and_shrinks(imported):
    name, module, weights, inputs = imported
    with remarks.collected() as found:
        after = assert_pass_keeps_numerics(module, weights, inputs, INFERENCE_CLEANUP, rtol=1e-6, atol=1e-6)
    before_counts, after_counts = op_counts(module), op_counts(after)
    assert all(after_counts[k] <= before_counts[k] for k in after_counts), (before_counts, after_counts)
    folded = collections.Counter(r.nodes[0] for r in found if r.pass_name == "fold-constants" and r.kind == "applied")
    if name == "bert_base":
        # import-time folding only sees inline constants: the position-id slice of a sidecar table
        # and the embedding lookup it feeds are left to fold; the token-type lookup would grow 60x
        assert set(folded) == {"/embeddings/Slice", "/embeddings/position_embeddings/Gather"}
        assert any(
            r.kind == "rejected"
            and r.rule == "growth-guard"
            and r.nodes == ("/embeddings/token_type_embeddings/Gather",)
            for r in found
        )
        assert before_counts["ge.constant"] - after_counts["ge.constant"] >= 100  # about 50 per layer
    elif name == "gpt2":
        assert "/wpe/Gather" in folded and "/h.0/attn/Slice_1" in folded
        assert after_counts["ge.slice"] == before_counts["ge.slice"] - 4
    elif name == "resnet50":
        assert after_counts == before_counts  # nothing to fold or merge
    elif name == "mobilenet_v2":
        assert not folded and after_counts["ge.constant"] == before_counts["ge.constant"] - 68  # Clip bounds


def test_models_infer_shapes_changes_nothing(imported):
    _, module, weights, _ = imported
    assert print_module(apply_passes(module, weights, "infer-shapes")) == print_module(module)
