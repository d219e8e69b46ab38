"""The data-movement and shape kernels against onnxruntime on configurations the ONNX node tests
leave out: negative pads, pads with axes in every mode, slicing with INT_MIN/INT_MAX and negative
steps, uneven and runtime splits, integer and f16 means, truncating casts, int32 indices.

Each case is one ONNX node, imported with the ONNX importer and run by the interpreter, once with
the shape-like inputs as graph inputs (runtime values: known rank, unknown dims) and once as
initializers (visible constants: exact dims, which must match what the kernel produces)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx_oracle import compare_with_onnxruntime, node_model

from ge.ge_dialects import ge
from ge.ge_dialects.ge.tensor_ops import shape_like_operands
from ge.ge_dialects.ge.types import shape_of

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(0)
INT_MAX, INT_MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min


def rand(*shape: int, dtype=np.float32) -> np.ndarray:
    return (RNG.standard_normal(shape) * 4).astype(dtype)


def ints(*values: int, dtype=np.int64) -> np.ndarray:
    return np.array(values, dtype=dtype)


def compare(op_type: str, inputs: dict[str, np.ndarray | None], outputs: int = 1, **attrs) -> None:
    """Runs the node with every input but the first as runtime values, then as constants."""
    shape_like = {n for i, (n, v) in enumerate(inputs.items()) if i > 0 and v is not None}
    for constants in (set(), shape_like):
        model = node_model(op_type, inputs, outputs, constants, **attrs)
        feeds = {n: v for n, v in inputs.items() if v is not None and n not in constants}
        module = compare_with_onnxruntime(model, feeds, rtol=1e-3, atol=1e-5)
        if constants:
            assert_static_results(module)


def assert_static_results(module) -> None:
    """With visible shape-like constants every result shape is exact."""
    for op in module.walk():
        if isinstance(op, ge.GeOp) and not isinstance(op, ge.ConstantOp):
            for result in op.results:
                assert None not in shape_of(result.type), f"{op.name} left {result.type} unknown"


@pytest.mark.parametrize(
    "shape, allowzero",
    [
        (ints(0, -1), 0),
        (ints(4, 0, 2), 0),
        (ints(-1), 0),
        (ints(2, 0, 4, 3), 1),
        (ints(1, 1, 24), 0),
    ],
)
def test_reshape(shape, allowzero):
    compare(
        "Reshape", {"data": rand(2, 3, 4) if not allowzero else rand(2, 0, 4, 3), "shape": shape}, allowzero=allowzero
    )


@pytest.mark.parametrize(
    "starts, ends, axes, steps",
    [
        (ints(-1), ints(INT_MIN), ints(1), ints(-1)),
        (ints(INT_MAX), ints(INT_MIN), None, ints(-2)),
        (ints(1, -100), ints(INT_MAX, 3), ints(-1, 0), ints(3, 1)),
        (ints(5, 0), ints(0, 2), ints(2, 0), ints(-2, 1)),
        (ints(2, 1, dtype=np.int32), ints(1, 3, dtype=np.int32), ints(0, 1, dtype=np.int32), None),
    ],
)
def test_slice(starts, ends, axes, steps):
    compare("Slice", {"data": rand(4, 5, 6), "starts": starts, "ends": ends, "axes": axes, "steps": steps})


def test_split_uneven_and_sized():
    compare("Split", {"input": rand(2, 11)}, outputs=4, axis=1, num_outputs=4)
    compare("Split", {"input": rand(7, 2), "split": ints(0, 5, 2)}, outputs=3)


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_modes_with_axes(mode):
    compare(
        "Pad", {"data": rand(3, 4, 5), "pads": ints(1, 2, 2, 1), "constant_value": None, "axes": ints(-1, 1)}, mode=mode
    )


def test_pad_negative_and_constant_value():
    compare("Pad", {"data": rand(4, 5), "pads": ints(-1, 2, 1, -3), "constant_value": np.array(1.5, np.float32)})


@pytest.mark.parametrize(
    "data, axes, keepdims, noop",
    [
        (rand(3, 4, 5, dtype=np.float16), ints(0, 2), 0, 0),
        (np.arange(-7, 5, dtype=np.int32).reshape(3, 4), ints(1), 1, 0),
        (rand(3, 4), None, 0, 0),
        (rand(3, 4), ints(), 1, 1),
    ],
)
def test_reduce_mean(data, axes, keepdims, noop):
    compare("ReduceMean", {"data": data, "axes": axes}, keepdims=keepdims, noop_with_empty_axes=noop)


@pytest.mark.parametrize(
    "source, to",
    [
        (rand(10), TensorProto.INT32),
        (rand(10), TensorProto.INT8),
        (rand(10, dtype=np.float64), TensorProto.FLOAT16),
        (rand(10), TensorProto.BOOL),
        (np.array([300, -129, 7], np.int32), TensorProto.INT8),
        (np.array([True, False]), TensorProto.FLOAT),
        (rand(10, dtype=np.float16), TensorProto.INT64),
    ],
)
def test_cast(source, to):
    compare("Cast", {"input": source}, to=to)


def test_gather_negative_int32_indices():
    compare("Gather", {"data": rand(3, 4, 5), "indices": np.array([[-1, 0], [2, -4]], np.int32)}, axis=1)


def test_expand_where_and_friends():
    compare("Expand", {"input": rand(3, 1), "shape": ints(2, 1, 4)})
    compare("Expand", {"input": rand(2, 3, 1), "shape": ints(3, 1)})
    compare("Where", {"condition": RNG.random((2, 1, 4)) > 0.5, "X": rand(3, 1), "Y": rand(4)})
    compare("Squeeze", {"data": rand(1, 3, 1, 2), "axes": ints(-2, 0)})
    compare("Unsqueeze", {"data": rand(3, 2), "axes": ints(-1, 0)})
    compare("Shape", {"data": rand(2, 3, 4, 5)}, start=-3, end=-1)
    compare("ConstantOfShape", {"input": ints(2, 3)}, value=onnx.numpy_helper.from_array(ints(7)))
    compare("Concat", {"a": rand(2, 0), "b": rand(2, 3)}, axis=-1)
    compare("Flatten", {"input": rand(2, 3, 4)}, axis=-2)
    compare("Transpose", {"data": rand(2, 3, 4)}, perm=[1, 2, 0])


def test_shape_like_operands_name_real_operands():
    for op_type, names in shape_like_operands.items():
        assert op_type in ge.ALL_OPS
        defined = {name for name, _ in op_type.get_irdl_definition().operands}
        assert set(names) <= defined, op_type.name
