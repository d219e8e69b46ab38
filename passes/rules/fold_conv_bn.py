"""Rules of `fold-conv-bn`: an inference BatchNormalization folded into the preceding conv.

    BN(conv(x, W, b)) = conv(x, W * f, (b - mean) * f + beta),   f = gamma / sqrt(var + eps)

with `f` per output channel. The folded weight and bias are new constants (sidecar weights when
large) computed in float64 from the conv's and BN's constants, rounded to the weight type once.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import location_name
from ge.ge_dialects.ge.weights import constant_array
from ge.passes.rewrite import Builder, Check, Match, Op, Reject, Rule, copy_props

_STATS = ("scale", "bias", "mean", "var")


def _missing_constant(m: Match) -> str | None:
    """Names the first operand the fold needs as a constant and cannot see, else None."""
    conv = m.op_as("conv", ge.ConvOp)
    if m.const("w") is None:
        return "conv weights are not constant"
    if conv.B is not None and constant_array(conv.B) is None:
        return "conv bias is not constant"
    for name in _STATS:
        if m.const(name) is None:
            return f"batch_norm {name} is not constant"
    return None


def _stem(m: Match) -> str:
    """What the new weights are named after: the conv weight's key without ".weight", else the node."""
    key = getattr(m.op("w"), "weight_key", None)
    if key:
        return key.removesuffix(".weight")
    return location_name(m.op("conv")) or "conv"


def _fold(m: Match, b: Builder) -> SSAValue:
    # _missing_constant refused the matches whose weights, conv bias or statistics are not visible
    conv, bn = m.op_as("conv", ge.ConvOp), m.root
    w = m.array("w")
    scale, bias, mean, var = (m.array(n).astype(np.float64) for n in _STATS)
    factor = scale / np.sqrt(var + np.float64(np.float32(bn.p("epsilon"))))
    conv_b = _conv_bias(conv)
    weight = (w.astype(np.float64) * factor.reshape(-1, *[1] * (w.ndim - 1))).astype(w.dtype)
    new_bias = ((conv_b - mean) * factor + bias).astype(w.dtype)
    stem = _stem(m)
    # named after what they replace: the conv's weight, and its bias or else the BN's offset
    operands = {
        "X": m["x"],
        "W": b.const(weight, f"{stem}.bn_folded.weight", m["w"], "bn_folded"),
        "B": b.const(new_bias, f"{stem}.bn_folded.bias", conv.B if conv.B is not None else m["bias"], "bn_folded"),
    }
    return b.op(ge.ConvOp, operands, copy_props(conv), name=location_name(conv)).results[0]


def _conv_bias(conv: ge.ConvOp) -> np.ndarray | float:
    """The conv's bias in float64 (0.0 when it has none); a visible constant when present."""
    if conv.B is None:
        return 0.0
    array = constant_array(conv.B)
    assert array is not None  # _missing_constant refused the others
    return array.astype(np.float64)


_training = Reject("batch_norm is in training mode (training_mode = 1)", lambda m: m.root.p("training_mode"))

RULES: list[Rule] = [
    Rule(
        "conv-bn",
        Op(ge.BatchNormOp, Op(ge.ConvOp, "x", "w", name="conv"), *_STATS),
        _fold,
        rejects=[_training, Check(_missing_constant)],
    ),
]
