"""--export-onnx on the built-in models: import -> ge-optimize -> export -> onnxruntime.

The exported O1 model must give the ge interpreter's outputs on the O1 module and onnxruntime's on
the original model; the fused level (ge-optimize level 3: fused.group functions, ge.attention,
ge.gelu, Conv+BN folded, FRACTAL_NZ weights) likewise; export -> import gives the same outputs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx.inliner import inline_local_functions

from ge.frontend import models
from ge.frontend.onnx_exporter import FUSED_DOMAIN, export_module
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import fused
from ge.ge_dialects.context import make_context
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import run
from ge.passes.pipeline import apply_all, parse_passes

ort = pytest.importorskip("onnxruntime")

SMALL = {
    "resnet50": lambda: models.small("resnet50"),
    "mobilenet_v2": lambda: models.small("mobilenet_v2"),
    "bert_base": lambda: models.bert_base(seq=16, layers=2, hidden=64, heads=4, intermediate=128, vocab=100),
    "gpt2": lambda: models.gpt2(seq=16, layers=2, hidden=64, heads=4, vocab=100),
}
TOLERANCE = {"rtol": 1e-4, "atol": 1e-5}


def optimized(model: onnx.ModelProto, level: int, precision_mode: str = "must_keep_origin_dtype"):
    module, weights = import_model(model)
    attach_weights(module, weights)
    apply_all(make_context(), module, parse_passes(f"ge-optimize{{level={level} precision_mode={precision_mode}}}"))
    return module


def ort_outputs(model: onnx.ModelProto, inputs) -> dict[str, np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, inputs)))


def assert_same(got: dict[str, np.ndarray], want: dict[str, np.ndarray], what: str) -> None:
    assert set(got) == set(want), what
    for key in want:
        assert got[key].shape == want[key].shape, f"{what}: {key}"
        np.testing.assert_allclose(got[key], want[key], err_msg=f"{what}: {key}", **TOLERANCE)


@pytest.mark.parametrize("name", list(SMALL))
def test_o1_export_runs_in_onnxruntime(name):
    model = SMALL[name]()
    module = optimized(model, 1)
    exported = export_module(module)
    inputs = models.random_inputs(model, seed=1)
    got = ort_outputs(exported, inputs)
    assert_same(got, run(module, inputs), f"{name}: ORT(export(O1)) vs interpreter(O1)")
    assert_same(got, ort_outputs(model, inputs), f"{name}: ORT(export(O1)) vs ORT(original)")
    # names kept: the original ONNX node names (the importer's locations) and the initializer names
    node_names = {n.name for n in exported.graph.node}
    kept = {n.name for n in model.graph.node} & node_names
    assert len(kept) >= len(exported.graph.node) // 2, f"{name}: node names lost"
    initializers = {t.name for t in exported.graph.initializer}
    assert any(t.name in initializers for t in model.graph.initializer if t.dims)
    # export -> import -> the same outputs again
    again, weights = import_model(exported)
    assert_same(run(again, inputs, weights), got, f"{name}: import(export(O1))")


@pytest.mark.parametrize("name", ["bert_base", "gpt2", "mobilenet_v2"])
def test_fused_level_exports_groups_as_functions(name):
    model = SMALL[name]()
    module = optimized(model, 3)
    groups = [op for op in module.walk() if isinstance(op, fused.GroupOp)]
    assert groups
    exported = export_module(module)
    assert len(exported.functions) == len(groups)
    assert {f.domain for f in exported.functions} == {FUSED_DOMAIN}
    calls = [n for n in exported.graph.node if n.domain == FUSED_DOMAIN]
    assert len(calls) == len(groups)
    assert all(n.op_type in {f.name for f in exported.functions} for n in calls)
    inputs = models.random_inputs(model, seed=2)
    got = ort_outputs(exported, inputs)
    assert_same(got, run(module, inputs), f"{name}: ORT(export(O3)) vs interpreter(O3)")
    assert_same(got, ort_outputs(model, inputs), f"{name}: ORT(export(O3)) vs ORT(original)")
    # the importer reads standard domains: the functions inlined, the graph imports and runs alike
    flat = inline_local_functions(exported)
    assert not any(n.domain == FUSED_DOMAIN for n in flat.graph.node)
    again, weights = import_model(flat)
    assert_same(run(again, inputs, weights), got, f"{name}: import(inline(export(O3)))")


def test_optimizer_ops_export_to_standard_onnx():
    """ge.attention decomposes into standard nodes, ge.gelu is Gelu, ge.layer_norm LayerNormalization,
    ge.trans_data an Identity whose doc says which relayout it was."""
    module = optimized(SMALL["gpt2"](), 3)
    present = {op.name for op in module.walk()}
    assert {"ge.attention", "ge.gelu", "ge.layer_norm", "ge.trans_data"} <= present
    exported = export_module(module)
    nodes = list(exported.graph.node) + [n for f in exported.functions for n in f.node]
    types = {n.op_type for n in nodes}
    assert {"Gelu", "LayerNormalization", "Softmax", "Where", "Identity"} <= types
    assert all(n.domain in ("", FUSED_DOMAIN) for n in nodes)
    relayouts = [n for n in nodes if n.op_type == "Identity" and n.doc_string.startswith("ge.trans_data")]
    assert any("FRACTAL_NZ -> ND" in n.doc_string for n in relayouts)
    infos = {v.name: v.doc_string for v in exported.graph.value_info}
    assert any(doc == "storage format FRACTAL_NZ" for doc in infos.values())


def test_mixed_precision_casts_export():
    """force_fp16: f16 weights and activations, ge.cast at the graph's edges, exported as Cast."""
    model = SMALL["gpt2"]()
    module = optimized(model, 3, "force_fp16")
    casts = [op for op in module.walk() if op.name == "ge.cast"]
    assert casts
    exported = export_module(module)
    nodes = list(exported.graph.node) + [n for f in exported.functions for n in f.node]
    assert sum(n.op_type == "Cast" for n in nodes) == len(casts)
    inputs = models.random_inputs(model, seed=3)
    got = ort_outputs(exported, inputs)
    want = run(module, inputs)
    for key in want:
        np.testing.assert_allclose(got[key].astype(np.float32), want[key].astype(np.float32), rtol=5e-3, atol=5e-3)
