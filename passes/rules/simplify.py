"""Rules of `simplify`: ops that do nothing, and chains that collapse into one op."""

from __future__ import annotations

import numpy as np
from xdsl.ir import Operation

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import shape_of
from ge.ge_dialects.ge.weights import constant_array
from ge.passes.rewrite import Const, Match, Op, Reject, Rule, copy_props
from ge.passes.rules.casts import SIMPLIFY_NOOP_CAST
from ge.passes.tensor_values import tensor_type

SHAPE_OPS = (ge.ReshapeOp, ge.FlattenOp, ge.SqueezeOp, ge.UnsqueezeOp, ge.ExpandOp)


def _keeps_type(op: Operation) -> bool:
    return op.results[0].type == op.operands[0].type


def _keeps_static_type(op: Operation) -> bool:
    """Result type == operand type with every dim known (a `?` could still be moved around)."""
    return _keeps_type(op) and None not in shape_of(tensor_type(op.results[0]))


def _perm(op: ge.TransposeOp) -> list[int]:
    return ge.TransposeOp.permutation(op.p("perm"), len(tensor_type(op.operands[0]).get_shape()))


def _identity_perm(op: ge.TransposeOp) -> bool:
    perm = _perm(op)
    return perm == sorted(perm)


def _compose_transposes(m: Match, b):
    inner, outer = _perm(m.op_as("inner", ge.TransposeOp)), _perm(m.root_as(ge.TransposeOp))
    perm = [inner[i] for i in outer]
    if perm == sorted(perm):
        return m["x"]
    return b.op(ge.TransposeOp, {"data": m["x"]}, {"perm": perm}).results[0]


def _outer_shape_reusable(m: Match) -> bool:
    """The outer reshape's shape means the same when applied to x: no 0 (copy a dim) in it."""
    shape = m.const("shape")
    return m.root.p("allowzero") == 1 or (shape is not None and 0 not in shape.tolist())


def _merge_reshapes(m: Match, b):
    if _outer_shape_reusable(m):
        return b.op(ge.ReshapeOp, {"data": m["x"], "shape": m["shape"]}, copy_props(m.root)).results[0]
    dims = shape_of(tensor_type(m.root.results[0]))
    shape = b.const(np.array(dims, np.int64), "shape")
    return b.op(ge.ReshapeOp, {"data": m["x"], "shape": shape}, {"allowzero": int(0 in dims)}).results[0]


def _training(m: Match) -> bool | None:
    """Whether the dropout is active: True/False, or None when training_mode is not a constant."""
    op = m.root_as(ge.DropoutOp)
    if op.training_mode is None:
        return False
    mode = constant_array(op.training_mode)
    if mode is None:
        return None
    if not mode.reshape(-1)[0]:
        return False
    ratio = np.array(0.5) if op.ratio is None else constant_array(op.ratio)
    return ratio is None or float(ratio.reshape(-1)[0]) != 0


_keeps_shape = Reject(
    "broadcasting with the constant changes the result type",
    lambda m: m.root.results[0].type != m["x"].type,
)


def _operand(m: Match, b):
    return m["x"]


RULES: list[Rule] = [
    Rule("identity", Op(ge.IdentityOp, "x"), _operand, doc="ge.identity -> its operand"),
    SIMPLIFY_NOOP_CAST,
    Rule(
        "noop-reshape",
        Op(SHAPE_OPS, "x", where=_keeps_static_type),
        _operand,
        doc="reshape/flatten/squeeze/unsqueeze/expand whose result type is its operand's",
    ),
    Rule("identity-transpose", Op(ge.TransposeOp, "x", where=_identity_perm), _operand),
    Rule(
        "transpose-pair",
        Op(ge.TransposeOp, Op(ge.TransposeOp, "x", name="inner")),
        _compose_transposes,
        doc="transpose(transpose(x, p1), p2) -> transpose(x, p1[p2]) (or x)",
    ),
    Rule(
        "reshape-chain",
        Op(ge.ReshapeOp, Op(ge.ReshapeOp, "x", name="inner"), "shape"),
        _merge_reshapes,
        rejects=[
            Reject(
                "the outer shape copies (0) dims of the inner result and the result shape is not static",
                lambda m: not _outer_shape_reusable(m) and None in shape_of(tensor_type(m.root.results[0])),
            )
        ],
    ),
    Rule(
        "inference-dropout",
        Op(ge.DropoutOp, "x"),
        _operand,
        rejects=[
            Reject("training_mode is not a constant", lambda m: _training(m) is None),
            Reject("dropout is in training mode", lambda m: _training(m)),
        ],
    ),
    Rule("mul-one", Op(ge.MulOp, "x", Const(value=1.0, tol=0.0)), _operand, rejects=[_keeps_shape]),
    Rule("div-one", Op(ge.DivOp, "x", Const(value=1.0, tol=0.0)), _operand, rejects=[_keeps_shape]),
    Rule("add-zero", Op(ge.AddOp, "x", Const(value=0.0, tol=0.0)), _operand, rejects=[_keeps_shape]),
    Rule("sub-zero", Op(ge.SubOp, "x", Const(value=0.0, tol=0.0)), _operand, rejects=[_keeps_shape]),
]
