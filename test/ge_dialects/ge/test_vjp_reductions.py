"""The reductions' and selections' gradients against finite differences (float64): ReduceMax and
ReduceMin over one and several axes, ReduceProd with zeros in the reduced set (one and two), TopK
largest and smallest, CumSum and CumProd (with zeros) in every direction; the tie rule of a max (dy split evenly among the
tied positions, as PyTorch's amax), the piecewise constant ops' absent gradients, and mutations
the checks catch."""

from __future__ import annotations

import numpy as np
import pytest
from vjp_check import _Built, check_vjp

from ge.ge_dialects import ge
from ge.ge_dialects.ge import reductions

RNG = np.random.default_rng(7)


def distinct(*shape: int) -> np.ndarray:
    """Values with no ties and no zeros (a permutation, spread out), so a max is differentiable."""
    return (RNG.permutation(int(np.prod(shape))).reshape(shape) + 0.5) / 3 - 1


def axes(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


@pytest.mark.parametrize("op_cls", [ge.ReduceMaxOp, ge.ReduceMinOp, ge.ReduceProdOp])
@pytest.mark.parametrize("reduced, keepdims", [(axes(1), 1), (axes(0, -1), 0), (None, 0)])
def test_reduce(op_cls, reduced, keepdims):
    check_vjp(op_cls, {"data": distinct(3, 4, 2), "axes": reduced}, {"keepdims": keepdims})


@pytest.mark.parametrize("zeros", [1, 2])
def test_reduce_prod_with_zeros_in_the_set(zeros):
    """d(prod)/dx_i is the product of the others: nonzero at a lone zero, zero with two (no 0/0)."""
    data = distinct(3, 4)
    data[1, :zeros] = 0.0
    check_vjp(ge.ReduceProdOp, {"data": data, "axes": axes(-1)}, {"keepdims": 0})


def _max_gradient(data: np.ndarray, reduced: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """ReduceMax's VJP run on `data` with cotangent `dy` (the FD check cannot see ties)."""
    built = _Built(ge.ReduceMaxOp, {"data": data, "axes": reduced}, {"keepdims": 0}, None, ())
    return built.run([data], [dy])[built.grad_of_arg[0]]


def test_a_max_splits_dy_evenly_among_ties():
    data = np.array([[1.0, 3.0, 3.0, 2.0], [5.0, 5.0, 5.0, 5.0], [0.0, -1.0, 0.5, 0.0]])
    got = _max_gradient(data, axes(1), np.array([1.0, 2.0, 3.0]))
    want = np.array([[0, 0.5, 0.5, 0], [0.5, 0.5, 0.5, 0.5], [0, 0, 3.0, 0]])
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("largest", [1, 0])
def test_top_k(largest):
    x = distinct(3, 5)
    check_vjp(ge.TopKOp, {"X": x, "K": axes(3)}, {"axis": -1, "largest": largest}, constants=["K"])


@pytest.mark.parametrize("exclusive, reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_cum_sum(exclusive, reverse):
    x = distinct(3, 4)
    check_vjp(ge.CumSumOp, {"x": x, "axis": np.array(-1, np.int64)}, {"exclusive": exclusive, "reverse": reverse})


@pytest.mark.parametrize("exclusive, reverse", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("zeros", [(), (2,), (1, 3)])
def test_cum_prod_with_zeros(exclusive, reverse, zeros):
    """Rows with no zero, one, and two (the first zero's gradient skips it, the ones after get 0)."""
    x = distinct(2, 5)
    x[0, list(zeros)] = 0.0
    check_vjp(ge.CumProdOp, {"x": x, "axis": np.array(1, np.int64)}, {"exclusive": exclusive, "reverse": reverse})


def test_piecewise_constant_ops_pass_no_gradient():
    """Hardmax, ArgMax and ArgMin give no cotangent (zero wherever the derivative exists); Size
    does not depend on the values."""
    x = distinct(3, 4)
    check_vjp(ge.HardmaxOp, {"input": x}, no_gradient=["input"])
    for op_cls in (ge.ArgMaxOp, ge.ArgMinOp, ge.SizeOp):
        block_op = _Built(op_cls, {"data": x}, {}, None, ())
        assert block_op.grads == [None]


# -- mutations ------------------------------------------------------------------------------------


def test_mutation_all_of_a_max_gradient_to_the_first_tie_is_caught(monkeypatch):
    """The gradient sent whole to the first maximum (a one-hot of the argmax, TensorFlow's rule):
    the FD checks cannot tell (no ties), the tie check does."""
    from ge.ge_dialects.ge.tensor_grad import operand_cotangents

    def first_tie(self, g, cotangents):
        (dy,) = cotangents
        axis = reductions.reduced_axes(self)[0]
        index = g.value(ge.ArgMaxOp, {"data": self.data}, {"axis": axis, "keepdims": 1})
        kept = reductions._kept(reductions.static_shape(self.data), [axis])
        operands = {"data": g.zeros(self.data), "indices": index, "updates": g.reshape(dy, kept)}
        return operand_cotangents(self, data=g.value(ge.ScatterElementsOp, operands, {"axis": axis}))

    monkeypatch.setattr(reductions._ExtremeOp, "vjp", first_tie)
    test_reduce(ge.ReduceMaxOp, axes(1), 1)  # no ties: the FD check passes
    with pytest.raises(AssertionError):
        test_a_max_splits_dy_evenly_among_ties()


def test_mutation_reduce_prod_gradient_by_division_is_caught(monkeypatch):
    """dy * prod / x, the textbook gradient: NaN at a zero, so the check with zeros fails."""
    from ge.ge_dialects.ge.tensor_grad import operand_cotangents

    def by_division(self, g, cotangents):
        (dy,) = cotangents
        kept = reductions._kept(reductions.static_shape(self.data), reductions.reduced_axes(self))
        y = g.reshape(g.mul(self.reduced, dy), kept)
        return operand_cotangents(self, data=g.div(g.expand(y, reductions.static_shape(self.data)), self.data))

    monkeypatch.setattr(ge.ReduceProdOp, "vjp", by_division)
    test_reduce(ge.ReduceProdOp, axes(1), 1)  # no zeros: the FD check passes
    with pytest.raises(AssertionError):
        test_reduce_prod_with_zeros_in_the_set(1)


def test_mutation_cum_sum_gradient_in_the_same_direction_is_caught(monkeypatch):
    def same_direction(self, g, cotangents):
        (dy,) = cotangents
        props = {"exclusive": self.p("exclusive"), "reverse": self.p("reverse")}
        return [g.value(ge.CumSumOp, {"x": dy, "axis": self.axis}, props), None]

    monkeypatch.setattr(ge.CumSumOp, "vjp", same_direction)
    with pytest.raises(AssertionError):
        test_cum_sum(0, 0)


def test_mutation_cum_prod_gradient_by_division_is_caught(monkeypatch):
    """The running sum of dy * y the other way, over x: NaN or inf at a zero."""

    def by_division(self, g, cotangents):
        (dy,) = cotangents
        ahead = g.value(ge.CumSumOp, {"x": g.mul(dy, self.y), "axis": self.axis}, {"reverse": 1})
        return [g.div(ahead, self.x), None]

    monkeypatch.setattr(ge.CumProdOp, "vjp", by_division)
    test_cum_prod_with_zeros(0, 0, ())  # no zeros: the FD check passes
    with pytest.raises(AssertionError):
        test_cum_prod_with_zeros(0, 0, (2,))
