"""`autodiff{loss=loss wrt="a,b" frozen="c,d"}`: reverse-mode differentiation of a ge graph.

Differentiates the scalar graph output `loss` and adds one graph output per trained parameter,
named `<parameter key>_grad` (the ONNX Runtime training convention). A parameter is a
`ge.constant parameter` (every ONNX initializer, every `Graph.const`), inline or in the sidecar:
its size plays no part. Every parameter on a differentiable path to the loss is trained, except
those `frozen` names; `wrt` instead names exactly the ones to train (each must get a gradient).
Constants without the marker (Constant nodes, folded values) are literals. The backward graph is
built in the same function, after the forward, from each op's own gradient (`GeOp.vjp`, defined
beside its shape function): this pass knows no op by name. Gradients are computed in the
forward's precision.

    %y = ge.matmul %x, %w ...            ->  %y = ge.matmul %x, %w ...
    %loss = ...                              %loss = ...
    return %y, %loss                         %dy = ... ; %dw = ge.matmul %xT, %dy ...
                                             return %y, %loss, %dw     // "w_grad"
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe, location_name
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable, static_shape
from ge.ge_dialects.ge.types import is_float, numpy_dtype, shape_of
from ge.interpreter.runner import InputError, main_function, output_names
from ge.passes import remarks
from ge.passes.pipeline import require_graph_level

PASS = "autodiff"
SEED_NAME = "/autodiff/seed"
"""The location of the loss's cotangent (ones), the backward graph's first op: checkpoint finds it."""


def _error(message: str, owner: str = PASS) -> DiagnosticException:
    return DiagnosticException(f"{owner}: {message}")


def _is_float_tensor(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and is_float(value.type.element_type)


def _listed(names: Iterable[str], limit: int = 8) -> str:
    names = list(names)
    shown = ", ".join(f"'{n}'" for n in names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "") if names else "none"


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    name = "autodiff"

    loss: str = "loss"
    """The graph output to differentiate: a float scalar."""
    wrt: str | None = None
    """Comma-separated parameter keys to differentiate with respect to (default: every trainable one)."""
    frozen: str | None = None
    """Comma-separated parameter keys not to differentiate (the others are, as without wrt)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_graph_level(PASS, op)
        request = GradientRequest.of(op, self.loss, self.wrt, PASS, self.frozen)
        forward = [o for o in request.fn.body.block.ops if o is not request.ret]
        grads = build_backward(forward, request.ret, request.loss_value, request.selected(), PASS)
        request.check_reached(grads)
        add_outputs(request.fn, request.ret, [(f"{k}_grad", grads[k]) for k in request.wanted if k in grads], PASS)


@dataclass
class GradientRequest:
    """What to differentiate, checked: `main`, its loss value, its parameters and the chosen ones.
    `owner` is the pass the errors name (autodiff, or accumulate-gradients, which differentiates too)."""

    fn: func.FuncOp
    ret: func.ReturnOp
    loss: str
    loss_value: SSAValue
    weights: dict[str, list[SSAValue]]
    wanted: list[str]
    explicit: bool
    owner: str

    @staticmethod
    def of(module: ModuleOp, loss: str, wrt: str | None, owner: str, frozen: str | None = None) -> GradientRequest:
        try:
            fn = main_function(module)
        except InputError as e:
            raise _error(str(e), owner) from None
        ret = fn.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        weights = parameters(fn)
        loss_value = _loss_value(fn, ret, loss, owner)
        if not weights:
            raise _error(
                "the graph has no parameters to differentiate (constants marked `parameter`: "
                "ONNX initializers, Graph.const)",
                owner,
            )
        return GradientRequest(
            fn, ret, loss, loss_value, weights, _wanted(weights, wrt, frozen, owner), wrt is not None, owner
        )

    def selected(self) -> dict[str, list[SSAValue]]:
        return {k: v for k, v in self.weights.items() if k in self.wanted}

    def check_reached(self, grads: dict[str, SSAValue]) -> None:
        """With an explicit `wrt`, every named parameter must get a gradient; in any case one must.
        The parameters left without one are a note (`--remarks`)."""
        missing = [k for k in self.wanted if k not in grads]
        if self.explicit and missing:
            raise _error(
                f"no differentiable path leads from parameter '{missing[0]}' to '{self.loss}' "
                "(it does not reach the loss, or only through operands without a gradient)",
                self.owner,
            )
        if not grads:
            raise _error(
                f"no differentiable path leads from any parameter to '{self.loss}' "
                f"(parameters: {_listed(self.wanted)})",
                self.owner,
            )
        if missing:
            consts = [v.owner for k in missing for v in self.weights[k] if isinstance(v.owner, Operation)]
            remarks.emit(
                self.owner,
                "note",
                "no-gradient",
                consts,
                f"{len(missing)} parameters get no gradient (no differentiable path to '{self.loss}'): "
                f"{_listed(missing)}",
            )


def _loss_value(fn: func.FuncOp, ret: func.ReturnOp, loss: str, owner: str) -> SSAValue:
    names = output_names(fn)
    if loss not in names:
        raise _error(f"the graph has no output '{loss}' (outputs: {_listed(names)})", owner)
    value = ret.operands[names.index(loss)]
    shape = shape_of(value.type) if isinstance(value.type, TensorType) else None
    if shape is None or not _is_float_tensor(value) or shape not in ((), (1,)):
        raise _error(f"the loss '{loss}' must be a float scalar, got {value.type}", owner)
    return value


