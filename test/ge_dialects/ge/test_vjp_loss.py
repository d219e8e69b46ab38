"""The losses' gradients (ge.softmax_cross_entropy_loss, ge.nll_loss) against finite differences of
their kernels in float64: random N, C and extra dims, every reduction, ignore_index hitting some
labels, with and without weights, and a cotangent on log_prob. The backward ops' kernels are what
the VJPs emit, so this also checks ge.softmax_cross_entropy_loss_grad and ge.nll_loss_grad."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vjp_check import check_vjp

from ge.ge_dialects import ge
from ge.ge_dialects.ge.loss import SoftmaxCrossEntropyLossOp
from ge.interpreter.kernels import loss as loss_kernels


@st.composite
def loss_case(draw):
    """(operands, props, has weights) of a loss with labels that hit ignore_index at some positions
    (never all of them, so a mean has a nonzero denominator)."""
    n, c = draw(st.integers(1, 3)), draw(st.integers(2, 4))
    extra = draw(st.lists(st.integers(1, 3), max_size=2))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, c, (n, *extra)).astype(draw(st.sampled_from([np.int64, np.int32])))
    ignore = draw(st.sampled_from([None, -1, 0, c + 2]))
    if ignore is not None:
        hit = rng.random(labels.shape) < 0.4
        labels[hit] = ignore
        keep = (0,) * labels.ndim
        labels[keep] = (ignore + 1) % c if 0 <= ignore < c else 1
    weights = rng.uniform(0.5, 2.0, c) if draw(st.booleans()) else None
    scores = rng.standard_normal((n, c, *extra))
    props = {"reduction": draw(st.sampled_from(["none", "sum", "mean"])), "ignore_index": ignore}
    return scores, labels, weights, props


@settings(max_examples=20, deadline=None)
@given(case=loss_case(), with_log_prob=st.booleans())
def test_softmax_cross_entropy_vjp(case, with_log_prob):
    scores, labels, weights, props = case
    check_vjp(
        ge.SoftmaxCrossEntropyLossOp,
        {"scores": scores, "labels": labels, "weights": weights},
        props,
        num_results=2 if with_log_prob else 1,
        no_gradient=("weights",),
    )


@settings(max_examples=20, deadline=None)
@given(case=loss_case())
def test_nll_loss_vjp(case):
    scores, labels, weights, props = case
    log_prob = scores - np.log(np.exp(scores).sum(axis=1, keepdims=True))
    check_vjp(ge.NllLossOp, {"input": log_prob, "target": labels, "weight": weights}, props, no_gradient=("weight",))


def _case(reduction="mean", weighted=True):
    rng = np.random.default_rng(3)
    labels = np.array([[0, 2, -1], [1, -1, 2]], np.int64)
    weights = rng.uniform(0.5, 2.0, 3) if weighted else None
    return rng.standard_normal((2, 3, 3)), labels, weights, {"reduction": reduction, "ignore_index": -1}


def test_a_gradient_without_the_mean_denominator_is_caught(monkeypatch):
    """Mutation: the VJP asks the backward op for a sum where the loss is a mean."""
    original = SoftmaxCrossEntropyLossOp.loss_props
    monkeypatch.setattr(SoftmaxCrossEntropyLossOp, "loss_props", lambda self: {**original(self), "reduction": "sum"})
    scores, labels, weights, props = _case()
    with pytest.raises(AssertionError, match="ge.softmax_cross_entropy_loss operand 'scores'"):
        check_vjp(ge.SoftmaxCrossEntropyLossOp, {"scores": scores, "labels": labels, "weights": weights}, props)


def test_a_gradient_that_drops_the_weights_is_caught(monkeypatch):
    """Mutation: the backward kernels scale by dy alone, forgetting the per-position weights."""

    def unweighted(self, dy):
        return (dy / self.weight.sum() if self.reduction == "mean" else dy * np.ones_like(self.weight))[:, None]

    monkeypatch.setattr(loss_kernels.Picks, "scale", unweighted)
    scores, labels, weights, props = _case(reduction="sum")
    with pytest.raises(AssertionError, match="ge.nll_loss operand 'input'"):
        check_vjp(ge.NllLossOp, {"input": scores, "target": labels, "weight": weights}, props)


def test_a_gradient_that_ignores_the_log_prob_cotangent_is_caught(monkeypatch):
    """Mutation: the VJP drops the cotangent of the log_prob result."""
    original = SoftmaxCrossEntropyLossOp.vjp
    monkeypatch.setattr(SoftmaxCrossEntropyLossOp, "vjp", lambda self, g, cts: original(self, g, [cts[0], None]))
    scores, labels, weights, props = _case(reduction="none")
    with pytest.raises(AssertionError, match="operand 'scores'"):
        check_vjp(
            ge.SoftmaxCrossEntropyLossOp,
            {"scores": scores, "labels": labels, "weights": weights},
            props,
            num_results=2,
        )
