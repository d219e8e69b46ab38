"""The backward conv and pool kernels against explicit loop references (one output position and one
kernel position at a time, index arithmetic written out: no im2col, no strided slices), in f64,
f32 and f16, over 1-D/2-D/3-D windows with groups, dilations, strides, pads and ceil mode."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Block, Region

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import element_type_of, tensor
from ge.interpreter.ge import GeFunctions

RNG = np.random.default_rng(0)
TOLERANCE = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 2e-2}


def run(op_cls, operands: dict[str, np.ndarray], props: dict) -> tuple[np.ndarray, ge.GeOp]:
    """Runs one op on arguments (not constants) through the interpreter and its kernel checks."""
    block = Block(arg_types=[tensor(element_type_of(a.dtype), a.shape) for a in operands.values()])
    op = op_cls.create(dict(zip(operands, block.args)), props)
    block.add_ops([op, func.ReturnOp(op.results[0])])
    fn = func.FuncOp("main", ([a.type for a in block.args], [op.results[0].type]), Region(block))
    interpreter = Interpreter(ModuleOp([fn]))
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(GeFunctions())
    (result,) = interpreter.call_op(fn, tuple(operands.values()))
    return np.asarray(result), op


def window_taps(out_pos, kernel, strides, pads, dilations):
    """(kernel position, input position) of every tap of the window at `out_pos`, row-major."""
    for k in itertools.product(*(range(n) for n in kernel)):
        yield k, tuple(o * s - p + kk * d for o, s, p, kk, d in zip(out_pos, strides, pads, k, dilations))


def inside(pos, sizes) -> bool:
    return all(0 <= i < n for i, n in zip(pos, sizes))


def reference_conv_grads(x, w, dy, strides, pads, dilations, group):
    """dX and dW by the definition y[n, m, o] = sum_{c, k} x[n, g*Cg + c, o*s - p + k*d] w[m, c, k]."""
    dx, dw = np.zeros(x.shape), np.zeros(w.shape)
    mg, cg = w.shape[0] // group, w.shape[1]
    for o in np.ndindex(*dy.shape[2:]):
        for k, i in window_taps(o, w.shape[2:], strides, pads[: len(o)], dilations):
            if not inside(i, x.shape[2:]):
                continue
            for g in range(group):
                ms, cs = slice(g * mg, (g + 1) * mg), slice(g * cg, (g + 1) * cg)
                dx[(slice(None), cs, *i)] += dy[(slice(None), ms, *o)] @ w[(ms, slice(None), *k)]
                dw[(ms, slice(None), *k)] += dy[(slice(None), ms, *o)].T @ x[(slice(None), cs, *i)]
    return dx, dw


CONVS = {
    "conv1d_strided_dilated": ((2, 3, 13), (4, 3, 3), dict(strides=[3], pads=[2, 1], dilations=[2])),
    "conv2d_groups": ((2, 4, 9, 8), (6, 2, 3, 2), dict(group=2, strides=[2, 3], pads=[1, 0, 2, 1], dilations=[2, 1])),
    "depthwise": ((1, 3, 6, 6), (6, 1, 3, 3), dict(group=3, pads=[1, 1, 1, 1])),
    "stride_drops_tail": ((1, 2, 8, 7), (3, 2, 3, 3), dict(strides=[2, 2])),  # the last row/col is read by no window
    "conv3d": ((1, 2, 5, 6, 4), (3, 2, 2, 3, 2), dict(pads=[1, 0, 1, 0, 1, 1], strides=[1, 2, 2])),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("name", sorted(CONVS))
def test_conv_backprop_kernels(name, dtype):
    x_shape, w_shape, props = CONVS[name]
    spatial = len(x_shape) - 2
    full = {"strides": [1] * spatial, "dilations": [1] * spatial, "pads": [0] * 2 * spatial, "group": 1, **props}
    y, _ = run(ge.ConvOp, {"X": np.zeros(x_shape), "W": np.zeros(w_shape)}, props)
    x, w, dy = (RNG.standard_normal(s).astype(dtype) for s in (x_shape, w_shape, y.shape))
    geometry = {k: full[k] for k in ("strides", "pads", "dilations", "group")}
    want_dx, want_dw = reference_conv_grads(*(a.astype(np.float64) for a in (x, w, dy)), **geometry)
    dx, _ = run(ge.ConvBackpropInputOp, {"dy": dy, "W": w}, {**props, "input_shape": x_shape})
    dw, _ = run(ge.ConvBackpropFilterOp, {"x": x, "dy": dy}, {**props, "filter_shape": w_shape})
    assert dx.dtype == dw.dtype == dtype
    tol = TOLERANCE[dtype]
    np.testing.assert_allclose(dx, want_dx, rtol=tol, atol=tol * np.abs(want_dx).max())
    np.testing.assert_allclose(dw, want_dw, rtol=tol, atol=tol * np.abs(want_dw).max())


def test_conv_backprop_macs_equal_the_forward_convs():
    x_shape, w_shape, props = CONVS["conv2d_groups"]
    y, conv = run(ge.ConvOp, {"X": RNG.standard_normal(x_shape), "W": RNG.standard_normal(w_shape)}, props)
    _, dx_op = run(
        ge.ConvBackpropInputOp, {"dy": y, "W": RNG.standard_normal(w_shape)}, {**props, "input_shape": x_shape}
    )
    _, dw_op = run(
        ge.ConvBackpropFilterOp, {"x": RNG.standard_normal(x_shape), "dy": y}, {**props, "filter_shape": w_shape}
    )
    assert dx_op.macs() == dw_op.macs() == conv.macs() > 0


def reference_pool_grad(x_shape, dy, kernel, strides, pads, dilations, pick):
    """dX of a pool: `pick(n, c, taps)` gives, for the window's (input position, inside) taps, the
    [(input position, weight)] its dy goes to."""
    dx = np.zeros(x_shape)
    spatial = len(kernel)
    for n, c in np.ndindex(*x_shape[:2]):
        for o in np.ndindex(*dy.shape[2:]):
            taps = [i for _, i in window_taps(o, kernel, strides, pads[:spatial], dilations)]
            for i, weight in pick(n, c, taps):
                dx[(n, c, *i)] += weight * dy[(n, c, *o)]
    return dx


POOLS = {
    "pool1d": ((2, 3, 11), dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
    "ceil_pads_strides": ((1, 2, 7, 8), dict(kernel_shape=[3, 2], strides=[2, 3], pads=[1, 0, 1, 1], ceil_mode=1)),
    "dilated_overlapping": ((1, 2, 9, 9), dict(kernel_shape=[2, 3], dilations=[2, 2], strides=[1, 2])),
    "pool3d": ((1, 2, 5, 6, 7), dict(kernel_shape=[2, 3, 2], strides=[2, 2, 3], pads=[0, 1, 1, 1, 1, 0], ceil_mode=1)),
}


def _full(props, spatial):
    return {"strides": [1] * spatial, "dilations": [1] * spatial, "pads": [0] * 2 * spatial, **props}


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("name", sorted(POOLS))
def test_max_pool_grad_kernel(name, dtype):
    x_shape, props = POOLS[name]
    full = _full(props, len(x_shape) - 2)
    x = (RNG.permutation(int(np.prod(x_shape))).reshape(x_shape) % 50).astype(dtype)  # small ints: many ties
    y, _ = run(ge.MaxPoolOp, {"X": x}, props)
    dy = RNG.standard_normal(y.shape).astype(dtype)

    def first_maximum(n, c, taps):
        values = [x[(n, c, *i)] if inside(i, x_shape[2:]) else -np.inf for i in taps]
        return [(taps[int(np.argmax(values))], 1.0)]  # argmax: the first of equal maxima

    want = reference_pool_grad(
        x_shape,
        dy.astype(np.float64),
        full["kernel_shape"],
        full["strides"],
        full["pads"],
        full["dilations"],
        first_maximum,
    )
    dx, _ = run(ge.MaxPoolGradOp, {"x": x, "dy": dy}, props)
    assert dx.dtype == dtype
    np.testing.assert_allclose(dx, want, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype] * 4)


def test_max_pool_grad_ties_go_to_the_first_maximum():
    """All-equal windows: the whole gradient lands on each window's first (row-major) position."""
    dx, _ = run(
        ge.MaxPoolGradOp,
        {"x": np.ones((1, 1, 4, 4)), "dy": np.arange(1.0, 5).reshape(1, 1, 2, 2)},
        {"kernel_shape": [2, 2], "strides": [2, 2]},
    )
    want = np.zeros((4, 4))
    want[::2, ::2] = [[1, 2], [3, 4]]
    np.testing.assert_array_equal(dx[0, 0], want)


