"""The conv and pool gradients against finite differences (float64): random 1-D/2-D/3-D shapes
with groups, dilations, strides, explicit and automatic padding, ceil mode and count_include_pad;
and mutations (a kernel that forgets the flip, swapped cotangents, a dropped attribute) that the
check catches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vjp_check import check_vjp
from xdsl.interpreter import impl, register_impls

from ge.ge_dialects import ge
from ge.ge_dialects.ge.grad import NotDifferentiable
from ge.interpreter.ge import GeFunctions
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.conv_grad import conv_backprop_input


def _axis(draw, pad_ok: bool, max_kernel: int = 3) -> dict:
    """One spatial axis: kernel, stride, dilation, pads and an input size a window fits."""
    kernel = draw(st.integers(1, max_kernel))
    dilation = draw(st.integers(1, 2)) if kernel > 1 else 1
    extent = (kernel - 1) * dilation + 1
    # Pools pad only undilated axes, and less than a kernel: every window then holds an input position
    # (a max over padding alone is -inf, an average over nothing is 0/0).
    begin, end = (draw(st.integers(0, kernel - 1)), draw(st.integers(0, kernel - 1))) if pad_ok else (0, 0)
    size = draw(st.integers(max(extent - begin - end, 1, extent if not pad_ok else 1), extent + 3))
    return dict(kernel=kernel, stride=draw(st.integers(1, 3)), dilation=dilation, begin=begin, end=end, size=size)


@st.composite
def conv_cases(draw):
    spatial = draw(st.integers(1, 3))
    axes = [_axis(draw, True, max_kernel=3 if spatial < 3 else 2) for _ in range(spatial)]
    group = draw(st.sampled_from([1, 2]))
    cin, cout = group * draw(st.integers(1, 2)), group * draw(st.integers(1, 2))
    n = draw(st.integers(1, 2))
    props = {
        "group": group,
        "strides": [a["stride"] for a in axes],
        "dilations": [a["dilation"] for a in axes],
        "pads": [a["begin"] for a in axes] + [a["end"] for a in axes],
    }
    auto_pad = draw(st.sampled_from(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
    if auto_pad != "NOTSET":
        del props["pads"]
        props["auto_pad"] = auto_pad
        if auto_pad == "VALID":
            for a in axes:
                a["size"] = max(a["size"], (a["kernel"] - 1) * a["dilation"] + 1)
    x = (n, cin, *[a["size"] for a in axes])
    w = (cout, cin // group, *[a["kernel"] for a in axes])
    return x, w, draw(st.booleans()), props


@settings(max_examples=40, deadline=None)
@given(case=conv_cases(), seed=st.integers(0, 2**16))
def test_conv_vjp(case, seed):
    x, w, bias, props = case
    rng = np.random.default_rng(seed)
    operands = {
        "X": rng.standard_normal(x),
        "W": rng.standard_normal(w),
        "B": rng.standard_normal(w[0]) if bias else None,
    }
    check_vjp(ge.ConvOp, operands, props, seed=seed)


@st.composite
def pool_cases(draw):
    spatial = draw(st.integers(1, 3))
    axes = [_axis(draw, pad_ok=draw(st.booleans())) for _ in range(spatial)]
    for a in axes:
        if a["dilation"] > 1:  # see _axis: a dilated axis is not padded
            a["begin"] = a["end"] = 0
            a["size"] = max(a["size"], (a["kernel"] - 1) * a["dilation"] + 1)
    props = {
        "kernel_shape": [a["kernel"] for a in axes],
        "strides": [a["stride"] for a in axes],
        "dilations": [a["dilation"] for a in axes],
        "pads": [a["begin"] for a in axes] + [a["end"] for a in axes],
        "ceil_mode": draw(st.sampled_from([0, 1])),
    }
    if all(a["dilation"] == 1 for a in axes) and draw(st.booleans()):
        del props["pads"]
        props["auto_pad"] = draw(st.sampled_from(["SAME_UPPER", "SAME_LOWER"]))
    x = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *[a["size"] for a in axes])
    return x, props


@settings(max_examples=40, deadline=None)
@given(case=pool_cases(), with_indices=st.booleans(), seed=st.integers(0, 2**16))
def test_max_pool_vjp(case, with_indices, seed):
    x, props = case
    # distinct values (no ties), in [0, 1): spaced 1/n apart, far beyond the differences' step, and
    # small enough that the objective's rounding stays below their tolerance (values up to n/7 did not)
    n = int(np.prod(x))
    data = np.random.default_rng(seed).permutation(n).reshape(x) / n
    check_vjp(ge.MaxPoolOp, {"X": data}, props, num_results=2 if with_indices else 1, seed=seed)


@settings(max_examples=40, deadline=None)
@given(case=pool_cases(), include_pad=st.sampled_from([0, 1]), seed=st.integers(0, 2**16))
def test_avg_pool_vjp(case, include_pad, seed):
    x, props = case
    data = np.random.default_rng(seed).standard_normal(x)
    check_vjp(ge.AvgPoolOp, {"X": data}, {**props, "count_include_pad": include_pad}, seed=seed)


@settings(max_examples=10, deadline=None)
@given(spatial=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 2**16))
def test_global_avg_pool_vjp(spatial, seed):
    check_vjp(ge.GlobalAvgPoolOp, {"X": np.random.default_rng(seed).standard_normal((2, 3, *spatial))}, seed=seed)


def test_conv_gradient_types_follow_annotated_operands():
    """A 4-D conv's result is NCHW-annotated while its input here is not: each cotangent still has
    exactly its operand's type (check_vjp asserts it), and an all-size-1 global pool too."""
    rng = np.random.default_rng(1)
    check_vjp(ge.ConvOp, {"X": rng.standard_normal((1, 2, 5, 5)), "W": rng.standard_normal((3, 2, 3, 3))})
    check_vjp(ge.GlobalAvgPoolOp, {"X": rng.standard_normal((2, 3, 1, 1))})


