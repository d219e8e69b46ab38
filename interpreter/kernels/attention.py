"""Kernel of `ge.attention`: the same steps, in the same order, as the MatMul -> scale -> mask ->
Softmax -> MatMul chain it replaces (the scale applied where the graph applied it), so the results
match the unfused graph's."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.nn import _compute, _in_place


def _scaled(x: np.ndarray, op, out: np.ndarray | None = None) -> np.ndarray:
    scale = x.dtype.type(op.p("scale"))
    return np.divide(x, scale, out=out) if op.p("scale_op") == "div" else np.multiply(x, scale, out=out)


def attention(op, ins):
    """Arrays the kernel makes itself (the scores, the probabilities) are written in place; each
    step still rounds to the operands' type where the unfused chain would."""
    dtype = ins["q"].dtype
    q, k, v = ins["q"], ins["k"], ins["v"]
    where = op.p("scale_on")
    if where == "q":
        q = _scaled(q, op)
    elif where == "k":
        k = _scaled(k, op)
    kt = k if op.p("k_transposed") else np.swapaxes(k, -1, -2)
    scores = np.matmul(_compute(q), _compute(kt)).astype(dtype, copy=False)
    if where == "scores":
        scores = _scaled(scores, op, out=scores)
    mask = ins["mask"]
    if mask is not None:
        if op.p("mask_kind") == "additive":
            scores = _in_place(np.add, scores, mask, owned=scores)
        else:
            # the fill saturates to the type's finite range, as compile-time constants do in f16
            finite = ml_dtypes.finfo(dtype) if dtype.kind == "f" or dtype.name == "bfloat16" else None
            fill = op.p("fill") if finite is None else np.clip(op.p("fill"), float(finite.min), float(finite.max))
            scores = np.where(mask, scores, dtype.type(fill))
    e = _compute(scores)
    e -= e.max(axis=-1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    probs = e.astype(dtype, copy=False)
    return np.asarray(np.matmul(_compute(probs), _compute(v))).astype(dtype, copy=False)


@register_impls
class AttentionFunctions(InterpreterFunctions):
    """The interpreter implementation of `ge.attention`: runs its kernel above."""

    run_attention = impl(ge.AttentionOp)(kernel_impl(attention))
