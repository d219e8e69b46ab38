"""onnxruntime as an exact oracle of integer products on every CPU.

On a CPU without VNNI, onnxruntime's uint8 x int8 product kernel (AVX2's vpmaddubsw) sums each
pair of products in int16 and saturates, so its MatMulInteger, ConvInteger, QLinearMatMul and
QLinearConv are not the integer arithmetic ONNX defines (35,057 off on a random 8x64x16 product
on such a CPU). Its uint8 x uint8 kernel sums exactly. These helpers move an int8 factor and its
zero point by +128 to uint8 where that CPU is detected: the same integer products, exact."""

from __future__ import annotations

import functools

import numpy as np
import onnx
from onnx import helper, numpy_helper

WEIGHT_OPERAND = {
    "MatMulInteger": ("B", "b_zero_point"),
    "QLinearMatMul": ("b", "b_zero_point"),
    "QLinearConv": ("w", "w_zero_point"),
    "ConvInteger": ("w", "w_zero_point"),
}
"""The second factor of each integer product and its zero point (their ONNX input names)."""


@functools.cache
def u8s8_saturates() -> bool:
    """Whether onnxruntime's uint8 x int8 products saturate on this CPU: 255*127 + 255*127."""
    import onnxruntime as ort

    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["A", "B"], ["Y"])],
        "probe",
        [helper.make_tensor_value_info("A", onnx.TensorProto.UINT8, [1, 2])],
        [helper.make_tensor_value_info("Y", onnx.TensorProto.INT32, [1, 1])],
        [numpy_helper.from_array(np.full((2, 1), 127, np.int8), "B")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10)])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"A": np.full((1, 2), 255, np.uint8)})
    return int(y[0, 0]) != 2 * 255 * 127


def to_uint8(value: np.ndarray | None) -> np.ndarray:
    """An int8 factor or zero point (absent: 0) moved by +128."""
    return (np.asarray(0 if value is None else value).astype(np.int16) + 128).astype(np.uint8)


def exact_inputs(op_type: str, inputs: dict[str, np.ndarray | None]) -> dict[str, np.ndarray | None]:
    """One node's inputs, by ONNX input name in order (the first the activation), moved so that
    onnxruntime's products are exact on this CPU; as given elsewhere and for other types."""
    if op_type not in WEIGHT_OPERAND or not u8s8_saturates():
        return inputs
    a, (b, zero) = next(iter(inputs.values())), WEIGHT_OPERAND[op_type]
    if a is None or a.dtype != np.uint8 or inputs[b].dtype != np.int8:  # type: ignore[union-attr]
        return inputs
    shifted = {b: to_uint8(inputs[b]), zero: to_uint8(inputs.get(zero))}
    names = [i.name for i in onnx.defs.get_schema(op_type, 21).inputs]
    moved = {n: shifted[n] if n in shifted else inputs.get(n) for n in names}
    while moved[names[-1]] is None:
        del moved[names.pop()]
    return moved


def exact_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy of `model` whose QLinearConv and QLinearMatMul nodes with a uint8 activation zero
    point and an int8 weight (initializers) read the weight and its zero point moved to uint8."""
    if not u8s8_saturates():
        return model
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    for node in graph.node:
        if node.op_type not in ("QLinearConv", "QLinearMatMul"):
            continue
        a_zero, w, w_zero = node.input[2], node.input[3], node.input[5]
        if a_zero not in inits or w not in inits or w_zero not in inits:
            continue
        if numpy_helper.to_array(inits[a_zero]).dtype != np.uint8 or numpy_helper.to_array(inits[w]).dtype != np.int8:
            continue
        for index in (3, 5):
            name = f"{node.input[index]}/as_uint8/{node.name}"
            graph.initializer.append(
                numpy_helper.from_array(to_uint8(numpy_helper.to_array(inits[node.input[index]])), name)
            )
            node.input[index] = name
    return model
