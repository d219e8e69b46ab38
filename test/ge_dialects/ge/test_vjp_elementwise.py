"""The elementwise ops' gradients against finite differences (float64, random shapes that broadcast)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vjp_check import check_vjp

from ge.ge_dialects import ge


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast: a random result shape, each operand dropping leading dims or
    setting some dims to 1."""
    out = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))

    def operand():
        lead = draw(st.integers(0, len(out)))
        return tuple(1 if draw(st.booleans()) else d for d in out[lead:])

    return operand(), operand()


@pytest.mark.parametrize("op_cls", [ge.AddOp, ge.SubOp, ge.MulOp])
@settings(max_examples=15, deadline=None)
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_binary_vjp_with_broadcasting(op_cls, shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(s) for s in shapes)
    check_vjp(op_cls, {"a": np.asarray(a), "b": np.asarray(b)}, seed=seed)


def test_a_wrong_gradient_is_caught(monkeypatch):
    """Mutation: swap Mul's operand cotangents; the check names the operand that is wrong."""
    original = ge.MulOp.vjp
    monkeypatch.setattr(ge.MulOp, "vjp", lambda self, g, cts: list(reversed(original(self, g, cts))))
    rng = np.random.default_rng(0)
    with pytest.raises(AssertionError, match="ge.mul operand 'a'"):
        check_vjp(ge.MulOp, {"a": rng.standard_normal((3, 4)), "b": rng.standard_normal((3, 4)) + 2})


def test_a_missing_broadcast_sum_is_caught(monkeypatch):
    """Mutation: Add forgets to sum its cotangent back to a broadcast operand's shape."""
    monkeypatch.setattr(ge.AddOp, "vjp", lambda self, g, cts: [cts[0], cts[0]])
    rng = np.random.default_rng(0)
    with pytest.raises(AssertionError, match="cotangent type"):
        check_vjp(ge.AddOp, {"a": rng.standard_normal((3, 4)), "b": rng.standard_normal((4,))})


def test_an_op_without_a_gradient_says_so():
    from ge.ge_dialects.ge.grad import NotDifferentiable

    with pytest.raises(NotDifferentiable, match="ge.hard_swish '/op' has no gradient"):
        check_vjp(ge.HardSwishOp, {"x": np.ones((2, 2))})
