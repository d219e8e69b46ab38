"""The indexing ops' gradients against finite differences (float64, hypothesis-drawn shapes, axes
and indices: repeated and negative indices, batch dims, tiles of one and of zero, triangles of
any k, one-hot values), the ones refused or absent with their reasons, and mutations the check catches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vjp_check import check_vjp

from ge.ge_dialects import ge
from ge.ge_dialects.ge.grad import NotDifferentiable

EXAMPLES = settings(max_examples=25, deadline=None)
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


def rand(rng: np.random.Generator, shape) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape))


def element_indices(rng, data: tuple[int, ...], axis: int, length: int, distinct: bool) -> np.ndarray:
    """Indices for GatherElements / ScatterElements on `data`: `length` along the axis, the data's
    dims elsewhere; with `distinct`, no position twice (a permutation's prefix per line)."""
    size = data[axis]
    shape = data[:axis] + (length,) + data[axis + 1 :]
    if not distinct:
        return rng.integers(-size, size, shape)
    lines = [rng.permutation(size)[:length] for _ in range(int(np.prod(shape)) // length)]
    picks = np.moveaxis(np.array(lines).reshape(*data[:axis], *data[axis + 1 :], length), -1, axis)
    return picks - size * (rng.random(picks.shape) < 0.5)


@EXAMPLES
@given(shape=shapes, data=st.data())
def test_gather_elements_with_repeated_indices(shape, data):
    rng = np.random.default_rng(1)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    indices = element_indices(rng, shape, axis % len(shape), data.draw(st.integers(1, 5)), distinct=False)
    check_vjp(ge.GatherElementsOp, {"data": rand(rng, shape), "indices": indices}, {"axis": axis})


@EXAMPLES
@given(shape=shapes, data=st.data())
def test_scatter_elements_none_and_add(shape, data):
    rng = np.random.default_rng(2)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    reduction = data.draw(st.sampled_from(["none", "add"]))
    size = shape[axis % len(shape)]
    length = data.draw(st.integers(1, size)) if reduction == "none" else data.draw(st.integers(1, 5))
    indices = element_indices(rng, shape, axis % len(shape), length, distinct=reduction == "none")
    operands = {"data": rand(rng, shape), "indices": indices, "updates": rand(rng, indices.shape)}
    check_vjp(ge.ScatterElementsOp, operands, {"axis": axis, "reduction": reduction})


@pytest.mark.parametrize(
    "data, indices, batch_dims",
    [
        ((3, 4), [[1], [-3], [1]], 0),  # a row read twice
        ((3, 4, 2), [[0, -1], [2, 3], [0, 3]], 0),
        ((2, 3, 4), [[[1], [1], [-3]], [[0], [2], [2]]], 1),
        ((2, 3, 4), [[[1, 0], [-1, 3]], [[0, 0], [0, 0]]], 1),
        ((2, 3, 4), [[[[3], [0]], [[1], [1]], [[-1], [2]]], [[[0], [0]], [[2], [3]], [[1], [-4]]]], 2),
        ((2, 3, 4), np.zeros((2, 0, 1)), 1),  # nothing read: a zero gradient
    ],
)
def test_gather_nd_with_batch_dims(data, indices, batch_dims):
    rng = np.random.default_rng(3)
    operands = {"data": rand(rng, data), "indices": np.array(indices, np.int64)}
    check_vjp(ge.GatherNDOp, operands, {"batch_dims": batch_dims})


@pytest.mark.parametrize(
    "indices, reduction",
    [([[2], [0]], "none"), ([[2], [-1], [0]], "add"), ([[1, 3], [-1, 0]], "none"), ([[1, 3], [1, -1]], "add")],
)
def test_scatter_nd_none_and_add(indices, reduction):
    rng = np.random.default_rng(4)
    indices = np.array(indices, np.int64)
    updates = (len(indices),) + (4,) * (2 - indices.shape[-1])
    operands = {"data": rand(rng, (3, 4)), "indices": indices, "updates": rand(rng, updates)}
    check_vjp(ge.ScatterNDOp, operands, {"reduction": reduction})


@pytest.mark.parametrize("op_cls", [ge.ScatterElementsOp, ge.ScatterNDOp])
@pytest.mark.parametrize("reduction", ["mul", "max", "min"])
def test_other_reductions_are_refused(op_cls, reduction):
    operands = {"data": np.ones((3, 2)), "indices": np.zeros((1, 2 if op_cls is ge.ScatterElementsOp else 1), np.int64)}
    operands["updates"] = np.ones((1, 2))
    with pytest.raises(NotDifferentiable, match=f'the gradient of reduction "{reduction}" is not built'):
        check_vjp(op_cls, operands, {"reduction": reduction})


@EXAMPLES
@given(shape=shapes, data=st.data())
def test_tile(shape, data):
    repeats = data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape)))
    check_vjp(ge.TileOp, {"input": rand(np.random.default_rng(5), shape), "repeats": np.array(repeats, np.int64)})


