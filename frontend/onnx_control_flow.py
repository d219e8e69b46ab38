"""Control flow whose path is known at import, unrolled into plain ge ops: an If with a constant
condition inlined, a Scan unrolled over its static sequence length, a Loop over its constant trip
count; and the subgraph inlining these share with SequenceMap's unrolling (frontend/onnx_sequences.py).
Control flow whose path is known only at run time imports as `ge.if` / `ge.loop` over functions
of the module (frontend/onnx_subgraphs.py).

An If whose condition is known at import (a constant, or a value the importer folds: a test of a
static shape's rank or size, as function bodies such as AffineGrid's and shape-dependent exports
make) is inlined: the taken branch's nodes are imported in the If's place, they read the enclosing
graph's values by name, their own values stay inside the branch, and the branch's outputs become
the If's. The branch left out is never read, so it may hold operators ge lacks.

A Scan's body is imported once per position of its scan inputs (their dim along
`scan_input_axes`; a length known only at run time makes it a `ge.loop` instead), bound to that
slice and to the state the previous iteration left; the per-iteration scan outputs are stacked
along `scan_output_axes`. A Loop's body is imported once per iteration while its trip count (a
constant at import) lasts and its condition, folded after every iteration, holds; the iteration
number is an int64 constant in each copy. A trip count or a condition that does not fold makes it
a `ge.loop` instead (the copies made so far are taken back). Every unrolled copy is charged to the
node budget of function expansion
(onnx_functions.MAX_EXPANDED_NODES).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import numpy as np
import onnx
from xdsl.ir import SSAValue

from ge.frontend.onnx_ops import DEFAULT_DOMAINS, ONNX_DTYPES, OnnxImportError, node_name, unsupported_operators
from ge.frontend.onnx_subgraphs import import_runtime_if, import_runtime_loop, import_runtime_scan
from ge.frontend.onnx_training import TRAINING_DOMAIN
from ge.frontend.validate import validate_subgraph
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import constant_value
from ge.ge_dialects.ge.types import shape_of, tensor_type_of

if TYPE_CHECKING:
    from ge.frontend.onnx_importer import ImportedValue, _Importer


def import_if(importer: _Importer, node: onnx.NodeProto, name: str, where: str) -> None:
    """Imports the branch the node's constant condition selects, binding the node's outputs."""
    if len(node.input) != 1 or not node.input[0]:
        raise OnnxImportError(f"{where}: If takes exactly one input (the condition), it has {len(node.input)}")
    cond = importer.tensor_input(node, 0, where)
    value = constant_value(cond)
    if value is None:
        import_runtime_if(importer, node, cond, name, where)
        return
    if np.size(value) != 1:
        raise OnnxImportError(f"{where}: the condition has {np.size(value)} elements, If takes a single one")
    if np.asarray(value).dtype != np.bool_:
        raise OnnxImportError(f"{where}: the condition is {np.asarray(value).dtype}, If takes a bool")
    branch = taken_branch(bool(np.asarray(value).reshape(-1)[0]))
    graph = next((a.g for a in node.attribute if a.name == branch and a.type == onnx.AttributeProto.GRAPH), None)
    if graph is None:
        raise OnnxImportError(f"{where}: the condition selects {branch}, which the node does not have")
    if graph.input:
        raise OnnxImportError(f"{where}: {branch} has {len(graph.input)} inputs; If's branches take none")
    outputs = list(node.output)
    if len(graph.output) != len(outputs):
        raise OnnxImportError(f"{where}: {branch} has {len(graph.output)} outputs, the node has {len(outputs)}")
    results = inline_graph(importer, graph, {}, f"{name}/", f"{where}: {branch}")
    for out, result in zip(outputs, results):
        if out:
            importer.bind(out, result)


def taken_branch(condition: bool) -> str:
    """The attribute holding the branch a condition selects."""
    return "then_branch" if condition else "else_branch"


def check_subgraph(importer: _Importer, graph: onnx.GraphProto, what: str) -> None:
    """The graph validated as the main graph is (`validate_subgraph`), and every operator it
    lacks listed in one line, before any of its nodes is imported."""
    validate_subgraph(graph, importer.opset, importer.defined_names(), what, importer.max_tensor_bytes)
    missing = unsupported_operators(
        graph.node,
        importer.opset,
        lambda n: n.domain == TRAINING_DOMAIN or importer.functions.is_supported(n, importer.opset),
    )
    if missing is not None:
        raise OnnxImportError(f"{what} cannot be imported: {missing}")


def inline_graph(
    importer: _Importer,
    graph: onnx.GraphProto,
    inputs: Mapping[str, ImportedValue],
    prefix: str,
    what: str,
    checked: bool = False,
) -> list[ImportedValue]:
    """The graph's nodes imported into the importer's block, with its inputs bound to `inputs`:
    the values of its outputs. The graph reads the enclosing values by name; the names it defines
    are gone afterwards. Its nodes are named under `prefix`; `what` names the graph in messages.
    `checked`: `check_subgraph` has passed already (an unrolled body is checked once)."""
    if not checked:
        check_subgraph(importer, graph, what)
    enclosing = importer.values, importer.sequences
    importer.values, importer.sequences = dict(importer.values), dict(importer.sequences)
    try:
        for input_name, value in inputs.items():
            importer.bind(input_name, value)
        for t in graph.initializer:
            importer.values[t.name] = importer.constant(importer.tensor_value(t), f"{prefix}{t.name}")
        for index, inner in enumerate(graph.node):
            named = onnx.NodeProto()
            named.CopyFrom(inner)
            named.name = f"{prefix}{node_name(inner, index)}"
            importer.node(named, index)
        return [importer.lookup(vi.name, f"{what}: output") for vi in graph.output]
    finally:
        importer.values, importer.sequences = enclosing


def node_count(graph: onnx.GraphProto) -> int:
    """The graph's nodes, with those of the graphs in their attributes (an If's branches)."""
    return sum(
        1 + sum(node_count(g) for a in node.attribute for g in ([a.g] if a.HasField("g") else []) + list(a.graphs))
        for node in graph.node
    )


def charge_unrolling(importer: _Importer, body: onnx.GraphProto, times: int, where: str, done: int = 0) -> None:
    """Charges `times` more copies of `body` (after `done` copies) to the node budget of function
    expansion, or refuses the node in one line when they would exceed it. A copy costs at least one
    node (it binds constants), so an empty body cannot unroll without end either."""
    functions = importer.functions
    cost = times * max(1, node_count(body))
    if functions.added + cost > functions.budget:
        raise OnnxImportError(
            f"{where}: unrolling its body {done + times} times would exceed the budget of {functions.budget} "
            "nodes that function expansion may add to a model"
        )
    functions.added += cost


def _graph_attribute(node: onnx.NodeProto, name: str, where: str) -> onnx.GraphProto:
    graph = next((a.g for a in node.attribute if a.name == name and a.type == onnx.AttributeProto.GRAPH), None)
    if graph is None:
        raise OnnxImportError(f"{where}: attribute '{name}' (a graph) is required")
    return graph


def _ints_attribute(node: onnx.NodeProto, name: str, count: int, what: str, where: str) -> list[int]:
    """An ints attribute with one entry per `what` (zeros when absent)."""
    attr = next((a for a in node.attribute if a.name == name), None)
    if attr is None:
        return [0] * count
    values = list(attr.ints)
    if len(values) != count:
        raise OnnxImportError(f"{where}: {name} has {len(values)} entries, the node has {count} {what}")
    return values


def _axis(axis: int, rank: int, what: str, where: str) -> int:
    if not -rank <= axis < rank:
        raise OnnxImportError(f"{where}: {what} {axis} is out of range for rank {rank}")
    return axis % rank


def _ints(importer: _Importer, values, name: str):
    return importer.constant(np.asarray(values, dtype=np.int64), name)


def _slices(importer: _Importer, x, axis: int, length: int, name: str, where: str) -> list:
    """`x` cut into its `length` slices along `axis`, the axis removed: a split, then squeezes."""
    parts = importer.emit(
        ge.SplitOp,
        {"input": x, "split": _ints(importer, [1] * length, f"{name}/split")},
        {"axis": axis},
        length,
        name,
        where,
    )
    axes = _ints(importer, [axis], f"{name}/axes")
    return [
        importer.emit(ge.SqueezeOp, {"data": p, "axes": axes}, {}, 1, f"{name}/{t}", where)[0]
        for t, p in enumerate(parts)
    ]


def _stacked(importer: _Importer, values: list, axis: int, name: str, where: str):
    """The tensors stacked along a new `axis`: unsqueezed there, then concatenated."""
    axes = _ints(importer, [axis], f"{name}/axes")
    parts = [
        importer.emit(ge.UnsqueezeOp, {"data": v, "axes": axes}, {}, 1, f"{name}/{t}", where)[0]
        for t, v in enumerate(values)
    ]
    (result,) = importer.emit(ge.ConcatOp, {"inputs": parts}, {"axis": axis}, 1, name, where)
    return result


def _tensor_result(value: ImportedValue, output: str, where: str):
    if not isinstance(value, SSAValue):
        raise OnnxImportError(f"{where}: the body's scan output '{output}' is a sequence; scan outputs are tensors")
    return value


def import_scan(importer: _Importer, node: onnx.NodeProto, name: str, where: str) -> None:
    """The Scan unrolled over its scan inputs' static length (opset 9's form), binding its outputs:
    the final states, and each scan output stacked along its axis in its direction."""
    if importer.opset < 9:
        raise OnnxImportError(f"{where}: {_BATCH_SCAN}")
    body = _graph_attribute(node, "body", where)
    scan_count = next((a.i for a in node.attribute if a.name == "num_scan_inputs"), None)
    if scan_count is None:
        raise OnnxImportError(f"{where}: attribute 'num_scan_inputs' is required")
    if not 1 <= scan_count <= len(node.input):
        raise OnnxImportError(f"{where}: num_scan_inputs is {scan_count}, the node has {len(node.input)} inputs")
    state_count = len(node.input) - scan_count
    if len(body.input) != len(node.input):
        raise OnnxImportError(f"{where}: the body takes {len(body.input)} inputs, the node gives {len(node.input)}")
    output_count = len(body.output) - state_count
    if output_count < 0 or len(node.output) > len(body.output):
        raise OnnxImportError(
            f"{where}: the body has {len(body.output)} outputs for {state_count} states, "
            f"the node has {len(node.output)}"
        )
    for i, input_name in enumerate(node.input):
        if not input_name:
            raise OnnxImportError(f"{where}: input #{i} is missing (Scan's inputs are all required)")
    in_axes = _ints_attribute(node, "scan_input_axes", scan_count, "scan inputs", where)
    in_reverse = _ints_attribute(node, "scan_input_directions", scan_count, "scan inputs", where)
    out_axes = _ints_attribute(node, "scan_output_axes", output_count, "scan outputs", where)
    out_reverse = _ints_attribute(node, "scan_output_directions", output_count, "scan outputs", where)
    initial = [importer.tensor_input(node, i, where) for i in range(state_count)]
    states: list[ImportedValue] = list(initial)
    scanned, axes, lengths = [], [], set[int | None]()
    for j in range(scan_count):
        x = importer.tensor_input(node, state_count + j, where)
        shape = shape_of(tensor_type_of(x))
        axis = _axis(in_axes[j], len(shape), f"scan input #{j}'s axis", where)
        scanned.append(x)
        axes.append(axis)
        lengths.add(shape[axis])
    if None in lengths:  # a length known only when it runs: a Loop over the sequence
        finals = import_runtime_scan(importer, node, body, initial, scanned, axes, in_reverse, name, where)
        _bind_scan(importer, node, finals, state_count, out_axes, out_reverse, name, where)
        return
    known = {n for n in lengths if n is not None}
    if len(known) != 1:
        raise OnnxImportError(f"{where}: the scan inputs have different sequence lengths {sorted(known)}")
    (length,) = known
    if length == 0 and output_count:
        raise OnnxImportError(f"{where}: the sequence length is 0; ge cannot stack scan outputs of no iteration")
    charge_unrolling(importer, body, length, where)
    check_subgraph(importer, body, f"{where}: body")
    slices = []
    for j, (x, axis) in enumerate(zip(scanned, axes)):
        cut = _slices(importer, x, axis, length, f"{name}/scan_input{j}", where) if length else []
        slices.append(cut[::-1] if in_reverse[j] else cut)
    outputs: list[list] = [[] for _ in range(output_count)]
    for t in range(length):
        bound = dict(zip((vi.name for vi in body.input), [*states, *(cut[t] for cut in slices)]))
        results = inline_graph(importer, body, bound, f"{name}/{t}/", f"{where}: body (iteration {t})", checked=True)
        states = results[:state_count]
        for j, value in enumerate(results[state_count:]):
            outputs[j].append(_tensor_result(value, body.output[state_count + j].name, where))
    stacked = []
    for j, values in enumerate(outputs):
        rank = len(shape_of(tensor_type_of(values[0]))) + 1
        axis = _axis(out_axes[j], rank, f"scan output #{j}'s axis", where)
        stacked.append(
            _stacked(importer, values[::-1] if out_reverse[j] else values, axis, f"{name}/scan_output{j}", where)
        )
    for out, value in zip(node.output, [*states, *stacked]):
        if out:
            importer.bind(out, value)


def _bind_scan(importer: _Importer, node, results: list, state_count: int, out_axes, out_reverse, name, where) -> None:
    """Binds a runtime Scan's outputs: the final states, and each scan output (stacked along a new
    first axis by the loop) reversed and moved to its axis as the Scan says."""
    for j, stacked in enumerate(results[state_count:]):
        rank = len(shape_of(tensor_type_of(stacked)))
        axis = _axis(out_axes[j], rank, f"scan output #{j}'s axis", where)
        if out_reverse[j]:
            (stacked,) = importer.emit(
                ge.SliceOp,
                {
                    "data": stacked,
                    "starts": _ints(importer, [-1], f"{name}/scan_output{j}/starts"),
                    "ends": _ints(importer, [np.iinfo(np.int64).min], f"{name}/scan_output{j}/ends"),
                    "axes": _ints(importer, [0], f"{name}/scan_output{j}/axes"),
                    "steps": _ints(importer, [-1], f"{name}/scan_output{j}/steps"),
                },
                {},
                1,
                f"{name}/scan_output{j}/reversed",
                where,
            )
        if axis:
            perm = list(range(1, rank))
            perm.insert(axis, 0)
            (stacked,) = importer.emit(
                ge.TransposeOp, {"data": stacked}, {"perm": perm}, 1, f"{name}/scan_output{j}", where
            )
        results[state_count + j] = stacked
    for out, value in zip(node.output, results):
        if out:
            importer.bind(out, value)


_BATCH_SCAN = (
    "opset 8's batch form of Scan (sequence_lens, a batch axis) is not imported: onnx's version converter "
    "drops the batch axis from the graph's declared inputs instead of adapting the Scan (export at opset 9 or newer)"
)


def refuse_batch_scan(graph: onnx.GraphProto, opset: int) -> None:
    """A model at opset 8 with a Scan (in its graph or in a subgraph) refused before the upgrade
    to MIN_OPSET would silently change the model's interface (`_BATCH_SCAN`). Scan is new at
    opset 8: before, the converter names it as an operator it cannot upgrade."""
    if opset != 8:
        return
    for index, node in enumerate(graph.node):
        if node.op_type == "Scan" and node.domain in DEFAULT_DOMAINS:
            raise OnnxImportError(f"node '{node_name(node, index)}' (Scan, opset {opset}): {_BATCH_SCAN}")
        for attr in node.attribute:
            for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                refuse_batch_scan(g, opset)


class DataDependent(OnnxImportError):
    """The Loop's trip count or condition is known only at run time: it imports as `ge.loop`."""


