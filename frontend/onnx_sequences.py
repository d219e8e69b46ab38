"""ONNX's sequence operators, folded to tensors at import.

GE has no sequence type on the device, so a sequence lives only in the importer: a
`TensorSequence`, the SSA values of its tensors in order and their element type. Every sequence
operator is then list arithmetic on those values at import (SequenceAt is one of them, Insert and
Erase make a new list, SequenceLength an int64 constant) or ordinary ge ops on its tensors
(SplitToSequence is a ge.split, squeezed with keepdims=0; ConcatFromSequence a ge.concat, of the
tensors unsqueezed with new_axis=1). SequenceMap unrolls its body once per element.

The lengths must therefore be static: a position (SequenceAt, SequenceInsert, SequenceErase) and
SplitToSequence's `split` must be constants at import (after folding), counted from the end when
negative as ONNX defines. A sequence reaching a graph output is refused (ge graphs return tensors);
so are a non-constant position and one out of range, each in one line naming the node.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import onnx
from xdsl.ir import Attribute, SSAValue

from ge.frontend.onnx_control_flow import charge_unrolling, inline_graph
from ge.frontend.onnx_ops import ONNX_DTYPES, OnnxImportError
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import constant_value
from ge.ge_dialects.ge.types import element_type_of, shape_of, tensor_type_of, type_name

if TYPE_CHECKING:
    from ge.frontend.onnx_importer import _Importer


@dataclass(frozen=True)
class TensorSequence:
    """A sequence value at import: its tensors in order, and their element type (an ONNX
    sequence holds one element type; an empty one has it too)."""

    elements: tuple[SSAValue, ...]
    element_type: Attribute


def import_sequence_node(importer: _Importer, node: onnx.NodeProto, name: str, where: str) -> None:
    """Imports one sequence operator's node, binding its outputs."""
    _Node(importer, node, name, where).run()


@dataclass
class _Node:
    importer: _Importer
    node: onnx.NodeProto
    name: str
    where: str

    def run(self) -> None:
        result = SEQUENCE_OPS[self.node.op_type](self)
        outputs = list(self.node.output)
        results = result if isinstance(result, list) else [result]
        if len(outputs) > len(results):
            raise self.fail(f"has {len(outputs)} outputs, the operator gives {len(results)}")
        for out, value in zip(outputs, results):
            if out:
                self.importer.bind(out, value)

    def fail(self, reason: str) -> OnnxImportError:
        return OnnxImportError(f"{self.where}: {reason}")

    def given(self, index: int) -> bool:
        return index < len(self.node.input) and bool(self.node.input[index])

    def sequence(self, index: int) -> TensorSequence:
        if not self.given(index):
            raise self.fail(f"input #{index} (a sequence) is missing")
        value = self.importer.sequences.get(self.node.input[index])
        if value is None:
            raise self.fail(f"input #{index} '{self.node.input[index]}' is a tensor, the operator takes a sequence")
        return value

    def tensor(self, index: int) -> SSAValue:
        if not self.given(index):
            raise self.fail(f"input #{index} (a tensor) is missing")
        return self.importer.tensor_input(self.node, index, self.where)

    def attr(self, name: str, default=None):
        attr = next((a for a in self.node.attribute if a.name == name), None)
        return default if attr is None else onnx.helper.get_attribute_value(attr)

    def constant_ints(self, index: int, what: str) -> np.ndarray:
        """The input's value, which must be an integer constant at import."""
        value = constant_value(self.tensor(index))
        if value is None:
            raise self.fail(
                f"{what} '{self.node.input[index]}' is not a constant at import (ge folds sequences to "
                "tensors at import, so their lengths and positions must be known then)"
            )
        array = np.asarray(value)
        if array.dtype.kind not in "iu":
            raise self.fail(f"{what} must be an integer tensor, it is {array.dtype}")
        return array

    def position(self, index: int, length: int, inserting: bool) -> int:
        """The constant position at input `index` as an index from the front (ONNX counts a negative
        one from the end; insertion may also be at `length`, the end)."""
        array = self.constant_ints(index, "the position")
        if array.size != 1:
            raise self.fail(f"the position must be a single integer, it has {array.size} elements")
        position = int(array.reshape(-1)[0])
        last = length if inserting else length - 1
        if not -length <= position <= last:
            raise self.fail(
                f"position {position} is out of range for a sequence of length {length} (it takes {-length} to {last})"
            )
        return position + length if position < 0 else position

    def element(self, value: SSAValue, sequence_type: Attribute, what: str) -> SSAValue:
        element_type = tensor_type_of(value).element_type
        if element_type != sequence_type:
            raise self.fail(
                f"{what} has element type {type_name(element_type)}, the sequence holds {type_name(sequence_type)}"
            )
        return value

    def emit(self, op_cls: type[ge.GeOp], operands, attrs, num_results: int, step: str) -> list[SSAValue]:
        return self.importer.emit(op_cls, operands, attrs, num_results, step, self.where)

    def ints(self, values, step: str) -> SSAValue:
        return self.importer.constant(np.asarray(values, dtype=np.int64), step)


