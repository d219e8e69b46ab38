"""Cast to and from ONNX's narrow storage types (float8, float8 E8M0, float4, int4, int2), bit for bit
against the ONNX reference evaluator, over every value of the narrow types and every float16."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from onnx_oracle import assert_output_matches, node_model

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import ONNX_DTYPES, OnnxImportError
from ge.interpreter.runner import run

FLOAT8 = ["FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ"]
NARROW = [*FLOAT8, "FLOAT8E8M0", "FLOAT4E2M1", "INT4", "UINT4", "INT2", "UINT2"]
NATIVE = ["FLOAT", "FLOAT16", "BFLOAT16", "DOUBLE", "INT64", "INT32", "INT8", "UINT8", "BOOL"]
# The reference's numpy conversions warn on NaN and overflow, which these tests feed on purpose.
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BITS = {"FLOAT4E2M1": 4, "INT4": 4, "UINT4": 4, "INT2": 2, "UINT2": 2}


def dtype_of(name: str) -> np.dtype:
    return ONNX_DTYPES[getattr(TensorProto, name)]


def every_value(name: str) -> np.ndarray:
    """Each encoding of a narrow type once."""
    codes = np.arange(2 ** BITS.get(name, 8), dtype=np.uint8)
    dtype = dtype_of(name)
    if name in ("INT4", "INT2"):  # two's complement in the low bits
        return codes.astype(np.int64).astype(dtype)
    return codes.view(dtype)


def cast_model(x: np.ndarray, to: str, **attrs) -> onnx.ModelProto:
    """A one-node Cast with a graph input, at opset 24 (round_mode's first opset)."""
    onnx_type = {v: k for k, v in ONNX_DTYPES.items()}[x.dtype]
    graph = helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=getattr(TensorProto, to), **attrs)],
        "g",
        [helper.make_tensor_value_info("x", onnx_type, x.shape)],
        [helper.make_tensor_value_info("y", getattr(TensorProto, to), x.shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])


def check_against_reference(x: np.ndarray, to: str, **attrs) -> None:
    model = cast_model(x, to, **attrs)
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    module, weights = import_model(model)
    got = run(module, {"x": x}, weights)["y"]
    if want.dtype.kind == "f" and x.dtype.kind != "f":  # narrow float -> float: NaN payloads are numpy's
        np.testing.assert_array_equal(got, want)
    else:
        assert_output_matches("y", got, want, 0, 0)


