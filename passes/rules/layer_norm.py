"""Rules of `recognize-layer-norm`: the decomposed LayerNorm of PyTorch's exporter (opset < 17)

    mean = ReduceMean(x, axes);  c = x - mean
    var  = ReduceMean(c ^ 2, axes)                       (or c * c)
    n    = c / Sqrt(var + eps)                           (or c * (1 / Sqrt(var + eps)))
    y    = n * gamma + beta                              (gamma and beta each optional)

becomes `ge.layer_norm(x, gamma, B = beta) {axis, epsilon}`, axis the first of the reduced trailing
axes (as a negative index). `c` is used twice: naming it binds both uses to one value.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import numpy_dtype
from ge.ge_dialects.ge.weights import constant_array
from ge.passes.rewrite import Builder, Const, Either, Match, Op, Reject, Rule

_centered = Op(ge.SubOp, "x", Op(ge.ReduceMeanOp, "x", name="mean"), name="c")
_square = Either(Op(ge.PowOp, "c", Const(value=2.0, tol=0.0)), Op(ge.MulOp, "c", "c"))
_std = Op(ge.SqrtOp, Op(ge.AddOp, Op(ge.ReduceMeanOp, _square, name="var"), "eps"))
_by_reciprocal = Op(ge.DivOp, Const(value=1.0, tol=0.0), _std)
_normalized = Either(Op(ge.DivOp, _centered, _std), Op(ge.MulOp, _centered, _by_reciprocal))


def _axes(m: Match, name: str) -> list[int] | None:
    """The axes a ReduceMean of the match averages over (sorted, non-negative), if constant and
    kept as size-1 dims; else None."""
    op = m.op_as(name, ge.ReduceMeanOp)
    rank = len(m.shape("x"))
    if op.p("keepdims") != 1:
        return None
    given: np.ndarray | list[int] | None = [] if op.axes is None else constant_array(op.axes)
    if given is None:
        return None
    axes = [int(a) for a in np.asarray(given).reshape(-1)]
    if not axes:
        return None if op.p("noop_with_empty_axes") else list(range(rank))
    return sorted(a % rank for a in axes)


def _trailing(m: Match) -> bool:
    axes = _axes(m, "mean")
    rank = len(m.shape("x"))
    return axes is not None and axes == list(range(rank - len(axes), rank))


def _build(m: Match, b: Builder) -> SSAValue:
    rank = len(m.shape("x"))
    axes = _axes(m, "mean")
    assert axes is not None  # the rule's first Reject refused the others
    axis = axes[0] - rank
    ones = np.ones((1,), numpy_dtype(m.type("x").element_type))
    scale = m["gamma"] if "gamma" in m else b.const(ones, "layer_norm.scale", role="scale")
    operands = {"X": m["x"], "Scale": scale, "B": m.values.get("beta")}
    props = {"axis": axis, "epsilon": m.scalar("eps")}
    return b.op(ge.LayerNormOp, operands, props, num_results=1).results[0]


_REJECTS = [
    Reject("the mean is not over constant trailing axes with keepdims = 1", lambda m: not _trailing(m)),
    Reject("the two means reduce different axes", lambda m: _axes(m, "mean") != _axes(m, "var")),
    Reject("epsilon is not a constant scalar", lambda m: m.scalar("eps") is None),
]


def _rule(name: str, pattern: Op) -> Rule:
    return Rule(name, pattern, _build, rejects=_REJECTS)


RULES: list[Rule] = [
    _rule("layer-norm", Op(ge.AddOp, Op(ge.MulOp, _normalized, "gamma"), "beta")),
    _rule("layer-norm-no-beta", Op(ge.MulOp, _normalized, "gamma")),
    _rule("layer-norm-no-gamma", Op(ge.AddOp, _normalized, "beta")),
    _rule("layer-norm-bare", Op(ge.DivOp, _centered, _std)),
    _rule("layer-norm-bare", Op(ge.MulOp, _centered, _by_reciprocal)),
]
