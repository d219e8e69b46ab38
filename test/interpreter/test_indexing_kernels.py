"""The indexing kernels against onnxruntime on configurations the ONNX node tests leave out: every
axis sign, int32 and negative indices, batch_dims 2, every scatter reduction with repeated indices,
f16 accumulation, zero repeats, k beyond the matrix, float indices and depths, off-diagonal eyes.

Each case is one ONNX node run twice (`test_tensor_kernels.compare`): the inputs after the first as
graph inputs, then as initializers (exact result dims). Out-of-range indices are refused in one line
naming the op, at run time by the kernel and at import by the verifier."""

from __future__ import annotations

import re

import numpy as np
import pytest
from onnx import TensorProto
from onnx.reference import ReferenceEvaluator
from onnx_oracle import assert_output_matches, node_model
from test_tensor_kernels import compare, ints, rand

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.interpreter.kernels import indexing
from ge.interpreter.kernels.checked import KernelError
from ge.interpreter.runner import run

pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(1)


def compare_with_reference(op_type: str, inputs: dict[str, np.ndarray], **attrs) -> list[np.ndarray]:
    """The node run by ge and by onnx's reference implementation (for what onnxruntime lacks),
    every input a graph input; returns ge's outputs."""
    model = node_model(op_type, inputs, 1, **attrs)
    want = ReferenceEvaluator(model).run(None, inputs)
    module, weights = import_model(model)
    got = run(module, inputs, weights)
    for i, expected in enumerate(want):
        assert_output_matches(f"out{i}", got[f"out{i}"], np.asarray(expected), rtol=1e-3, atol=1e-3)
    return [got[f"out{i}"] for i in range(len(want))]


def index(high: int, *shape: int, low: int | None = None, dtype=np.int64) -> np.ndarray:
    """Random indices in [-high, high) (or [low, high))."""
    return RNG.integers(-high if low is None else low, high, shape).astype(dtype)


@pytest.mark.parametrize(
    "data, indices, axis",
    [
        (rand(3, 4, 5), index(3, 2, 4, 5), 0),
        (rand(3, 4, 5), index(5, 3, 2, 7, dtype=np.int32), -1),
        (rand(3, 4, 5, dtype=np.float16), index(4, 1, 6, 2), 1),
        (np.arange(12, dtype=np.int32).reshape(3, 4), index(3, 3, 0), -2),
        (RNG.random((4, 3)) > 0.5, index(3, 4, 3), 1),
    ],
)
def test_gather_elements(data, indices, axis):
    compare("GatherElements", {"data": data, "indices": indices}, axis=axis)


@pytest.mark.parametrize(
    "data, indices, batch_dims",
    [
        (rand(3, 4, 5), index(3, 6, 1), 0),
        (rand(3, 4, 5), index(3, 2, 2, 3, low=0), 0),  # element indices (k = rank)
        (rand(2, 3, 4, 5, dtype=np.float16), index(4, 2, 3, 7, 1), 2),
        (np.arange(60, dtype=np.int64).reshape(3, 4, 5), index(4, 3, 2, 2, low=-4), 1),
    ],
)
def test_gather_nd(data, indices, batch_dims):
    if batch_dims == 1:  # a depth of 2 after one batch dim: the second index runs over 5
        indices[..., 1] = index(5, *indices.shape[:-1])
    compare("GatherND", {"data": data, "indices": indices}, batch_dims=batch_dims)


def distinct(size: int, count: int, others: int, axis: int) -> np.ndarray:
    """ScatterElements indices that name no position twice: `count` distinct ones along the axis
    (of `size`) for each of `others` positions across it, some counted from the end."""
    picks = np.stack([RNG.permutation(size)[:count] for _ in range(others)], axis=1 if axis == 0 else 0)
    return picks - size * (RNG.random(picks.shape) < 0.5)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("axis, dtype", [(0, np.float32), (-1, np.float32), (1, np.float16), (0, np.int32)])
