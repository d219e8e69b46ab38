"""ResNet-50 and BERT-base of frontend/models.py (their small versions) quantized as a deployment
engineer quantizes them: onnxruntime's `quant_pre_process` (BatchNorm folded into the convs), then
`quantize_static` (QDQ, per-channel int8 weights, uint8 activations, calibrated on three seeded
inputs) or `quantize_dynamic` (DynamicQuantizeLinear and MatMulInteger / ConvInteger, 7-bit
weights: see test_corpus_int8.py). The reference is onnxruntime running the quantized graph as
written (ORT_DISABLE_ALL); ge's import, O3 and stream level must give its outputs, and at O3 every
quantized Conv and MatMul computes on integers (QLinearConv / QLinearMatMul) with the Q / DQ pairs
around data movement dropped.

A QDQ model's outputs are on a grid (its last DequantizeLinear's): there the check is in steps of
it. onnxruntime's two evaluations of the static models differ by two (BERT) and three (ResNet)
steps: at ORT_ENABLE_ALL it folds the groups itself, and an integer op's requantization rounds
where the float graph does not, which moves later results by a step now and then. So the folded
levels are held to the nearer of the two references by no more than the references' own distance
(and one step): ResNet-50's O3 and stream level equal ORT_ENABLE_ALL's folded graph (its
products made exact, exact_integer_oracle.py) bit for bit. Each folded op equals onnxruntime's
integer op bit for bit (test_fold_qdq.py). The dynamic models' outputs are float: within the
corpus's tolerance."""

from __future__ import annotations

import collections

import numpy as np
import onnx
import pytest
from exact_integer_oracle import exact_model

from bench import corpus
from ge.frontend import models
from ge.ge_dialects import ge

ort = pytest.importorskip("onnxruntime")
quantization = pytest.importorskip("onnxruntime.quantization")
from onnxruntime.quantization.shape_inference import quant_pre_process  # noqa: E402

MODELS = ("resnet50", "bert_base")
FORMS = ("static", "dynamic")


class _Calibration(quantization.CalibrationDataReader):
    def __init__(self, model: onnx.ModelProto):
        self.batches = iter([models.random_inputs(model, seed) for seed in range(1, 4)])

    def get_next(self):
        return next(self.batches, None)


def quantize(model: onnx.ModelProto, form: str, folder) -> onnx.ModelProto:
    """`model` pre-processed and quantized in `form` ("static" or "dynamic")."""
    onnx.save(model, folder / "float.onnx")
    quant_pre_process(folder / "float.onnx", folder / "pre.onnx", skip_symbolic_shape=True)
    if form == "static":
        quantization.quantize_static(
            folder / "pre.onnx",
            folder / "int8.onnx",
            _Calibration(model),
            quant_format=quantization.QuantFormat.QDQ,
            per_channel=True,
            weight_type=quantization.QuantType.QInt8,
            activation_type=quantization.QuantType.QUInt8,
        )
    else:
        quantization.quantize_dynamic(
            folder / "pre.onnx", folder / "int8.onnx", weight_type=quantization.QuantType.QInt8, reduce_range=True
        )
    return onnx.load(folder / "int8.onnx")


@pytest.fixture(scope="module", params=[(m, f) for m in MODELS for f in FORMS], ids=lambda p: f"{p[0]}-{p[1]}")
def quantized(request, tmp_path_factory):
    """(model name, form, the float model, the quantized model, its inputs, the reference outputs,
    the imported module)."""
    name, form = request.param
    float_model = models.small(name)
    model = quantize(float_model, form, tmp_path_factory.mktemp(f"{name}-{form}"))
    feeds = models.random_inputs(float_model, seed=7)
    folder = tmp_path_factory.mktemp(f"{name}-{form}-ort")
    options = ort.SessionOptions()
    options.optimized_model_filepath = str(folder / "folded.onnx")
    ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    folded = exact_model(onnx.load(folder / "folded.onnx"))
    want = [_run_ort(folded, feeds), _run_ort(model, feeds)]  # ORT_ENABLE_ALL's folded graph, the QDQ graph
    return name, form, float_model, model, feeds, want, corpus.imported(model)


