"""ge.GraphCompiler / ge.CompiledGraph: compile, cache, save, load, and the same outputs throughout."""

import sys
import time
from pathlib import Path

import numpy as np
import pytest

import ge
from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import run
from ge.interpreter.stream_executor import is_lowered

sys.path.insert(0, str(Path(__file__).parent.parent / "tools"))
from test_artifact import INPUTS, small_model


def graph_of(model) -> "ge.Graph":
    module, weights = import_model(model)
    attach_weights(module, weights)
    return ge.Graph.from_module(module)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("GE_CACHE_DIR", str(folder))
    return folder


def test_compile_save_load_run(tmp_path, cache):
    graph = graph_of(small_model())
    compiled = ge.GraphCompiler().compile(graph, target="npu", optimization_level=3)
    assert isinstance(compiled, ge.CompiledGraph)
    assert compiled.target == "ascend910b" and compiled.options["optimization_level"] == 3
    assert compiled.num_operators == sum(1 for op in compiled.module.walk() if op.name == "task.kernel") > 0
    assert compiled.compilation_time > 0 and not compiled.cache_hit
    assert compiled.pipeline.startswith("ge-optimize{level=3") and "lower-to-streams" in compiled.pipeline
    assert compiled.inputs == [{"name": "x", "shape": [2, 3, 8, 8], "dtype": "float32"}]
    assert not is_lowered(graph.module)  # the graph itself is not compiled in place
    path = tmp_path / "small.ge"
    compiled.save(path)
    assert compiled.binary_size == path.stat().st_size
    loaded = ge.GraphCompiler.load(path)
    assert loaded.binary_size == compiled.binary_size and loaded.num_operators == compiled.num_operators
    assert loaded.options == compiled.options and loaded.target == compiled.target
    want = run(compiled.module, INPUTS)["y"]
    np.testing.assert_array_equal(run(loaded.module, INPUTS)["y"], want)
    fresh = ge.GraphCompiler(cache=False).compile(graph_of(small_model()))
    np.testing.assert_array_equal(run(fresh.module, INPUTS)["y"], want)
    np.testing.assert_allclose(want, run(graph.module, INPUTS)["y"], rtol=1e-4, atol=1e-4)
    text = repr(compiled)
    assert text.startswith("CompiledGraph(target=ascend910b, O3, graph sink, ")
    assert f"{compiled.num_operators} kernels" in text and "KiB" in text and "compiled in" in text
    assert f"loaded from {path} in" in repr(loaded)


def test_the_cache(tmp_path, cache):
    first = ge.GraphCompiler().compile(graph_of(small_model()))
    second = ge.GraphCompiler().compile(graph_of(small_model()))
    assert not first.cache_hit and second.cache_hit and "from the cache" in repr(second)
    assert second.manifest == first.manifest
    np.testing.assert_array_equal(run(second.module, INPUTS)["y"], run(first.module, INPUTS)["y"])
    assert not ge.GraphCompiler().compile(graph_of(small_model()), cache=False).cache_hit
    assert not ge.GraphCompiler(cache=False).compile(graph_of(small_model())).cache_hit
    other = tmp_path / "other"
    assert not ge.GraphCompiler(cache_dir=other).compile(graph_of(small_model())).cache_hit
    assert len(list(other.iterdir())) == 1
    chip = ge.GraphCompiler().compile(graph_of(small_model()), target="ascend910")
    assert chip.target == "ascend910" and not chip.cache_hit


def test_errors_are_one_line_geerrors(tmp_path, cache):
    compiler = ge.GraphCompiler()
    graph = graph_of(small_model())
    for kwargs, reason in (
        ({"target": "ascend310"}, "compile: unknown target 'ascend310'"),
        ({"optimization_level": 5}, "compile: optimization level 5"),
        ({"mode": "batch"}, "compile: mode 'batch'"),
        ({"precision_mode": "fp4"}, "compile: precision mode 'fp4'"),
    ):
        with pytest.raises(ge.GEError, match=reason) as e:
            compiler.compile(graph, **kwargs)
        assert "\n" not in str(e.value)
    with pytest.raises(ge.GEError, match="compile: expected a ge.Graph, not str"):
        compiler.compile("model.onnx")
    compiled = compiler.compile(graph)
    path = tmp_path / "m.ge"
    compiled.save(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0x04
    path.write_bytes(data)
    with pytest.raises(ge.GEError, match=f"load: {path}: ") as e:
        ge.GraphCompiler.load(path)
    assert "\n" not in str(e.value)
    with pytest.raises(ge.GEError, match="save: .*does not exist"):
        compiled.save(tmp_path / "absent" / "m.ge")


def test_resnet50_compile_save_load_run_and_the_cache(tmp_path, cache, capsys):
    """The built-in ResNet-50 (its small size: every layer, narrower, at a 64x64 image): the loaded
    artifact runs like a fresh compile; a recompile is a cache hit. The figures go to the terminal
    (pytest -s) for the report."""
    model = models.small("resnet50", batch=1)
    compiled = ge.GraphCompiler().compile(graph_of(model))
    path = tmp_path / "resnet50.ge"
    compiled.save(path)
    start = time.perf_counter()
    loaded = ge.GraphCompiler.load(path)
    load_seconds = time.perf_counter() - start
    hit = ge.GraphCompiler().compile(graph_of(model))
    hit_seconds = hit.compilation_time
    hit_module = time.perf_counter()
    hit.module  # noqa: B018  (a hit parses the IR only when asked)
    hit_module = time.perf_counter() - hit_module
    assert hit.cache_hit and hit.manifest == compiled.manifest
    assert hit_seconds < compiled.compilation_time
    x = {"input": np.random.default_rng(0).standard_normal((1, 3, 64, 64)).astype(np.float32)}
    want = run(compiled.module, x)["output"]
    np.testing.assert_array_equal(run(loaded.module, x)["output"], want)
    np.testing.assert_array_equal(run(hit.module, x)["output"], want)
    with capsys.disabled():
        print(
            f"\nresnet50: compile {compiled.compilation_time:.2f} s, artifact {compiled.binary_size} bytes, "
            f"load {load_seconds:.2f} s, cache hit {hit_seconds:.2f} s (+{hit_module:.2f} s to parse the module), "
            f"{compiled.num_operators} kernels"
        )


def test_a_built_graph_compiles_and_loads(tmp_path, cache):
    g = ge.Graph()
    n = g.add_input("input", shape=[1, 3, 32, 32])
    c = g.add_conv2d(n, out_channels=8, kernel_size=3, stride=2)
    m = g.add_maxpool(g.add_relu(g.add_batchnorm(c)), kernel_size=3, stride=2)
    g.add_softmax(g.add_linear(m, out_features=10))
    compiled = ge.GraphCompiler().compile(g, target="ascend910b", optimization_level=3)
    compiled.save(tmp_path / "built.ge")
    loaded = ge.GraphCompiler.load(tmp_path / "built.ge")
    x = {"input": np.random.default_rng(2).standard_normal((1, 3, 32, 32)).astype(np.float32)}
    (name,) = g.outputs
    want = run(compiled.module, x)[name]
    np.testing.assert_array_equal(run(loaded.module, x)[name], want)
    np.testing.assert_allclose(want, run(g.module, x)[name], rtol=1e-4, atol=1e-5)