def test_scatter_elements(reduction, axis, dtype):
    """4 x 5 data; "none" writes each position once, the reductions combine repeated ones.
    onnxruntime has no f16 add or mul: onnx's reference implementation is the oracle there."""
    size, others = (4, 5) if axis == 0 else (5, 4)
    shape = (3, others) if axis == 0 else (others, 3)
    indices = distinct(size, 3, others, axis) if reduction == "none" else index(size, *shape)
    updates = rand(*shape, dtype=dtype)
    data = rand(4, 5, dtype=dtype)
    inputs = {"data": data, "indices": indices, "updates": updates}
    if dtype == np.float16 and reduction in ("add", "mul"):
        compare_with_reference("ScatterElements", inputs, axis=axis, reduction=reduction)
    else:
        compare("ScatterElements", inputs, axis=axis, reduction=reduction)


@pytest.mark.parametrize("reduction", ["none", "add", "mul", "max", "min"])
def test_scatter_nd(reduction):
    data = rand(4, 3, 2)
    rows = ints(-1, 2, 0) if reduction == "none" else ints(1, -3, 1, 3, -4)  # repeated rows combine
    compare(
        "ScatterND",
        {"data": data, "indices": rows.reshape(-1, 1), "updates": rand(len(rows), 3, 2)},
        reduction=reduction,
    )
    cells = ints(0, 2, -1, -1, 3, 0, 0, 2).reshape(4, 2)[: 3 if reduction == "none" else 4]
    compare("ScatterND", {"data": data, "indices": cells, "updates": rand(len(cells), 2)}, reduction=reduction)


def test_scatter_nd_f16_add_accumulates_in_f32():
    """64 updates into one row: f32 accumulation rounds once (onnx's reference, adding in f16,
    is 0.19 off in an element of 120 here)."""
    updates = rand(64, 3, dtype=np.float16)
    inputs = {"data": np.zeros((2, 3), np.float16), "indices": np.zeros((64, 1), np.int64), "updates": updates}
    module, weights = import_model(node_model("ScatterND", inputs, 1, reduction="add"))
    got = run(module, inputs, weights)["out0"]
    np.testing.assert_array_equal(got[0], updates.astype(np.float32).sum(0).astype(np.float16))
    np.testing.assert_array_equal(got[1], np.zeros(3, np.float16))


@pytest.mark.parametrize(
    "x, repeats",
    [
        (rand(2, 3, 4), ints(1, 2, 3)),
        (rand(3, 2), ints(0, 2)),
        (np.arange(6, dtype=np.int32).reshape(2, 3), ints(3, 1)),
        (RNG.random((2, 1)) > 0.5, ints(2, 4)),
    ],
)
def test_tile(x, repeats):
    compare("Tile", {"input": x, "repeats": repeats})


@pytest.mark.parametrize("upper", [0, 1])
@pytest.mark.parametrize("k", [None, 2, -1, 100, -100, np.iinfo(np.int64).min])
def test_trilu(upper, k):
    compare("Trilu", {"input": rand(2, 4, 5), "k": None if k is None else np.array(k, np.int64)}, upper=upper)
    compare("Trilu", {"input": np.arange(12, dtype=np.int64).reshape(4, 3), "k": ints(1)}, upper=upper)


@pytest.mark.parametrize(
    "indices, depth, values, axis",
    [
        (index(6, 2, 3), np.array(5, np.int64), np.array([0, 1], np.float32), -1),
        (index(4, 3), np.array([4.7], np.float32), np.array([-1, 3], np.float32), 0),
        (np.array([[1.9, -2.2], [7.0, 0.4]], np.float32), np.array(3, np.int64), np.array([2, 9], np.int64), 1),
        (index(3, 2, 2, dtype=np.int32), np.array(3, np.int32), np.array([0.5, 1.5], np.float32), -3),
    ],
)
def test_one_hot(indices, depth, values, axis):
    compare("OneHot", {"indices": indices, "depth": depth, "values": values}, axis=axis)