# -- mutations: each breaks one thing the gradients rely on, and the check says where ----------------------


def _patch_kernel(monkeypatch, op_cls, kernel) -> None:
    """Replaces op_cls's kernel in the table every interpreter built from GeFunctions reads."""

    @register_impls
    class Mutated(GeFunctions):
        run = impl(op_cls)(kernel_impl(kernel))

    table = dict(GeFunctions._impls())
    table[op_cls] = dict(Mutated._impls())[op_cls]
    monkeypatch.setattr(GeFunctions, "_impls", classmethod(lambda cls: table.items()))


def test_a_kernel_that_forgets_the_flip_is_caught(monkeypatch):
    """Mutation: the input gradient correlates dy with W instead of convolving (no kernel flip)."""

    def unflipped(op, ins):
        spatial = tuple(range(2, ins["W"].ndim))
        return conv_backprop_input(op, {"dy": ins["dy"], "W": np.flip(ins["W"], axis=spatial)})

    rng = np.random.default_rng(0)
    operands = {"X": rng.standard_normal((1, 2, 6, 5)), "W": rng.standard_normal((2, 2, 3, 2))}
    check_vjp(ge.ConvOp, operands, {"pads": [1, 0, 1, 1]})
    _patch_kernel(monkeypatch, ge.ConvBackpropInputOp, unflipped)
    with pytest.raises(AssertionError, match="ge.conv operand 'X'"):
        check_vjp(ge.ConvOp, operands, {"pads": [1, 0, 1, 1]})


def test_swapped_conv_cotangents_are_caught(monkeypatch):
    """Mutation: dX and dW swapped, on shapes where both have one type (so only the numbers tell)."""
    original = ge.ConvOp.vjp
    monkeypatch.setattr(ge.ConvOp, "vjp", lambda self, g, cts: list(reversed(original(self, g, cts))))
    rng = np.random.default_rng(0)
    with pytest.raises(AssertionError, match="ge.conv operand 'X'"):
        check_vjp(
            ge.ConvOp,
            {"X": rng.standard_normal((1, 1, 3, 3)), "W": rng.standard_normal((1, 1, 3, 3))},
            {"pads": [1] * 4},
        )


def test_a_dropped_count_include_pad_is_caught(monkeypatch):
    """Mutation: the avg_pool VJP forgets count_include_pad (divides by the count inside the input)."""
    from ge.ge_dialects.ge import conv_grad

    original = conv_grad.explicit_window_props
    x = np.random.default_rng(0).standard_normal((1, 1, 5, 5))
    props = {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}
    check_vjp(ge.AvgPoolOp, {"X": x}, props)
    monkeypatch.setattr(conv_grad, "explicit_window_props", lambda *a: {**original(*a), "count_include_pad": 0})
    with pytest.raises(AssertionError, match="ge.avg_pool operand 'X'"):
        check_vjp(ge.AvgPoolOp, {"X": x}, props)


def test_a_dropped_dilation_is_caught(monkeypatch):
    """Mutation: the max_pool VJP's window forgets its dilations (everything still verifies: with
    stride 2 the undilated window has as many outputs on a 5x5 input)."""
    from ge.ge_dialects.ge import conv_grad

    original = conv_grad.explicit_window_props

    def undilated(op, kernel, names):
        props = original(op, kernel, names)
        props["dilations"] = [1] * len(kernel)
        return props

    x = np.random.default_rng(0).permutation(25).reshape(1, 1, 5, 5) / 7.0
    props = {"kernel_shape": [2, 2], "dilations": [2, 2], "strides": [2, 2]}
    check_vjp(ge.MaxPoolOp, {"X": x}, props)
    monkeypatch.setattr(conv_grad, "explicit_window_props", undilated)
    with pytest.raises(AssertionError, match="ge.max_pool operand 'X'"):
        check_vjp(ge.MaxPoolOp, {"X": x}, props)


def test_integer_max_pool_has_no_gradient():
    from xdsl.dialects.builtin import i8
    from xdsl.ir import Block

    from ge.ge_dialects.ge.grad import GradBuilder
    from ge.ge_dialects.ge.types import tensor

    block = Block(arg_types=[tensor(i8, (1, 1, 4, 4)), tensor(i8, (1, 1, 2, 2))])
    pool = ge.MaxPoolOp.create({"X": block.args[0]}, {"kernel_shape": [2, 2], "strides": [2, 2]})
    block.add_op(pool)
    with pytest.raises(NotDifferentiable, match="ge.max_pool of an integer input has no gradient"):
        pool.vjp(GradBuilder(block, pool), [block.args[1]])
