"""`ge.grad`: a forward graph's gradients, built by the training passes (docs/training.md).

    backward = ge.grad(fwd, wrt=["fc1.weight"], checkpoints=["layer_1_relu", "layer_3_relu"])

is `ge-opt fwd.mlir -p 'autodiff{loss=loss wrt="fc1.weight"},checkpoint{policy=nodes
nodes="layer_1_relu,layer_3_relu"}'`, with `add-loss{output=... kind=...}` in front when the
forward has no scalar output to differentiate. The result is a new graph: the forward's outputs,
then one `<weight>_grad` output per weight (the backward built from each op's VJP, after the
forward, in the same function).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.passes import ModulePass

from ge.api.errors import GEError, user_errors
from ge.api.executor import check_graph, run_passes
from ge.api.graph import Graph
from ge.ge_dialects.ge.base import location_name
from ge.ge_dialects.ge.constant import ConstantOp
from ge.ge_dialects.ge.types import is_float, shape_of
from ge.interpreter.runner import main_function, output_names
from ge.passes.add_loss import AddLossPass
from ge.passes.autodiff import AutodiffPass
from ge.passes.checkpoint import POLICIES, CheckpointPass

WHERE = "ge.grad"


def _name_of(item) -> object:
    """A name as given, or the name a node object carries: the parameter key of a parameter
    constant's op (`.op`), else its `.name` (a dict of parameters gives its keys)."""
    if isinstance(item, str):
        return item
    op = getattr(item, "op", None)
    if isinstance(op, ConstantOp) and op.parameter_key is not None:
        return op.parameter_key
    return getattr(item, "name", item)


def _names(value, what: str) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise GEError(f"{WHERE}: {what} must be a list of names (without commas), not {value!r}")
    names = [_name_of(v) for v in value]
    if not all(isinstance(n, str) and n and "," not in n for n in names):
        raise GEError(f"{WHERE}: {what} must be a list of names (without commas), not {value!r}")
    return [n for n in names if isinstance(n, str)]


def _scalar_outputs(graph: Graph) -> list[str]:
    fn = main_function(graph.module)
    outs = fn.function_type.outputs.data
    return [
        n
        for n, t in zip(output_names(fn), outs)
        if isinstance(t, TensorType) and is_float(t.element_type) and shape_of(t) in ((), (1,))
    ]


def grad(
    fwd: Graph,
    wrt: Iterable | None = None,
    checkpoints: Sequence[str] | str | None = None,
    loss: str | None = None,
    loss_kind: str | None = None,
    output: str | None = None,
    labels: str = "labels",
    reduction: str = "mean",
    frozen: Iterable | None = None,
) -> Graph:
    """The forward with the gradients of its loss w.r.t. the parameters `wrt` (parameter keys, node
    objects of parameter constants, or a dict of parameters by key; None: every parameter with a
    differentiable path to the loss, but those `frozen` names) added as `<key>_grad` outputs. A
    parameter is a float `Graph.const`, an `add_*` layer's weight or an ONNX initializer.

    The loss: the output named `loss`; else the forward's only float scalar output; else, with
    `loss_kind` (softmax_cross_entropy, nll, mse), `add-loss{output=<output> kind=<loss_kind>
    labels=<labels> reduction=<reduction>}` appends one on `output` (default: the only output),
    with a new input for the labels. `checkpoints`: node names whose outputs the backward keeps
    (`checkpoint{policy=nodes nodes="..."}`: every other activation it reads is recomputed, the
    gradients bit-equal), or a policy name (layer, sqrt)."""
    check_graph(fwd, WHERE)
    weights = _names(wrt, "wrt")
    if weights is not None and not weights:
        raise GEError(f"{WHERE}: wrt names no parameter")
    kept = _names(frozen, "frozen")
    if kept is not None and not kept:
        raise GEError(f"{WHERE}: frozen names no parameter")
    passes: list[ModulePass] = []
    names = output_names(main_function(fwd.module))
    scalars = _scalar_outputs(fwd)
    if loss is None and loss_kind is None:
        if len(scalars) != 1:
            raise GEError(
                f"{WHERE}: the graph has {len(scalars)} float scalar outputs ({', '.join(scalars) or 'none'}); "
                "name the loss with loss=..., or give loss_kind=... to add one"
            )
        loss = scalars[0]
    elif loss_kind is not None:
        if loss is not None:
            raise GEError(f"{WHERE}: loss=... names an existing output; loss_kind=... adds one: give one of them")
        if output is None:
            if len(names) != 1:
                raise GEError(
                    f"{WHERE}: the graph has {len(names)} outputs; name the one to add the loss on (output=...)"
                )
            output = names[0]
        passes.append(AddLossPass(output=output, labels=labels, kind=loss_kind, reduction=reduction))
        loss = "loss"
    assert loss is not None
    passes.append(
        AutodiffPass(
            loss=loss,
            wrt=",".join(weights) if weights is not None else None,
            frozen=",".join(kept) if kept is not None else None,
        )
    )
    if checkpoints is not None:
        if isinstance(checkpoints, str):
            if checkpoints not in POLICIES or checkpoints in ("nodes", "budget"):
                raise GEError(
                    f"{WHERE}: checkpoints={checkpoints!r} is not a list of node names nor one of none, layer, sqrt"
                )
            passes.append(CheckpointPass(policy=checkpoints))
        else:
            nodes = _names(checkpoints, "checkpoints")
            assert nodes is not None
            _check_nodes(fwd, nodes)
            if nodes:
                passes.append(CheckpointPass(policy="nodes", nodes=",".join(nodes)))
    out = fwd.copy()
    with user_errors(WHERE):
        run_passes(out.module, passes, WHERE)
    return out


def _check_nodes(fwd: Graph, nodes: list[str]) -> None:
    """Every checkpoint names a node of the forward, as checkpoint's `nodes` option matches them
    (the full node name or its last component); the pass itself skips the check on a graph whose
    backward reads no activation."""
    known = [n for n in (location_name(op) for op in fwd.module.walk()) if n]
    for name in nodes:
        if not any(n == name or n.endswith(f"/{name}") for n in known):
            raise GEError(f"{WHERE}: checkpoint '{name}' names no node of the graph")
