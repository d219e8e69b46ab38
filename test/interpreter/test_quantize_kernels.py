"""The quantization kernels (interpreter/kernels/quantize.py) against onnxruntime, bit for bit on
the integer types: QuantizeLinear per tensor, per axis and blocked, to every integer type with
ties at .5 among random data; DequantizeLinear alike; DynamicQuantizeLinear; the integer products
with per-tensor and per-row / per-column / per-channel zero points and their requantized forms.
Each case is one node whose first input is a graph input and the others initializers (the
verifier sees constant scales), at the opset named. The mutation tests break the rounding, the
axis a scale runs along and MatMulInteger's zero-point subtraction and show the comparison fails;
the import errors are one line naming the node. Where onnxruntime's uint8 x int8 products
saturate (CPUs without VNNI), its oracle runs on the same products in uint8 x uint8
(`exact_integer_oracle`)."""

from __future__ import annotations

import re

import numpy as np
import onnx
import pytest
from exact_integer_oracle import exact_inputs
from onnx import TensorProto, helper
from onnx_oracle import ONNX_TYPES, assert_output_matches

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.interpreter.kernels import quantize
from ge.interpreter.kernels.checked import KernelError
from ge.interpreter.runner import run

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(7)


def model(op_type: str, inputs: dict[str, np.ndarray | None], outputs: int = 1, opset: int = 21, **attrs):
    """A one-node model: the first input a graph input, the others initializers (None: absent)."""
    names = [n if v is not None else "" for n, v in inputs.items()]
    while names and not names[-1]:
        names.pop()
    first, *rest = inputs
    graph = helper.make_graph(
        [helper.make_node(op_type, names, [f"out{i}" for i in range(outputs)], name="node", **attrs)],
        "g",
        [helper.make_tensor_value_info(first, ONNX_TYPES[inputs[first].dtype], inputs[first].shape)],
        [onnx.ValueInfoProto(name=f"out{i}") for i in range(outputs)],
        initializer=[onnx.numpy_helper.from_array(v, n) for n, v in inputs.items() if n in rest and v is not None],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def ge_run(m: onnx.ModelProto, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    module, weights = import_model(m)
    got = run(module, feed, weights)
    return [got[f"out{i}"] for i in range(len(m.graph.output))]


def compare(op_type: str, inputs: dict[str, np.ndarray | None], outputs: int = 1, opset: int = 21, **attrs):
    """ge's outputs equal onnxruntime's (integers exactly, float8 bit for bit, floats to 1 ulp-ish)."""
    m = model(op_type, inputs, outputs, opset, **attrs)
    first = next(iter(inputs))
    feed = {first: inputs[first]}
    oracle = model(op_type, exact_inputs(op_type, inputs), outputs, opset, **attrs)
    want = ort.InferenceSession(oracle.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feed)
    got = ge_run(m, feed)
    for i, (g, w) in enumerate(zip(got, want)):
        assert_output_matches(f"out{i}", g, w, rtol=1e-6, atol=0)
    return got


def test_the_exact_inputs_keep_the_products():
    """Mutation of the oracle's rewrite: the shifted factor and zero point give the same integer
    products (numpy), and a shift of the factor alone does not."""
    a, b, zb = ints(np.uint8, 3, 8), ints(np.int8, 8, 4), np.asarray(-3, np.int8)
    exact = (a.astype(np.int64)) @ (b.astype(np.int64) - zb)
    for given in ({"A": a, "B": b, "b_zero_point": zb}, {"A": a, "B": b}):
        moved = exact_inputs("MatMulInteger", given)
        if moved is given:
            pytest.skip("onnxruntime's uint8 x int8 products are exact on this CPU")
        assert list(moved) == ["A", "B", "a_zero_point", "b_zero_point"] and moved["a_zero_point"] is None
        zero = moved["b_zero_point"].astype(np.int64)
        want = exact if "b_zero_point" in given else a.astype(np.int64) @ b.astype(np.int64)
        np.testing.assert_array_equal(a.astype(np.int64) @ (moved["B"].astype(np.int64) - zero), want)
        assert not np.array_equal(a.astype(np.int64) @ moved["B"].astype(np.int64), want)


def with_ties(shape, scale: float, spread: float = 300.0) -> np.ndarray:
    """Random f32 data with a third of the values exactly at k + 0.5 times `scale` (ties)."""
    x = (RNG.standard_normal(shape) * spread * scale).astype(np.float32)
    ties = RNG.random(shape) < 1 / 3
    half = (RNG.integers(-400, 400, shape) + 0.5) * scale
    return np.where(ties, half, x).astype(np.float32)


f32 = np.float32


# -- QuantizeLinear ----------------------------------------------------------------------------

INT_TARGETS = [np.int8, np.uint8, np.int16, np.uint16]


@pytest.mark.parametrize("dtype", INT_TARGETS)
def test_quantize_per_tensor(dtype):
    zero = np.asarray(3 if np.dtype(dtype).kind == "i" else 130, dtype)
    x = with_ties((4, 50), 0.25)
    compare("QuantizeLinear", {"x": x, "y_scale": np.asarray(0.25, f32), "y_zero_point": zero})
    compare("QuantizeLinear", {"x": x * 0.37, "y_scale": np.asarray(0.0371, f32), "y_zero_point": zero})
    special = np.asarray([[np.nan, -np.nan, np.inf, -np.inf, 3e9, -3e9, 0.0, -0.0]], f32)
    compare("QuantizeLinear", {"x": special, "y_scale": np.asarray(0.5, f32), "y_zero_point": zero})


def reciprocal_differs(scale: np.float32) -> np.ndarray:
    """f32 values near the ties k + 0.5 where x / scale and x * (1 / scale) round apart."""
    found = []
    for k in range(-120, 120):
        tie = f32((k + 0.5) * float(scale))
        for step in range(-40, 41):
            x = f32(tie + step * np.spacing(tie))
            if np.rint(x / scale) != np.rint(x * (f32(1) / scale)):
                found.append(x)
    return np.asarray(found[:64], f32).reshape(1, -1)


def test_quantize_divides_by_the_scale():
    """onnxruntime divides (MLAS), it does not multiply by the reciprocal: values where the two
    round apart."""
    x = reciprocal_differs(f32(0.0371))
    assert x.size == 64
    compare("QuantizeLinear", {"x": x, "y_scale": np.asarray(0.0371, f32), "y_zero_point": np.asarray(0, np.int8)})


def test_quantize_defaults_to_uint8_and_older_opsets():
    x = with_ties((3, 40), 0.5)
    for opset in (10, 13, 19):
        (y,) = compare("QuantizeLinear", {"x": x, "y_scale": np.asarray(0.5, f32)}, opset=opset)
        assert y.dtype == np.uint8


def test_quantize_per_axis():
    x = with_ties((3, 4, 5), 0.5)
    scale = np.asarray([0.5, 0.25, 1.0, 0.125], f32)
    zero = np.asarray([-3, 0, 7, 100], np.int8)
    compare("QuantizeLinear", {"x": x, "y_scale": scale, "y_zero_point": zero}, axis=1, opset=13)
    compare("QuantizeLinear", {"x": x, "y_scale": scale[:3], "y_zero_point": zero[:3]}, axis=0)
    compare("QuantizeLinear", {"x": x, "y_scale": np.resize(scale, 5), "y_zero_point": np.resize(zero, 5)}, axis=-1)


def test_quantize_blocked():
    x = with_ties((4, 10), 0.25)
    scale = RNG.choice([0.25, 0.5, 0.125], (4, 4)).astype(f32)  # blocks of 3 along axis 1: 3 + 3 + 3 + 1
    zero = RNG.integers(0, 20, (4, 4)).astype(np.uint8)
    compare("QuantizeLinear", {"x": x, "y_scale": scale, "y_zero_point": zero}, axis=1, block_size=3)
    compare(
        "QuantizeLinear",
        {"x": x.T.copy(), "y_scale": scale.T.copy(), "y_zero_point": zero.T.copy()},
        axis=0,
        block_size=3,
    )


def narrow(x: np.ndarray, zero: onnx.TensorProto, wide: int, **attrs) -> None:
    """QuantizeLinear to the type of `zero`, then Cast to `wide` (onnxruntime hands numpy no 4-bit
    or float8 arrays; the casts are exact), by ge and by onnxruntime."""
    m = model("QuantizeLinear", {"x": x, "y_scale": np.asarray(0.5, f32)}, **attrs)
    m.graph.initializer.append(zero)
    m.graph.node[0].input.append(zero.name)
    m.graph.node[0].output[0] = "q"
    m.graph.node.append(helper.make_node("Cast", ["q"], ["out0"], to=wide))
    want = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    assert_output_matches("out0", ge_run(m, {"x": x})[0], want[0], 0, 0)


@pytest.mark.parametrize(
    "onnx_type, wide", [(TensorProto.INT4, TensorProto.INT8), (TensorProto.UINT4, TensorProto.UINT8)]
)
def test_quantize_to_4_bits(onnx_type, wide):
    narrow(with_ties((2, 30), 0.5, spread=4), helper.make_tensor("zero", onnx_type, [], [1]), wide)


@pytest.mark.parametrize("saturate", [0, 1])
def test_quantize_to_float8(saturate):
    x = (RNG.standard_normal((3, 20)) * 200).astype(f32)
    x[0, :3] = [1e6, -1e6, np.inf]
    # onnxruntime takes f8E4M3FN's [480, 496) to 448 without saturation; ONNX (and ge, as ge.cast) to NaN
    x[np.abs(x / 0.5 - 488) < 8] = 100
    x[np.abs(x / 0.5 + 488) < 8] = 100
    for onnx_type in (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2):
        zero = helper.make_tensor("zero", onnx_type, [], [0])
        narrow(x, zero, TensorProto.FLOAT, saturate=saturate)


def test_quantize_f16_data_and_precision():
    """f16 data and scale divide in f32; `precision` f16 (opset 25) converts both and divides in f16."""
    x = (RNG.standard_normal((4, 500)) * 30).astype(f32)
    zero = np.asarray(2, np.int8)
    compare(
        "QuantizeLinear", {"x": x.astype(np.float16), "y_scale": np.asarray(0.1234, np.float16), "y_zero_point": zero}
    )
    for precision in (TensorProto.FLOAT, TensorProto.FLOAT16):
        inputs = {"x": x, "y_scale": np.asarray(0.1234, f32), "y_zero_point": zero}
        compare("QuantizeLinear", inputs, opset=25, precision=precision)


# -- DequantizeLinear --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.uint16, np.int32])
def test_dequantize_per_tensor(dtype):
    info = np.iinfo(dtype)
    x = RNG.integers(max(info.min, -(2**20)), min(info.max, 2**20), (3, 17)).astype(dtype)
    zero = None if dtype == np.int32 else np.asarray(info.min // 2 + info.max // 3, dtype)
    opset = 21 if np.dtype(dtype).itemsize == 2 else 10  # 16-bit types from opset 21
    compare("DequantizeLinear", {"x": x, "x_scale": np.asarray(0.0173, f32), "x_zero_point": zero}, opset=opset)


def test_dequantize_to_f16():
    """An f16 scale gives f16 (computed in f32, rounded once); so does output_dtype (opset 23)."""
    x, zero = RNG.integers(-128, 128, (4, 300)).astype(np.int8), np.asarray(3, np.int8)
    compare("DequantizeLinear", {"x": x, "x_scale": np.asarray(0.01234, np.float16), "x_zero_point": zero})
    inputs = {"x": x, "x_scale": np.asarray(0.01234, f32), "x_zero_point": zero}
    (y,) = compare("DequantizeLinear", inputs, opset=23, output_dtype=TensorProto.FLOAT16)
    assert y.dtype == np.float16


def test_dequantize_per_axis_and_blocked():
    x = RNG.integers(-128, 128, (3, 4, 6)).astype(np.int8)
    scale = np.asarray([0.5, 0.01, 3.0, 0.125], f32)
    zero = np.asarray([-3, 0, 7, 100], np.int8)
    compare("DequantizeLinear", {"x": x, "x_scale": scale, "x_zero_point": zero}, axis=1, opset=13)
    blocked = RNG.random((3, 4, 2)).astype(f32)
    zeros = RNG.integers(-5, 5, (3, 4, 2)).astype(np.int8)
    compare("DequantizeLinear", {"x": x, "x_scale": blocked, "x_zero_point": zeros}, axis=-1, block_size=4)


# -- DynamicQuantizeLinear ---------------------------------------------------------------------


@pytest.mark.parametrize("offset", [0.0, 3.0, -3.0])
def test_dynamic_quantize_linear(offset):
    x = (RNG.standard_normal((5, 31)) + offset).astype(f32)
    compare("DynamicQuantizeLinear", {"x": x}, outputs=3, opset=11)
    compare("DynamicQuantizeLinear", {"x": np.zeros((2, 3), f32)}, outputs=3, opset=11)


# -- integer products --------------------------------------------------------------------------


def ints(dtype, *shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, shape).astype(dtype)


@pytest.mark.parametrize("a_type, b_type", [(np.uint8, np.int8), (np.int8, np.int8), (np.uint8, np.uint8)])
def test_matmul_integer(a_type, b_type):
    a, b = ints(a_type, 2, 5, 7), ints(b_type, 7, 6)
    compare("MatMulInteger", {"A": a, "B": b, "a_zero_point": ints(a_type), "b_zero_point": ints(b_type)}, opset=10)
    compare("MatMulInteger", {"A": a, "B": b, "a_zero_point": None, "b_zero_point": ints(b_type, 6)}, opset=10)


def test_matmul_integer_batched_zero_points_and_a_vector():
    b_zero = ints(np.int8, 2, 1, 5)  # per column of each batch's matrix
    batched = {"A": ints(np.uint8, 2, 3, 4), "B": ints(np.int8, 2, 4, 5), "a_zero_point": ints(np.uint8)}
    compare("MatMulInteger", {**batched, "b_zero_point": b_zero}, opset=10)
    compare(
        "MatMulInteger", {"A": ints(np.uint8, 4), "B": ints(np.int8, 4, 5), "a_zero_point": ints(np.uint8)}, opset=10
    )


def test_matmul_integer_per_row_zero_point():
    """onnxruntime takes only a scalar a_zero_point; per row, numpy's product is the oracle."""
    a, b, za = ints(np.uint8, 4, 5), ints(np.int8, 5, 3), ints(np.uint8, 4)
    m = model("MatMulInteger", {"A": a, "B": b, "a_zero_point": za}, opset=10)
    (got,) = ge_run(m, {"A": a})
    np.testing.assert_array_equal(got, (a.astype(np.int32) - za[:, None].astype(np.int32)) @ b.astype(np.int32))


def test_conv_integer():
    x, w = ints(np.uint8, 2, 4, 6, 6), ints(np.int8, 6, 2, 3, 3)
    inputs = {"x": x, "w": w, "x_zero_point": ints(np.uint8), "w_zero_point": ints(np.int8)}
    compare("ConvInteger", inputs, opset=10, group=2, pads=[1, 0, 1, 2], strides=[2, 1])
    compare("ConvInteger", {"x": x, "w": ints(np.uint8, 3, 4, 2, 2)}, opset=10, dilations=[2, 2])
    # SAME padding reads x_zero_point; 1-D and 3-D windows
    same = {
        "x": x[:, :2, :5],
        "w": ints(np.int8, 3, 2, 2, 3),
        "x_zero_point": ints(np.uint8),
        "w_zero_point": ints(np.int8),
    }
    compare("ConvInteger", same, opset=10, auto_pad="SAME_UPPER", strides=[2, 1])
    one_d = {"x": ints(np.int8, 2, 3, 9), "w": ints(np.int8, 4, 3, 4), "x_zero_point": ints(np.int8)}
    compare("ConvInteger", one_d, opset=10, auto_pad="SAME_LOWER")
    compare(
        "ConvInteger",
        {"x": ints(np.uint8, 1, 2, 4, 4, 4), "w": ints(np.uint8, 2, 2, 2, 2, 2)},
        opset=10,
        strides=[2, 1, 2],
    )


def test_qlinear_matmul():
    a, b = ints(np.uint8, 3, 6, 16), ints(np.int8, 16, 5)
    inputs = {
        "a": a,
        "a_scale": np.asarray(0.021, f32),
        "a_zero_point": np.asarray(121, np.uint8),
        "b": b,
        "b_scale": np.asarray(0.013, f32),
        "b_zero_point": np.asarray(-4, np.int8),
        "y_scale": np.asarray(0.37, f32),
        "y_zero_point": np.asarray(115, np.uint8),
    }
    compare("QLinearMatMul", inputs, opset=10)
    per_column = {**inputs, "b_scale": RNG.random(5).astype(f32) * 0.02, "b_zero_point": np.zeros(5, np.int8)}
    compare("QLinearMatMul", per_column, opset=21)
    f16_scales = {**inputs, **{k: inputs[k].astype(np.float16) for k in ("a_scale", "b_scale", "y_scale")}}
    compare("QLinearMatMul", f16_scales, opset=21)


def test_qlinear_matmul_sums_beyond_f32_integers():
    """A sum past 2**24 is rounded to f32 before the multiplier, as onnxruntime converts it: the
    sum 2**25 + 2**17 + 1 times 2**-18 is 128.5000038, but f32 holds the sum as 2**25 + 2**17, a
    tie that rounds to 128 (exact arithmetic gives 129)."""
    a = np.asarray([255] * 1060 + [5], np.uint8)
    b = np.asarray([127] * 1040 + [1] * 21, np.int8)
    assert int(a.astype(np.int64) @ b.astype(np.int64)) == 2**25 + 2**17 + 1
    scale, one = np.asarray(2**-9, f32), np.asarray(1, f32)
    inputs = {"a": np.stack([a, a]), "a_scale": scale, "a_zero_point": np.asarray(0, np.uint8), "b": b[:, None]}
    inputs |= {"b_scale": scale, "b_zero_point": np.asarray(0, np.int8), "y_scale": one}
    (y,) = compare("QLinearMatMul", {**inputs, "y_zero_point": np.asarray(0, np.uint8)}, opset=10)
    assert (y == 128).all()


def test_qlinear_conv():
    x, w = ints(np.uint8, 1, 3, 7, 7), ints(np.int8, 4, 3, 3, 3)
    inputs = {
        "x": x,
        "x_scale": np.asarray(0.031, f32),
        "x_zero_point": np.asarray(128, np.uint8),
        "w": w,
        "w_scale": (RNG.random(4) * 0.01).astype(f32),
        "w_zero_point": np.zeros(4, np.int8),
        "y_scale": np.asarray(0.71, f32),
        "y_zero_point": np.asarray(5, np.uint8),
        "B": RNG.integers(-3000, 3000, 4).astype(np.int32),
    }
    compare("QLinearConv", inputs, opset=10, pads=[1, 1, 1, 1], strides=[2, 2])
    compare(
        "QLinearConv", {**inputs, "w_scale": np.asarray(0.004, f32), "w_zero_point": np.asarray(0, np.int8)}, opset=10
    )
    signed = {
        "x": ints(np.int8, 1, 3, 7, 7),
        "x_zero_point": np.asarray(-1, np.int8),
        "y_zero_point": np.asarray(-5, np.int8),
    }
    compare("QLinearConv", {**inputs, **signed, "B": None}, opset=10, dilations=[2, 1])


# -- mutations ---------------------------------------------------------------------------------


def test_mutation_rounding_half_away_from_zero_is_caught(monkeypatch):
    """Mutation: round half away from zero instead of half to even; the ties differ from onnxruntime."""

    def away(q, zero, dtype):
        info = np.iinfo(dtype)
        q = q.astype(np.float64)
        return np.clip(np.sign(q) * np.floor(np.abs(q) + 0.5) + zero, info.min, info.max).astype(dtype)

    monkeypatch.setattr(quantize, "_round_to", away)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        test_quantize_per_tensor(np.int8)


def test_mutation_multiplying_by_the_reciprocal_is_caught(monkeypatch):
    """Mutation: x * (1 / scale) instead of x / scale."""
    monkeypatch.setattr(quantize, "_divide", lambda x, scale: x * (scale.dtype.type(1) / scale))
    with pytest.raises(AssertionError, match="Mismatched elements"):
        test_quantize_divides_by_the_scale()


def test_mutation_per_axis_scale_along_the_wrong_axis_is_caught(monkeypatch):
    """Mutation: lay a per-axis scale along the last axis instead of `axis`; the per-axis
    comparison fails (the scale has as many values as axis 1, so only the values go wrong)."""
    original = quantize.spread

    def wrong_axis(param, shape, axis, block_size):
        if axis is None or block_size:
            return original(param, shape, axis, block_size)
        return np.resize(param, shape[-1]).reshape([-1 if i == len(shape) - 1 else 1 for i in range(len(shape))])

    monkeypatch.setattr(quantize, "spread", wrong_axis)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        test_quantize_per_axis()


def test_mutation_matmul_integer_without_zero_points_is_caught(monkeypatch):
    """Mutation: MatMulInteger's product of A and B without the zero-point subtraction."""
    monkeypatch.setattr(quantize, "_rows", lambda zero: 0)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        test_matmul_integer(np.uint8, np.int8)


# -- import errors -----------------------------------------------------------------------------


def refused(op_type: str, inputs, opset: int = 21, **attrs) -> str:
    with pytest.raises(OnnxImportError) as e:
        import_model(model(op_type, inputs, opset=opset, **attrs))
    message = str(e.value)
    assert "\n" not in message and message.startswith("node 'node' ("), message
    return message


@pytest.mark.parametrize("bad", [0.0, np.nan])
def test_a_constant_scale_of_zero_or_nan_is_refused(bad):
    x = np.ones((2, 3), f32)
    message = refused("QuantizeLinear", {"x": x, "y_scale": np.asarray([0.5, bad, 1], f32)}, axis=1)
    assert re.search("y_scale holds (0|NaN)", message), message
    qx = np.ones((2, 3), np.int8)
    message = refused("DequantizeLinear", {"x": qx, "x_scale": np.asarray(np.nan, f32)})
    assert "x_scale holds NaN" in message


def test_a_zero_point_outside_its_range_is_refused():
    """An int32 DequantizeLinear's zero point is 0 (the spec); a zero point of another type
    than its data's is refused too."""
    message = refused(
        "DequantizeLinear",
        {"x": np.ones(3, np.int32), "x_scale": np.asarray(1, f32), "x_zero_point": np.asarray(5, np.int32)},
    )
    assert "x_zero_point of an int32 x must be 0, got 5" in message
    message = refused(
        "MatMulInteger", {"A": ints(np.uint8, 2, 3), "B": ints(np.int8, 3, 2), "a_zero_point": ints(np.int8)}
    )
    assert "'A' and 'a_zero_point' must have one element type" in message


def test_mismatched_per_axis_lengths_are_refused():
    x = np.ones((2, 3, 4), f32)
    message = refused("QuantizeLinear", {"x": x, "y_scale": np.ones(4, f32)}, axis=1)
    assert "y_scale has 4 values, but axis 1 of the data has 3" in message
    message = refused(
        "QuantizeLinear", {"x": x, "y_scale": np.ones(3, f32), "y_zero_point": np.zeros(4, np.uint8)}, axis=1
    )
    assert "y_zero_point of shape (4,) must have y_scale's shape (3,)" in message
    message = refused(
        "DequantizeLinear", {"x": np.ones((2, 8), np.int8), "x_scale": np.ones((2, 3), f32)}, axis=1, block_size=2
    )
    assert "x_scale has 3 blocks along axis 1, but 8 indices in blocks of 2 make 4" in message
    message = refused(
        "MatMulInteger",
        {"A": ints(np.uint8, 2, 3), "B": ints(np.int8, 3, 5), "a_zero_point": None, "b_zero_point": ints(np.int8, 4)},
    )
    assert "b_zero_point of shape (4,) does not fit B of shape (3, 5)" in message
    w = ints(np.int8, 4, 3, 1, 1)
    message = refused(
        "ConvInteger", {"x": ints(np.uint8, 1, 3, 2, 2), "w": w, "x_zero_point": None, "w_zero_point": ints(np.int8, 3)}
    )
    assert "w_zero_point of shape (3,) must be one value or one per output channel (4)" in message


def test_a_zero_point_stored_outside_its_types_range_is_refused():
    """ONNX stores uint8 / int8 / 16-bit values one to an int32 (`int32_data`): a uint8 zero point
    of 300 would wrap to 44 when read; it is refused naming the initializer."""
    m = model("QuantizeLinear", {"x": np.ones((2, 3), f32), "y_scale": np.asarray(0.5, f32)})
    zero = onnx.TensorProto(name="zp", data_type=TensorProto.UINT8)
    zero.int32_data.append(300)
    m.graph.initializer.append(zero)
    m.graph.node[0].input.append("zp")
    with pytest.raises(
        OnnxImportError, match=r"^initializer 'zp': value 300 is outside the range of UINT8 \[0, 255\]$"
    ):
        import_model(m)
    m.graph.initializer[-1].int32_data[0] = 255  # the largest uint8 imports
    import_model(m)


def test_mutation_without_the_range_check_a_zero_point_wraps(monkeypatch):
    """Mutation: drop the int32_data range check; the model imports and quantizes with the zero
    point wrapped to 300 - 256 = 44, silently (what the check refuses)."""
    from ge.frontend import validate

    monkeypatch.setattr(validate, "_check_int32_data_range", lambda t, what: None)
    x = np.ones((1, 3), f32)
    m = model("QuantizeLinear", {"x": x, "y_scale": np.asarray(1.0, f32)})
    zero = onnx.TensorProto(name="zp", data_type=TensorProto.UINT8)
    zero.int32_data.append(300)
    m.graph.initializer.append(zero)
    m.graph.node[0].input.append("zp")
    (y,) = ge_run(m, {"x": x})
    assert (y == 45).all()


def test_mutation_requantizing_in_f64_is_caught(monkeypatch):
    """Mutation: requantize the exact int32 sum in f64 instead of onnxruntime's f32."""

    def exact(acc, multiplier, zero):
        info = np.iinfo(zero.dtype)
        y = np.rint(acc.astype(np.float64) * np.float64(multiplier)) + int(zero)
        return np.clip(y, info.min, info.max).astype(zero.dtype)

    monkeypatch.setattr(quantize, "_requantize", exact)
    with pytest.raises(AssertionError, match="Mismatched elements"):
        test_qlinear_matmul_sums_beyond_f32_integers()


def test_a_per_axis_scale_that_does_not_fit_dynamic_dims_is_refused_at_run_time():
    """The verifier cannot see a dim the model leaves open: the kernel refuses in one line naming the op."""
    m = model("QuantizeLinear", {"x": np.ones((2, 3), f32), "y_scale": np.ones(3, f32)}, axis=1)
    m.graph.input[0].type.tensor_type.shape.dim[1].dim_param = "n"
    module, weights = import_model(m)
    with pytest.raises(
        KernelError, match=r"ge.quantize_linear 'node'.*the scale has 3 values, but axis 1 of the data has 4"
    ) as e:
        run(module, {"x": np.ones((2, 4), f32)}, weights)
    assert "\n" not in str(e.value)
