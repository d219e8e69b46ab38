"""Issue 12's interface block, call for call, on the built-in ResNet-50 (frontend/models.py) at its
small size at a 32x32 image (every layer, weight and fusion of the 224x224 one; the calls are what
is tested, and the full-size numerics are test_models_onnxruntime's).

Every call of the block runs as written (only `build_graph`, which needs PyTorch, is checked for its
one-line refusal where torch is missing); the outputs are checked against onnxruntime, and
`compile` -> `save` -> `load` -> `run` against compiling afresh (bit for bit).
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import onnx
import pytest

import ge
from ge.frontend import models

onnxruntime = pytest.importorskip("onnxruntime")

RTOL, ATOL = 1e-3, 1e-4  # f32 reordering over 50 layers (the fused and re-laid-out program)


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    """resnet50.onnx in a folder, its input and onnxruntime's output."""
    folder = tmp_path_factory.mktemp("resnet")
    model = models.small("resnet50", batch=1, image=32)
    onnx.save(model, folder / "resnet50.onnx")
    inputs = models.random_inputs(model, seed=0)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (expected,) = session.run(None, inputs)
    return folder, inputs, expected


def _close(actual, expected, rtol=RTOL, atol=ATOL) -> None:
    np.testing.assert_allclose(np.asarray(actual, np.float32), expected, rtol=rtol, atol=atol)


def test_building_calls_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np_array = np.random.default_rng(0).standard_normal((64, 3, 7, 7)).astype(np.float16)
    g = ge.Graph()
    x = g.placeholder(shape=[64, 3, 224, 224], dtype="float16", name="x")
    w = g.const(value=np_array, name="conv1_w")
    y = g.op("Conv2D", inputs=[x, w], attrs={"stride": [1, 1]})
    n = g.add_input("input", shape=[1, 3, 32, 32])  # the block's 224x224 draws a 200M-weight linear layer
    c = g.add_conv2d(n, out_channels=64, kernel_size=7, stride=2)
    b = g.add_batchnorm(c)
    r = g.add_relu(b)
    m = g.add_maxpool(r, kernel_size=3, stride=2)
    f = g.add_linear(m, out_features=1000)
    s = g.add_softmax(f)
    assert list(y.shape) == [64, 64, 218, 218] and list(s.shape) == [1, 1000]
    assert g.inputs == ["x", "input"] and len(g.outputs) == 2  # y and s: nothing uses them
    assert [node.type for node in g.nodes if node.type != "Const"][:2] == ["Conv2D", "Conv2D"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # without Graphviz: graph.dot only, with a warning
        written = g.visualize("graph.png")
    assert written.exists() and (tmp_path / "graph.dot").read_text().startswith("digraph")
    g.module.verify()


def test_the_interface_block_on_resnet50(resnet, tmp_path, monkeypatch):
    folder, input_data, expected = resnet
    monkeypatch.chdir(folder)

    # building and parsing
    graph = ge.GraphParser().parse_onnx("resnet50.onnx")
    if importlib.util.find_spec("torch") is None:
        with pytest.raises(ge.GEError, match=r"build_graph needs PyTorch \(pip install ge-compiler\[torch\]\)"):
            ge.build_graph(object(), [np.zeros((1, 3, 32, 32), np.float32)])

    # optimizing
    opt = ge.GraphOptimizer()
    g1 = opt.apply_standard_optimizations(graph)
    g2 = opt.apply_advanced_optimizations(graph)
    fused = opt.apply_operator_fusion(graph)
    lean = opt.apply_memory_optimization(graph)
    mixed = opt.apply_mixed_precision_optimization(
        graph, target_precision="float16", preserve_precision_layers=["input", "output"]
    )
    speedup = opt.estimate_speedup(graph, g1)
    usage = ge.MemoryOptimizer.calculate_memory_usage(graph, batch_size=32)
    pattern = ge.FusionPattern(
        anchor="Conv2D", followers=["BatchNorm"], constraint=lambda node: node["data_format"] == "NCHW"
    )
    params = ["conv1.weight", "fc.weight"]
    checkpoints = ["/layer1/layer1.0/relu_2/Relu", "/layer3/layer3.0/relu_2/Relu"]
    backward = ge.grad(graph, wrt=params, checkpoints=checkpoints, loss_kind="softmax_cross_entropy")

    # compiling, saving, loading
    compiled = ge.GraphCompiler().compile(g1, target="npu", optimization_level=3)
    weight_bytes = sum(len(t.raw_data) for t in onnx.load(folder / "resnet50.onnx").graph.initializer)
    assert compiled.binary_size > weight_bytes  # the weights are in the artifact
    assert compiled.compilation_time > 0 and 40 <= compiled.num_operators < 200
    compiled.save(tmp_path / "resnet50_compiled.ge")
    loaded = ge.GraphCompiler.load(tmp_path / "resnet50_compiled.ge")

    # executing and profiling
    ex = ge.GraphExecutor()
    ex.load_graph(loaded)
    out = ex.run(input_data)
    prof = ge.GraphProfiler()
    prof.profile(ex, input_data)
    figures = (prof.npu_utilization, prof.memory_bandwidth_utilization, prof.compute_utilization)
    sess = ge.Session()
    sess.set_option("graph_sink", True)
    sess.set_option("stream_num", 4)
    sess.compile(graph)
    session_out = sess.run(graph, input_data)

    # the numbers: against onnxruntime, and the saved artifact against a fresh compile
    _close(out, expected)
    _close(session_out, expected)
    fresh = ge.GraphExecutor().load_graph(ge.GraphCompiler(cache=False).compile(g1)).run(input_data)
    np.testing.assert_array_equal(out, fresh)
    run = ge.GraphExecutor()
    for optimized in (g1, fused, lean):
        _close(run.load_graph(optimized).run(input_data), expected)
    for low_precision in (g2, mixed):  # f16 inside; the softmax-free logits keep about 3 digits
        _close(run.load_graph(low_precision).run(input_data), expected, rtol=5e-2, atol=5e-2)

    with_pattern = ge.GraphOptimizer(fusion_patterns=[pattern]).apply_operator_fusion(graph)
    # every BatchNorm is folded into its conv before UB fusion: the pattern finds none to group, and
    # each conv (+ its ReLU) is one kernel, as without the pattern (the classifier's Gemm is one too,
    # with the flatten it reads through, fuse-views)
    assert not [n for n in with_pattern.nodes if n.type == "BatchNorm"]
    assert [n.type for n in with_pattern.nodes] == [n.type for n in fused.nodes]
    assert sum(n.type.startswith("fused") for n in with_pattern.nodes) == 50
    _close(run.load_graph(with_pattern).run(input_data), expected)

    assert speedup > 1
    assert usage.total > ge.MemoryOptimizer.calculate_memory_usage(graph, batch_size=1).total
    assert {f"{p}_grad" for p in params} <= set(backward.outputs)
    assert all(0 < v <= 1 for v in figures)
    assert prof.outputs is not None
    for shown in (graph, compiled, loaded, ex, prof, sess, opt, pattern, usage):
        assert repr(shown) and "\n" not in repr(shown)
