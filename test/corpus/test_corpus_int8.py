"""The int8 path on corpus architectures (ResNet-18 from torchvision, BERT from transformers),
quantized by onnxruntime's `quantize_static` (QDQ, per-channel int8 weights, uint8 activations,
calibrated on four seeded inputs): ge's import equals onnxruntime running the QDQ graph as written
(ORT_DISABLE_ALL), and after ge-optimize's quantized stage (simplify, then `fold-qdq`) the
QLinearConv / QLinearMatMul groups give the same outputs.

The TorchScript exporter shares one bias initializer among ResNet-18's convs whose biases are equal
(the corpus's regenerated BatchNorm statistics make many equal), behind an Identity each;
`quantize_static` puts that bias on the first conv's grid only, so the other convs keep float, each
with a remark naming the bias's scale. onnxruntime folds none of those either."""

from __future__ import annotations

import collections

import numpy as np
import onnx
import pytest

from bench import corpus
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import run
from ge.passes import ge_optimize, remarks
from ge.passes.fold_qdq import FoldQdqPass
from ge.passes.pipeline import apply_all
from ge.tools.common import make_context

ort = pytest.importorskip("onnxruntime")
quantization = pytest.importorskip("onnxruntime.quantization")

FOLDED = {"resnet18": ("ge.qlinear_conv", 4), "bert": ("ge.qlinear_matmul", 16)}
"""The groups fold-qdq folds in each model: the ResNet-18 convs whose bias is on their own grid,
all of BERT's quantized MatMuls."""


class _Calibration(quantization.CalibrationDataReader):
    def __init__(self, model: onnx.ModelProto):
        self.batches = iter([corpus.inputs(model, seed) for seed in range(1, 5)])

    def get_next(self):
        return next(self.batches, None)


@pytest.fixture(scope="module", params=list(FOLDED))
def quantized(request, tmp_path_factory):
    """(name, the QDQ model, its inputs, onnxruntime's outputs on the QDQ graph as written)."""
    case = corpus.case(request.param)
    folder = tmp_path_factory.mktemp(request.param)
    onnx.save(case.model, folder / "float.onnx")
    quantization.quantize_static(
        folder / "float.onnx",
        folder / "qdq.onnx",
        _Calibration(case.model),
        quant_format=quantization.QuantFormat.QDQ,
        per_channel=True,
        weight_type=quantization.QuantType.QInt8,
        activation_type=quantization.QuantType.QUInt8,
    )
    model = onnx.load(folder / "qdq.onnx")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return request.param, model, case.feeds, dict(zip(names, session.run(names, case.feeds)))


def _error(got: dict, want: dict) -> float:
    return max(float(np.abs(got[k] - v).max() / max(np.abs(v).max(), 1e-30)) for k, v in want.items())


def test_the_qdq_import_and_its_folded_groups_equal_onnxruntime(quantized):
    name, model, feeds, want = quantized
    module, weights = import_model(model)
    attach_weights(module, weights)
    assert _error(run(module, feeds), want) <= corpus.TOLERANCE
    with remarks.collected() as found:
        apply_all(make_context(), module, ge_optimize.quantized(None))
    module.verify()
    op, count = FOLDED[name]
    assert collections.Counter(o.name for o in module.walk())[op] == count
    assert _error(run(module, feeds), want) <= corpus.TOLERANCE
    refused = {
        r.reason.split(" ge.dequantize_linear")[0]
        for r in found
        if r.kind == "rejected" and r.rule in ("qdq-matmul", "qdq-conv")
    }
    assert refused <= {"the scale of the bias"}  # no group hidden behind an Identity


@pytest.mark.mutation
@pytest.mark.parametrize("quantized", ["resnet18"], indirect=True)
def test_mutation_a_folded_bias_on_the_wrong_grid_is_caught(quantized, monkeypatch):
    """The folded convs' int32 bias at half its value: ResNet's outputs move past the tolerance."""
    from ge.passes.rules import fold_qdq as rules

    _, model, feeds, want = quantized
    right = rules._int32_bias

    def halved(m):
        bias = right(m)
        return bias if isinstance(bias, str) else np.round(bias / 2).astype(np.int32)

    monkeypatch.setattr(rules, "_int32_bias", halved)
    module, weights = import_model(model)
    attach_weights(module, weights)
    FoldQdqPass().apply(None, module)
    assert _error(run(module, feeds), want) > corpus.TOLERANCE


@pytest.mark.mutation
@pytest.mark.parametrize("quantized", ["resnet18"], indirect=True)
def test_mutation_the_stage_without_simplify_is_caught(quantized, monkeypatch):
    """fold-qdq alone: the shared bias behind its Identity hides the groups (refused for another
    reason than the bias's scale)."""
    monkeypatch.setattr(ge_optimize, "quantized", lambda options: [FoldQdqPass()])
    with pytest.raises(AssertionError):
        test_the_qdq_import_and_its_folded_groups_equal_onnxruntime(quantized)


def test_dynamic_quantization_of_bert_equals_onnxruntime(tmp_path):
    """`quantize_dynamic` (DynamicQuantizeLinear and MatMulInteger, the QOperator form) on the
    corpus's BERT: ge's import equals onnxruntime's. The weights use 7 bits (reduce_range), as
    onnxruntime advises for CPUs without VNNI: its uint8 x int8 kernel there (AVX2's vpmaddubsw)
    saturates each pair's sum to int16, so with full-range weights its products are not the
    integer ones ge computes (35,057 off on a random 8x64x16 product on such a CPU)."""
    case = corpus.case("bert")
    onnx.save(case.model, tmp_path / "float.onnx")
    quantization.quantize_dynamic(
        tmp_path / "float.onnx",
        tmp_path / "dynamic.onnx",
        weight_type=quantization.QuantType.QInt8,
        reduce_range=True,
    )
    model = onnx.load(tmp_path / "dynamic.onnx")
    kinds = collections.Counter(n.op_type for n in model.graph.node)
    assert kinds["DynamicQuantizeLinear"] > 0 and kinds["MatMulInteger"] > 0
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    module, weights = import_model(model)
    attach_weights(module, weights)
    ops = collections.Counter(o.name for o in module.walk())
    assert ops["ge.dynamic_quantize_linear"] == kinds["DynamicQuantizeLinear"]
    assert ops["ge.matmul_integer"] == kinds["MatMulInteger"]
    assert _error(run(module, case.feeds), dict(zip(names, session.run(names, case.feeds)))) <= corpus.TOLERANCE


@pytest.mark.mutation
def test_mutation_integer_products_without_the_activation_zero_point_are_caught(tmp_path, monkeypatch):
    """MatMulInteger's uint8 activations read without subtracting their zero point."""
    from ge.interpreter.kernels import quantize as kernels

    right = kernels._matmul_sum
    monkeypatch.setattr(kernels, "_matmul_sum", lambda a, b, a_zero, b_zero: right(a, b, None, b_zero))
    with pytest.raises(AssertionError):
        test_dynamic_quantization_of_bert_equals_onnxruntime(tmp_path)
