"""The kernels of the activation gradients (ge.relu_grad, ge.gelu_grad) against finite differences
of their forward kernels, and ge.exp / ge.log's narrow-float rounding (computed in f32, rounded once)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.ir import Block

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import element_type_of, tensor
from ge.interpreter.ge import folding_interpreter

FLOATS = [np.float64, np.float32, np.float16, ml_dtypes.bfloat16]
shapes = st.lists(st.integers(1, 5), min_size=0, max_size=3).map(tuple)


INTERPRETER = folding_interpreter()


def run(op_cls, operands: dict[str, np.ndarray], props=None) -> np.ndarray:
    """The op's registered kernel (as a run calls it: results type-checked) on these operands."""
    block = Block(arg_types=[tensor(element_type_of(v.dtype), v.shape) for v in operands.values()])
    op = op_cls.create(dict(zip(operands, block.args)), props)
    (result,) = INTERPRETER.run_op(op, tuple(operands.values()))
    return np.asarray(result)


def central_difference(forward, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d forward / dx elementwise (the ops are elementwise, so one perturbation of all elements)."""
    return (forward(x + h) - forward(x - h)) / (2 * h)


@settings(max_examples=15, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16))
def test_relu_grad_is_the_relu_derivative_times_dy(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    x = np.where(np.abs(x) < 0.01, 0.5, x)  # off the kink
    dy = rng.standard_normal(shape)
    y = run(ge.ReluOp, {"x": x})
    derivative = central_difference(lambda v: run(ge.ReluOp, {"x": v}), x)
    np.testing.assert_allclose(run(ge.ReluGradOp, {"dy": dy, "y": y}), dy * derivative, rtol=1e-9)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda t: np.dtype(t).name)
def test_relu_grad_selects_exactly_in_every_float_type(dtype):
    dy = np.asarray([1.5, -2.25, 3.0, 4.0, -0.5], dtype=dtype)
    y = np.asarray([0.0, 1.0, -0.0, np.nan, 2.0], dtype=dtype)
    out = run(ge.ReluGradOp, {"dy": dy, "y": y})
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out.astype(np.float64), [0.0, -2.25, 0.0, 0.0, -0.5])


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@settings(max_examples=15, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16))
def test_gelu_grad_is_the_gelu_derivative_times_dy(approximate, shape, seed):
    rng = np.random.default_rng(seed)
    x, dy = 3 * rng.standard_normal(shape), rng.standard_normal(shape)
    props = {"approximate": approximate}
    derivative = central_difference(lambda v: run(ge.GeluOp, {"x": v}, props), x)
    got = run(ge.GeluGradOp, {"dy": dy, "x": x}, props)
    np.testing.assert_allclose(got, dy * derivative, rtol=1e-7, atol=1e-9)


def test_the_two_gelu_forms_have_different_derivatives():
    """The property reaches the kernel: the forms differ by about 1e-3 near |x| = 2."""
    x, dy = np.linspace(-3, 3, 13), np.ones(13)
    erf_form = run(ge.GeluGradOp, {"dy": dy, "x": x}, {"approximate": "none"})
    tanh_form = run(ge.GeluGradOp, {"dy": dy, "x": x}, {"approximate": "tanh"})
    assert 1e-4 < np.max(np.abs(erf_form - tanh_form)) < 1e-2


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16], ids=["f16", "bf16"])
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_grad_narrow_floats_round_once_from_f32(dtype, approximate):
    rng = np.random.default_rng(0)
    x, dy = (rng.standard_normal(64).astype(dtype) for _ in range(2))
    props = {"approximate": approximate}
    wide = run(ge.GeluGradOp, {"dy": dy.astype(np.float32), "x": x.astype(np.float32)}, props)
    got = run(ge.GeluGradOp, {"dy": dy, "x": x}, props)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, wide.astype(dtype))


@pytest.mark.parametrize(("op_cls", "fn"), [(ge.ExpOp, np.exp), (ge.LogOp, np.log)], ids=["exp", "log"])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda t: np.dtype(t).name)
def test_exp_and_log_compute_narrow_floats_in_f32(op_cls, fn, dtype):
    x = np.random.default_rng(1).uniform(0.1, 4.0, 32).astype(dtype)
    got = run(op_cls, {"x": x})
    want = fn(x.astype(np.float32)).astype(dtype) if np.dtype(dtype).itemsize < 4 else fn(x)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)
