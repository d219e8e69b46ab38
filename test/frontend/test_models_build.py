"""The in-code reference models are valid ONNX and run in onnxruntime."""

from __future__ import annotations

import collections

import numpy as np
import onnx
import pytest

from ge.frontend import models

ort = pytest.importorskip("onnxruntime")

# Small transformer shapes: same graph structure, a fraction of the weights.
TINY_BERT = dict(batch=2, seq=16, layers=2, hidden=64, heads=4, intermediate=128, vocab=100)
TINY_GPT2 = dict(batch=2, seq=16, layers=2, hidden=64, heads=4, vocab=100)


def run(model: onnx.ModelProto, feeds: dict[str, np.ndarray] | None = None) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds if feeds is not None else models.random_inputs(model))


def op_counts(model: onnx.ModelProto) -> collections.Counter:
    return collections.Counter(node.op_type for node in model.graph.node)


def check_and_run(model: onnx.ModelProto, output: str, shape: tuple[int, ...], session=None) -> np.ndarray:
    """Checks `model` and runs it in onnxruntime (through `session` when given: a session of it)."""
    onnx.checker.check_model(model, full_check=True)
    assert [o.name for o in model.graph.output] == [output]
    names = [node.name for node in model.graph.node]
    assert all(names) and len(set(names)) == len(names), "every node needs a unique name"
    for tensor in model.graph.initializer:
        if tensor.data_type in (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16):
            assert tensor.data_type == onnx.TensorProto.FLOAT, tensor.name
    (result,) = run(model) if session is None else session.run(None, models.random_inputs(model))
    assert result.shape == shape
    assert result.dtype == np.float32
    assert np.isfinite(result).all()
    return result


# ---------------------------------------------------------------- CNNs
def test_resnet50_full(references):
    model = references.model("resnet50", "full")[0]
    logits = check_and_run(model, "output", (1, 1000), references.onnxruntime("resnet50", "full"))
    assert 1e-2 < np.abs(logits).max() < 1e3, "activations must neither vanish nor explode"
    counts = op_counts(model)
    assert counts["Conv"] == counts["BatchNormalization"] == 53
    assert counts["Add"] == 16 and counts["Relu"] == 49
    assert counts["MaxPool"] == counts["GlobalAveragePool"] == counts["Flatten"] == counts["Gemm"] == 1
    # convs are bias-free: BN is not folded into them
    assert all(len(n.input) == 2 for n in model.graph.node if n.op_type == "Conv")
    names = {n.name for n in model.graph.node}
    assert {"/layer1/layer1.0/conv1/Conv", "/layer1/layer1.0/relu_2/Relu", "/fc/Gemm"} <= names
    # torchvision v1.5: the stride sits on the 3x3 conv
    conv2 = next(n for n in model.graph.node if n.name == "/layer2/layer2.0/conv2/Conv")
    assert onnx.helper.get_attribute_value(conv2.attribute[-1]) == [2, 2]


def test_mobilenet_v2_full():
    model = models.mobilenet_v2(batch=2)
    logits = check_and_run(model, "output", (2, 1000))
    assert 1e-3 < np.abs(logits).max() < 1e3
    counts = op_counts(model)
    assert counts["Conv"] == counts["BatchNormalization"] == 52
    assert counts["Clip"] == 35 and counts["Add"] == 10
    depthwise = [
        n for n in model.graph.node if n.op_type == "Conv" and any(a.name == "group" and a.i > 1 for a in n.attribute)
    ]
    assert len(depthwise) == 17
    assert all(len(n.input) == 3 for n in model.graph.node if n.op_type == "Clip")


@pytest.mark.parametrize("opset", [13, 18])
def test_cnn_opsets(opset):
    model = models.resnet50(opset=opset)
    check_and_run(model, "output", (1, 1000))
    assert model.opset_import[0].version == opset


# ---------------------------------------------------------------- BERT
def test_bert_tiny():
    model = models.bert_base(**TINY_BERT)
    check_and_run(model, "last_hidden_state", (2, 16, 64))
    counts = op_counts(model)
    assert counts["LayerNormalization"] == 2 * 2 + 1
    assert counts["Erf"] == counts["Softmax"] == 2
    assert counts["MatMul"] == 2 * (6 + 2)  # six Linear layers, QK^T, PV
    # the head reshapes are fed by traced shape arithmetic, not constants
    producers = {out: n for n in model.graph.node for out in n.output}
    reshape = next(n for n in model.graph.node if n.name == "/encoder/layer.0/attention/self/Reshape")
    concat = producers[reshape.input[1]]
    assert concat.op_type == "Concat"
    unsqueeze = producers[concat.input[0]]
    assert unsqueeze.op_type == "Unsqueeze"
    assert producers[unsqueeze.input[0]].op_type == "Gather"


