"""Control flow whose path is known only at run time, imported as `ge.if` and `ge.loop`
(ge_dialects/ge/control_flow.py): an If whose condition does not fold, a Loop whose trip count or
condition does not, a Scan over a sequence whose length is known only when it runs.

Each subgraph (a branch, a body) becomes a function of the module, as GE keeps them as subgraphs.
The enclosing values a subgraph reads by name (its nested subgraphs' too) become explicit
arguments after its own inputs, and operands of the op; an If's two branches take the same ones.
An If's results have the types both branches return (a dim they disagree on is unknown). A Loop's
carried values start with their initial types; where the body returns another dim (a sequence
that grows), the body is imported again with that dim unknown, until its types hold.

A Scan of runtime length is the Loop it means: the trip count is the first scan input's dim along
its axis, the scan inputs are captures of a body that gathers element i (element length - 1 - i
when reversed) of each before the Scan's own body runs, the states are carried, and each scan
output is stacked along a new first axis, then reversed and moved to its axis as the Scan says.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType, i1, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import name_loc
from ge.ge_dialects.ge.control_flow import CONDITIONS, holds, merged_type, scalar
from ge.ge_dialects.ge.types import shape_of, tensor, type_name

if TYPE_CHECKING:
    from ge.frontend.onnx_importer import _Importer

NO_TRIP_COUNT = np.iinfo(np.int64).max
"""The trip count of a Loop without one: it runs until its condition fails."""


def free_names(graph: onnx.GraphProto) -> list[str]:
    """The names the graph (and the graphs in its nodes' attributes) reads without defining them,
    in the order first read."""
    defined = {vi.name for vi in graph.input} | {t.name for t in graph.initializer}
    found: dict[str, None] = {}
    for node in graph.node:
        reads = [n for n in node.input if n]
        for attr in node.attribute:
            for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                reads.extend(free_names(g))
        for n in reads:
            if n not in defined:
                found[n] = None
        defined.update(o for o in node.output if o)
    return list(found)


def captured(importer: _Importer, graphs: Sequence[onnx.GraphProto], what: str) -> list[str]:
    """The enclosing tensors the graphs read, in the order first read."""
    names = [n for g in graphs for n in free_names(g) if n in importer.values or n in importer.sequences]
    for n in names:
        if n in importer.sequences:
            raise OnnxImportError(f"{what} reads the sequence '{n}'; a branch or body may read tensors only")
    return list(dict.fromkeys(names))


def function_of(
    importer: _Importer,
    graph: onnx.GraphProto,
    symbol: str,
    inputs: Sequence[Attribute],
    captures: Sequence[str],
    what: str,
) -> func.FuncOp:
    """`graph` as the function `symbol` of the module: it takes `inputs` (its own inputs' types),
    then the enclosing values named `captures`."""
    from ge.frontend.onnx_control_flow import check_subgraph, inline_graph

    check_subgraph(importer, graph, what)
    types = [*inputs, *(importer.values[n].type for n in captures)]
    block = Block(arg_types=types)
    names = [*(vi.name for vi in graph.input), *captures]
    saved = importer.block, importer.values, importer.sequences
    importer.block, importer.values, importer.sequences = block, {}, {}  # the function's own scope
    try:
        results = inline_graph(importer, graph, dict(zip(names, block.args)), f"{symbol}/", what, checked=True)
    finally:
        importer.block, importer.values, importer.sequences = saved
    tensors = [value for value in results if isinstance(value, SSAValue)]
    if len(tensors) != len(results):
        sequence = next(vi.name for vi, value in zip(graph.output, results) if not isinstance(value, SSAValue))
        raise OnnxImportError(f"{what}: output '{sequence}' is a sequence; a branch or body returns tensors")
    block.add_op(func.ReturnOp(*tensors))
    return func.FuncOp(symbol, (types, [r.type for r in tensors]), Region(block))


def _symbol(importer: _Importer, base: str) -> str:
    """A function name no other function of the module has."""
    taken = {f.sym_name.data for f in importer.subgraphs} | {"main"}
    symbol, n = base, 1
    while symbol in taken:
        n += 1
        symbol = f"{base}#{n}"
    return symbol


def _scalar(importer: _Importer, value: SSAValue, element: Attribute, what: str, name: str, where: str) -> SSAValue:
    """`value` as a scalar tensor of `element` (a one-element tensor reshaped), or the refusal."""
    t = value.type
    assert isinstance(t, TensorType)
    if t.element_type != element or any(d != 1 for d in shape_of(t)):
        raise OnnxImportError(f"{where}: {what} must be a single {type_name(element)}, it is {t}")
    if not shape_of(t):
        return value
    shape = importer.constant(np.zeros((0,), np.int64), f"{name}/scalar_shape")
    (reshaped,) = importer.emit(ge.ReshapeOp, {"data": value, "shape": shape}, {}, 1, f"{name}/{what}", where)
    return reshaped


def _graph(node: onnx.NodeProto, attr: str, where: str) -> onnx.GraphProto:
    graph = next((a.g for a in node.attribute if a.name == attr and a.type == onnx.AttributeProto.GRAPH), None)
    if graph is None:
        raise OnnxImportError(f"{where}: attribute '{attr}' (a graph) is required")
    return graph


def _add(importer: _Importer, op: ge.IfOp | ge.LoopOp, node: onnx.NodeProto, name: str) -> None:
    op.location = name_loc(name)
    importer.block.add_op(op)
    for out, value in zip(node.output, op.results):
        if out:
            importer.bind(out, value)


def import_runtime_if(importer: _Importer, node: onnx.NodeProto, cond: SSAValue, name: str, where: str) -> None:
    """The If as `ge.if` over its two branches, binding the node's outputs."""
    cond = _scalar(importer, cond, i1, "the condition", name, where)
    graphs = {attr: _graph(node, attr, where) for attr in ("then_branch", "else_branch")}
    for attr, graph in graphs.items():
        if graph.input:
            raise OnnxImportError(f"{where}: {attr} has {len(graph.input)} inputs; If's branches take none")
        if len(graph.output) != len(node.output):
            raise OnnxImportError(f"{where}: {attr} has {len(graph.output)} outputs, the node has {len(node.output)}")
    captures = captured(importer, list(graphs.values()), where)
    then_fn, else_fn = (
        function_of(importer, graph, _symbol(importer, f"{name}/{attr}"), [], captures, f"{where}: {attr}")
        for attr, graph in graphs.items()
    )
    results = []
    for i, (a, b) in enumerate(zip(then_fn.function_type.outputs.data, else_fn.function_type.outputs.data)):
        merged = merged_type(a, b) if isinstance(a, TensorType) and isinstance(b, TensorType) else None
        if merged is None:
            raise OnnxImportError(f"{where}: output #{i} is {a} in then_branch but {b} in else_branch")
        results.append(merged)
    importer.subgraphs.extend([then_fn, else_fn])
    values = [importer.values[n] for n in captures]
    _add(importer, ge.IfOp(then_fn.sym_name.data, else_fn.sym_name.data, cond, values, results), node, name)


def import_runtime_loop(importer: _Importer, node: onnx.NodeProto, name: str, where: str) -> None:
    """The Loop as `ge.loop` over its body, binding the final carried values and the scan outputs."""
    body = _graph(node, "body", where)
    trip = (
        _scalar(importer, importer.tensor_input(node, 0, where), i64, "the trip count", name, where)
        if node.input[0]
        else importer.constant(np.asarray(NO_TRIP_COUNT, np.int64), f"{name}/no_trip_count")
    )
    cond = (
        _scalar(importer, importer.tensor_input(node, 1, where), i1, "the condition", name, where)
        if node.input[1]
        else importer.constant(np.asarray(True), f"{name}/no_condition")
    )
    initial = [importer.tensor_input(node, i, where) for i in range(2, len(node.input))]
    captures = captured(importer, [body], where)
    carried: list[Attribute] = [v.type for v in initial]
    symbol = _symbol(importer, f"{name}/body")
    rounds = 1 + max((len(shape_of(t)) for t in carried if isinstance(t, TensorType)), default=0)
    nested = len(importer.subgraphs)
    for _ in range(rounds):  # each round makes at least one more dim unknown, or ends
        del importer.subgraphs[nested:]  # the functions of the body's own Ifs and Loops, from the last round
        fn = function_of(importer, body, symbol, [scalar(i64), scalar(i1), *carried], captures, f"{where}: body")
        returned = list(fn.function_type.outputs.data)
        steps = returned[1 : 1 + len(carried)]
        if all(holds(c, r) for c, r in zip(carried, steps)):
            break
        widened = [
            merged_type(c, r) if isinstance(c, TensorType) and isinstance(r, TensorType) else None
            for c, r in zip(carried, steps)
        ]
        if any(w is None for w in widened):
            raise OnnxImportError(f"{where}: the body changes a carried value's element type or rank")
        carried = [w for w in widened if w is not None]
    if returned[0] not in CONDITIONS:
        raise OnnxImportError(f"{where}: the body's condition is {returned[0]}, not a single bool")
    scans = [
        tensor(t.element_type, [None, *shape_of(t)]) for t in returned[1 + len(carried) :] if isinstance(t, TensorType)
    ]
    importer.subgraphs.append(fn)
    values = [importer.values[n] for n in captures]
    _add(importer, ge.LoopOp(symbol, trip, cond, initial, values, [*carried, *scans]), node, name)


def import_runtime_scan(
    importer: _Importer,
    node: onnx.NodeProto,
    body: onnx.GraphProto,
    states: Sequence[SSAValue],
    scanned: Sequence[SSAValue],
    axes: Sequence[int],
    reverse: Sequence[int],
    name: str,
    where: str,
) -> list[SSAValue]:
    """The Scan (opset 9's form) as a `ge.loop` over a body that slices its scan inputs: the final
    states, then each scan output stacked along a new first axis (the caller reverses and moves it)."""
    (count,) = importer.emit(
        ge.ShapeOp, {"data": scanned[0]}, {"start": axes[0], "end": axes[0] + 1}, 1, f"{name}/length", where
    )
    length = _scalar(importer, count, i64, "the sequence length", name, where)
    cond = importer.constant(np.asarray(True), f"{name}/no_condition")
    captures = captured(importer, [body], where)
    symbol = _symbol(importer, f"{name}/body")
    what = f"{where}: body"
    from ge.frontend.onnx_control_flow import check_subgraph, inline_graph

    check_subgraph(importer, body, what)
    state_types = [v.type for v in states]
    outside = [*scanned, length, *(importer.values[n] for n in captures)]
    types = [scalar(i64), scalar(i1), *state_types, *(v.type for v in outside)]
    block = Block(arg_types=types)
    i, c, *args = block.args
    own_states, xs, n, named = (
        args[: len(states)],
        args[len(states) : len(states) + len(scanned)],
        args[len(states) + len(scanned)],
        args[len(states) + len(scanned) + 1 :],
    )
    saved = importer.block, importer.values, importer.sequences
    importer.block, importer.values, importer.sequences = block, dict(zip(captures, named)), {}
    try:
        last = None
        slices = []
        for j, (x, axis) in enumerate(zip(xs, axes)):
            index: SSAValue = i
            if reverse[j]:
                if last is None:
                    one = importer.constant(np.asarray(1, np.int64), f"{symbol}/one")
                    (before,) = importer.emit(ge.SubOp, {"a": n, "b": one}, {}, 1, f"{symbol}/last", where)
                    (last,) = importer.emit(ge.SubOp, {"a": before, "b": i}, {}, 1, f"{symbol}/reversed", where)
                index = last
            (cut,) = importer.emit(
                ge.GatherOp, {"data": x, "indices": index}, {"axis": axis}, 1, f"{symbol}/x{j}", where
            )
            slices.append(cut)
        bound = dict(zip((vi.name for vi in body.input), [*own_states, *slices]))
        results = inline_graph(importer, body, bound, f"{symbol}/", what, checked=True)
    finally:
        importer.block, importer.values, importer.sequences = saved
    tensors = [value for value in results if isinstance(value, SSAValue)]
    if len(tensors) != len(results):
        raise OnnxImportError(f"{what}: an output is a sequence; a Scan's body returns tensors")
    returned = [t.type for t in tensors]
    for k, (given, got) in enumerate(zip(state_types, returned)):
        if not holds(given, got):
            raise OnnxImportError(f"{what}: state #{k} is {given} but the body returns {got}")
    block.add_op(func.ReturnOp(c, *tensors))
    importer.subgraphs.append(func.FuncOp(symbol, (types, [scalar(i1), *returned]), Region(block)))
    scans = [tensor(t.element_type, [None, *shape_of(t)]) for t in returned[len(states) :] if isinstance(t, TensorType)]
    loop = ge.LoopOp(symbol, length, cond, list(states), outside, [*state_types, *scans])
    loop.location = name_loc(name)
    importer.block.add_op(loop)
    return list(loop.results)