@pytest.mark.parametrize("k", [0, 2, -1, 7, -9])
@pytest.mark.parametrize("dtype", [None, TensorProto.INT32, TensorProto.DOUBLE, TensorProto.BOOL])
def test_eye_like(k, dtype):
    """onnxruntime has no bool EyeLike: onnx's reference implementation is the oracle there."""
    attrs = {"k": k} if dtype is None else {"k": k, "dtype": dtype}
    check = compare_with_reference if dtype == TensorProto.BOOL else compare
    check("EyeLike", {"input": rand(3, 5)}, **attrs)
    check("EyeLike", {"input": np.zeros((4, 2), np.int64)}, **attrs)


# -- refusals ------------------------------------------------------------------------------------------


OUT_OF_RANGE = [
    ("GatherElements", {"data": rand(3, 4), "indices": ints(0, -5, 1).reshape(1, 3)}, {"axis": 1}),
    ("GatherND", {"data": rand(3, 4), "indices": ints(2, 4).reshape(1, 2)}, {}),
    ("ScatterElements", {"data": rand(3, 4), "indices": ints(3, 0).reshape(2, 1), "updates": rand(2, 1)}, {}),
    ("ScatterND", {"data": rand(3, 4), "indices": ints(-4).reshape(1, 1), "updates": rand(1, 4)}, {}),
]


@pytest.mark.parametrize("op_type, inputs, attrs", OUT_OF_RANGE, ids=[c[0] for c in OUT_OF_RANGE])
def test_an_index_out_of_range_is_one_line_naming_the_op(op_type, inputs, attrs):
    module, weights = import_model(node_model(op_type, inputs, 1, **attrs))
    with pytest.raises(KernelError) as refused:
        run(module, inputs, weights)
    first = str(refused.value).splitlines()[0]  # the line the tools print (the interpreter adds the IR below)
    assert re.fullmatch(r"ge\.\w+ 'out0': index -?\d+ is out of range for \w+ \d+ of size \d+", first), first
    with pytest.raises(OnnxImportError, match="index -?\\d+ is out of range for a dimension of size"):
        import_model(node_model(op_type, inputs, 1, set(inputs) - {"data"}, **attrs))


def test_a_negative_depth_at_run_time_is_refused():
    inputs = {"indices": ints(1, 2), "depth": np.array(-3, np.int64), "values": np.array([0, 1], np.float32)}
    module, weights = import_model(node_model("OneHot", inputs, 1))
    with pytest.raises(KernelError, match="ge.one_hot 'out0': depth -3 is negative"):
        run(module, inputs, weights)


# -- mutations -------------------------------------------------------------------------------------------


def test_without_the_range_check_an_index_wraps_twice(monkeypatch):
    """Mutation: the kernels' range check dropped; index -5 of an axis of 4 then silently reads
    element 3 (numpy wraps it again) instead of being refused."""
    monkeypatch.setattr(indexing, "_wrapped", lambda i, size, what: np.where(i < 0, i + size, i))
    op_type, inputs, attrs = OUT_OF_RANGE[0]
    module, weights = import_model(node_model(op_type, inputs, 1, **attrs))
    got = run(module, inputs, weights)["out0"]
    np.testing.assert_array_equal(got, inputs["data"][:1, [0, 3, 1]])


def test_without_the_shape_check_unknown_dims_crash(monkeypatch):
    """Mutation: the kernel's check of indices against the data's dims dropped; indices longer
    than data along a dim the graph leaves unknown then end in numpy's IndexError, not one line."""
    inputs = {"data": rand(2, 3), "indices": index(2, 2, 4, low=0)}
    model = node_model("GatherElements", inputs, 1)
    model.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "n"
    module, weights = import_model(model)
    with pytest.raises(KernelError, match="exceed data of shape"):
        run(module, inputs, weights)
    monkeypatch.setattr(indexing, "check_element_indices", lambda *args: None)
    with pytest.raises(IndexError):
        run(module, inputs, weights)