def test_bert_layer_norm_decomposed_before_opset17():
    kwargs = dict(TINY_BERT, layers=1)
    m16 = models.bert_base(opset=16, **kwargs)
    m17 = models.bert_base(opset=17, **kwargs)
    onnx.checker.check_model(m16, full_check=True)
    assert op_counts(m16)["LayerNormalization"] == 0
    assert op_counts(m16)["ReduceMean"] == 2 * 3
    feeds = models.random_inputs(m17)
    np.testing.assert_allclose(run(m16, feeds)[0], run(m17, feeds)[0], atol=1e-4)


def test_bert_attention_mask_hides_padding():
    model = models.bert_base(**TINY_BERT)
    feeds = models.random_inputs(model)
    padded = feeds["attention_mask"][0] == 0
    assert padded.any() and not padded.all()
    changed = dict(feeds, input_ids=feeds["input_ids"].copy())
    changed["input_ids"][:, padded] = (changed["input_ids"][:, padded] + 1) % TINY_BERT["vocab"]
    before, after = run(model, feeds)[0], run(model, changed)[0]
    np.testing.assert_array_equal(before[:, ~padded], after[:, ~padded])
    assert not np.allclose(before[:, padded], after[:, padded])


def test_bert_base_full_size(references):
    model = references.model("bert_base", "full")[0]
    hidden = check_and_run(model, "last_hidden_state", (1, 128, 768), references.onnxruntime("bert_base", "full"))
    assert np.abs(hidden).max() < 100
    counts = op_counts(model)
    assert counts["LayerNormalization"] == 25 and counts["MatMul"] == 96
    params = sum(int(np.prod(t.dims)) for t in model.graph.initializer if t.data_type == onnx.TensorProto.FLOAT)
    assert 105e6 < params < 115e6  # BERT-base without pooler: ~109M


# ---------------------------------------------------------------- GPT-2
def test_gpt2_default(references):
    model = references.model("gpt2", "full")[0]
    check_and_run(model, "last_hidden_state", (1, 64, 768), references.onnxruntime("gpt2", "full"))
    counts = op_counts(model)
    assert counts["Split"] == counts["Where"] == counts["Tanh"] == 2
    assert counts["LayerNormalization"] == 2 * 2 + 1


@pytest.mark.parametrize("opset", [13, 16, 18])
def test_gpt2_opsets(opset):
    model = models.gpt2(opset=opset, **TINY_GPT2)
    check_and_run(model, "last_hidden_state", (2, 16, 64))


def test_gpt2_is_causal():
    model = models.gpt2(**TINY_GPT2)
    feeds = models.random_inputs(model)
    changed = {"input_ids": feeds["input_ids"].copy()}
    changed["input_ids"][:, -1] = (changed["input_ids"][:, -1] + 1) % TINY_GPT2["vocab"]
    before, after = run(model, feeds)[0], run(model, changed)[0]
    np.testing.assert_array_equal(before[:, :-1], after[:, :-1])
    assert not np.allclose(before[:, -1], after[:, -1])


# ---------------------------------------------------------------- common
def test_models_table():
    assert set(models.MODELS) == {"resnet50", "mobilenet_v2", "bert_base", "gpt2"}


def test_weights_are_deterministic_per_seed():
    first = models.gpt2(seed=3, **TINY_GPT2).SerializeToString()
    assert first == models.gpt2(seed=3, **TINY_GPT2).SerializeToString()
    assert first != models.gpt2(seed=4, **TINY_GPT2).SerializeToString()


def test_random_inputs():
    model = models.bert_base(**TINY_BERT)
    feeds = models.random_inputs(model, seed=1)
    assert set(feeds) == {"input_ids", "attention_mask"}
    ids = feeds["input_ids"]
    assert ids.dtype == np.int64 and ids.shape == (2, 16)
    assert ids.min() >= 0 and ids.max() < TINY_BERT["vocab"]
    mask = feeds["attention_mask"]
    assert mask.dtype == np.int64 and mask[:, 0].all() and not mask[:, -1].any()
    np.testing.assert_array_equal(ids, models.random_inputs(model, seed=1)["input_ids"])

    image = models.random_inputs(models.mobilenet_v2())["input"]
    assert image.dtype == np.float32 and image.shape == (1, 3, 224, 224)


def test_opset_out_of_range():
    with pytest.raises(ValueError):
        models.resnet50(opset=12)
