"""GlobalMaxPool, LpPool, GlobalLpPool, MaxUnpool and InstanceNormalization against onnxruntime
beyond the ONNX node tests: 1-D/3-D, every p, ceil mode, dilations, SAME_LOWER, f16, MaxUnpool of
overlapping pools (repeated indices) with a constant or a runtime output_shape; an index out of
range is refused in one line; mutations the comparisons catch.

Each case is one ONNX node, imported with the ONNX importer and run by the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_oracle import compare_with_onnxruntime, node_model

from ge.frontend.onnx_importer import import_model
from ge.interpreter.ge import KernelError
from ge.interpreter.kernels import pooling
from ge.interpreter.runner import run

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(0)


def rand(*shape: int, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def compare(op_type: str, inputs: dict, rtol: float = 1e-4, atol: float = 1e-5, constants=(), **attrs) -> None:
    feeds = {n: v for n, v in inputs.items() if v is not None and n not in constants}
    compare_with_onnxruntime(node_model(op_type, inputs, 1, constants, **attrs), feeds, rtol, atol)


@pytest.mark.parametrize("shape", [(2, 3, 7), (1, 2, 4, 5), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_global_max_pool(shape, dtype):
    compare("GlobalMaxPool", {"X": rand(*shape, dtype=dtype)})


LP_POOLS = {
    "ceil_pads_strides": ((1, 2, 7, 8), dict(kernel_shape=[3, 2], strides=[2, 3], pads=[1, 0, 1, 1], ceil_mode=1)),
    "dilated": ((1, 2, 9, 9), dict(kernel_shape=[2, 3], dilations=[2, 2], strides=[1, 2])),
    "same_lower": ((1, 2, 7, 6), dict(kernel_shape=[3, 2], strides=[2, 2], auto_pad="SAME_LOWER")),
    "pool1d": ((2, 3, 11), dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
    "pool3d": ((1, 2, 5, 6, 7), dict(kernel_shape=[2, 3, 2], strides=[2, 2, 3], pads=[0, 1, 1, 1, 1, 0])),
}


@pytest.mark.parametrize("name", sorted(LP_POOLS))
@pytest.mark.parametrize("p", [1, 2, 3])
def test_lp_pool(name, p):
    shape, attrs = LP_POOLS[name]
    compare("LpPool", {"X": rand(*shape)}, p=p, **attrs)


def test_lp_pool_f16():
    compare("LpPool", {"X": rand(1, 3, 6, 6, dtype=np.float16)}, rtol=2e-3, atol=2e-3, kernel_shape=[3, 3], p=3)


@pytest.mark.parametrize("shape", [(2, 3, 7), (1, 2, 4, 5), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_lp_pool(shape, p):
    compare("GlobalLpPool", {"X": rand(*shape)}, p=p)


def _pool_indices(x: np.ndarray, **attrs) -> tuple[np.ndarray, np.ndarray]:
    """onnxruntime's MaxPool of `x`: (values, indices)."""
    model = node_model("MaxPool", {"X": x}, 2, **attrs)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    values, indices = session.run(None, {"X": x})
    return values, indices


UNPOOLS = {
    "nonoverlapping": ((2, 3, 6, 8), dict(kernel_shape=[2, 2], strides=[2, 2])),
    "overlapping": ((1, 2, 7, 7), dict(kernel_shape=[3, 3], strides=[1, 1])),  # indices repeat
    "padded_1d": ((2, 2, 9), dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
    "pool3d": ((1, 2, 4, 6, 6), dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2])),
}


@pytest.mark.parametrize("name", sorted(UNPOOLS))
def test_max_unpool_of_max_pool(name):
    shape, attrs = UNPOOLS[name]
    values, indices = _pool_indices(rand(*shape), **attrs)
    compare("MaxUnpool", {"X": values, "I": indices}, **attrs)


@pytest.mark.parametrize("constant", [True, False])
def test_max_unpool_output_shape(constant):
    """An odd input pooled 2x2: the default unpooled size drops its last row and column, and
    output_shape (an initializer, or a graph input whose values ge sees at run time) restores them."""
    values, indices = _pool_indices(rand(1, 2, 5, 7), kernel_shape=[2, 2], strides=[2, 2])
    inputs = {"X": values, "I": indices, "output_shape": np.array([1, 2, 5, 7], np.int64)}
    compare("MaxUnpool", inputs, constants=["output_shape"] if constant else [], kernel_shape=[2, 2], strides=[2, 2])


def test_max_unpool_f16():
    values, indices = _pool_indices(rand(1, 2, 6, 6), kernel_shape=[2, 2], strides=[2, 2])
    compare("MaxUnpool", {"X": values.astype(np.float16), "I": indices}, kernel_shape=[2, 2], strides=[2, 2])


def _run_unpool(indices: np.ndarray, output_shape=None):
    inputs = {"X": rand(1, 1, 2, 2), "I": indices}
    if output_shape is not None:
        inputs["output_shape"] = np.asarray(output_shape, np.int64)
    module, weights = import_model(node_model("MaxUnpool", inputs, 1, kernel_shape=[2, 2], strides=[2, 2]))
    return run(module, inputs, weights)


