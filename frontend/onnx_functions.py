"""ONNX function bodies, expanded at import.

An operator with no ge op of its own comes in as its ONNX function body: the schema's function
(Celu, ReduceL2, Swish, ...), the schema's context-dependent function, which onnx builds for the
node's attributes and input types (CastLike, Attention, RMSNormalization, LogSoftmax, ...), or a
function the model itself defines (`ModelProto.functions`), or, for an operator whose schema has
none, a body ge builds itself (onnx_decompositions.py: the recurrent layers, LpNormalization). The
body's nodes are imported in the
node's place, recursively, at the opset the body imports; an operator that has a ge op is never
expanded (`SUPPORTED_TYPES` comes first). Expansion is held to a node budget, and a model-local
function that calls itself is refused: both would otherwise never end.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import onnx

from ge.frontend.onnx_decompositions import DECOMPOSED_BEFORE, DECOMPOSITIONS
from ge.frontend.onnx_ops import DEFAULT_DOMAINS, OnnxImportError, is_native

MAX_EXPANDED_NODES = 100_000
"""Nodes that function expansion may add to one model: far beyond any real model's expansion
(BERT-Large's attention and norms add a few thousand), short of what exhausts memory."""

MAX_NESTING = 64
"""Function bodies expanded inside one another: schema functions nest two or three deep."""

FunctionKey = tuple[str, str]
"""(domain, name) of a model-local function."""


@dataclass
class FunctionBodies:
    """The function bodies a model's operators expand to, and the expansion's budget."""

    local: dict[FunctionKey, onnx.FunctionProto]
    budget: int = MAX_EXPANDED_NODES
    """How many nodes expansion may add to the model."""
    added: int = 0
    active: list[str] = field(default_factory=list)
    """The functions being expanded, outermost first (to refuse recursion and deep nesting)."""
    checked: dict[FunctionKey, bool] = field(default_factory=dict)
    """Whether each model-local function's body imports (`is_supported`)."""

    @classmethod
    def of(cls, model: onnx.ModelProto, budget: int = MAX_EXPANDED_NODES) -> FunctionBodies:
        return cls({(f.domain, f.name): f for f in model.functions}, budget)

    def has_body(self, node: onnx.NodeProto, opset: int) -> bool:
        """Whether the node's operator has a function body to expand (without building it)."""
        if (node.domain, node.op_type) in self.local:
            return True
        if _decomposition(node, opset) is not None:
            return True
        schema = _schema(node, opset)
        if schema is None:
            return False
        return bool(_version(schema.function_opset_versions, opset) or _context_version(schema, opset))

    def is_supported(self, node: onnx.NodeProto, opset: int, seen: frozenset[FunctionKey] = frozenset()) -> bool:
        """Whether the node imports: natively, or through a body whose nodes all import. A
        context-dependent body is built only at import (it depends on the input types): such an
        operator counts as supported here, and its body's operators are checked when it is built."""
        if is_native(node):
            return True
        key = (node.domain, node.op_type)
        if key in self.local:
            if key in seen or len(seen) > MAX_NESTING:
                return True  # recursion and deep nesting are refused, in their own words, when expanded
            if key not in self.checked:  # each function once: calls may fan out exponentially
                fn = self.local[key]
                inner = _body_opset(fn, opset)
                self.checked[key] = all(self.is_supported(n, inner, seen | {key}) for n in fn.node)
            return self.checked[key]
        if _decomposition(node, opset) is not None:
            return True  # built at import for the input types, and its operators checked then
        schema = _schema(node, opset)
        if schema is None:
            return False
        version = _version(schema.function_opset_versions, opset)
        if version:
            fn = _parsed(schema.get_function_with_opset_version(version))
            inner = _body_opset(fn, opset)
            return all(self.is_supported(n, inner, seen) for n in fn.node)
        return _context_version(schema, opset) is not None

    def body(
        self, node: onnx.NodeProto, opset: int, input_types: Sequence[onnx.TypeProto], where: str
    ) -> tuple[onnx.FunctionProto, int, str | None]:
        """(the node's function body, the opset its nodes are read at, the local function's name
        when the body is one). Raises when the node has no body."""
        key = (node.domain, node.op_type)
        if key in self.local:
            fn = self.local[key]
            return fn, _body_opset(fn, opset), f"{node.domain}.{node.op_type}"
        decomposition = _decomposition(node, opset)
        if decomposition is not None:
            fn = decomposition(node, input_types, where)
            return fn, _body_opset(fn, opset), None
        schema = _schema(node, opset)
        assert schema is not None, where  # callers ask has_body first
        version = _version(schema.function_opset_versions, opset)
        if version:
            fn = _parsed(schema.get_function_with_opset_version(version))
        else:
            context = _context_version(schema, opset)
            assert context is not None, where
            with_defaults = _with_default_attributes(node, schema)
            try:
                built = schema.get_context_dependent_function_with_opset_version(
                    context, with_defaults.SerializeToString(), [t.SerializeToString() for t in input_types]
                )
            except Exception as e:  # onnx's builder refuses attributes or types it cannot expand
                raise OnnxImportError(f"{where}: onnx cannot build its function body: {_first_line(e)}") from None
            fn = _parsed(built)
        return fn, _body_opset(fn, opset), None

    def instantiate(
        self, node: onnx.NodeProto, opset: int, fn: onnx.FunctionProto, name: str, where: str
    ) -> list[onnx.NodeProto]:
        """The body's nodes for this call: formal inputs and outputs renamed to the node's values,
        the body's own values prefixed with the node's name, attribute references resolved. The
        nodes are charged to the budget."""
        if self.added + len(fn.node) > self.budget:
            raise OnnxImportError(
                f"{where}: expanding its function body would exceed the budget of {self.budget} nodes "
                "that function expansion may add to a model"
            )
        self.added += len(fn.node)
        attributes = _attributes_of_call(node, fn, opset)
        renamed = {formal: actual for formal, actual in zip(fn.input, node.input)}
        renamed.update({formal: "" for formal in fn.input[len(node.input) :]})  # optional inputs left out
        renamed.update({formal: actual for formal, actual in zip(fn.output, node.output)})
        prefix = f"{name}/"

        def value(v: str) -> str:
            return renamed.get(v, f"{prefix}{v}") if v else ""

        return [_instantiated(inner, i, prefix, value, attributes) for i, inner in enumerate(fn.node)]

    def enter(self, op: str, function: str | None, where: str) -> None:
        """Marks a body as being expanded (`function`: the model-local function's name, None for a
        schema's body); refuses a model-local function that is already being expanded, and
        nesting deeper than MAX_NESTING."""
        if function is not None and function in self.active:
            chain = " -> ".join([*self.active[self.active.index(function) :], function])
            raise OnnxImportError(f"{where}: model-local function '{function}' calls itself ({chain})")
        if len(self.active) >= MAX_NESTING:
            raise OnnxImportError(f"{where}: function bodies nest deeper than {MAX_NESTING} levels")
        self.active.append(function or op)

    def leave(self) -> None:
        self.active.pop()


def _instantiated(
    inner: onnx.NodeProto,
    index: int,
    prefix: str,
    value: Callable[[str], str],
    attributes: dict[str, onnx.AttributeProto],
) -> onnx.NodeProto:
    """A body node for one call: named under `prefix`, its values renamed by `value`, its attribute
    references resolved. The graphs in its attributes (If's branches) are renamed alike: they read
    the body's values by name, and their own values take the prefix too."""
    copy = onnx.NodeProto()
    copy.CopyFrom(inner)
    copy.name = f"{prefix}{inner.name or f'{inner.op_type}_{index}'}"
    copy.input[:] = [value(v) for v in inner.input]
    copy.output[:] = [value(v) for v in inner.output]
    del copy.attribute[:]
    for attr in inner.attribute:
        if attr.ref_attr_name:
            given = attributes.get(attr.ref_attr_name)
            if given is None:
                continue  # neither the call nor the function gives it: the op's default
            resolved = onnx.AttributeProto()
            resolved.CopyFrom(given)
            resolved.name = attr.name
            copy.attribute.append(resolved)
            continue
        copy.attribute.append(attr)
        subgraphs = [copy.attribute[-1].g] if attr.type == onnx.AttributeProto.GRAPH else []
        subgraphs += list(copy.attribute[-1].graphs) if attr.type == onnx.AttributeProto.GRAPHS else []
        for graph in subgraphs:
            _rename_graph(graph, prefix, value, attributes)
    return copy


def _rename_graph(
    graph: onnx.GraphProto, prefix: str, value: Callable[[str], str], attributes: dict[str, onnx.AttributeProto]
) -> None:
    """A subgraph of a body node, renamed in place for the call (see `_instantiated`)."""
    for vi in [*graph.input, *graph.output, *graph.value_info]:
        vi.name = value(vi.name)
    for t in graph.initializer:
        t.name = value(t.name)
    renamed = [_instantiated(inner, i, prefix, value, attributes) for i, inner in enumerate(graph.node)]
    del graph.node[:]
    graph.node.extend(renamed)


def _decomposition(node: onnx.NodeProto, opset: int):
    """ge's own body builder for the node's operator at the opset (onnx_decompositions), if it has one."""
    if node.domain not in DEFAULT_DOMAINS or opset >= DECOMPOSED_BEFORE.get(node.op_type, opset + 1):
        return None
    return DECOMPOSITIONS.get(node.op_type)


def _schema(node: onnx.NodeProto, opset: int) -> Any:
    """The node's default-domain schema at the opset, or None (an `OpSchema`, typed Any: onnx's
    stubs lack its function accessors)."""
    if node.domain not in DEFAULT_DOMAINS:
        return None
    try:
        return onnx.defs.get_schema(node.op_type, opset, "")
    except onnx.defs.SchemaError:
        return None


def _version(versions: Sequence[int], opset: int) -> int | None:
    """The newest body version at or below the opset, else the oldest one (a schema may carry
    several bodies, each written in the operators of its version's opset; any of them means the
    operator, and the importer reads each at its own opset)."""
    usable = [v for v in versions if v <= opset]
    return max(usable) if usable else min(versions, default=None)


def _context_version(schema: Any, opset: int) -> int | None:
    if not schema.has_context_dependent_function:
        return None
    return _version(schema.context_dependent_function_opset_versions, opset)


def _parsed(data: bytes) -> onnx.FunctionProto:
    fn = onnx.FunctionProto()
    fn.ParseFromString(data)
    return fn


def _body_opset(fn: onnx.FunctionProto, opset: int) -> int:
    """The default-domain opset the body's nodes are read at: its own import, else the caller's."""
    return next((o.version for o in fn.opset_import if o.domain in DEFAULT_DOMAINS), opset)


def _with_default_attributes(node: onnx.NodeProto, schema: Any) -> onnx.NodeProto:
    """The node with the schema's default for every attribute it leaves out: context-dependent
    builders read the attributes from the node they are given."""
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    given = {a.name for a in node.attribute}
    for name, declared in schema.attributes.items():
        if name not in given and declared.default_value.name:
            copy.attribute.append(declared.default_value)
    return copy


def _attributes_of_call(node: onnx.NodeProto, fn: onnx.FunctionProto, opset: int) -> dict[str, onnx.AttributeProto]:
    """The attributes a body's references resolve to: the node's, else the function's defaults
    (a model-local function's `attribute_proto`; a schema's own defaults for its operator)."""
    attributes = {a.name: a for a in fn.attribute_proto}
    schema = _schema(node, opset)
    if schema is not None:
        attributes.update({n: d.default_value for n, d in schema.attributes.items() if d.default_value.name})
    attributes.update({a.name: a for a in node.attribute})
    return attributes


def _first_line(e: Exception) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else type(e).__name__
