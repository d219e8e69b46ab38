"""The `ge.gather_grad` kernel (GE's UnsortedSegmentSum / EmbeddingDenseGrad) against an explicit
loop over dy's elements, in f64, f32 and f16, with i64 and i32 indices, repeated and negative ones,
indices of rank 0 to 2 and every axis; and its runtime error for an index out of range."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Block, Region

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import element_type_of, tensor
from ge.interpreter.ge import GeFunctions

TOLERANCE = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 2e-3}


def run_gather_grad(dy: np.ndarray, indices: np.ndarray, props: dict) -> np.ndarray:
    """Runs one ge.gather_grad on arguments (runtime indices) through the interpreter's checks."""
    block = Block(arg_types=[tensor(element_type_of(a.dtype), a.shape) for a in (dy, indices)])
    op = ge.GatherGradOp.create({"dy": block.args[0], "indices": block.args[1]}, props)
    block.add_ops([op, func.ReturnOp(op.results[0])])
    fn = func.FuncOp("main", ([a.type for a in block.args], [op.results[0].type]), Region(block))
    interpreter = Interpreter(ModuleOp([fn]))
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(GeFunctions())
    (result,) = interpreter.call_op(fn, (dy, indices))
    return np.asarray(result)


def reference(dy: np.ndarray, indices: np.ndarray, axis: int, data_shape: tuple[int, ...]) -> np.ndarray:
    """One dy element at a time: dy[pre, i, post] is added to data[pre, indices[i], post]."""
    out = np.zeros(data_shape)
    rows = data_shape[axis]
    for pos in np.ndindex(*dy.shape):
        row = int(indices[pos[axis : axis + indices.ndim]])
        row = row + rows if row < 0 else row
        out[(*pos[:axis], row, *pos[axis + indices.ndim :])] += float(dy[pos])
    return out


@settings(max_examples=40, deadline=None)
@given(
    data_shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple),
    index_shape=st.lists(st.integers(1, 4), max_size=2).map(tuple),
    dtype=st.sampled_from([np.float64, np.float32, np.float16]),
    index_dtype=st.sampled_from([np.int64, np.int32]),
    data=st.data(),
)
def test_against_the_loop(data_shape, index_shape, dtype, index_dtype, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    axis = data.draw(st.integers(-len(data_shape), len(data_shape) - 1))
    rows = data_shape[axis]
    indices = rng.integers(-rows, rows, size=index_shape).astype(index_dtype)
    positive = axis % len(data_shape)
    dy = rng.standard_normal((*data_shape[:positive], *index_shape, *data_shape[positive + 1 :])).astype(dtype)
    got = run_gather_grad(dy, indices, {"axis": axis, "data_shape": data_shape})
    assert got.dtype == dtype and got.shape == data_shape
    want = reference(dy, indices, positive, data_shape)
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype])


def test_rows_picked_twice_are_summed_not_overwritten():
    """Index 1 as 1 and as -3: row 1 is the sum of both dy rows (a scatter that assigns would keep
    only one); rows no index picks are zero."""
    dy = np.array([[1.0, 2.0], [10.0, 20.0], [100.0, 200.0]])
    got = run_gather_grad(dy, np.array([1, -3, 3]), {"data_shape": [4, 2]})
    np.testing.assert_array_equal(got, [[0, 0], [11, 22], [0, 0], [100, 200]])
    np.testing.assert_array_equal(got, reference(dy, np.array([1, -3, 3]), 0, (4, 2)))


def test_f16_sums_in_f32():
    """2048 + 1 + 1 in f16 steps is 2048 (ulp 2 there); summed in f32 and rounded once it is 2050."""
    dy = np.array([2048.0, 1.0, 1.0], np.float16)
    got = run_gather_grad(dy, np.array([0, 0, 0]), {"data_shape": [1]})
    assert got[0] == np.float16(2050)


def test_an_index_out_of_range_at_run_time_names_the_op():
    with pytest.raises(Exception, match="ge.gather_grad.*index 2 is out of range for axis 0 of size 2"):
        run_gather_grad(np.ones((1, 3)), np.array([2]), {"data_shape": [2, 3]})
