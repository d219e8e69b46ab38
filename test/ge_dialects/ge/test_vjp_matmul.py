"""Gradients of gemm, matmul and attention against finite differences (float64, random shapes with
broadcast batch dims and 1-D operands, transposes, alpha/beta, every scale placement and mask kind)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vjp_check import check_vjp

from ge.ge_dialects import ge

FAST = settings(max_examples=25, deadline=None)
DIM = st.integers(1, 4)


@st.composite
def gemm_case(draw):
    m, k, n = draw(DIM), draw(DIM), draw(DIM)
    trans_a, trans_b = draw(st.sampled_from([0, 1])), draw(st.sampled_from([0, 1]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    c_shape = draw(st.sampled_from([None, (m, n), (n,), (1, n), (m, 1), ()]))
    operands = {
        "A": rng.standard_normal((k, m) if trans_a else (m, k)),
        "B": rng.standard_normal((n, k) if trans_b else (k, n)),
        "C": None if c_shape is None else rng.standard_normal(c_shape),
    }
    # f32-exact values: the properties are f32
    props = {"transA": trans_a, "transB": trans_b, "alpha": draw(st.sampled_from([1.0, 0.5, -2.0]))}
    props["beta"] = draw(st.sampled_from([1.0, 0.0, 0.25]))
    return operands, props


@FAST
@given(case=gemm_case())
def test_gemm_vjp(case):
    operands, props = case
    check_vjp(ge.GemmOp, operands, props)


def test_a_gemm_gradient_that_ignores_trans_a_is_caught(monkeypatch):
    """Mutation: dA computed as if A were not transposed (square, so the types still agree)."""

    original = ge.GemmOp.vjp

    def ignores_trans_a(self, g, cts):
        _, db = original(self, g, cts)
        return [g.value(ge.GemmOp, {"A": cts[0], "B": self.B}, {"transB": 1}), db]

    monkeypatch.setattr(ge.GemmOp, "vjp", ignores_trans_a)
    rng = np.random.default_rng(0)
    with pytest.raises(AssertionError, match="ge.gemm operand 'A'"):
        check_vjp(ge.GemmOp, {"A": rng.standard_normal((3, 3)), "B": rng.standard_normal((3, 3))}, {"transA": 1})


@st.composite
def matmul_shapes(draw):
    """Operand shapes numpy's matmul accepts: 1-D on either side, batch dims that broadcast."""
    m, k, n = draw(DIM), draw(DIM), draw(DIM)
    batch = draw(st.lists(st.integers(1, 3), max_size=2))

    def lead():
        return tuple(1 if draw(st.booleans()) else b for b in batch[draw(st.integers(0, len(batch))) :])

    a = (k,) if draw(st.integers(0, 3)) == 0 else (*lead(), m, k)
    b = (k,) if draw(st.integers(0, 3)) == 0 else (*lead(), k, n)
    return a, b


@FAST
@given(shapes=matmul_shapes(), seed=st.integers(0, 2**16))
def test_matmul_vjp_with_broadcasting_and_vectors(shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(s) for s in shapes)
    check_vjp(ge.MatMulOp, {"A": a, "B": b}, seed=seed)


@pytest.mark.mutation
def test_a_matmul_gradient_not_summed_over_the_batch_is_caught(monkeypatch):
    from ge.ge_dialects.ge.matmul_grad import matmul, swap_last

    def no_batch_sum(self, g, cts):
        return [matmul(g, cts[0], swap_last(g, self.B)), matmul(g, swap_last(g, self.A), cts[0])]

    monkeypatch.setattr(ge.MatMulOp, "vjp", no_batch_sum)
    rng = np.random.default_rng(0)
    with pytest.raises(AssertionError, match="cotangent type"):
        check_vjp(ge.MatMulOp, {"A": rng.standard_normal((2, 3, 4)), "B": rng.standard_normal((4, 5))})


# -- attention ---------------------------------------------------------------------------------


