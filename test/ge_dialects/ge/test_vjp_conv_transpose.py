"""ConvTranspose's gradient against finite differences (float64): random 1-D/2-D/3-D shapes with
groups, dilations, strides, output_padding, and explicit pads, auto_pad or output_shape; and
mutations (a dX that forgets the pads, swapped cotangents) that the check catches."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vjp_check import check_vjp

from ge.ge_dialects import ge


@st.composite
def conv_transpose_cases(draw):
    spatial = draw(st.integers(1, 3))
    group = draw(st.sampled_from([1, 2]))
    cin, cout = group * draw(st.integers(1, 2)), group * draw(st.integers(1, 2))
    sizes, kernel, strides, dilations, adjust, fulls = [], [], [], [], [], []
    for _ in range(spatial):
        k = draw(st.integers(1, 3 if spatial < 3 else 2))
        d = draw(st.integers(1, 2)) if k > 1 else 1
        s = draw(st.integers(1, 3))
        n = draw(st.integers(1, 4))
        p = draw(st.integers(0, s - 1))
        sizes.append(n), kernel.append(k), strides.append(s), dilations.append(d), adjust.append(p)
        fulls.append(s * (n - 1) + p + (k - 1) * d + 1)
    props = {"group": group, "strides": strides, "dilations": dilations, "output_padding": adjust}
    mode = draw(st.sampled_from(["pads", "SAME_UPPER", "SAME_LOWER", "VALID", "output_shape"]))
    if mode == "pads":
        begins = [draw(st.integers(0, min(2, f - 1))) for f in fulls]
        ends = [draw(st.integers(0, min(2, f - 1 - b))) for f, b in zip(fulls, begins)]
        props["pads"] = begins + ends
    elif mode == "output_shape":
        props["output_shape"] = [
            draw(st.integers(max(1, f - 3), f - p + s - 1)) for f, p, s in zip(fulls, adjust, strides)
        ]
    else:
        props["auto_pad"] = mode
    x = (draw(st.integers(1, 2)), cin, *sizes)
    w = (cin, cout // group, *kernel)
    return x, w, draw(st.booleans()), props


@settings(max_examples=50, deadline=None)
@given(case=conv_transpose_cases(), seed=st.integers(0, 2**16))
def test_conv_transpose_vjp(case, seed):
    x, w, bias, props = case
    rng = np.random.default_rng(seed)
    operands = {
        "X": rng.standard_normal(x),
        "W": rng.standard_normal(w),
        "B": rng.standard_normal(w[1] * props["group"]) if bias else None,
    }
    check_vjp(ge.ConvTransposeOp, operands, props, seed=seed)


def _operands(x=(1, 2, 3, 3), w=(2, 2, 3, 3)):
    rng = np.random.default_rng(0)
    return {"X": rng.standard_normal(x), "W": rng.standard_normal(w)}


def test_a_gradient_cropping_the_wrong_side_is_caught(monkeypatch):
    """Mutation: the VJP's convolution pads the side the forward did not crop (the kernel keeps the
    right geometry; every shape still fits): output_shape 4 of a full 5 crops 1 at the begin."""
    from ge.ge_dialects.ge import conv_transpose

    original = conv_transpose.explicit_window

    def swapped(prop, sizes, kernel):
        window, out = original(prop, sizes, kernel)
        rank = len(sizes)
        return dataclasses.replace(window, pads=(*window.pads[rank:], *window.pads[:rank])), out

    props = {"output_shape": [4, 4]}
    check_vjp(ge.ConvTransposeOp, _operands(), props)
    monkeypatch.setattr(conv_transpose, "explicit_window", swapped)
    with pytest.raises(AssertionError, match="ge.conv_transpose operand 'X'"):
        check_vjp(ge.ConvTransposeOp, _operands(), props)


def test_swapped_conv_transpose_cotangents_are_caught(monkeypatch):
    """Mutation: dX and dW swapped, on shapes where both have one type (so only the numbers tell)."""
    original = ge.ConvTransposeOp.vjp
    monkeypatch.setattr(ge.ConvTransposeOp, "vjp", lambda self, g, cts: list(reversed(original(self, g, cts))))
    with pytest.raises(AssertionError, match="ge.conv_transpose operand 'X'"):
        check_vjp(ge.ConvTransposeOp, _operands((1, 1, 3, 3), (1, 1, 3, 3)), {"pads": [1] * 4})