def _wanted(weights: dict[str, list[SSAValue]], wrt: str | None, frozen: str | None, owner: str) -> list[str]:
    if wrt is not None and frozen is not None:
        raise _error("give wrt (the parameters to train) or frozen (the ones not to), not both", owner)
    if wrt is None and frozen is None:
        return sorted(weights)
    option, given = ("wrt", wrt) if wrt is not None else ("frozen", frozen)
    assert given is not None
    names = [n.strip() for n in given.split(",") if n.strip()]
    if not names:
        raise _error(f"{option} names no parameter", owner)
    for name in names:
        if name not in weights:
            raise _error(
                f"{option} names '{name}', which is not a parameter of the graph (parameters: {_listed(weights)})",
                owner,
            )
    if option == "wrt":
        return names
    left = sorted(k for k in weights if k not in names)
    if not left:
        raise _error(f"frozen leaves no parameter to train (parameters: {_listed(weights)})", owner)
    return left


def parameters(fn: func.FuncOp) -> dict[str, list[SSAValue]]:
    """The parameter constants' values by key (one key may be read by several constants)."""
    found: dict[str, list[SSAValue]] = {}
    for op in fn.body.block.ops:
        if isinstance(op, ge.ConstantOp) and op.parameter_key is not None:
            found.setdefault(op.parameter_key, []).append(op.output)
    return found


def _on_path(ops: Sequence[Operation], sources: set[SSAValue], loss: SSAValue) -> set[SSAValue]:
    """The float values that depend on a source and that the loss depends on."""
    depends = set(sources)
    for op in ops:
        if any(v in depends for v in op.operands):
            depends.update(r for r in op.results if _is_float_tensor(r))
    needed = {loss} & depends
    for op in reversed(ops):
        if any(r in needed for r in op.results):
            needed.update(v for v in op.operands if v in depends)
    return needed


def build_backward(
    forward: list[Operation],
    anchor: Operation,
    loss: SSAValue,
    weights: dict[str, list[SSAValue]],
    owner: str = PASS,
) -> dict[str, SSAValue]:
    """Builds the backward graph of the `forward` ops before `anchor`, from the seed (the loss's
    cotangent, ones) back through each op's `vjp`; returns each reached weight's gradient."""
    block = anchor.parent
    assert block is not None
    needed = _on_path(forward, {v for vs in weights.values() for v in vs}, loss)
    forward = [_with_all_results(op, needed) for op in forward]
    g = GradBuilder(block, anchor)
    cotangent: dict[SSAValue, SSAValue] = {}
    if needed:
        g.name = SEED_NAME
        loss_type = loss.type
        assert isinstance(loss_type, TensorType)
        cotangent[loss] = g.const(np.ones(static_shape(loss), numpy_dtype(loss_type.element_type)))
    for op in reversed(forward):
        cts = [cotangent.get(r) if r in needed else None for r in op.results]
        if all(c is None for c in cts) or not op.operands:  # the weights themselves end the walk
            continue
        name = location_name(op)
        g.name = f"{name}/grad" if name else None
        try:
            operand_cts = op.vjp(g, cts) if isinstance(op, ge.GeOp) else _not_ge(op)
        except NotDifferentiable as e:
            reason = str(e) if str(e).startswith(describe(op)) else f"{describe(op)}: {e}"
            raise _error(f"{reason} (it lies on a path from the weights to the loss)", owner) from None
        for operand, ct in zip(op.operands, operand_cts, strict=True):
            if ct is None or operand not in needed:
                continue
            previous = cotangent.get(operand)
            cotangent[operand] = ct if previous is None else g.add(previous, ct)
    grads: dict[str, SSAValue] = {}
    g.name = "/autodiff/sum"
    for key, values in weights.items():
        reached = [cotangent[v] for v in values if v in cotangent]
        if reached:
            total = reached[0]
            for more in reached[1:]:
                total = g.add(total, more)
            grads[key] = total
    _erase_unused(g.emitted, keep=set(grads.values()))
    return grads


def _with_all_results(op: Operation, needed: set[SSAValue]) -> Operation:
    """The op itself, or, when its gradient reads optional results it was built without (dropout's
    mask), the op rebuilt with them, its uses moved over."""
    if not (isinstance(op, ge.GeOp) and op.GRADIENT_NEEDS_ALL_RESULTS and any(r in needed for r in op.results)):
        return op
    count = len(op.get_irdl_definition().results)
    if len(op.results) == count:
        return op
    full = op.rebuilt(num_results=count)
    assert op.parent is not None
    op.parent.insert_op_before(full, op)
    for old, new in zip(op.results, full.results):
        old.replace_all_uses_with(new)
        if old in needed:
            needed.discard(old)
            needed.add(new)
    op.detach()
    op.erase()
    return full


def _not_ge(op: Operation) -> Sequence[SSAValue | None]:
    raise NotDifferentiable(f"{op.name} is not a ge op")


def _erase_unused(emitted: list[Operation], keep: set[SSAValue]) -> None:
    """Drops the backward ops whose results nothing uses (a VJP builds every operand's cotangent,
    also those of operands the loss needs none for)."""
    for op in reversed(emitted):
        if not any(r in keep or r.uses for r in op.results):
            op.detach()
            op.erase()


def add_outputs(fn: func.FuncOp, ret: func.ReturnOp, outputs: list[tuple[str, SSAValue]], owner: str = PASS) -> None:
    """Appends named outputs to `main` (refusing a name it already has)."""
    existing = output_names(fn)
    for name, _ in outputs:
        if name in existing:
            raise _error(f"the graph already has an output named '{name}'", owner)
    attrs = list(fn.res_attrs.data) if fn.res_attrs is not None else [DictionaryAttr({}) for _ in existing]
    ret.operands = [*ret.operands, *(v for _, v in outputs)]
    attrs += [DictionaryAttr({"ge.name": StringAttr(name)}) for name, _ in outputs]
    fn.res_attrs = ArrayAttr(attrs)
    fn.update_function_type()