@pytest.mark.parametrize("include_pad", [0, 1])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("name", sorted(POOLS))
def test_avg_pool_grad_kernel(name, dtype, include_pad):
    x_shape, props = POOLS[name]
    props = {**props, "count_include_pad": include_pad}
    full = _full(props, len(x_shape) - 2)
    spatial, pads = x_shape[2:], full["pads"]
    y, _ = run(ge.AvgPoolOp, {"X": np.zeros(x_shape, dtype)}, props)
    dy = RNG.standard_normal(y.shape).astype(dtype)

    def spread(n, c, taps):
        inner = [i for i in taps if inside(i, spatial)]
        # count_include_pad counts the explicit padding, never the ceil-mode overhang past it
        padded = [i for i in taps if all(-pads[a] <= i[a] < spatial[a] + pads[a + len(spatial)] for a in range(len(i)))]
        count = len(padded) if include_pad else len(inner)
        return [(i, 1.0 / count) for i in inner]

    want = reference_pool_grad(
        x_shape, dy.astype(np.float64), full["kernel_shape"], full["strides"], pads, full["dilations"], spread
    )
    dx, _ = run(ge.AvgPoolGradOp, {"dy": dy}, {**props, "input_shape": x_shape})
    assert dx.dtype == dtype
    np.testing.assert_allclose(dx, want, rtol=TOLERANCE[dtype], atol=TOLERANCE[dtype] * 4)