def float_inputs() -> np.ndarray:
    """Every float16 (as float32), the float32 extremes, and random float32 bit patterns."""
    halves = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float32)
    extremes = np.array(
        [np.finfo(np.float32).max, -np.finfo(np.float32).max, np.finfo(np.float32).tiny, 1e-45, -1e-45, 0.0, -0.0],
        dtype=np.float32,
    )
    random = np.random.default_rng(0).integers(0, 2**32, 4096, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([halves, extremes, random])


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("to", FLOAT8)
def test_float_to_float8(to, saturate):
    x = float_inputs()
    check_against_reference(x, to, saturate=saturate)
    check_against_reference(np.arange(2**16, dtype=np.uint16).view(np.float16), to, saturate=saturate)
    check_against_reference(x.astype(np.float64) * 1.0000001, to, saturate=saturate)


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
def test_float_to_e8m0(round_mode, saturate):
    x = np.abs(float_inputs())  # negative inputs are undefined
    check_against_reference(x, "FLOAT8E8M0", saturate=saturate, round_mode=round_mode)
    halves = np.arange(2**15, dtype=np.uint16).view(np.float16)
    check_against_reference(halves, "FLOAT8E8M0", saturate=saturate, round_mode=round_mode)


def test_e8m0_defaults_round_up_and_saturate():
    x = np.array([0.0, 0.124, 0.25, 1.1, 1.5, 3.0, np.inf, np.nan, 3e38, 1e-40], dtype=np.float32)
    module, weights = import_model(cast_model(x, "FLOAT8E8M0"))
    got = run(module, {"x": x}, weights)["y"].view(np.uint8)
    np.testing.assert_array_equal(got, [0, 124, 125, 128, 128, 129, 255, 255, 254, 1])


@pytest.mark.parametrize("to", ["FLOAT4E2M1", "INT4", "UINT4", "INT2", "UINT2"])
def test_float_to_narrow(to):
    check_against_reference(float_inputs(), to)
    check_against_reference(np.arange(-40, 40, 0.25, dtype=np.float16), to)


@pytest.mark.parametrize("to", NATIVE)
@pytest.mark.parametrize("source", NARROW)
def test_narrow_to_native(source, to):
    check_against_reference(every_value(source), to)


@pytest.mark.parametrize("source", ["INT64", "INT32", "INT8", "UINT8"])
@pytest.mark.parametrize("to", ["INT4", "UINT4", "INT2", "UINT2"])
def test_integers_wrap(source, to):
    x = np.arange(-300, 300).astype(dtype_of(source))
    check_against_reference(x, to)


# ml_dtypes (and so the ONNX reference) has no direct conversion between most narrow pairs;
# ge converts through float32 (floats) or int64 (integers), which hold every narrow value.
NARROW_PAIRS = [
    ("INT4", [-8, -1, 0, 7], "UINT4", [8, 15, 0, 7], {}),
    ("UINT4", [15, 8, 3, 0], "INT2", [-1, 0, -1, 0], {}),
    ("INT2", [-2, -1, 0, 1], "UINT4", [14, 15, 0, 1], {}),
    ("UINT2", [3, 2, 1, 0], "INT4", [3, 2, 1, 0], {}),
    ("FLOAT8E4M3FN", [448, -448, 0.5, np.nan], "FLOAT8E4M3FNUZ", [240, -240, 0.5, np.nan], {}),
    ("FLOAT8E4M3FN", [448, -448, 0.5, np.nan], "FLOAT8E4M3FNUZ", [np.nan, np.nan, 0.5, np.nan], {"saturate": 0}),
    ("FLOAT8E5M2", [57344, -np.inf, 0.75, 2], "FLOAT8E4M3FN", [448, -448, 0.75, 2], {}),
    ("FLOAT8E8M0", [1, 2, 1024, 2**-10], "FLOAT4E2M1", [1, 2, 6, 0], {}),
    ("FLOAT8E8M0", [1, 2**20, 2**-16, 2**-18], "FLOAT8E5M2", [1, 57344, 2**-16, 0], {}),
    ("FLOAT4E2M1", [6, -0.5, 1.5, 3], "FLOAT8E8M0", [8, 0.5, 2, 4], {}),
    ("INT4", [-8, -1, 3, 7], "FLOAT8E4M3FN", [-8, -1, 3, 7], {}),
]


@pytest.mark.parametrize(("source", "values", "to", "expected", "attrs"), NARROW_PAIRS)
def test_narrow_to_narrow(source, values, to, expected, attrs):
    x = np.array(values, dtype=np.float64).astype(dtype_of(source))
    module, weights = import_model(cast_model(x, to, **attrs))
    got = run(module, {"x": x}, weights)["y"]
    assert got.dtype == dtype_of(to)
    np.testing.assert_array_equal(got.astype(np.float64), np.array(expected, dtype=np.float64))


@pytest.mark.parametrize("name", NARROW)
@pytest.mark.parametrize("size", [5, 7, 40])  # odd sizes pad the packed 4- and 2-bit tensors; 40 > inline limit
def test_initializers(name, size):
    """Initializers of the narrow types (4- and 2-bit ones packed) are read and kept exactly."""
    x = np.resize(every_value(name), size)
    model = node_model("Cast", {"c": x}, 1, constants=["c"], to=TensorProto.FLOAT)
    module, weights = import_model(model)
    np.testing.assert_array_equal(run(module, {}, weights)["out0"], x.astype(np.float32))
    model = node_model("Identity", {"c": x}, 1, constants=["c"])
    model.graph.node[0].op_type = "Cast"
    model.graph.node[0].attribute.append(helper.make_attribute("to", getattr(TensorProto, name)))
    module, weights = import_model(model)
    got = run(module, {}, weights)["out0"]
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got.view(np.uint8), x.view(np.uint8))


def test_string_stays_refused():
    model = cast_model(np.zeros(2, np.float32), "FLOAT")
    model.graph.node[0].attribute[0].i = TensorProto.STRING
    with pytest.raises(OnnxImportError, match=r"Cast to data type 8 \(STRING\) is not supported") as e:
        import_model(model)
    assert "\n" not in str(e.value)
    model.graph.input[0].type.tensor_type.elem_type = TensorProto.STRING
    with pytest.raises(OnnxImportError, match="has data type STRING, which ge does not support"):
        import_model(model)


def test_compute_ops_refuse_narrow_types():
    x = np.zeros(4, dtype=ml_dtypes.float8_e4m3fn)
    with pytest.raises(OnnxImportError, match="operand 'a' has element type f8E4M3FN"):
        import_model(node_model("Add", {"a": x, "b": x}, 1))
