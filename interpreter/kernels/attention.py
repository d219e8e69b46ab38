"""Kernel of `ge.attention`: the same steps, in the same order, as the MatMul -> scale -> mask ->
Softmax -> MatMul chain it replaces (the scale applied where the graph applied it), so the results
match the unfused graph's."""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels import parallel
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.nn import _compute, _in_place


def _scaled(x: np.ndarray, op, out: np.ndarray | None = None) -> np.ndarray:
    scale = x.dtype.type(op.p("scale"))
    return np.divide(x, scale, out=out) if op.p("scale_op") == "div" else np.multiply(x, scale, out=out)


def attention(op, ins):
    """The matrices of the leading (batch, head) dims in blocks on the run's threads
    (`parallel.for_rows`); arrays the kernel makes itself (the scores, the probabilities) are
    written in place, and each step still rounds to the operands' type where the unfused chain
    would."""
    q, k, v, mask = ins["q"], ins["k"], ins["v"], ins["mask"]
    kt = k if op.p("k_transposed") else np.swapaxes(k, -1, -2)
    rows, cols = q.shape[-2], kt.shape[-1]
    lead = np.broadcast_shapes(q.shape[:-2], kt.shape[:-2], v.shape[:-2])
    if mask is not None:
        lead = np.broadcast_shapes(lead, mask.shape[:-2])

    def stacked(x: np.ndarray, matrix: tuple[int, int]) -> np.ndarray:
        return np.broadcast_to(x, (*lead, *matrix)).reshape(-1, *matrix)

    qs, kts, vs = stacked(q, q.shape[-2:]), stacked(kt, kt.shape[-2:]), stacked(v, v.shape[-2:])
    masks = None if mask is None else stacked(mask, (rows, cols))
    shaped = np.empty((*lead, rows, v.shape[-1]), q.dtype)  # owns its memory: the next op may take it over
    out = shaped.reshape(-1, rows, v.shape[-1])

    def block(lo: int, hi: int) -> None:
        out[lo:hi] = _attend(op, qs[lo:hi], kts[lo:hi], vs[lo:hi], None if masks is None else masks[lo:hi])

    # per score: a dot product of q and k rows, one of a probability row and v, softmax's few passes
    parallel.for_rows(qs.shape[0], rows * cols, block, passes=2 * q.shape[-1] + 6)
    return shaped


def _attend(op, q: np.ndarray, kt: np.ndarray, v: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """softmax(scaled q @ kt [+ mask]) @ v for a stack of matrices."""
    dtype = q.dtype
    where = op.p("scale_on")
    if where == "q":
        q = _scaled(q, op)
    elif where == "k":
        kt = _scaled(kt, op)
    scores = np.matmul(_compute(q), _compute(kt)).astype(dtype, copy=False)
    if where == "scores":
        scores = _scaled(scores, op, out=scores)
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
    return np.matmul(_compute(probs), _compute(v)).astype(dtype, copy=False)


@register_impls
class AttentionFunctions(InterpreterFunctions):
    """The interpreter implementation of `ge.attention`: runs its kernel above."""

    run_attention = impl(ge.AttentionOp)(kernel_impl(attention))
