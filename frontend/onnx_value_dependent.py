"""ONNX operators whose result shape depends on their inputs' values, evaluated at import.

NonZero, Unique, Compress and NonMaxSuppression give as many elements as their inputs' values
select, so a ge graph, whose shapes are static, cannot hold them as ops. Exported models often
apply them to constants: Longformer's banded attention takes NonZero of a ConstantOfShape to build
its index tables. When every input is a constant at import (after folding), the node is evaluated
then (NonMaxSuppression by onnx's reference implementation, the specification's own reading) and
its outputs become constants. Compress needs only its condition constant: it is then a ge.gather of
the selected indices, whatever its input. An input the shape depends on that is computed at run
time is refused in one line naming the node and the input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

import numpy as np
import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import TensorType

from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import constant_value
from ge.ge_dialects.ge.types import shape_of

if TYPE_CHECKING:
    from ge.frontend.onnx_importer import _Importer

VALUE_DEPENDENT_OPS = frozenset({"NonZero", "Unique", "Compress", "NonMaxSuppression"})
"""Operators imported only as the constants they compute (they are `IMPORTED_BY_NAME` in onnx_ops)."""


def import_value_dependent(importer: _Importer, node: onnx.NodeProto, name: str, where: str) -> None:
    """Binds the node's outputs: a Compress with a constant condition gathers the selected slices
    of its (run-time) input; every other node is evaluated on its constant inputs."""
    if node.op_type == "Compress":
        condition = _constant_input(importer, node, 1, where)
        if constant_value(importer.tensor_input(node, 0, where)) is None:
            importer.values[node.output[0]] = _compress(importer, node, condition, name, where)
            return
    if node.op_type == "NonZero":
        x = np.atleast_1d(_constant_input(importer, node, 0, where))
        outputs = [np.asarray(np.nonzero(x), dtype=np.int64)]
    elif node.op_type == "Unique":
        outputs = _unique(_constant_input(importer, node, 0, where), {a.name: a.i for a in node.attribute})
    else:
        inputs = [_constant_input(importer, node, i, where) if n else None for i, n in enumerate(node.input)]
        outputs = _evaluate(node, inputs, importer.opset, where)
    for out_name, array in zip(node.output, outputs):
        if out_name:
            importer.values[out_name] = importer.constant(np.asarray(array), name)


def _constant_input(importer: _Importer, node: onnx.NodeProto, index: int, where: str) -> np.ndarray:
    value = constant_value(importer.tensor_input(node, index, where))
    if value is None:
        raise OnnxImportError(
            f"{where}: its result's shape depends on the values of input #{index} '{node.input[index]}', which is "
            "computed at run time; ge graphs have static shapes, so it must be a constant at import"
        )
    return value


def _compress(importer: _Importer, node: onnx.NodeProto, condition: np.ndarray, name: str, where: str):
    """Compress(x, condition, axis) as ge.gather(x, the indices where condition holds, axis); with
    no axis, of x reshaped to one dim. A condition longer than the axis is refused, as onnxruntime does."""
    data = importer.tensor_input(node, 0, where)
    axis = next((a.i for a in node.attribute if a.name == "axis"), None)
    if axis is None:
        shape = importer.constant(np.asarray([-1], dtype=np.int64), f"{name}/shape")
        (data,) = importer.emit(ge.ReshapeOp, {"data": data, "shape": shape}, {}, 1, f"{name}/flat", where)
        axis = 0
    dims = shape_of(cast(TensorType, data.type))
    rank = len(dims)
    if not -rank <= axis < rank:
        raise OnnxImportError(f"{where}: axis {axis} is out of range for rank {rank}")
    length = dims[axis % rank]
    if condition.ndim != 1 or (length is not None and condition.size > length):
        raise OnnxImportError(
            f"{where}: the condition has shape {list(condition.shape)}; it must be one dim of at most the "
            f"axis's length {length}"
        )
    indices = importer.constant(np.flatnonzero(condition).astype(np.int64), f"{name}/indices")
    (result,) = importer.emit(ge.GatherOp, {"data": data, "indices": indices}, {"axis": axis}, 1, name, where)
    return result


def _unique(x: np.ndarray, attrs: dict[str, int]) -> list[np.ndarray]:
    """Unique's four outputs: the unique values (or slices along `axis`), each one's first index,
    each element's (or slice's) index among them, and their counts; in ascending order, or in
    order of first occurrence with sorted=0."""
    axis = attrs.get("axis")
    y, first, inverse, counts = np.unique(
        x.reshape(-1) if axis is None else x, return_index=True, return_inverse=True, return_counts=True, axis=axis
    )
    inverse = inverse.reshape(-1)
    if not attrs.get("sorted", 1):
        order = np.argsort(first, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        y, first, inverse, counts = np.take(y, order, axis=axis or 0), first[order], rank[inverse], counts[order]
    return [y, *(a.astype(np.int64) for a in (first, inverse, counts))]


def _evaluate(node: onnx.NodeProto, inputs: list[np.ndarray | None], opset: int, where: str) -> list[np.ndarray]:
    names = [f"in{i}" if value is not None else "" for i, value in enumerate(inputs)]
    outs = [f"out{i}" if out else "" for i, out in enumerate(node.output)]
    single = helper.make_node(node.op_type, names, outs, domain=node.domain)
    single.attribute.extend(node.attribute)
    feeds = {n: v for n, v in zip(names, inputs) if v is not None}
    graph = helper.make_graph(
        [single],
        "value_dependent",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in feeds.items()],
        [helper.make_tensor_value_info(o, onnx.TensorProto.UNDEFINED, None) for o in outs if o],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    try:
        results = ReferenceEvaluator(model).run(None, feeds)
    except Exception as e:  # the reference's refusal of these values (an axis out of range): the model's error
        raise OnnxImportError(f"{where}: cannot be evaluated on its constant inputs: {e}") from None
    produced = iter(results)
    return [next(produced) if o else np.zeros(0) for o in outs]