def import_loop(importer: _Importer, node: onnx.NodeProto, name: str, where: str) -> None:
    """The Loop unrolled when its trip count and condition fold at import, else `ge.loop`
    (onnx_subgraphs.py). An unrolling that meets a condition known only at run time is undone."""
    mark = _Mark(importer)
    try:
        unroll_loop(importer, node, name, where)
    except DataDependent:
        mark.undo()
        import_runtime_loop(importer, node, name, where)


class _Mark:
    """What an unrolling may have added to the importer, to take it back."""

    def __init__(self, importer: _Importer):
        self.importer = importer
        self.ops = len(importer.block.ops)
        self.weights = set(importer.weights)
        self.added = importer.functions.added
        self.subgraphs = len(importer.subgraphs)

    def undo(self) -> None:
        importer = self.importer
        for op in reversed(list(importer.block.ops)[self.ops :]):
            op.detach()
            op.erase()
        for key in set(importer.weights) - self.weights:
            del importer.weights[key]
        importer.functions.added = self.added
        del importer.subgraphs[self.subgraphs :]


def unroll_loop(importer: _Importer, node: onnx.NodeProto, name: str, where: str) -> None:
    """The Loop unrolled while its constant trip count lasts and its condition, folded after every
    iteration, holds; binds the final loop-carried values and the scan outputs stacked along a new
    first axis. DataDependent when the trip count or a condition does not fold."""
    body = _graph_attribute(node, "body", where)
    if len(node.input) < 2:
        raise OnnxImportError(
            f"{where}: Loop takes the trip count and the condition (either may be empty) before its "
            f"loop-carried values, it has {len(node.input)} inputs"
        )
    carried_count = len(node.input) - 2
    if len(body.input) != carried_count + 2:
        raise OnnxImportError(
            f"{where}: the body takes {len(body.input)} inputs, the loop gives {carried_count + 2} "
            "(the iteration number, the condition and its loop-carried values)"
        )
    output_count = len(body.output) - 1 - carried_count
    if output_count < 0 or len(node.output) > carried_count + output_count:
        raise OnnxImportError(
            f"{where}: the body has {len(body.output)} outputs for {carried_count} loop-carried values, "
            f"the node has {len(node.output)}"
        )
    trip_count = None
    if node.input[0]:
        count = constant_value(importer.tensor_input(node, 0, where))
        if count is None:
            raise DataDependent(f"Loop '{name}': the trip count '{node.input[0]}' is not a constant at import")
        array = np.asarray(count)
        if array.size != 1 or array.dtype.kind not in "iu":
            raise OnnxImportError(
                f"{where}: the trip count must be a single integer, it is {array.dtype}{list(array.shape)}"
            )
        trip_count = int(array.reshape(-1)[0])
    conditional = bool(node.input[1])
    running = True
    if conditional:
        running = _condition(importer.tensor_input(node, 1, where), node.input[1], "the condition", name, where)
    elif trip_count is None:
        raise OnnxImportError(f"{where}: the loop has neither a trip count nor a condition; it never ends")
    for i, input_name in enumerate(node.input[2:], start=2):
        if not input_name:
            raise OnnxImportError(f"{where}: input #{i} (a loop-carried value) is missing")
    carried = [importer.lookup(v, f"{where}: input") for v in node.input[2:]]
    if not conditional and trip_count is not None:
        charge_unrolling(importer, body, max(0, trip_count), where)
    check_subgraph(importer, body, f"{where}: body")
    outputs: list[list] = [[] for _ in range(output_count)]
    names = [vi.name for vi in body.input]
    invariant = conditional and loop_invariant(body, body.output[0].name)
    i = 0
    while running and (trip_count is None or i < trip_count):
        if conditional:
            charge_unrolling(importer, body, 1, where, done=i)
        bound = {
            names[0]: importer.constant(np.asarray(i, dtype=np.int64), f"{name}/{i}/iteration"),
            names[1]: importer.constant(np.asarray(True), f"{name}/{i}/condition"),
            **dict(zip(names[2:], carried)),
        }
        results = inline_graph(importer, body, bound, f"{name}/{i}/", f"{where}: body (iteration {i})", checked=True)
        if conditional:
            condition = body.output[0].name
            if not isinstance(results[0], SSAValue):
                raise OnnxImportError(f"{where}: the body's condition '{condition}' is a sequence, not a bool")
            running = _condition(results[0], condition, f"the condition after iteration {i}", name, where)
            if running and invariant:  # true in every iteration: the trip count alone ends the loop
                if trip_count is None:
                    raise OnnxImportError(
                        f"{where}: the condition '{condition}' is true in every iteration and there is no "
                        "trip count; the loop never ends"
                    )
                charge_unrolling(importer, body, trip_count - i - 1, where, done=i + 1)
                conditional = False
        carried = results[1 : 1 + carried_count]
        for j, value in enumerate(results[1 + carried_count :]):
            outputs[j].append(_tensor_result(value, body.output[1 + carried_count + j].name, where))
        i += 1
    stacked = [
        _stacked(importer, values, 0, f"{name}/scan_output{j}", where)
        if values
        else _empty_scan_output(importer, body.output[1 + carried_count + j], f"{name}/scan_output{j}", where)
        for j, values in enumerate(outputs)
    ]
    for out, value in zip(node.output, [*carried, *stacked]):
        if out:
            importer.bind(out, value)


