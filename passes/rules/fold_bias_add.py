"""Rules of `fold-bias-add`: a constant bias added after a conv or gemm moves into the op.

    add(conv(x, W[, b]), c)  ->  conv(x, W, b + c)     c per output channel: [C,1,1], [1,C,1,1], scalar
    add(gemm(A, B[, C]), c)  ->  gemm(A, B, beta*C + c) {beta = 1}

MatMul + Add is left to the fusion passes (a matmul epilogue).
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import location_name
from ge.ge_dialects.ge.types import shape_of
from ge.ge_dialects.ge.weights import constant_array
from ge.passes.rewrite import Builder, Const, Match, Op, Reject, Rule, copy_props
from ge.passes.tensor_values import tensor_type


def _channel_bias(m: Match) -> np.ndarray | None:
    """The bias as a vector over the conv's output channels, if it is one (else None)."""
    bias = m.array("bias")
    out = shape_of(tensor_type(m["conv"]))
    if bias.ndim > len(out) or out[1] is None:
        return None
    padded = (1,) * (len(out) - bias.ndim) + bias.shape
    if padded[0] != 1 or any(d != 1 for d in padded[2:]) or padded[1] not in (1, out[1]):
        return None
    return np.broadcast_to(bias.reshape(-1), (out[1],))


def _fold_into_conv(m: Match, b: Builder) -> SSAValue:
    conv = m.op_as("conv", ge.ConvOp)
    channel_bias = _channel_bias(m)
    assert channel_bias is not None  # the rule's first Reject refused the others
    bias = channel_bias.astype(np.float64)
    if conv.B is not None:
        conv_bias = constant_array(conv.B)
        assert conv_bias is not None  # the rule's second Reject refused the others
        bias = bias + conv_bias.astype(np.float64)
    name = location_name(conv)
    new_b = b.const(
        bias.astype(m.array("bias").dtype),
        f"{name or 'conv'}.bias",
        conv.B if conv.B is not None else m["bias"],
        "folded",
    )
    operands = {"X": m["x"], "W": m["w"], "B": new_b}
    return b.op(ge.ConvOp, operands, copy_props(conv), name=name).results[0]


def _fold_into_gemm(m: Match, b: Builder) -> SSAValue:
    gemm = m.op_as("gemm", ge.GemmOp)
    c = m.array("bias").astype(np.float64)
    if gemm.C is not None:
        old_c = constant_array(gemm.C)
        assert old_c is not None  # the rule's second Reject refused the others
        c = gemm.p("beta") * old_c.astype(np.float64) + c
    name = location_name(gemm)
    new_c = b.const(
        c.astype(m.array("bias").dtype), f"{name or 'gemm'}.bias", gemm.C if gemm.C is not None else m["bias"], "folded"
    )
    operands = {"A": m["a"], "B": m["b"], "C": new_c}
    return b.op(ge.GemmOp, operands, copy_props(gemm, beta=1.0), name=name).results[0]


def _unknown(value: SSAValue | None) -> bool:
    """An optional operand that is present but not a visible constant."""
    return value is not None and constant_array(value) is None


RULES: list[Rule] = [
    Rule(
        "conv-bias-add",
        Op(ge.AddOp, Op(ge.ConvOp, "x", "w", name="conv"), Const("bias")),
        _fold_into_conv,
        rejects=[
            Reject(
                lambda m: f"the bias of shape {list(m.array('bias').shape)} is not per output channel",
                lambda m: _channel_bias(m) is None,
            ),
            Reject(
                "the conv's bias is not constant",
                lambda m: _unknown(m.op_as("conv", ge.ConvOp).B),
            ),
        ],
    ),
    Rule(
        "gemm-bias-add",
        Op(ge.AddOp, Op(ge.GemmOp, "a", "b", name="gemm"), Const("bias")),
        _fold_into_gemm,
        rejects=[
            Reject("broadcasting the bias changes the result type", lambda m: m.root.results[0].type != m["gemm"].type),
            Reject(
                "the gemm's C is not constant",
                lambda m: _unknown(m.op_as("gemm", ge.GemmOp).C),
            ),
        ],
    ),
]
