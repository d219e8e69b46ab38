"""Every GE operator type of api/op_types.py builds, verifies and computes what GE's operator computes.

Each case gives a GE type's inputs and attributes in GE's own forms (NCHW strides [1, 1, h, w], pads
[top, bottom, left, right], keep_dims, dst_type numbers ...) and a numpy reference written from GE's
semantics, independent of the ge kernels and of the table. The mutation tests at the end swap table
entries and break a converter, and show the check fails.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import ge
from ge.api import op_types
from ge.api.op_types import OP_TYPES, Attr
from ge.interpreter.runner import run

RNG = np.random.default_rng(7)


def rand(*shape: int, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return RNG.uniform(low, high, shape).astype(np.float32)


@dataclass
class Case:
    inputs: list[Any]
    """np.float32 arrays are fed as placeholders; anything else is passed to `op` as given (a constant)."""
    reference: Callable[..., Any]
    """Of the placeholder arrays, in order: the expected result (a tuple for several)."""
    attrs: dict[str, Any] = field(default_factory=dict)
    tolerance: float = 1e-5


def _pad(x, top, bottom, left, right, value=0.0):
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=value)


def conv2d(x, w, b, stride, pads, dilation):
    """Direct convolution; pads GE's [top, bottom, left, right]."""
    x = _pad(x, *pads)
    (sh, sw), (dh, dw) = stride, dilation
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (wd - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((n, o, oh, ow), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * sh : i * sh + dh * kh : dh, j * sw : j * sw + dw * kw : dw]
            y[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return y + b.reshape(1, -1, 1, 1)


def pool(x, kernel, stride, pads, reduce, ceil=False, count_pad=False):
    """Max / average pooling; pads GE's [top, bottom, left, right]; ceil_mode windows that start
    inside the (padded) input."""
    top, bottom, left, right = pads
    n, c, h, w = x.shape
    (kh, kw), (sh, sw) = kernel, stride
    rounding = math.ceil if ceil else math.floor
    oh = rounding((h + top + bottom - kh) / sh) + 1
    ow = rounding((w + left + right - kw) / sw) + 1
    y = np.zeros((n, c, oh, ow), np.float32)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * sh - top, j * sw - left
            r1, c1 = r0 + kh, c0 + kw
            window = x[:, :, max(r0, 0) : min(r1, h), max(c0, 0) : min(c1, w)]
            if reduce == "max":
                y[:, :, i, j] = window.max(axis=(2, 3))
            else:
                if count_pad:
                    divisor = (min(r1, h + bottom) - r0) * (min(c1, w + right) - c0)
                else:
                    divisor = window.shape[2] * window.shape[3]
                y[:, :, i, j] = window.sum(axis=(2, 3)) / divisor
    return y


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layer_norm(x, gamma, beta, axis, eps):
    axes = tuple(range(axis % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


erf = np.vectorize(math.erf)


def gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


IMG = rand(2, 3, 7, 8)


def cases() -> dict[str, Case]:
    a, b = rand(2, 3, 4), rand(3, 4)  # broadcasting
    pos = rand(2, 3, low=0.5, high=3.0)
    w, bias = rand(4, 3, 3, 2), rand(4)
    scale, offset, mean, var = rand(3), rand(3), rand(3), rand(3, low=0.5, high=1.5)
    m1, m2, m3 = rand(2, 5, 3), rand(3, 4), rand(2, 3, 6)
    gamma, beta = rand(4), rand(4)
    idx = np.array([2, 0, 2], np.int64)
    cond = RNG.uniform(size=(2, 3)) > 0.5
    binary = {
        "Add": np.add,
        "AddV2": np.add,
        "Sub": np.subtract,
        "Mul": np.multiply,
        "RealDiv": np.divide,
        "Div": np.divide,
    }
    table: dict[str, Case] = {k: Case([a, b], f) for k, f in binary.items()}
    table["Pow"] = Case([pos, rand(2, 3)], np.power, tolerance=1e-4)
    table["Equal"] = Case([np.round(a), np.round(b)], np.equal)
    unary = {
        "Relu": lambda x: np.maximum(x, 0),
        "Erf": erf,
        "Tanh": np.tanh,
        "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "HardSwish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
        "Identity": lambda x: x,
        "Exp": np.exp,
        "GeluV2": lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))),  # approximate="none" by default
        "Gelu": gelu_tanh,  # CANN's Gelu is the tanh form
    }
    table.update({k: Case([a], f) for k, f in unary.items()})
    table["Sqrt"] = Case([pos], np.sqrt)
    table["Log"] = Case([pos], np.log)
    table["ClipByValue"] = Case(
        [a, np.float32(-0.5), np.float32(1.0)], lambda x: np.clip(x, -0.5, 1.0)
    )  # GE's ClipByValue: min and max inputs
    table["Conv2D"] = Case(
        [IMG, w, bias],
        lambda x, w, b: conv2d(x, w, b, (1, 2), (1, 0, 2, 1), (2, 1)),
        {"strides": [1, 1, 1, 2], "pads": [1, 0, 2, 1], "dilations": [1, 1, 2, 1], "groups": 1, "data_format": "NCHW"},
        tolerance=1e-4,
    )
    table["MaxPool"] = Case(
        [IMG], lambda x: pool(x, (2, 3), (2, 2), (0, 0, 0, 0), "max"), {"ksize": [1, 1, 2, 3], "strides": [1, 1, 2, 2]}
    )
    table["MaxPoolV3"] = Case(
        [IMG],
        lambda x: pool(x, (3, 3), (2, 2), (1, 0, 0, 1), "max", ceil=True),
        {"ksize": [1, 1, 3, 3], "strides": [1, 1, 2, 2], "pads": [1, 0, 0, 1], "ceil_mode": True},
    )
    table["AvgPool"] = Case(
        [IMG],
        lambda x: pool(x, (3, 2), (2, 2), (1, 1, 0, 0), "avg"),  # SAME: 7 rows -> 4 windows, one row each side
        {"ksize": [1, 1, 3, 2], "strides": [1, 1, 2, 2], "padding": "SAME"},
    )
    table["AvgPoolV2"] = Case(
        [IMG],
        lambda x: pool(x, (3, 3), (2, 3), (1, 1, 0, 2), "avg", count_pad=True),
        {"ksize": [3, 3], "strides": [2, 3], "pads": [1, 1, 0, 2], "exclusive": False},
    )
    table["GlobalAveragePool"] = Case([IMG], lambda x: x.mean(axis=(2, 3), keepdims=True))
    table["BatchNorm"] = Case(
        [IMG, scale, offset, mean, var],
        lambda x, s, o, m, v: (
            (x - m.reshape(1, -1, 1, 1)) / np.sqrt(v.reshape(1, -1, 1, 1) + 1e-3) * s.reshape(1, -1, 1, 1)
            + o.reshape(1, -1, 1, 1)
        ),
        {"epsilon": 1e-3, "is_training": False},
        tolerance=1e-4,
    )
    table["LayerNorm"] = Case(
        [rand(2, 3, 4), gamma, beta],
        lambda x, g, b: layer_norm(x, g, b, -1, 1e-4),
        {"begin_norm_axis": -1, "begin_params_axis": -1, "epsilon": 1e-4},
        tolerance=1e-4,
    )
    table["SoftmaxV2"] = Case([a], lambda x: softmax(x, 1), {"axes": [1]})
    table["Softmax"] = Case([a], lambda x: softmax(x, 0), {"axis": 0})
    matmul = Case([m1, m2], np.matmul, tolerance=1e-4)
    table.update({k: matmul for k in ("MatMul", "MatMulV2")})
    table["BatchMatMul"] = Case([m1, m3], np.matmul, {"adj_x1": False}, tolerance=1e-4)
    table["BatchMatMulV2"] = Case([m1, m3], np.matmul, tolerance=1e-4)
    table["GemmV2"] = Case(
        [rand(2, 3), rand(4, 3), 0.5, 2.0, rand(4)],
        lambda x, y, c: 0.5 * x @ y.T + 2.0 * c,
        {"transpose_b": True},
        tolerance=1e-4,
    )
    table["Reshape"] = Case([a, [4, -1]], lambda x: x.reshape(4, -1))
    table["Transpose"] = Case([a, [2, 0, 1]], lambda x: x.transpose(2, 0, 1))
    table["TransposeD"] = Case([a], lambda x: x.transpose(1, 0, 2), {"perm": [1, 0, 2]})
    table["Flatten"] = Case([a], lambda x: x.reshape(6, 4), {"axis": 2})
    table["ConcatD"] = Case([a, rand(2, 1, 4)], lambda x, y: np.concatenate([x, y], 1), {"concat_dim": 1})
    table["Concat"] = Case([-1, a, rand(2, 3, 2)], lambda x, y: np.concatenate([x, y], -1))
    table["SplitD"] = Case([rand(2, 6)], lambda x: tuple(np.split(x, 3, axis=1)), {"split_dim": 1, "num_split": 3})
    table["GatherV2"] = Case([a, idx, 1], lambda x: np.take(x, idx, axis=1))
    table["Gather"] = Case([rand(3, 4), idx], lambda x: np.take(x, idx, axis=0))
    table["Unsqueeze"] = Case([a], lambda x: x[:, None], {"axes": [1]})
    table["Squeeze"] = Case([rand(2, 1, 3)], lambda x: x[:, 0], {"axis": [1]})
    table["ReduceMean"] = Case([a, [1]], lambda x: x.mean(axis=1))  # GE's keep_dims defaults to false
    table["ReduceMeanD"] = Case([a], lambda x: x.mean(axis=(0, 2), keepdims=True), {"axes": [0, 2], "keep_dims": True})
    table["ReduceSum"] = Case([a, [2]], lambda x: x.sum(axis=2), tolerance=1e-4)
    table["ReduceSumD"] = Case([a], lambda x: x.sum(axis=0), {"axes": [0]}, tolerance=1e-4)
    table["Cast"] = Case([a], lambda x: x.astype(np.float16), {"dst_type": 1})  # GE's DT_FLOAT16
    table["SelectV2"] = Case([cond, pos, rand(3)], lambda x, y: np.where(cond, x, y))
    table["Select"] = Case([cond, pos, rand(2, 3)], lambda x, y: np.where(cond, x, y))
    table["Expand"] = Case([rand(3, 1), [2, 3, 4]], lambda x: np.broadcast_to(x, (2, 3, 4)))
    table["Shape"] = Case([a], lambda x: np.array(x.shape, np.int64), {"dtype": 9})
    table["Range"] = Case([np.int64(1), np.int64(10), np.int64(3)], lambda: np.arange(1, 10, 3))
    return table


CASES = cases()


def check(type_name: str, case: Case | None = None) -> str | None:
    """Builds `type_name` with `g.op`, verifies, runs: None, or what differs from the reference."""
    case = case or CASES[type_name]
    g = ge.Graph()
    inputs, feeds = [], {}
    for i, value in enumerate(case.inputs):
        if isinstance(value, np.ndarray) and value.dtype == np.float32:
            inputs.append(g.placeholder(value.shape, "float32", name=f"in{i}"))
            feeds[f"in{i}"] = value
        else:
            inputs.append(value)
    result = g.op(type_name, inputs, case.attrs)
    g.module.verify()
    outputs = run(g.module, feeds)
    got = [outputs[v.name] for v in (result if isinstance(result, tuple) else (result,))]
    want = case.reference(*feeds.values())
    want = list(want) if isinstance(want, tuple) else [want]
    if len(got) != len(want):
        return f"{len(got)} results, expected {len(want)}"
    for i, (x, y) in enumerate(zip(got, want, strict=True)):
        y = np.asarray(y)
        if x.shape != y.shape or (y.dtype != np.float64 and x.dtype != y.dtype):  # float64: a float reference
            return f"result {i}: {x.dtype}{list(x.shape)}, expected {y.dtype}{list(y.shape)}"
        if not np.allclose(x.astype(np.float64), y.astype(np.float64), rtol=case.tolerance, atol=case.tolerance):
            return f"result {i}: max difference {np.abs(x.astype(np.float64) - y).max()}"
    return None


def test_every_entry_has_a_case():
    assert set(CASES) == set(OP_TYPES)


@pytest.mark.parametrize("type_name", sorted(OP_TYPES))
def test_entry_computes_ge_semantics(type_name):
    assert check(type_name) is None


def test_cast_by_dtype_name_and_bfloat16():
    x = rand(2, 2)
    case = Case([x], lambda x: x.astype(ml_dtypes.bfloat16), {"dst_type": "bfloat16"}, tolerance=1e-2)
    assert check("Cast", case) is None
    assert check("Cast", Case([x], lambda x: x.astype(np.int32), {"dst_type": 3})) is None  # DT_INT32


def test_gelu_v2_tanh_form():
    assert check("GeluV2", Case([rand(3, 4)], gelu_tanh, {"approximate": "tanh"})) is None


@pytest.mark.mutation
def test_gelu_fixed_form_dropped_fails(monkeypatch):
    monkeypatch.setitem(OP_TYPES, "Gelu", replace(OP_TYPES["Gelu"], fixed={}))
    assert check("Gelu") is not None


def test_conv_padding_modes():
    same = Case([IMG, rand(4, 3, 3, 3)], lambda x, w: conv2d(x, w, np.zeros(4), (2, 2), (1, 1, 0, 1), (1, 1)))
    # SAME on 7 x 8, stride 2: 4 x 4 windows need 2 rows (one each side) and 1 column (at the end)
    same.attrs, same.tolerance = {"strides": [2, 2], "padding": "SAME"}, 1e-4
    assert check("Conv2D", same) is None
    valid = Case([IMG, rand(2, 3, 2, 2)], lambda x, w: conv2d(x, w, np.zeros(2), (1, 1), (0, 0, 0, 0), (1, 1)))
    valid.attrs, valid.tolerance = {"stride": [1, 1], "padding": "VALID"}, 1e-4  # the issue's `stride` spelling
    assert check("Conv2D", valid) is None


def test_canonical_types_and_aliases():
    assert op_types.type_of("ge.conv") == "Conv2D"
    assert op_types.type_of("ge.batch_norm") == "BatchNorm"
    assert op_types.type_of("ge.softmax") == "SoftmaxV2"
    assert op_types.type_of("ge.constant") == "Const"
    assert op_types.type_of("ge.attention") is None
    assert op_types.aliases("ge.softmax") == ["SoftmaxV2", "Softmax"]
    assert op_types.ge_op_name("Softmax") == op_types.ge_op_name("SoftmaxV2") == "ge.softmax"
    for name, entry in OP_TYPES.items():  # the canonical type builds the same ge op as each alias
        assert op_types.ge_op_name(op_types.type_of(entry.op_class.name)) == entry.op_class.name, name


# -- mutations: each must make a check above fail --------------------------------------------------


def test_swapped_entries_fail(monkeypatch):
    relu, sigmoid = OP_TYPES["Relu"], OP_TYPES["Sigmoid"]
    monkeypatch.setitem(OP_TYPES, "Relu", replace(sigmoid, name="Relu"))
    monkeypatch.setitem(OP_TYPES, "Sigmoid", replace(relu, name="Sigmoid"))
    assert check("Relu") is not None
    assert check("Sigmoid") is not None


def test_entry_on_the_wrong_onnx_operator_fails(monkeypatch):
    monkeypatch.setitem(OP_TYPES, "RealDiv", replace(OP_TYPES["RealDiv"], onnx="Sub"))
    assert check("RealDiv") is not None


def test_pads_taken_in_onnx_order_fail(monkeypatch):
    conv = OP_TYPES["Conv2D"]
    monkeypatch.setitem(OP_TYPES, "Conv2D", replace(conv, attrs={**conv.attrs, "pads": Attr("pads", op_types.ints)}))
    assert check("Conv2D") is not None


def test_ge_keep_dims_default_dropped_fails(monkeypatch):
    monkeypatch.setitem(OP_TYPES, "ReduceMean", replace(OP_TYPES["ReduceMean"], defaults={}))
    assert check("ReduceMean") is not None


def test_swapped_inputs_fail(monkeypatch):
    gemm = OP_TYPES["GemmV2"]
    alpha, beta = gemm.inputs[2], gemm.inputs[3]
    swapped = (*gemm.inputs[:2], replace(alpha, operand="beta"), replace(beta, operand="alpha"), gemm.inputs[4])
    monkeypatch.setitem(OP_TYPES, "GemmV2", replace(gemm, inputs=swapped))
    assert check("GemmV2") is not None


# -- sweeps: whatever the inputs and attribute values, a module that verifies or one GEError line -------


def build_or_refuse(type_name: str, inputs: list[Any], attrs: dict[str, Any], shapes: list[Any]) -> str:
    g = ge.Graph()
    try:
        values = [g.placeholder(s, d, name=f"i{j}") if isinstance(s, list) else s for j, (s, d) in enumerate(shapes)]
        g.op(type_name, values + inputs, attrs)
    except ge.GEError as e:
        assert "\n" not in str(e)
        return "refused"
    g.module.verify()
    return "built"


@pytest.mark.parametrize("type_name", sorted(OP_TYPES))
def test_input_sweep(type_name):
    """Each entry with 0..n+1 inputs of rank 0..4 (a zero dim among them) and four dtypes."""
    entry = OP_TYPES[type_name]
    required = {a: 1 for a in entry.required}
    outcomes = set()
    for shape in ([], [3], [2, 3], [1, 3, 4, 4], [0, 3]):
        for dtype in ("float32", "int64", "bool", "float16"):
            for count in range(len(entry.inputs) + 2):
                outcomes.add(build_or_refuse(type_name, [], required, [(shape, dtype)] * count))
    assert "refused" in outcomes  # the sweep reaches the checks (a wrong count at least)


ODD_VALUES = [None, "x", 1.5, True, -1, 0, 99, [], [1.5], [-1, -1], [0, 0], [1, 1, 1, 1], [100, 100], {}, [[1]]]


@pytest.mark.parametrize("type_name", sorted(t for t in OP_TYPES if OP_TYPES[t].attrs))
def test_attribute_sweep(type_name):
    """Each attribute of each entry set to odd values, on an image input (constant inputs given 1)."""
    entry = OP_TYPES[type_name]
    inputs = [1 if s.constant is not None else None for s in entry.inputs if not s.optional]
    for attr in entry.attrs:
        for value in ODD_VALUES:
            attrs = {**{a: 2 for a in entry.required}, attr: value}
            shapes = [([1, 3, 6, 6], "float32") if i is None else (i, None) for i in inputs]
            build_or_refuse(type_name, [], attrs, shapes)