def loop_invariant(body: onnx.GraphProto, value: str) -> bool:
    """Whether the Loop body's `value` is the same in every iteration: computed from constants, the
    enclosing graph's values and the condition input (true in every iteration that runs), never
    from the iteration number or a loop-carried value. A node holding subgraphs counts as varying
    (they may read either by name)."""
    varying = {vi.name for index, vi in enumerate(body.input) if index != 1}
    for node in body.node:
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute) or any(
            v in varying for v in node.input
        ):
            varying.update(node.output)
    return value not in varying


def _condition(value, value_name: str, what: str, name: str, where: str) -> bool:
    """A loop condition's value, which must be a bool constant at import."""
    folded = constant_value(value)
    if folded is None:
        raise DataDependent(f"Loop '{name}': {what} ('{value_name}') is not a constant at import")
    array = np.asarray(folded)
    if array.size != 1 or array.dtype != np.bool_:
        raise OnnxImportError(f"{where}: {what} must be a single bool, it is {array.dtype}{list(array.shape)}")
    return bool(array.reshape(-1)[0])


def _empty_scan_output(importer: _Importer, vi: onnx.ValueInfoProto, name: str, where: str):
    """The scan output of a loop that runs no iteration: empty along the new first axis, of the
    type the body declares (it must declare a static one: no iteration shows it)."""
    tt = vi.type.tensor_type
    dtype = ONNX_DTYPES.get(tt.elem_type)
    if dtype is None or not tt.HasField("shape") or not all(d.HasField("dim_value") for d in tt.shape.dim):
        raise OnnxImportError(
            f"{where}: the loop runs no iteration and the body's scan output '{vi.name}' declares no static "
            "tensor type, so its empty result has no known shape"
        )
    return importer.constant(np.zeros((0, *(d.dim_value for d in tt.shape.dim)), dtype=dtype), name)


CONTROL_FLOW_OPS: dict[str, Callable[[_Importer, onnx.NodeProto, str, str], None]] = {
    "If": import_if,
    "Scan": import_scan,
    "Loop": import_loop,
}
"""Control-flow operator -> its import (they are `IMPORTED_BY_NAME` in onnx_ops)."""