@EXAMPLES
@given(shape=st.lists(st.integers(1, 4), min_size=2, max_size=3).map(tuple), data=st.data())
def test_trilu(shape, data):
    k = data.draw(st.none() | st.integers(-5, 5))
    operands = {"input": rand(np.random.default_rng(6), shape), "k": None if k is None else np.array(k, np.int64)}
    check_vjp(ge.TriluOp, operands, {"upper": data.draw(st.sampled_from([0, 1]))})


def test_eye_like_passes_a_zero_gradient():
    check_vjp(ge.EyeLikeOp, {"input": np.ones((3, 4))}, {"k": 1}, no_gradient=["input"])


@pytest.mark.parametrize(
    "indices, axis",
    [
        (np.array([[0, 2], [-1, 7]], np.int64), -1),
        (np.array([1.7, -2.2, 0.4]), 0),
        (np.array([[3, -4, 1]], np.int32), 1),
    ],
)
def test_one_hot_values(indices, axis):
    """The off and on values get their shares of dy; float indices get none (piecewise constant)."""
    operands = {"indices": indices, "depth": np.array(4, np.int64), "values": np.array([-0.5, 2.0])}
    check_vjp(ge.OneHotOp, operands, {"axis": axis}, no_gradient=["indices"])


# -- mutations --------------------------------------------------------------------------------------


def test_a_gather_gradient_that_overwrites_is_caught(monkeypatch):
    """Mutation: GatherElements' gradient scatters dy with reduction "none"; an element read twice
    then gets one of its two cotangents instead of their sum."""

    def vjp(self, g, cts):
        operands = {"data": g.zeros(self.data), "indices": self.indices, "updates": cts[0]}
        return [g.value(ge.ScatterElementsOp, operands, {"axis": self.p("axis"), "reduction": "none"}), None]

    monkeypatch.setattr(ge.GatherElementsOp, "vjp", vjp)
    operands = {"data": np.arange(6.0).reshape(3, 2), "indices": np.array([[1, 0], [1, 0]], np.int64)}
    with pytest.raises(AssertionError, match="ge.gather_elements operand 'data'"):
        check_vjp(ge.GatherElementsOp, operands)


def test_a_scatter_gradient_that_keeps_the_overwritten_positions_is_caught(monkeypatch):
    """Mutation: ScatterND "none" passes dy to the data unchanged; the positions the updates
    overwrote then get a gradient they do not have."""
    original = ge.ScatterNDOp.vjp
    monkeypatch.setattr(ge.ScatterNDOp, "vjp", lambda self, g, cts: [cts[0], *original(self, g, cts)[1:]])
    rng = np.random.default_rng(7)
    operands = {"data": rand(rng, (3, 4)), "indices": np.array([[1]], np.int64), "updates": rand(rng, (1, 4))}
    with pytest.raises(AssertionError, match="ge.scatter_nd operand 'data'"):
        check_vjp(ge.ScatterNDOp, operands)


def test_a_tile_gradient_summing_the_wrong_tiles_is_caught(monkeypatch):
    """Mutation: Tile's gradient splits each axis as (size, repeat) instead of (repeat, size)."""

    def vjp(self, g, cts):
        repeats = [int(r) for r in self.repeats.owner.inline_value()]
        source = [int(d) for d in self.input.type.get_shape()]
        split = [n for d, r in zip(source, repeats) for n in (d, r)]
        summed = list(range(1, 2 * len(source), 2))
        return [g.reshape(g.reduce_sum(g.reshape(cts[0], split), summed, keepdims=False), source), None]

    monkeypatch.setattr(ge.TileOp, "vjp", vjp)
    operands = {"input": rand(np.random.default_rng(8), (3, 2)), "repeats": np.array([2, 1], np.int64)}
    with pytest.raises(AssertionError, match="ge.tile operand 'input'"):
        check_vjp(ge.TileOp, operands)


def test_one_hot_values_swapped_are_caught(monkeypatch):
    """Mutation: OneHot's gradient gives the on value's share to the off value and back."""
    original = ge.OneHotOp.vjp

    def swapped(self, g, cts):
        *rest, d_values = original(self, g, cts)
        backwards = g.value(
            ge.SliceOp, {"data": d_values, "starts": g.ints([-1]), "ends": g.ints([-3]), "steps": g.ints([-1])}
        )
        return [*rest, backwards]

    monkeypatch.setattr(ge.OneHotOp, "vjp", swapped)
    operands = {
        "indices": np.array([0, 2, 1], np.int64),
        "depth": np.array(4, np.int64),
        "values": np.array([-0.5, 2.0]),
    }
    with pytest.raises(AssertionError, match="ge.one_hot operand 'values'"):
        check_vjp(ge.OneHotOp, operands)