def _sequence_construct(n: _Node) -> TensorSequence:
    if not n.node.input:
        raise n.fail("needs at least one input (SequenceEmpty makes an empty sequence)")
    tensors = [n.tensor(i) for i in range(len(n.node.input))]
    element_type = tensor_type_of(tensors[0]).element_type
    return TensorSequence(tuple(n.element(t, element_type, f"input #{i}") for i, t in enumerate(tensors)), element_type)


def _sequence_empty(n: _Node) -> TensorSequence:
    code = n.attr("dtype", onnx.TensorProto.FLOAT)
    dtype = ONNX_DTYPES.get(code)
    if dtype is None:
        raise n.fail(f"dtype {onnx.TensorProto.DataType.Name(code)} is a data type ge does not support")
    return TensorSequence((), element_type_of(dtype))


def _sequence_at(n: _Node) -> SSAValue:
    sequence = n.sequence(0)
    return sequence.elements[n.position(1, len(sequence.elements), inserting=False)]


def _sequence_insert(n: _Node) -> TensorSequence:
    sequence = n.sequence(0)
    elements = list(sequence.elements)
    value = n.element(n.tensor(1), sequence.element_type, "the inserted tensor")
    position = n.position(2, len(elements), inserting=True) if n.given(2) else len(elements)
    elements.insert(position, value)
    return TensorSequence(tuple(elements), sequence.element_type)


def _sequence_erase(n: _Node) -> TensorSequence:
    sequence = n.sequence(0)
    elements = list(sequence.elements)
    if not elements:
        raise n.fail("cannot erase from an empty sequence")
    position = n.position(1, len(elements), inserting=False) if n.given(1) else len(elements) - 1
    del elements[position]
    return TensorSequence(tuple(elements), sequence.element_type)


def _sequence_length(n: _Node) -> SSAValue:
    return n.ints(len(n.sequence(0).elements), n.name)


