"""Views of a graph's IR for Python users: `Value` (a graph input or an op's result) and `Node` (an op).

Both hold the IR object itself and read everything from it on each access (names from locations and
`ge.name` attributes, shapes from types, attributes from properties), so they cannot drift from the
module that passes rewrite; a view of an op a pass has removed says so when used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue

from ge.api import op_types
from ge.ge_dialects.ge.base import GeOp, location_name, value_label
from ge.ge_dialects.ge.custom import CustomOp
from ge.ge_dialects.ge.types import format_of, numpy_dtype, shape_of

if TYPE_CHECKING:
    from ge.api.graph import Graph


def node_name(op: Operation) -> str:
    """A node's name: its location name (an imported node's ONNX name, a built node's name), else
    the ge op name and its position in the graph (ops that passes made)."""
    name = location_name(op)
    if name:
        return name
    block = op.parent_block()
    index = block.get_operation_index(op) if block is not None else 0
    return f"{op.name}#{index}"


def value_name(value: SSAValue) -> str:
    """An input's `ge.name`; a result's node name (with `:i` after the first result of a multi-result node)."""
    name = value_label(value)
    if name is not None:
        return name
    if isinstance(value, BlockArgument):
        return f"arg{value.index}"
    assert isinstance(value, OpResult)
    base = node_name(value.op)
    return base if value.index == 0 else f"{base}:{value.index}"


class Value:
    """A tensor of the graph: what `placeholder`, `const`, `op` and the `add_*` calls return, and
    what they take as inputs."""

    __slots__ = ("graph", "ssa")

    def __init__(self, graph: Graph, ssa: SSAValue):
        self.graph = graph
        self.ssa = ssa

    @property
    def name(self) -> str:
        return value_name(self.ssa)

    @property
    def shape(self) -> list[int | None]:
        """Dims (None where unknown: `?` in the IR)."""
        t = self.ssa.type
        return list(shape_of(t)) if isinstance(t, TensorType) else []

    @property
    def dtype(self) -> str:
        """The element type as numpy names it ("float16", "bfloat16", "int64")."""
        t = self.ssa.type
        return numpy_dtype(t.element_type).name if isinstance(t, TensorType) else str(t)

    @property
    def node(self) -> Node | None:
        """The node that computes this value (None for a graph input)."""
        return Node(self.graph, self.ssa.op) if isinstance(self.ssa, OpResult) else None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Value) and other.ssa is self.ssa

    def __hash__(self) -> int:
        return id(self.ssa)

    def __repr__(self) -> str:
        dims = ", ".join("?" if d is None else str(d) for d in self.shape)
        return f"Value('{self.name}', {self.dtype}[{dims}])"


_IMAGE_OPS = {"ge.conv", "ge.max_pool", "ge.avg_pool", "ge.global_avg_pool", "ge.batch_norm", "ge.resize"}


class Node:
    """One op of the graph. `type` is its GE type (Conv2D, BatchNorm, ...; op_types.py) where one
    maps, a custom operator's registered type, else the ge op name; `node[key]` reads an attribute
    by its ge name, by the GE name of the node's type, or `data_format` (the images' origin format,
    as FusionPattern constraints ask)."""

    __slots__ = ("graph", "op")

    def __init__(self, graph: Graph, op: Operation):
        self.graph = graph
        self.op = op

    @property
    def name(self) -> str:
        return node_name(self.op)

    @property
    def type(self) -> str:
        if isinstance(self.op, CustomOp):
            return self.op.op_type.data
        return op_types.type_of(self.op.name) or self.op.name

    @property
    def ge_op(self) -> str:
        """The ge op name ("ge.conv"): what `ge-opt` prints and pass options name."""
        return self.op.name

    @property
    def inputs(self) -> list[Value]:
        return [Value(self.graph, v) for v in self.op.operands]

    @property
    def outputs(self) -> list[Value]:
        return [Value(self.graph, v) for v in self.op.results]

    @property
    def attrs(self) -> dict[str, Any]:
        """The ge op's properties as Python values, defaults filled in (ONNX's names and forms:
        `strides`, `pads` as [begins..., ends...])."""
        if not isinstance(self.op, GeOp):
            return {k: v for k, v in self.op.properties.items()}
        values = {name: self.op.p(name) for name in type(self.op).property_kinds()}
        for name, attr in self.op.properties.items():
            values.setdefault(name, attr)
        return {k: v for k, v in values.items() if v is not None}

    @property
    def data_format(self) -> str:
        """The origin format of the node's image (first operand, else first result): NCHW for a
        4-D conv, pool or batch norm, ND for tensors without one."""
        for value in (*self.op.operands[:1], *self.op.results[:1]):
            t = value.type
            if isinstance(t, TensorType):
                fmt = format_of(t)
                if fmt is not None:
                    return fmt.origin.data
                if self.op.name in _IMAGE_OPS and len(t.get_shape()) == 4:
                    return "NCHW"
        return "ND"

    def __getitem__(self, key: str) -> Any:
        if key == "data_format":
            return self.data_format
        attrs = self.attrs
        if key in attrs:
            return attrs[key]
        entry = op_types.OP_TYPES.get(self.type)
        attr = entry.attrs.get(key) if entry is not None else None
        if attr is not None and attr.prop is not None and attr.prop in attrs:
            return attrs[attr.prop]
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key, _MISSING) is not _MISSING

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Node) and other.op is self.op

    def __hash__(self) -> int:
        return id(self.op)

    def __repr__(self) -> str:
        ins = ", ".join(v.name for v in self.inputs)
        outs = ", ".join(repr(v) for v in self.outputs)
        return f"Node('{self.name}', {self.type}({ins}) -> {outs})"


_MISSING = object()
