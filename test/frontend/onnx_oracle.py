"""One-node ONNX models and the comparison of ge's outputs with expected ones, shared by the
kernel tests (onnxruntime as the oracle) and the ONNX node-test harness."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import onnx
from onnx import helper

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import ONNX_DTYPES
from ge.ge_dialects.ge.types import NARROW_TYPES, numpy_dtype
from ge.interpreter.runner import run

NARROW_DTYPES = {numpy_dtype(t) for t in NARROW_TYPES}
ONNX_TYPES = {dtype: onnx_type for onnx_type, dtype in ONNX_DTYPES.items()}


def node_model(
    op_type: str, inputs: dict[str, np.ndarray | None], outputs: int, constants: Collection[str] = (), **attrs
) -> onnx.ModelProto:
    """A one-node model. None inputs are left out (empty name), as ONNX marks absent optionals;
    inputs named in `constants` become initializers, the rest graph inputs."""
    names = [n if v is not None else "" for n, v in inputs.items()]
    while names and not names[-1]:
        names.pop()
    out_names = [f"out{i}" for i in range(outputs)]
    graph = helper.make_graph(
        [helper.make_node(op_type, names, out_names, **attrs)],
        "g",
        [
            helper.make_tensor_value_info(n, ONNX_TYPES[v.dtype], v.shape)
            for n, v in inputs.items()
            if v is not None and n not in constants
        ],
        [onnx.ValueInfoProto(name=n) for n in out_names],
        initializer=[onnx.numpy_helper.from_array(inputs[n], n) for n in constants],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def assert_output_matches(name: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> None:
    """Same dtype and shape; integers and bools exactly equal, the narrow storage types (float8,
    float4, int4, int2) bit for bit, other floats within tolerance."""
    assert got.shape == want.shape, f"{name}: shape {got.shape} != expected {want.shape}"
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != expected {want.dtype}"
    if want.dtype in NARROW_DTYPES:
        # One byte per element; NaN payloads, signs of zero and NaN must all match.
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=name)
    elif want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, err_msg=name)


def compare_with_onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray], rtol: float, atol: float):
    """Imports and runs `model` with ge and with onnxruntime; returns the ge module."""
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    module, weights = import_model(model)
    got = run(module, feeds, weights)
    for i, expected in enumerate(want):
        assert_output_matches(f"out{i}", got[f"out{i}"], expected, rtol, atol)
    return module
