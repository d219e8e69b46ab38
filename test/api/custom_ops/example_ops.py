"""A plugin for the custom operator tests (test/api/test_custom_ops.py): one operator of its own
domain with an attribute, com.example.ScaledSoftplus(X; alpha) = log(1 + exp(alpha * X)) / alpha."""

import numpy as np

import ge


def scaled_softplus(x: np.ndarray, alpha: float) -> np.ndarray:
    """The reference the tests compare with: stable for large |alpha * x|."""
    a = x.dtype.type(alpha)
    return np.logaddexp(x.dtype.type(0), a * x) / a


def scaled_softplus_vjp(inputs, cotangents, attrs):
    """d/dx log(1 + exp(a x)) / a = sigmoid(a x)."""
    (x,), (dy,) = inputs, cotangents
    a = x.dtype.type(attrs["alpha"])
    return [dy / (1 + np.exp(-a * x))]


ge.register_op(
    "ScaledSoftplus",
    domain="com.example",
    opsets=(1, 3),
    inputs=["X"],
    outputs=["Y"],
    attributes={"alpha": ("float", 1.0)},
    shape=lambda inputs, attrs: [ge.TensorSpec(inputs[0].shape, inputs[0].dtype)],
    kernel=lambda inputs, attrs: [scaled_softplus(inputs[0], attrs["alpha"])],
    engine="vector",
    work=lambda inputs, outputs, attrs: 4 * outputs[0].size,  # multiply, exp, log1p, divide
    vjp=scaled_softplus_vjp,
)
