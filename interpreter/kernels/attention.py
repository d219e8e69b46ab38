"""Kernel of `ge.attention`: the same steps, in the same order, as the MatMul -> scale -> mask ->
Softmax -> MatMul chain it replaces (the scale applied where the graph applied it), so the results
match the unfused graph's."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.nn import _compute


def _scaled(x: np.ndarray, op) -> np.ndarray:
    scale = x.dtype.type(op.p("scale"))
    return x / scale if op.p("scale_op") == "div" else x * scale


def attention(op, ins):
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
        scores = _scaled(scores, op)
    mask = ins["mask"]
    if mask is not None:
        if op.p("mask_kind") == "additive":
            scores = scores + mask
        else:
            # the fill saturates to the type's finite range, as compile-time constants do in f16
            finite = ml_dtypes.finfo(dtype) if dtype.kind == "f" or dtype.name == "bfloat16" else None
            fill = op.p("fill") if finite is None else np.clip(op.p("fill"), float(finite.min), float(finite.max))
            scores = np.where(mask, scores, dtype.type(fill))
    wide = _compute(scores)
    e = np.exp(wide - wide.max(axis=-1, keepdims=True))
    probs = (e / e.sum(axis=-1, keepdims=True)).astype(dtype, copy=False)
    return np.asarray(np.matmul(_compute(probs), _compute(v))).astype(dtype, copy=False)


@register_impls
class AttentionFunctions(InterpreterFunctions):
    """The interpreter implementation of `ge.attention`: runs its kernel above."""

    run_attention = impl(ge.AttentionOp)(kernel_impl(attention))
