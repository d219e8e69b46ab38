"""The data-movement ops' gradients against finite differences (float64, hypothesis-drawn shapes and
attributes: negative axes, keepdims 0, strided and reversed slices, uneven splits, repeated and
negative gather indices, broadcasting where/expand, negative pads), the ops that pass no gradient,
and mutations the check catches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vjp_check import check_vjp
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Block, Region

from ge.ge_dialects import ge
from ge.ge_dialects.ge import tensor_grad
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable, static_shape
from ge.ge_dialects.ge.types import f64, tensor
from ge.interpreter.ge import GeFunctions

EXAMPLES = settings(max_examples=40, deadline=None)
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


def ints(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def rand(rng: np.random.Generator, shape) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape))


# -- pure data movement ----------------------------------------------------------------------------


@EXAMPLES
@given(shape=shapes, data=st.data())
def test_transpose(shape, data):
    perm = data.draw(st.none() | st.permutations(range(len(shape))))
    check_vjp(ge.TransposeOp, {"data": rand(np.random.default_rng(1), shape)}, {"perm": perm})


@EXAMPLES
@given(shape=shapes, data=st.data())
def test_reshape_flatten_unsqueeze_squeeze(shape, data):
    rng = np.random.default_rng(2)
    x = rand(rng, shape)
    rank = len(shape)
    target = data.draw(st.sampled_from([[-1], [0, -1], list(reversed(shape)), [1, *shape, 1]]))
    check_vjp(ge.ReshapeOp, {"data": x, "shape": ints(*target)})
    check_vjp(ge.FlattenOp, {"input": x}, {"axis": data.draw(st.integers(-rank, rank))})
    position = data.draw(st.integers(-rank - 1, rank))
    expanded = check_and_expand(x, position)
    ones = [i - expanded.ndim for i, d in enumerate(expanded.shape) if d == 1]  # negative axes
    axes = data.draw(st.none() | st.sampled_from([ones, ones[:1]]))
    check_vjp(ge.SqueezeOp, {"data": expanded, "axes": None if axes is None else ints(*axes)})


def check_and_expand(x: np.ndarray, position: int) -> np.ndarray:
    """Checks Unsqueeze at `position` (a result position, maybe negative); returns its result."""
    check_vjp(ge.UnsqueezeOp, {"data": x, "axes": ints(position)})
    return np.expand_dims(x, position)


@EXAMPLES
@given(shape=shapes, count=st.integers(1, 3), data=st.data())
def test_concat(shape, count, data):
    rng = np.random.default_rng(3)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(1, 4), min_size=count, max_size=count))
    inputs = [rand(rng, [s if i == axis % len(shape) else d for i, d in enumerate(shape)]) for s in sizes]
    check_vjp(ge.ConcatOp, {"inputs": inputs}, {"axis": axis})


@EXAMPLES
@given(shape=shapes, data=st.data())
def test_split_uneven(shape, data):
    rng = np.random.default_rng(4)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    dim = data.draw(st.integers(2, 7))
    dims = list(shape)
    dims[axis] = dim
    x = rand(rng, dims)
    cut = data.draw(st.integers(1, dim - 1))
    check_vjp(ge.SplitOp, {"input": x, "split": ints(cut, dim - cut)}, {"axis": axis}, num_results=2)
    parts = data.draw(st.integers(2, dim))
    props = {"axis": axis, "num_outputs": parts}  # ceil-sized parts, a smaller last one
    if -(-dim // parts) * (parts - 1) <= dim:
        check_vjp(ge.SplitOp, {"input": x}, props, num_results=parts)


@st.composite
def slices(draw):
    """A shape and slice operands over a random subset of (negative) axes with steps of either sign."""
    shape = draw(st.lists(st.integers(1, 7), min_size=1, max_size=3))
    rank = len(shape)
    axes = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
    starts, ends, steps = [], [], []
    for axis in axes:
        n = shape[axis]
        steps.append(draw(st.sampled_from([1, 2, 3, -1, -2])))
        starts.append(draw(st.integers(-n - 1, n)))
        ends.append(draw(st.integers(-n - 2, n + 1)))
    negative = [a - rank if draw(st.booleans()) else a for a in axes]
    return tuple(shape), starts, ends, negative, steps


@settings(max_examples=100, deadline=None)
@given(case=slices(), unit_steps=st.booleans())
def test_slice_steps_and_negative_starts(case, unit_steps):
    shape, starts, ends, axes, steps = case
    operands = {"data": rand(np.random.default_rng(5), shape), "starts": ints(*starts), "ends": ints(*ends)}
    operands |= {"axes": ints(*axes), "steps": None if unit_steps else ints(*steps)}
    check_vjp(ge.SliceOp, operands)


@EXAMPLES
@given(shape=shapes, index_shape=st.lists(st.integers(1, 3), max_size=2), data=st.data())
def test_gather_repeated_and_negative_indices(shape, index_shape, data):
    rng = np.random.default_rng(6)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = shape[axis]
    indices = rng.integers(-n, n, size=index_shape)
    flat = indices.reshape(-1)
    if flat.size > 1:  # the first row once more, spelled with the other sign
        flat[1] = flat[0] - n if flat[0] >= 0 else flat[0] + n
    check_vjp(ge.GatherOp, {"data": rand(rng, shape), "indices": indices}, {"axis": axis})


def test_gather_sums_rows_picked_twice():
    """Index 1 twice (once as -2) and index 0 never: row 1 gets both rows of dy, row 0 zeros."""
    check_vjp(ge.GatherOp, {"data": np.arange(6.0).reshape(3, 2), "indices": ints(1, -2, 2)})


# -- reductions, casts, broadcasting ---------------------------------------------------------------


@pytest.mark.parametrize("op_cls", [ge.ReduceMeanOp, ge.ReduceSumOp])
@EXAMPLES
@given(shape=shapes, keepdims=st.sampled_from([0, 1]), data=st.data())
def test_reductions(op_cls, shape, keepdims, data):
    rank = len(shape)
    axes = data.draw(st.none() | st.lists(st.integers(-rank, rank - 1), max_size=rank, unique_by=lambda a: a % rank))
    noop = data.draw(st.sampled_from([0, 1]))
    operands = {"data": rand(np.random.default_rng(7), shape), "axes": None if axes is None else ints(*axes)}
    check_vjp(op_cls, operands, {"keepdims": keepdims, "noop_with_empty_axes": noop})


def test_cast_between_floats():
    rng = np.random.default_rng(8)
    check_vjp(ge.CastOp, {"input": rand(rng, (3, 4))}, {"to": 11})
    # to f32 and back: the f32 rounding needs a large step; a cast is linear, so that is exact
    check_vjp(ge.CastOp, {"input": rand(rng, (3, 4))}, {"to": 1}, eps=1e-1, rtol=1e-5)


def test_cast_through_integers_passes_nothing():
    """An integer input takes no cotangent; a float -> int cast has a zero gradient (None)."""
    block = Block(arg_types=[tensor(f64, [3]), tensor(ge.types.i64, [3]), tensor(f64, [3])])
    ret = func.ReturnOp()
    block.add_op(ret)
    g = GradBuilder(block, ret)
    to_int = ge.CastOp.create({"input": block.args[0]}, {"to": 7})
    from_int = ge.CastOp.create({"input": block.args[1]}, {"to": 11})
    assert to_int.vjp(g, [None]) == [None]
    assert from_int.vjp(g, [block.args[2]]) == [None]
    assert not g.emitted


@st.composite
def broadcast_triple(draw):
    out = draw(st.lists(st.integers(1, 4), max_size=3))

    def operand():
        lead = draw(st.integers(0, len(out)))
        return tuple(1 if draw(st.booleans()) else d for d in out[lead:])

    return operand(), operand(), operand()


@EXAMPLES
@given(shapes=broadcast_triple(), seed=st.integers(0, 2**16))
def test_where_with_broadcasting(shapes, seed):
    rng = np.random.default_rng(seed)
    c, x, y = shapes
    operands = {"condition": np.asarray(rng.random(c) < 0.5), "X": rand(rng, x), "Y": rand(rng, y)}
    check_vjp(ge.WhereOp, operands, seed=seed)


@EXAMPLES
@given(shapes=broadcast_triple())
def test_expand_bidirectional(shapes):
    source, target, _ = shapes
    check_vjp(ge.ExpandOp, {"input": rand(np.random.default_rng(9), source), "shape": ints(*target)})


@EXAMPLES
@given(shape=shapes, data=st.data())
def test_pad_constant_with_negative_pads_and_axes(shape, data):
    rng = np.random.default_rng(10)
    rank = len(shape)
    axes = data.draw(st.none() | st.lists(st.integers(-rank, rank - 1), min_size=1, unique_by=lambda a: a % rank))
    padded = range(rank) if axes is None else [a % rank for a in axes]
    widths = [data.draw(st.integers(-(shape[a] // 2), 2)) for a in padded for _ in range(2)]
    pads = widths[0::2] + widths[1::2]  # all befores, then all afters
    value = data.draw(st.sampled_from([None, (), (1,), (0,)]))  # (0,): an empty value pads with 0
    operands = {"data": rand(rng, shape), "pads": ints(*pads), "axes": None if axes is None else ints(*axes)}
    operands["constant_value"] = None if value is None else rand(rng, value)
    check_vjp(ge.PadOp, operands)


@pytest.mark.parametrize("mode", ["reflect", "edge", "wrap"])
def test_pad_modes_that_copy_are_refused(mode):
    with pytest.raises(NotDifferentiable, match=f"ge.pad '/op': the gradient of mode \"{mode}\" is not built"):
        check_vjp(ge.PadOp, {"data": np.ones((3, 3)), "pads": ints(1, 1, 1, 1)}, {"mode": mode})


def test_runtime_slice_bounds_are_refused():
    block = Block(arg_types=[tensor(f64, [4]), tensor(ge.types.i64, [1])])
    end = ge.ConstantOp.inline(ints(3))
    sliced = ge.SliceOp.create({"data": block.args[0], "starts": block.args[1], "ends": end.output}, name="/s")
    with pytest.raises(NotDifferentiable, match="ge.slice '/s': the gradient needs 'starts' as a constant"):
        sliced.vjp(GradBuilder(block, sliced), [block.args[0]])


# -- a result without a cotangent, ops without gradients -------------------------------------------


def _run_vjp(op_cls, operands: dict[str, np.ndarray], props, cotangents: list[np.ndarray | None], num_results):
    """The VJP of one op on argument operands, with some result cotangents None, run once."""
    arrays = list(operands.values())
    block = Block(arg_types=[tensor(f64, a.shape) for a in arrays])
    op = op_cls.create(dict(zip(operands, block.args)), props, num_results=num_results)
    block.add_op(op)
    given_cts = [c for c in cotangents if c is not None]
    ct_args = iter([block.insert_arg(tensor(f64, c.shape), len(block.args)) for c in given_cts])
    ret = func.ReturnOp()
    block.add_op(ret)
    grads = op.vjp(GradBuilder(block, ret), [None if c is None else next(ct_args) for c in cotangents])
    ret.operands = [grads[0]]
    fn = func.FuncOp("main", ([a.type for a in block.args], [grads[0].type]), Region(block))
    interpreter = Interpreter(ModuleOp([fn]))
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(GeFunctions())
    return np.asarray(interpreter.call_op(fn, (*arrays, *given_cts))[0])


def test_split_fills_a_missing_cotangent_with_zeros():
    rng = np.random.default_rng(11)
    x = rand(rng, (2, 7))
    first, last = rand(rng, (2, 3)), rand(rng, (2, 1))
    grad = _run_vjp(ge.SplitOp, {"input": x}, {"axis": -1, "num_outputs": 3}, [first, None, last], 3)
    np.testing.assert_array_equal(grad, np.concatenate([first, np.zeros((2, 3)), last], axis=1))


def test_ops_without_gradients_say_which_operands():
    """Shape, ConstantOfShape and Range: every operand is NOT_DIFFERENTIABLE (no gradient flows,
    which the autodiff pass can tell from "no gradient defined"), and their VJPs give None."""
    for op_cls in (ge.ShapeOp, ge.ConstantOfShapeOp, ge.RangeOp):
        names = {name for name, _ in op_cls.get_irdl_definition().operands}
        assert names == op_cls.NOT_DIFFERENTIABLE, op_cls.name
    block = Block(arg_types=[tensor(f64, [2, 3])])
    ret = func.ReturnOp()
    block.add_op(ret)
    g = GradBuilder(block, ret)
    shape = ge.ShapeOp.create({"data": block.args[0]})
    assert shape.vjp(g, [None]) == [None]
    fill = ge.ConstantOfShapeOp.create({"input": shape.shape})
    assert fill.vjp(g, [block.args[0]]) == [None]
    bounds = [ge.ConstantOp.inline(np.asarray(v, np.float64)) for v in (0.0, 3.0, 1.0)]
    steps = ge.RangeOp.create(dict(zip(("start", "limit", "delta"), (c.output for c in bounds))))
    assert steps.vjp(g, [block.args[0]]) == [None, None, None]
    assert not g.emitted


def test_a_float_range_of_runtime_values_is_refused():
    """Declared static, but start is an argument: a zero gradient would be wrong, so it refuses."""
    block = Block(arg_types=[tensor(f64, [])] * 3)
    ranged = ge.RangeOp.build(operands=list(block.args), result_types=[tensor(f64, [4])])
    ct = block.insert_arg(tensor(f64, [4]), 3)
    with pytest.raises(NotDifferentiable, match="ge.range: a float range of runtime start"):
        ranged.vjp(GradBuilder(block, ranged), [ct])


# -- mutations the check catches -------------------------------------------------------------------


def test_transpose_with_perm_instead_of_its_inverse_is_caught(monkeypatch):
    def wrong(self, g, cts):
        return [g.transpose(cts[0], self.permutation(self.p("perm"), 3))]

    monkeypatch.setattr(ge.TransposeOp, "vjp", wrong)
    rng = np.random.default_rng(12)
    with pytest.raises(AssertionError, match="ge.transpose operand 'data'"):
        check_vjp(ge.TransposeOp, {"data": rand(rng, (2, 2, 2))}, {"perm": [1, 2, 0]})


def test_a_mean_without_the_count_is_caught(monkeypatch):
    original = tensor_grad.reduce_cotangent
    monkeypatch.setattr(tensor_grad, "reduce_cotangent", lambda g, op, dy, mean: original(g, op, dy, False))
    with pytest.raises(AssertionError, match="ge.reduce_mean operand 'data'"):
        check_vjp(ge.ReduceMeanOp, {"data": rand(np.random.default_rng(13), (3, 4)), "axes": ints(-1)})


def test_a_reversed_slice_left_unreversed_is_caught(monkeypatch):
    """Mutation: the scatter forgets that a negative step reads positions backwards."""
    original = tensor_grad.strided_scatter

    def forward_only(g, dy, data, bounds):
        length = dict(enumerate(static_shape(dy)))
        ascending = {a: (s + (length[a] - 1) * k, e, -k) if k < 0 else (s, e, k) for a, (s, e, k) in bounds.items()}
        return original(g, dy, data, ascending)

    monkeypatch.setattr(tensor_grad, "strided_scatter", forward_only)
    operands = {"data": np.arange(7.0), "starts": ints(-1), "ends": ints(0), "steps": ints(-2)}  # reads 6, 4, 2
    with pytest.raises(AssertionError, match="ge.slice operand 'data'"):
        check_vjp(ge.SliceOp, operands)


def test_where_with_swapped_branches_is_caught(monkeypatch):
    original = ge.WhereOp.vjp
    monkeypatch.setattr(ge.WhereOp, "vjp", lambda self, g, cts: [None, *reversed(original(self, g, cts)[1:])])
    rng = np.random.default_rng(14)
    operands = {"condition": rng.random((3, 4)) < 0.5, "X": rand(rng, (3, 4)), "Y": rand(rng, (3, 4))}
    with pytest.raises(AssertionError, match="ge.where operand 'X'"):
        check_vjp(ge.WhereOp, operands)
