"""partition-dynamic splits a function of unknown shapes into GE's known and unknown clusters: a
two-tower model (an image tower of static shapes, a text tower over a sequence of unknown length,
their nodes interleaved as an exporter may order them) gets its image tower sunk whole as a known
subgraph and the rest bound when it runs; a known cluster below static_model_ops_lower_limit stays
dynamic. Numbers equal onnxruntime at two lengths; the modeled time falls by the launches, shape
inference and tiling of the sunk ops. Mutation: clustering in program order (no grouping) sinks
less of the interleaved tower."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.control_flow import UNKNOWN_SHAPE_ATTR, is_host_program
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.differential import relative_error
from ge.interpreter.host_program import host_time
from ge.interpreter.runner import main_function
from ge.lowering.run_time import run_dynamic
from ge.passes import partition_dynamic
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import load_target
from ge.tools.common import make_context

F32, I64 = onnx.TensorProto.FLOAT, onnx.TensorProto.INT64
LOWER = "partition-dynamic{{static_model_ops_lower_limit={limit}}},lower-to-tasks,plan-memory,lower-to-streams"


def two_towers() -> onnx.ModelProto:
    rng = np.random.default_rng(0)

    def weight(name, *shape):
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)

    inits = [
        weight("conv1.weight", 8, 3, 3, 3),
        weight("conv2.weight", 8, 8, 3, 3),
        weight("fc.weight", 8, 8),
        weight("embed.weight", 50, 8),
        weight("proj.weight", 8, 8),
        numpy_helper.from_array(np.array([1], np.int64), "axes"),
    ]
    image = [
        helper.make_node("Conv", ["image", "conv1.weight"], ["c1"], pads=[1, 1, 1, 1], name="image/conv1"),
        helper.make_node("Relu", ["c1"], ["r1"], name="image/relu1"),
        helper.make_node("Conv", ["r1", "conv2.weight"], ["c2"], pads=[1, 1, 1, 1], name="image/conv2"),
        helper.make_node("Relu", ["c2"], ["r2"], name="image/relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gp"], name="image/pool"),
        helper.make_node("Flatten", ["gp"], ["flat"], name="image/flatten"),
        helper.make_node("MatMul", ["flat", "fc.weight"], ["img"], name="image/fc"),
        helper.make_node("Tanh", ["img"], ["img_t"], name="image/tanh"),
    ]
    text = [
        helper.make_node("Gather", ["embed.weight", "text"], ["tok"], name="text/embed"),
        helper.make_node("MatMul", ["tok", "proj.weight"], ["tp"], name="text/proj"),
        helper.make_node("Relu", ["tp"], ["tr"], name="text/relu"),
        helper.make_node("ReduceMean", ["tr", "axes"], ["txt"], keepdims=0, name="text/mean"),
    ]
    interleaved = [n for pair in zip(image, [*text, *[None] * 4]) for n in pair if n is not None]
    nodes = [*interleaved, helper.make_node("Mul", ["img_t", "txt"], ["score"], name="join/mul")]
    inputs = [
        helper.make_tensor_value_info("image", F32, [1, 3, 16, 16]),
        helper.make_tensor_value_info("text", I64, [1, "seq"]),
    ]
    graph = helper.make_graph(nodes, "two_towers", inputs, [helper.make_tensor_value_info("score", F32, [1, 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


@pytest.fixture(scope="module")
def model() -> onnx.ModelProto:
    return two_towers()


@pytest.fixture(scope="module")
def o3(model):
    module, weights = import_model(model)
    attach_weights(module, weights)
    GeOptimizePass(level=3).apply(make_context(), module)
    return module


def _lowered(o3, limit: int):
    module = clone_with_weights(o3)
    apply_all(make_context(), module, parse_passes(LOWER.format(limit=limit)))
    return module


def _functions(module) -> dict[str, object]:
    return {f.sym_name.data: f for f in module.ops}


def _sunk_ops(module) -> int:
    """The device ops of the known subgraphs (what runs sunk, as one launch each)."""
    return sum(
        1
        for name, fn in _functions(module).items()
        if name.endswith("_know")
        for op in fn.body.block.ops
        if op.name not in ("ge.constant", "func.return")
    )


def test_the_image_tower_is_sunk_and_the_rest_bound_when_it_runs(model, o3):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    partitioned, whole = _lowered(o3, 4), _lowered(o3, 1000)
    functions = _functions(partitioned)
    assert is_host_program(main_function(partitioned))
    assert UNKNOWN_SHAPE_ATTR not in functions["main_sub_0_know"].attributes
    assert UNKNOWN_SHAPE_ATTR in functions["main_sub_1_unknow"].attributes
    assert _sunk_ops(partitioned) == 6  # the whole tower: its input's TransData, 2 convs, pool, flatten, fc
    assert UNKNOWN_SHAPE_ATTR in main_function(whole).attributes  # below the limit: one unknown graph
    target = load_target("ascend910b")
    rng = np.random.default_rng(1)
    times = {}
    for seq in (3, 7):
        feeds = {
            "image": rng.standard_normal((1, 3, 16, 16)).astype(np.float32),
            "text": rng.integers(0, 50, (1, seq)).astype(np.int64),
        }
        (want,) = session.run(None, feeds)
        for name, module in (("partitioned", partitioned), ("whole", whole)):
            got, record = run_dynamic(module, feeds)
            assert relative_error(want, got["score"]) <= 1e-5, (name, seq)
            times[name] = host_time(record, target).total_s
        # the sunk tower's kernels are one launch, without shape inference and tiling each
        assert times["partitioned"] < times["whole"], times


def test_mutation_clusters_in_program_order_sink_less_of_the_tower(o3, monkeypatch):
    monkeypatch.setattr(partition_dynamic, "_grouped_order", lambda ops, known: ops)
    assert _sunk_ops(_lowered(o3, 4)) < 6


def test_a_limit_below_one_is_one_line(o3):
    from xdsl.utils.exceptions import DiagnosticException

    with pytest.raises(DiagnosticException, match="static_model_ops_lower_limit must be at least 1, got 0"):
        _lowered(o3, 0)


def test_mutation_a_shape_computed_apart_from_its_reader_cannot_be_bound(monkeypatch):
    """transformers' BertModel partitions into nothing sunk: its static-shaped integer ops compute
    the shapes its dynamic ops read. Taken for known ones (cut apart), the bound subgraph gets the
    shapes as inputs and cannot plan its memory."""
    import gzip
    from pathlib import Path

    from ge.frontend import models
    from ge.lowering.run_time import BindError

    raw = gzip.decompress((Path(__file__).parent.parent / "corpus" / "dynamic" / "hf_bert.onnx.gz").read_bytes())
    bert = onnx.load_from_string(raw)
    module, weights = import_model(bert)
    attach_weights(module, weights)
    GeOptimizePass(level=3, dim_ranges="batch=1:64,seq=1:64").apply(make_context(), module)
    feeds = models.random_inputs(bert, 0, {"batch": 2, "seq": 8})
    whole = _lowered(module, 4)
    assert UNKNOWN_SHAPE_ATTR in main_function(whole).attributes
    run_dynamic(whole, feeds)
    monkeypatch.setattr(
        partition_dynamic, "known_ops", lambda ops: {op for op in ops if partition_dynamic._static_op(op)}
    )
    with pytest.raises(BindError, match="a static memory plan needs static shapes"):
        run_dynamic(_lowered(module, 4), feeds)
