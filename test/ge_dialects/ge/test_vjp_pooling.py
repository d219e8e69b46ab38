"""The gradients of GlobalMaxPool, LpPool, GlobalLpPool and InstanceNormalization against finite
differences (float64, random shapes and attributes); mutations the check catches; and the cases
that have no gradient say why."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vjp_check import check_vjp
from xdsl.dialects.builtin import f64
from xdsl.ir import Block

from ge.ge_dialects import ge
from ge.ge_dialects.ge.conv_grad import typed_like
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable
from ge.ge_dialects.ge.types import tensor

spatial_dims = st.lists(st.integers(1, 4), min_size=1, max_size=3)


@settings(max_examples=15, deadline=None)
@given(spatial=spatial_dims, seed=st.integers(0, 2**16))
def test_global_max_pool_vjp(spatial, seed):
    shape = (2, 3, *spatial)
    n = int(np.prod(shape))
    data = np.random.default_rng(seed).permutation(n).reshape(shape) / n  # distinct: no ties
    check_vjp(ge.GlobalMaxPoolOp, {"X": data}, seed=seed)


@st.composite
def lp_pool_cases(draw):
    spatial = draw(st.integers(1, 3))
    kernel, strides, dilations, begins, ends, sizes = [], [], [], [], [], []
    for _ in range(spatial):
        k = draw(st.integers(1, 3))
        d = draw(st.integers(1, 2)) if k > 1 else 1
        extent = (k - 1) * d + 1
        b, e = draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))
        kernel.append(k), dilations.append(d), strides.append(draw(st.integers(1, 3)))
        begins.append(b), ends.append(e), sizes.append(draw(st.integers(max(1, extent - b - e), extent + 3)))
    props = {"kernel_shape": kernel, "strides": strides, "dilations": dilations, "p": draw(st.integers(1, 4))}
    if draw(st.booleans()):
        props["auto_pad"] = draw(st.sampled_from(["SAME_UPPER", "SAME_LOWER", "VALID"]))
        if props["auto_pad"] == "VALID":
            sizes = [max(n, (k - 1) * d + 1) for n, k, d in zip(sizes, kernel, dilations)]
    else:
        props["pads"] = begins + ends
    return (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *sizes), props


@settings(max_examples=40, deadline=None)
@given(case=lp_pool_cases(), seed=st.integers(0, 2**16))
def test_lp_pool_vjp(case, seed):
    x, props = case
    check_vjp(ge.LpPoolOp, {"X": np.random.default_rng(seed).standard_normal(x)}, props, seed=seed)


@settings(max_examples=15, deadline=None)
@given(spatial=spatial_dims, p=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_global_lp_pool_vjp(spatial, p, seed):
    x = np.random.default_rng(seed).standard_normal((2, 3, *spatial))
    check_vjp(ge.GlobalLpPoolOp, {"X": x}, {"p": p}, seed=seed)


def test_lp_pool_gradient_of_an_all_zero_window_is_zero():
    """A window of zeros has y = 0, where y^(1-p) is infinite: its share is 0, not NaN (the
    zeros are padding here: a 1-wide input with pads 2 + 2 and a 2-wide window)."""
    x = np.array([[[0.5]]])
    props = {"kernel_shape": [2], "pads": [2, 2], "p": 3}
    check_vjp(ge.LpPoolOp, {"X": x}, props)


@settings(max_examples=20, deadline=None)
@given(spatial=spatial_dims, epsilon=st.sampled_from([1e-5, 0.1]), seed=st.integers(0, 2**16))
def test_instance_norm_vjp(spatial, epsilon, seed):
    rng = np.random.default_rng(seed)
    operands = {
        "input": rng.standard_normal((2, 3, *spatial)),
        "scale": rng.standard_normal(3),
        "B": rng.standard_normal(3),
    }
    check_vjp(ge.InstanceNormOp, operands, {"epsilon": epsilon}, seed=seed, rtol=1e-5)


# -- mutations --------------------------------------------------------------------------------------


def test_a_global_max_pool_gradient_to_the_last_maximum_is_caught(monkeypatch):
    """Mutation: the gradient goes to the mean position of the image instead of its maximum."""
    x = np.random.default_rng(0).permutation(12).reshape(1, 1, 3, 4) / 12
    check_vjp(ge.GlobalMaxPoolOp, {"X": x})

    def to_every_position(self, g, cts):
        return [typed_like(g, g.expand(g.scale(cts[0], 1 / 12), (1, 1, 3, 4)), self.X)]

    monkeypatch.setattr(ge.GlobalMaxPoolOp, "vjp", to_every_position)
    with pytest.raises(AssertionError, match="ge.global_max_pool operand 'X'"):
        check_vjp(ge.GlobalMaxPoolOp, {"X": x})


def test_an_lp_gradient_without_the_kernel_scale_is_caught(monkeypatch):
    """Mutation: AvgPoolGrad's division by the kernel size is not undone."""
    original = GradBuilder.scale
    monkeypatch.setattr(GradBuilder, "scale", lambda self, a, factor: original(self, a, 1.0))
    x = np.random.default_rng(0).standard_normal((1, 2, 5))
    with pytest.raises(AssertionError, match="ge.lp_pool operand 'X'"):
        check_vjp(ge.LpPoolOp, {"X": x}, {"kernel_shape": [3], "p": 2})


def test_an_instance_norm_gradient_over_the_wrong_axes_is_caught(monkeypatch):
    """Mutation: the layer_norm_grad normalizes from axis 1 (channels and space) instead of 2."""
    from ge.ge_dialects.ge import instance_norm

    original = GradBuilder.emit

    def from_axis_1(self, cls, operands, props=None, num_results=None):
        if cls is ge.LayerNormGradOp:
            props = {**props, "axis": 1}
        return original(self, cls, operands, props, num_results)

    rng = np.random.default_rng(0)
    operands = {"input": rng.standard_normal((2, 3, 4)), "scale": rng.standard_normal(3), "B": rng.standard_normal(3)}
    check_vjp(instance_norm.InstanceNormOp, operands)
    monkeypatch.setattr(GradBuilder, "emit", from_axis_1)
    with pytest.raises(AssertionError, match="ge.instance_norm operand 'input'"):
        check_vjp(instance_norm.InstanceNormOp, operands)


# -- no gradient --------------------------------------------------------------------------------------


def test_lp_pool_in_the_ceil_mode_overhang_has_no_gradient():
    block = Block(arg_types=[tensor(f64, (1, 1, 4)), tensor(f64, (1, 1, 2))])
    pool = ge.LpPoolOp.create({"X": block.args[0]}, {"kernel_shape": [3], "strides": [2], "ceil_mode": 1})
    block.add_op(pool)
    with pytest.raises(NotDifferentiable, match="the last window of spatial axis 0 overhangs the input"):
        pool.vjp(GradBuilder(block, pool), [block.args[1]])


def test_max_unpool_says_why_it_has_no_gradient():
    assert "only the last write lands" in ge.MaxUnpoolOp.NO_GRADIENT