def test_max_unpool_index_out_of_range_is_refused():
    with pytest.raises(KernelError, match=r"ge.max_unpool .*: index 16 is out of range for an output of 16 elements"):
        _run_unpool(np.array([0, 5, 7, 16]).reshape(1, 1, 2, 2))
    with pytest.raises(KernelError, match="index -1 is out of range"):
        _run_unpool(np.array([0, 5, 7, -1]).reshape(1, 1, 2, 2))


def test_max_unpool_runtime_output_shape_is_checked():
    with pytest.raises(
        KernelError, match=r"output_shape \[1, 1, 3, 4\] is smaller than the unpooled size \[1, 1, 4, 4\]"
    ):
        _run_unpool(np.array([0, 5, 7, 9]).reshape(1, 1, 2, 2), [1, 1, 3, 4])


@pytest.mark.parametrize("shape", [(2, 3, 7), (1, 2, 4, 5), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("epsilon", [1e-5, 0.5])
def test_instance_norm(shape, epsilon):
    channels = shape[1]
    inputs = {"input": rand(*shape) * 3 + 1, "scale": rand(channels), "B": rand(channels)}
    compare("InstanceNormalization", inputs, atol=1e-4, epsilon=epsilon)


def test_instance_norm_f16():
    inputs = {name: rand(*s, dtype=np.float16) for name, s in (("input", (2, 3, 8, 8)), ("scale", (3,)), ("B", (3,)))}
    compare("InstanceNormalization", inputs, rtol=2e-3, atol=5e-3)


# -- mutations --------------------------------------------------------------------------------------


def test_mutation_first_write_wins_is_caught(monkeypatch):
    """Mutation: MaxUnpool keeps the first write of a repeated index (a max pool repeats an index
    only with its one value, so distinct values are written at one index here)."""
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32).reshape(1, 1, 2, 2)
    indices = np.array([5, 5, 5, 6]).reshape(1, 1, 2, 2)
    compare("MaxUnpool", {"X": x, "I": indices}, kernel_shape=[2, 2], strides=[2, 2])

    def first_wins(op, ins):
        flip = {"X": ins["X"][..., ::-1, ::-1].copy(), "I": ins["I"][..., ::-1, ::-1].copy()}
        return pooling.max_unpool(op, {**ins, **flip})

    _patch_kernel(monkeypatch, "MaxUnpoolOp", first_wins)
    with pytest.raises(AssertionError, match="out0"):
        compare("MaxUnpool", {"X": x, "I": indices}, kernel_shape=[2, 2], strides=[2, 2])


def test_mutation_an_lp_pool_without_its_root_is_caught(monkeypatch):
    monkeypatch.setattr(pooling, "_root", lambda total, p: total)
    with pytest.raises(AssertionError, match="out0"):
        compare("LpPool", {"X": rand(1, 2, 5, 5)}, kernel_shape=[2, 2], p=2)


def _patch_kernel(monkeypatch, op_name: str, kernel) -> None:
    """Replaces a kernel in the table every interpreter built from GeFunctions reads."""
    from xdsl.interpreter import impl, register_impls

    from ge.ge_dialects import ge
    from ge.interpreter.ge import GeFunctions
    from ge.interpreter.kernels.checked import kernel_impl

    op_cls = getattr(ge, op_name)

    @register_impls
    class Mutated(GeFunctions):
        run = impl(op_cls)(kernel_impl(kernel))

    table = dict(GeFunctions._impls())
    table[op_cls] = dict(Mutated._impls())[op_cls]
    monkeypatch.setattr(GeFunctions, "_impls", classmethod(lambda cls: table.items()))


@pytest.mark.parametrize("opset", [7, 9, 11, 12])
def test_the_family_from_old_opsets(opset):
    """Models at opsets 7 to 12 (upgraded at import) with ConvTranspose, InstanceNormalization, the
    Lp pools, GlobalMaxPool and (from opset 9, where it appears) MaxUnpool."""
    import onnx
    from onnx import helper, numpy_helper

    x, w, s = rand(1, 2, 4, 4), rand(2, 3, 3, 3), rand(3)
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w"], ["t"], strides=[2, 2]),
        helper.make_node("InstanceNormalization", ["t", "s", "s"], ["i"]),
        helper.make_node("LpPool", ["i"], ["l"], kernel_shape=[2, 2], p=2),
        helper.make_node("GlobalLpPool", ["l"], ["out0"], p=3),
        helper.make_node("GlobalMaxPool", ["l"], ["out1"]),
    ]
    if opset >= 9:
        nodes += [
            helper.make_node("MaxPool", ["i"], ["mp", "mi"], kernel_shape=[3, 3], strides=[3, 3]),
            helper.make_node("MaxUnpool", ["mp", "mi"], ["out2"], kernel_shape=[3, 3], strides=[3, 3]),
        ]
    outputs = [helper.make_tensor_value_info(f"out{i}", onnx.TensorProto.FLOAT, None) for i in range(2 + (opset >= 9))]
    graph = helper.make_graph(
        nodes,
        "old",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
        outputs,
        initializer=[numpy_helper.from_array(w, "w"), numpy_helper.from_array(s, "s")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)
    compare_with_onnxruntime(model, {"x": x}, 1e-4, 1e-4)