def _split_to_sequence(n: _Node) -> TensorSequence:
    x = n.tensor(0)
    element_type = tensor_type_of(x).element_type
    shape = shape_of(tensor_type_of(x))
    if not shape:
        raise n.fail("cannot split a rank-0 tensor")
    axis = n.attr("axis", 0)
    if not -len(shape) <= axis < len(shape):
        raise n.fail(f"axis {axis} is out of range for rank {len(shape)}")
    axis %= len(shape)
    dim = shape[axis]
    if dim is None:
        raise n.fail(f"dim {axis} of the input is dynamic; the sequence's length must be known at import")
    squeeze = False
    if n.given(1):
        split = n.constant_ints(1, "split")
        if split.ndim == 0:
            chunk = int(split)
            if chunk <= 0:
                raise n.fail(f"split {chunk} must be positive")
            sizes = [chunk] * (dim // chunk) + ([dim % chunk] if dim % chunk else [])
        elif split.ndim == 1:
            sizes = [int(s) for s in split]
            if any(s < 0 for s in sizes) or sum(sizes) != dim:
                raise n.fail(f"split {sizes} must be sizes >= 0 that add up to dim {axis}'s {dim}")
        else:
            raise n.fail(f"split must be a scalar or 1-D, it has rank {split.ndim}")
    else:
        sizes = [1] * dim
        squeeze = n.attr("keepdims", 1) == 0
    if not sizes:
        return TensorSequence((), element_type)
    parts = n.emit(
        ge.SplitOp, {"input": x, "split": n.ints(sizes, f"{n.name}/split")}, {"axis": axis}, len(sizes), n.name
    )
    if squeeze:
        axes = n.ints([axis], f"{n.name}/axes")
        parts = [
            n.emit(ge.SqueezeOp, {"data": p, "axes": axes}, {}, 1, f"{n.name}/squeeze{i}")[0]
            for i, p in enumerate(parts)
        ]
    return TensorSequence(tuple(parts), element_type)


def _concat_from_sequence(n: _Node) -> SSAValue:
    sequence = n.sequence(0)
    axis = n.attr("axis")
    if axis is None:
        raise n.fail("attribute 'axis' is required")
    if not sequence.elements:
        raise n.fail("the sequence is empty; ge cannot concatenate nothing (the result has no shape)")
    parts = list(sequence.elements)
    if n.attr("new_axis", 0) == 1:
        rank = len(shape_of(tensor_type_of(parts[0]))) + 1
        if not -rank <= axis < rank:
            raise n.fail(f"axis {axis} is out of range for stacking rank-{rank - 1} tensors")
        axis %= rank
        axes = n.ints([axis], f"{n.name}/axes")
        parts = [
            n.emit(ge.UnsqueezeOp, {"data": p, "axes": axes}, {}, 1, f"{n.name}/unsqueeze{i}")[0]
            for i, p in enumerate(parts)
        ]
    (result,) = n.emit(ge.ConcatOp, {"inputs": parts}, {"axis": axis}, 1, n.name)
    return result


def _sequence_map(n: _Node) -> list[TensorSequence]:
    body = n.attr("body")
    if not isinstance(body, onnx.GraphProto):
        raise n.fail("attribute 'body' (a graph) is required")
    if len(body.input) != len(n.node.input):
        raise n.fail(f"the body takes {len(body.input)} inputs, the node gives {len(n.node.input)}")
    if len(body.output) != len(n.node.output):
        raise n.fail(f"the body has {len(body.output)} outputs, the node has {len(n.node.output)}")
    inputs = [n.sequence(0)] + [n.importer.sequences.get(v) or n.tensor(i) for i, v in enumerate(n.node.input) if i > 0]
    lengths = {len(v.elements) for v in inputs if isinstance(v, TensorSequence)}
    if len(lengths) != 1:
        raise n.fail(f"the input sequences have different lengths {sorted(lengths)}")
    (length,) = lengths
    charge_unrolling(n.importer, body, length, n.where)
    results: list[list[SSAValue]] = [[] for _ in body.output]
    for step in range(length):
        bound = {vi.name: v.elements[step] if isinstance(v, TensorSequence) else v for vi, v in zip(body.input, inputs)}
        outputs = inline_graph(n.importer, body, bound, f"{n.name}/{step}/", f"{n.where}: body (element {step})")
        for j, value in enumerate(outputs):
            if not isinstance(value, SSAValue):
                raise n.fail(f"the body's output '{body.output[j].name}' is a sequence; it must be a tensor")
            results[j].append(value)
    sequences = []
    for vi, values in zip(body.output, results):
        if values:
            element_type = tensor_type_of(values[0]).element_type
        else:
            dtype = ONNX_DTYPES.get(vi.type.tensor_type.elem_type)
            if dtype is None:
                raise n.fail(f"the body's output '{vi.name}' declares no element type ge supports")
            element_type = element_type_of(dtype)
        sequences.append(
            TensorSequence(tuple(n.element(v, element_type, f"element of '{vi.name}'") for v in values), element_type)
        )
    return sequences


SEQUENCE_OPS: dict[str, Callable[[_Node], SSAValue | TensorSequence | list[TensorSequence]]] = {
    "SequenceConstruct": _sequence_construct,
    "SequenceEmpty": _sequence_empty,
    "SequenceAt": _sequence_at,
    "SequenceInsert": _sequence_insert,
    "SequenceErase": _sequence_erase,
    "SequenceLength": _sequence_length,
    "SplitToSequence": _split_to_sequence,
    "ConcatFromSequence": _concat_from_sequence,
    "SequenceMap": _sequence_map,
}
"""Sequence operator -> its import (they are `IMPORTED_BY_NAME` in onnx_ops)."""
