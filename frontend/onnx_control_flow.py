"""If with a condition that is constant at import, inlined; and the subgraph inlining it shares
with SequenceMap's unrolling (frontend/onnx_sequences.py).

GE graphs have no control flow on the device, so an If imports only when its condition is known
at import: a constant, or a value the importer folds (a test of a static shape's rank or size, as
function bodies such as AffineGrid's and shape-dependent exports make). The taken branch's nodes are then
imported in the If's place: they read the enclosing graph's values by name, their own values stay
inside the branch, and the branch's outputs become the If's. The branch left out is never read,
so it may hold operators ge lacks. A condition known only at run time is refused in one line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import onnx

from ge.frontend.onnx_ops import OnnxImportError, node_name, unsupported_operators
from ge.frontend.onnx_training import TRAINING_DOMAIN
from ge.frontend.validate import validate_subgraph
from ge.ge_dialects.ge.base import constant_value

if TYPE_CHECKING:
    from ge.frontend.onnx_importer import ImportedValue, _Importer


def import_if(importer: _Importer, node: onnx.NodeProto, name: str, where: str) -> None:
    """Imports the branch the node's constant condition selects, binding the node's outputs."""
    if len(node.input) != 1 or not node.input[0]:
        raise OnnxImportError(f"{where}: If takes exactly one input (the condition), it has {len(node.input)}")
    cond = importer.tensor_input(node, 0, where)
    value = constant_value(cond)
    if value is None:
        raise OnnxImportError(
            f"If '{name}': the condition '{node.input[0]}' is not a constant at import; ge imports "
            "data-dependent control flow only when the condition folds at import (GE graphs have no "
            "If on the device)"
        )
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


def inline_graph(
    importer: _Importer, graph: onnx.GraphProto, inputs: Mapping[str, ImportedValue], prefix: str, what: str
) -> list[ImportedValue]:
    """The graph's nodes imported into the importer's block, with its inputs bound to `inputs`:
    the values of its outputs. The graph reads the enclosing values by name; the names it defines
    are gone afterwards. Its nodes are named under `prefix`; `what` names the graph in messages."""
    validate_subgraph(graph, importer.opset, importer.defined_names(), what, importer.max_tensor_bytes)
    missing = unsupported_operators(
        graph.node,
        importer.opset,
        lambda n: n.domain == TRAINING_DOMAIN or importer.functions.is_supported(n, importer.opset),
    )
    if missing is not None:
        raise OnnxImportError(f"{what} cannot be imported: {missing}")
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