def _run_ort(model: onnx.ModelProto, feeds) -> dict[str, np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds)))


def output_steps(model: onnx.ModelProto) -> dict[str, float]:
    """The grid step of each graph output a DequantizeLinear with a constant scale makes."""
    inits = {t.name: t for t in model.graph.initializer}
    steps = {}
    for node in model.graph.node:
        outputs = {o.name for o in model.graph.output}
        if node.op_type == "DequantizeLinear" and node.output[0] in outputs and node.input[1] in inits:
            steps[node.output[0]] = float(onnx.numpy_helper.to_array(inits[node.input[1]]).max())
    return steps


def assert_matches(model: onnx.ModelProto, got: dict[str, np.ndarray], references: list[dict[str, np.ndarray]]):
    """On a quantized output: as near the nearer reference as the references are to each other,
    and at least within one output step; else within the corpus's relative tolerance of the QDQ
    graph's."""
    steps = output_steps(model)
    for name, value in references[-1].items():
        if name in steps:
            spread = max(float(np.abs(r[name].astype(np.float64) - value).max()) for r in references)
            allowed = max(steps[name], spread) * (1 + 1e-6)
            off = min(float(np.abs(got[name].astype(np.float64) - r[name]).max()) for r in references)
            assert off <= allowed, f"{name}: {off / steps[name]:.2f} steps of {steps[name]} off"
        else:
            assert corpus.relative_error(value, got[name]) <= corpus.TOLERANCE, name


def test_import_equals_onnxruntime(quantized):
    """The import computes the QDQ graph as written: ORT_DISABLE_ALL's outputs, bit for bit on
    the static models' grids."""
    _, form, _, model, feeds, want, module = quantized
    got = corpus.run(module, feeds)
    assert_matches(model, got, want[1:])
    if form == "static":
        for name, value in want[1].items():
            np.testing.assert_array_equal(got[name], value)


def test_o3_and_the_stream_level_equal_onnxruntime(quantized):
    name, form, _, model, feeds, want, module = quantized
    o3 = corpus.optimized(module, 3)
    assert_matches(model, corpus.run(o3, feeds), want)
    assert_matches(model, corpus.run(corpus.lowered(o3), feeds), want)
    if form != "static":
        return
    ops = collections.Counter(type(op) for op in o3.walk())
    quantized_nodes = collections.Counter(n.op_type for n in model.graph.node)
    if name == "resnet50":
        convs = sum(n.op_type == "Conv" for n in model.graph.node)
        assert ops[ge.QLinearConvOp] == convs and ops[ge.ConvOp] == 0
    else:  # every MatMul quantize_static quantized; its Gemm ops stay float (no integer Gemm)
        assert ops[ge.QLinearMatMulOp] == quantized_nodes["MatMul"] and ops[ge.MatMulOp] == 0
    # data movement runs on the integers: no Q / DQ pair is left around a reshape or transpose
    for op in o3.walk():
        if isinstance(op, ge.ReshapeOp | ge.TransposeOp | ge.MaxPoolOp) and isinstance(
            op.operands[0].owner, ge.DequantizeLinearOp
        ):
            assert not any(isinstance(u.operation, ge.QuantizeLinearOp) for u in op.results[0].uses)


@pytest.mark.mutation
@pytest.mark.parametrize("quantized", [("resnet50", "static")], indirect=True, ids=["resnet50-static"])
def test_mutation_a_requantization_off_by_one_step_is_caught(quantized, monkeypatch):
    """The folded convs' requantization one step off (their output zero point moved by one): the
    stream level's outputs leave both references' grids."""
    from ge.interpreter.kernels import quantize as kernels

    _, _, _, model, feeds, want, module = quantized
    right = kernels._requantize

    def off_by_one(acc, multiplier, zero):
        q = right(acc, multiplier, zero)
        return np.clip(q.astype(np.int16) + 1, np.iinfo(q.dtype).min, np.iinfo(q.dtype).max).astype(q.dtype)

    monkeypatch.setattr(kernels, "_requantize", off_by_one)
    with pytest.raises(AssertionError, match="steps"):
        assert_matches(model, corpus.run(corpus.optimized(module, 3), feeds), want)
