"""One pass over an ONNX model that refuses hostile or malformed input before the importer
touches it: single assignment of every tensor name, unique graph inputs and outputs, attribute
types (as declared and as the operator's schema wants them), dims, tensor sizes against
`max_tensor_bytes`, and the external-data keys. Each refusal is an `OnnxImportError` whose one
line names the place (input, initializer, node, attribute) and the reason.

The checks here need no file access; `external_data_range` gives the loader the checked
(offset, length) of an external tensor, and `decode_failure` tells a too deeply nested
model from a truncated one when protobuf refuses the bytes.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable

import numpy as np
import onnx
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from ge.frontend.onnx_ops import MAX_OPSET, OLDEST_OPSET, ONNX_DTYPES, OnnxImportError
from ge.frontend.text_fields import first_non_utf8_field

MAX_TENSOR_BYTES = 4 << 30
"""Default limit on any one tensor the input makes us allocate or describe (4 GiB)."""

_SUB_BYTE_BITS: dict[int, int] = {
    onnx.TensorProto.INT4: 4,
    onnx.TensorProto.UINT4: 4,
    onnx.TensorProto.FLOAT4E2M1: 4,
    onnx.TensorProto.INT2: 2,
    onnx.TensorProto.UINT2: 2,
}
"""Types ONNX packs several to a byte in raw data (numpy holds one per byte)."""

#: AttributeProto type -> the field that holds its value.
_ATTRIBUTE_FIELD = {
    onnx.AttributeProto.FLOAT: "f",
    onnx.AttributeProto.INT: "i",
    onnx.AttributeProto.STRING: "s",
    onnx.AttributeProto.TENSOR: "t",
    onnx.AttributeProto.GRAPH: "g",
    onnx.AttributeProto.SPARSE_TENSOR: "sparse_tensor",
    onnx.AttributeProto.TYPE_PROTO: "tp",
    onnx.AttributeProto.FLOATS: "floats",
    onnx.AttributeProto.INTS: "ints",
    onnx.AttributeProto.STRINGS: "strings",
    onnx.AttributeProto.TENSORS: "tensors",
    onnx.AttributeProto.GRAPHS: "graphs",
    onnx.AttributeProto.SPARSE_TENSORS: "sparse_tensors",
    onnx.AttributeProto.TYPE_PROTOS: "type_protos",
}
_ATTRIBUTE_META_FIELDS = {"name", "type", "doc_string"}
_SCALAR_ATTRIBUTES = {
    onnx.AttributeProto.FLOAT,
    onnx.AttributeProto.INT,
    onnx.AttributeProto.STRING,
    onnx.AttributeProto.TENSOR,
    onnx.AttributeProto.GRAPH,
    onnx.AttributeProto.SPARSE_TENSOR,
    onnx.AttributeProto.TYPE_PROTO,
}

NESTING_LIMIT = 90
"""Message depth beyond which a decode failure is reported as nesting (protobuf stops at 100)."""


def element_count(dims) -> int:
    """Elements of a tensor with these dims, as a Python int (an int64 product can wrap to 0)."""
    return math.prod(int(d) for d in dims)


def tensor_bytes(dims, data_type: int) -> int:
    """Bytes numpy needs to hold the tensor (sub-byte types take a byte per element there)."""
    return element_count(dims) * ONNX_DTYPES[data_type].itemsize


def stored_bytes(dims, data_type: int) -> int:
    """Bytes of the tensor in ONNX raw data (sub-byte types packed)."""
    bits = _SUB_BYTE_BITS.get(data_type, ONNX_DTYPES[data_type].itemsize * 8)
    return (element_count(dims) * bits + 7) // 8


def type_name(data_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(data_type)
    except ValueError:
        return str(data_type)


def check_size(count: int, itemsize: int, what: str, max_tensor_bytes: int) -> None:
    size = count * itemsize
    if size > max_tensor_bytes:
        raise OnnxImportError(
            f"{what} has {count} elements ({size} bytes), more than max-tensor-bytes={max_tensor_bytes}"
        )


def check_raw_data(t: onnx.TensorProto, raw: bytes, what: str) -> None:
    need = stored_bytes(t.dims, t.data_type)
    if len(raw) != need:
        raise OnnxImportError(
            f"{what}: raw data holds {len(raw)} bytes, its dims {list(t.dims)} of {type_name(t.data_type)} need {need}"
        )


def validate_model(model: onnx.ModelProto, max_tensor_bytes: int = MAX_TENSOR_BYTES) -> None:
    """Refuses the model in one line if anything in its main graph is malformed (see module doc)."""
    if not model.HasField("graph"):
        raise OnnxImportError("not a valid ONNX model (no graph)")
    if (field := first_non_utf8_field(model)) is not None:
        raise OnnxImportError(f"{field} is not UTF-8 text")
    _GraphCheck(model.graph, model_opset(model), max_tensor_bytes).run()


def model_opset(model: onnx.ModelProto) -> int:
    """The version of the default ONNX operator set the model imports, refused in one line when it
    is outside what the importer supports (before the schemas are looked up with it: onnx's
    `get_schema` takes a C int, not an arbitrary protobuf int64)."""
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    if not versions:
        raise OnnxImportError("the model imports no version of the default ONNX operator set")
    opset = versions[0]
    if not OLDEST_OPSET <= opset <= MAX_OPSET:
        raise OnnxImportError(f"opset {opset} is not supported (supported: {OLDEST_OPSET} to {MAX_OPSET})")
    return opset


def validate_subgraph(
    graph: onnx.GraphProto, opset: int, outer: Iterable[str], what: str, max_tensor_bytes: int = MAX_TENSOR_BYTES
) -> None:
    """The checks of `validate_model` on a graph held in an attribute (an If branch, a SequenceMap
    body) before it is imported: its nodes may read the names in `outer`, and define none of them.
    Messages start with `what`, the place of the graph."""
    check = _GraphCheck(graph, opset, max_tensor_bytes)
    for name in outer:
        check.defined[name] = "the enclosing graph"
    try:
        for t in graph.initializer:
            check.tensor(t, f"initializer '{t.name}'")
            check.define(t.name, f"initializer '{t.name}'")
        for vi in graph.input:
            check.value_info(vi, f"input '{vi.name}'")
            check.define(vi.name, f"input '{vi.name}'")
        for index, node in enumerate(graph.node):
            check.node(node, index)
        for vi in graph.output:
            if vi.name not in check.defined:
                raise OnnxImportError(f"output '{vi.name}' is produced by no node")
            check.value_info(vi, f"output '{vi.name}'")
    except OnnxImportError as e:
        raise OnnxImportError(f"{what}: {e}") from None


class _GraphCheck:
    def __init__(self, graph: onnx.GraphProto, opset: int, max_tensor_bytes: int):
        self.graph = graph
        self.opset = opset
        self.max_tensor_bytes = max_tensor_bytes
        self.defined: dict[str, str] = {}  # tensor name -> what defines it

    def define(self, name: str, what: str) -> None:
        if name in self.defined:
            raise OnnxImportError(
                f"{what}: tensor '{name}' is already defined by {self.defined[name]} "
                "(every tensor name must be assigned once)"
            )
        self.defined[name] = what

    def run(self) -> None:
        graph = self.graph
        initializer_names = set()
        for t in graph.initializer:
            what = f"initializer '{t.name}'"
            if t.name in initializer_names:
                raise OnnxImportError(f"{what} is given twice")
            initializer_names.add(t.name)
            self.tensor(t, what)
        seen_inputs = set()
        for vi in graph.input:
            what = f"graph input '{vi.name}'"
            if not vi.name:
                raise OnnxImportError("a graph input has no name")
            if vi.name in seen_inputs:
                raise OnnxImportError(f"{what} is listed twice")
            seen_inputs.add(vi.name)
            self.value_info(vi, what)
        for name in initializer_names:  # an initializer may also be listed as an input (a default)
            self.define(name, f"initializer '{name}'")
        for vi in graph.input:
            if vi.name not in initializer_names:
                self.define(vi.name, f"graph input '{vi.name}'")
        for index, node in enumerate(graph.node):
            self.node(node, index)
        seen_outputs = set()
        for vi in graph.output:
            what = f"graph output '{vi.name}'"
            if vi.name in seen_outputs:
                raise OnnxImportError(f"{what} is listed twice")
            seen_outputs.add(vi.name)
            if vi.name not in self.defined:
                raise OnnxImportError(f"{what} is produced by no node")
            self.value_info(vi, what)

    def value_info(self, vi: onnx.ValueInfoProto, what: str) -> None:
        if not vi.type.HasField("tensor_type") or not vi.type.tensor_type.HasField("shape"):
            return  # the importer names what it does not support
        tt = vi.type.tensor_type
        dims = []
        for i, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value"):
                if d.dim_value < 0:
                    raise OnnxImportError(
                        f"{what}: dim #{i} is {d.dim_value} (dims must be >= 0, or a name for a dynamic dim)"
                    )
                dims.append(d.dim_value)
        if len(dims) == len(tt.shape.dim) and tt.elem_type in ONNX_DTYPES:
            check_size(element_count(dims), ONNX_DTYPES[tt.elem_type].itemsize, what, self.max_tensor_bytes)

    def tensor(self, t: onnx.TensorProto, what: str) -> None:
        if t.data_type not in ONNX_DTYPES:
            raise OnnxImportError(f"{what} has data type {type_name(t.data_type)}, which ge does not support")
        for i, d in enumerate(t.dims):
            if d < 0:
                raise OnnxImportError(f"{what}: dim #{i} is {d} (dims must be >= 0)")
        check_size(element_count(t.dims), ONNX_DTYPES[t.data_type].itemsize, what, self.max_tensor_bytes)
        if t.data_location == onnx.TensorProto.EXTERNAL:
            external_data_range(t, what, self.max_tensor_bytes)
        _check_int32_data_range(t, what)
        # the length of raw data is checked where it is read (check_raw_data): reading the field
        # copies it, which the importer does once anyway

    def node(self, node: onnx.NodeProto, index: int) -> None:
        name = node.name or (node.output[0] if node.output else f"{node.op_type}_{index}")
        where = f"node '{name}' ({node.op_type}, opset {self.opset})"
        for i, input_name in enumerate(node.input):
            if input_name and input_name not in self.defined:
                raise OnnxImportError(f"{where}: input #{i} '{input_name}' is not defined before the node")
        is_constant = node.op_type == "Constant" and node.domain in ("", "ai.onnx")
        if is_constant and (len(node.output) != 1 or not node.output[0] or node.input):
            raise OnnxImportError(
                f"{where}: a Constant node takes no inputs and has exactly one "
                f"named output (it has {len(node.input)} inputs, "
                f"{len(node.output)} outputs)"
            )
        schema = _schema(node, self.opset)
        seen = set()
        for attr in node.attribute:
            if attr.name in seen:
                raise OnnxImportError(f"{where}: attribute '{attr.name}' is given twice")
            seen.add(attr.name)
            self.attribute(attr, where, schema)
        for out in node.output:
            if out:
                self.define(out, where)

    def attribute(self, attr: onnx.AttributeProto, where: str, schema) -> None:
        what = f"{where}: attribute '{attr.name}'"
        field = _ATTRIBUTE_FIELD.get(attr.type)
        if field is None:
            raise OnnxImportError(f"{what} has no valid type (type {attr.type})")
        if attr.ref_attr_name:
            raise OnnxImportError(f"{what} refers to a function attribute, which only functions may do")
        populated = {f.name for f, _ in attr.ListFields()} - _ATTRIBUTE_META_FIELDS
        if populated - {field} or (attr.type in _SCALAR_ATTRIBUTES and field not in populated):
            raise OnnxImportError(
                f"{what} is declared {onnx.AttributeProto.AttributeType.Name(attr.type)} "
                f"but holds {', '.join(sorted(populated)) or 'no value'}"
            )
        declared = schema.attributes.get(attr.name) if schema is not None else None
        if declared is not None and int(declared.type) != attr.type:
            raise OnnxImportError(
                f"{what} is {onnx.AttributeProto.AttributeType.Name(attr.type)}, "
                f"the operator expects {onnx.AttributeProto.AttributeType.Name(int(declared.type))}"
            )
        if attr.type == onnx.AttributeProto.STRING:
            _utf8(attr.s, what)
        elif attr.type == onnx.AttributeProto.STRINGS:
            for s in attr.strings:
                _utf8(s, what)
        elif attr.type == onnx.AttributeProto.TENSOR:
            self.tensor(attr.t, f"{what} (tensor '{attr.t.name}')" if attr.t.name else what)
        elif attr.type == onnx.AttributeProto.TENSORS:
            for t in attr.tensors:
                self.tensor(t, what)


_INT32_DATA_RANGES: dict[int, tuple[int, int]] = {
    onnx.TensorProto.INT8: (-(2**7), 2**7 - 1),
    onnx.TensorProto.UINT8: (0, 2**8 - 1),
    onnx.TensorProto.INT16: (-(2**15), 2**15 - 1),
    onnx.TensorProto.UINT16: (0, 2**16 - 1),
}
"""The types ONNX stores one to an int32 in `int32_data`, with their ranges."""


def _check_int32_data_range(t: onnx.TensorProto, what: str) -> None:
    """A value in `int32_data` outside its type's range (a uint8 zero point of 300) would wrap
    when read; it is refused instead."""
    limits = _INT32_DATA_RANGES.get(t.data_type)
    if limits is None or not len(t.int32_data):
        return
    low, high = limits
    values = np.asarray(t.int32_data, dtype=np.int64)
    outside = values[(values < low) | (values > high)]
    if outside.size:
        bad = int(outside[0])
        raise OnnxImportError(f"{what}: value {bad} is outside the range of {type_name(t.data_type)} [{low}, {high}]")


def _schema(node: onnx.NodeProto, opset: int | None):
    if opset is None or node.domain not in ("", "ai.onnx"):
        return None
    return _schema_of(node.op_type, opset)


@functools.cache
def _schema_of(op_type: str, opset: int):
    try:
        return onnx.defs.get_schema(op_type, opset, "")
    except onnx.defs.SchemaError:
        return None  # an unknown operator: the importer reports it


def _utf8(data: bytes, what: str) -> None:
    try:
        data.decode()
    except UnicodeDecodeError:
        raise OnnxImportError(f"{what}: string is not valid UTF-8") from None


_DECIMAL = re.compile(r"[0-9]+")


def external_data_range(t: onnx.TensorProto, what: str, max_tensor_bytes: int) -> tuple[str, int, int]:
    """(location, offset, length) of an external tensor, each checked; length is what its dims need."""
    keys = {}
    for entry in t.external_data:
        if entry.key in keys:
            raise OnnxImportError(f"{what}: external data key '{entry.key}' is given twice")
        keys[entry.key] = entry.value
    location = keys.get("location", "")
    if not location:
        raise OnnxImportError(f"{what}: external data has no location")
    numbers = {}
    for key in ("offset", "length"):
        text = keys.get(key)
        if text is None:
            continue
        if not _DECIMAL.fullmatch(text):
            raise OnnxImportError(f"{what}: external data {key} '{text}' is not a non-negative integer")
        numbers[key] = int(text)
    need = stored_bytes(t.dims, t.data_type)
    length = numbers.get("length", need)
    if length != need:
        raise OnnxImportError(
            f"{what}: external data length {length} does not match its dims "
            f"{list(t.dims)} of {type_name(t.data_type)} ({need} bytes)"
        )
    if length > max_tensor_bytes:
        raise OnnxImportError(
            f"{what}: external data of {length} bytes is more than max-tensor-bytes={max_tensor_bytes}"
        )
    return location, numbers.get("offset", 0), length


# -- telling nesting from truncation ---------------------------------------------------------------
class _WireError(Exception):
    pass


class _TooDeep(Exception):
    pass


def decode_failure(data: bytes) -> str:
    """Why protobuf refused `data` as a ModelProto: 'nesting' when messages nest deeper than
    NESTING_LIMIT before anything else goes wrong, otherwise 'corrupt'."""
    try:
        _scan(memoryview(data), onnx.ModelProto.DESCRIPTOR, 1)
    except _TooDeep:
        return "nesting"
    except _WireError:
        return "corrupt"
    return "corrupt"


def _varint(data: memoryview, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise _WireError
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def _scan(data: memoryview, descriptor: Descriptor, depth: int) -> None:
    """Walks the wire format, descending only into message-typed fields."""
    if depth > NESTING_LIMIT:
        raise _TooDeep
    pos = 0
    while pos < len(data):
        tag, pos = _varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise _WireError
            field = descriptor.fields_by_number.get(number)
            if field is not None and field.type == FieldDescriptor.TYPE_MESSAGE:
                _scan(data[pos : pos + size], field.message_type, depth + 1)
            pos += size
        else:
            raise _WireError
        if pos > len(data):
            raise _WireError