@st.composite
def attention_case(draw):
    sq, sk, d, dv = draw(DIM), draw(DIM), draw(DIM), draw(DIM)
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))

    def lead():
        return tuple(1 if draw(st.booleans()) else b for b in batch[draw(st.integers(0, len(batch))) :])

    k_transposed = draw(st.sampled_from([0, 1]))
    operands = {
        "q": rng.standard_normal((*lead(), sq, d)),
        "k": rng.standard_normal((*lead(), d, sk) if k_transposed else (*lead(), sk, d)),
        "v": rng.standard_normal((*lead(), sk, dv)),
        "mask": None,
    }
    props = {
        "k_transposed": k_transposed,
        "scale": draw(st.sampled_from([1.0, 0.5, 0.125, 4.0])),
        "scale_op": draw(st.sampled_from(["mul", "div"])),
        "scale_on": draw(st.sampled_from(["scores", "q", "k"])),
    }
    kind = draw(st.sampled_from([None, "additive", "keep"]))
    if kind is not None:
        props["mask_kind"] = kind
        scores_batch = np.broadcast_shapes(operands["q"].shape[:-2], operands["k"].shape[:-2])
        mask_batch = scores_batch[draw(st.integers(0, len(scores_batch))) :]
        mask_shape = tuple(1 if draw(st.booleans()) else s for s in (*mask_batch, sq, sk))
        operands["mask"] = rng.standard_normal(mask_shape) if kind == "additive" else rng.random(mask_shape) < 0.7
    return operands, props


@FAST
@given(case=attention_case())
def test_attention_vjp_for_every_scale_placement_and_mask(case):
    operands, props = case
    check_vjp(ge.AttentionOp, operands, props)


def test_attention_with_batch_dims_broadcast_against_each_other():
    rng = np.random.default_rng(3)
    operands = {"q": rng.standard_normal((2, 1, 3, 4)), "k": rng.standard_normal((1, 3, 5, 4))}
    operands |= {"v": rng.standard_normal((3, 5, 2)), "mask": rng.standard_normal((1, 3, 1, 5))}
    check_vjp(ge.AttentionOp, operands, {"scale": 0.5, "scale_on": "k"})
    keep = rng.random((3, 3, 5)) < 0.5
    keep[0, 0] = False  # a row with every key masked: uniform weights, no gradient into the scores
    operands["mask"] = keep
    check_vjp(ge.AttentionOp, operands, {"mask_kind": "keep", "scale": 2.0, "scale_op": "div", "k_transposed": 0})


def test_an_attention_gradient_through_masked_scores_is_caught(monkeypatch):
    """Mutation: the filled (masked) positions pass the scores' gradient on. Where a row keeps some
    keys the masked probabilities are 0 and so is their gradient; a row with every key masked has
    uniform probabilities, and only the mask's own gradient rule stops the flow."""
    monkeypatch.setattr(ge.AttentionOp, "_mask_grads", lambda self, g, d: (d, None))
    rng = np.random.default_rng(4)
    operands = {"q": rng.standard_normal((2, 3)), "k": rng.standard_normal((4, 3)), "v": rng.standard_normal((4, 2))}
    operands["mask"] = np.array([[True, False, True, True], [False] * 4])
    with pytest.raises(AssertionError, match="ge.attention operand '[qk]'"):
        check_vjp(ge.AttentionOp, operands, {"mask_kind": "keep"})


def test_an_attention_gradient_scaled_on_the_wrong_side_is_caught(monkeypatch):
    """Mutation: the backward applies the scale to q's gradient although the forward scaled k."""
    original = ge.AttentionOp.vjp

    def scale_moved(self, g, cts):
        dq, dk, dv = original(self, g, cts)
        return [self._scaled(g, dq), dk, dv]

    monkeypatch.setattr(ge.AttentionOp, "vjp", scale_moved)
    rng = np.random.default_rng(5)
    operands = {"q": rng.standard_normal((2, 3)), "k": rng.standard_normal((4, 3)), "v": rng.standard_normal((4, 2))}
    with pytest.raises(AssertionError, match="ge.attention operand 'q'"):
        check_vjp(ge.AttentionOp, operands, {"scale_on": "k", "scale": 0.25})
