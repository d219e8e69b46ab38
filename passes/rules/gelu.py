"""Rules of `recognize-gelu`: GELU spelled out in elementwise ops becomes `ge.gelu`.

    erf form   x * 0.5 * (1 + erf(x / sqrt(2)))                                   approximate = "none"
    tanh form  x * 0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))          approximate = "tanh"

The three factors x, 0.5 and (1 + ...) may be multiplied in any association and order (the
exporter writes (x * (erf + 1)) * 0.5, HF's NewGELU writes (x * 0.5) * (1 + tanh)); constants
match within 1e-6.
"""

from __future__ import annotations

import math

from ge.ge_dialects import ge
from ge.passes.rewrite import Const, Either, Match, Op, Rule

_HALF = Const(value=0.5)
_ONE = Const(value=1.0)

_erf_arg = Either(Op(ge.DivOp, "x", Const(value=math.sqrt(2.0))), Op(ge.MulOp, "x", Const(value=math.sqrt(0.5))))
_erf_term = Op(ge.AddOp, Op(ge.ErfOp, _erf_arg), _ONE)

_cube = Either(Op(ge.PowOp, "x", Const(value=3.0, tol=0.0)), Op(ge.MulOp, Op(ge.MulOp, "x", "x"), "x"))
_inner = Op(ge.AddOp, "x", Op(ge.MulOp, _cube, Const(value=0.044715)))
_tanh_term = Op(ge.AddOp, Op(ge.TanhOp, Op(ge.MulOp, _inner, Const(value=math.sqrt(2.0 / math.pi)))), _ONE)


def _products(term: Op) -> list[Op]:
    """x * 0.5 * term in the three associations (each product commutes)."""
    return [
        Op(ge.MulOp, Op(ge.MulOp, "x", term), _HALF),
        Op(ge.MulOp, Op(ge.MulOp, "x", _HALF), term),
        Op(ge.MulOp, "x", Op(ge.MulOp, term, _HALF)),
    ]


def _gelu(approximate: str):
    def build(m: Match, b):
        return b.op(ge.GeluOp, {"x": m["x"]}, {"approximate": approximate}).results[0]

    return build


RULES: list[Rule] = [
    *(Rule("gelu-erf", p, _gelu("none")) for p in _products(_erf_term)),
    *(Rule("gelu-tanh", p, _gelu("tanh")) for p in _products(_tanh_term)),
]
