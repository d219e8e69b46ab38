"""`ge.attention`: scaled dot-product attention as one op, what `recognize-attention` makes of the
MatMul -> scale -> mask -> Softmax -> MatMul chain of the exported transformers.

    out = softmax(mask(scale(q @ k^T)), axis=-1) @ v

- q: [..., Sq, D]; k: [..., Sk, D], or [..., D, Sk] with `k_transposed = 1` (BERT's and GPT-2's
  exporters fold k's transpose into the head permutation); v: [..., Sk, Dv]. Batch dims broadcast
  like MatMul's. The result is [..., Sq, Dv].
- scale: the constant `scale`, multiplied (`scale_op = "mul"`) or divided (`"div"`), applied where
  the original graph applied it (`scale_on` = "scores", "q" or "k"), so the numbers match.
- mask (optional operand) broadcasts to the scores [..., Sq, Sk]: `mask_kind = "additive"` adds it
  (BERT's extended mask); `"keep"` is a boolean mask, scores where false become `fill` (GPT-2's
  causal Where).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import ClassVar

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_operand_def, opt_prop_def, result_def, traits_def
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import FloatProp, GeOp, InferArgs, IntProp, StrProp
from ge.ge_dialects.ge.elementwise import broadcast_shapes
from ge.ge_dialects.ge.facts import Engine, RunsOn
from ge.ge_dialects.ge.grad import GradBuilder, static_shape
from ge.ge_dialects.ge.layout import c0_of
from ge.ge_dialects.ge.types import (
    FLOAT_TYPES,
    Shape,
    elements,
    numpy_dtype,
    shape_of,
    tensor,
    tensor_type_of,
    type_name,
)

SCALE_OPS = ("mul", "div")
SCALE_ON = ("scores", "q", "k")
MASK_KINDS = ("additive", "keep")


def _show(shape: Shape) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ")"


def _one_of(a: InferArgs, name: str, allowed: tuple) -> None:
    if a.prop(name) not in allowed:
        shown = ", ".join(f'"{v}"' if isinstance(v, str) else str(v) for v in allowed)
        got = a.prop(name)
        raise a.fail(f"{name} must be one of {shown}, got " + (f'"{got}"' if isinstance(got, str) else str(got)))


def _agree(a: InferArgs, what: str, x: int | None, y: int | None) -> None:
    if x is not None and y is not None and x != y:
        raise a.fail(f"{what}: {x} vs {y}")


@irdl_op_definition
class AttentionOp(GeOp):
    name = "ge.attention"
    PRECISION: ClassVar = "white"  # FlashAttentionScore / PromptFlashAttention: true
    DATA_OPERANDS: ClassVar = ("q", "k", "v", "mask")  # an additive (float) mask; a boolean one stays i1
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    output = result_def(TensorType)
    scale = opt_prop_def(FloatProp)
    scale_op = opt_prop_def(StrProp)
    scale_on = opt_prop_def(StrProp)
    k_transposed = opt_prop_def(IntProp)
    mask_kind = opt_prop_def(StrProp)
    fill = opt_prop_def(FloatProp)
    traits = traits_def(Pure(), RunsOn(Engine.CUBE_VECTOR))
    DEFAULTS: ClassVar = {
        "scale": 1.0,
        "scale_op": "mul",
        "scale_on": "scores",
        "k_transposed": 0,
        "mask_kind": "additive",
        "fill": float(np.finfo(np.float32).min),
    }

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        dtype = a.expect_dtype("q", FLOAT_TYPES)
        a.expect_same_dtype("q", "k", "v")
        for name in ("q", "k", "v"):
            if a.rank(name) < 2:
                raise a.fail(f"operand '{name}' must have rank >= 2, got rank {a.rank(name)}")
        _one_of(a, "scale_op", SCALE_OPS)
        _one_of(a, "scale_on", SCALE_ON)
        _one_of(a, "k_transposed", (0, 1))
        _one_of(a, "mask_kind", MASK_KINDS)
        if a.prop("scale_op") == "div" and a.prop("scale") == 0:
            raise a.fail('scale must not be 0 with scale_op = "div"')
        q, k, v = a.shape("q"), a.shape("k"), a.shape("v")
        k_len, k_dim = (k[-1], k[-2]) if a.prop("k_transposed") else (k[-2], k[-1])
        _agree(a, "the head dims of q and k differ", q[-1], k_dim)
        _agree(a, "k and v have different sequence lengths", k_len, v[-2])
        scores = (*broadcast_shapes(a, q[:-2], k[:-2]), q[-2], k_len)
        if a.has("mask"):
            kind = a.prop("mask_kind")
            want = dtype if kind == "additive" else i1
            if a.dtype("mask") != want:
                raise a.fail(
                    f"the {kind} mask must have element type {type_name(want)}, got {type_name(a.dtype('mask'))}"
                )
            mask = a.shape("mask")
            tail = scores[len(scores) - len(mask) :]
            if len(mask) > len(scores) or any(m not in (1, s) and None not in (m, s) for m, s in zip(mask, tail)):
                raise a.fail(f"mask of shape {_show(mask)} does not broadcast to the scores {_show(scores)}")
        batch = broadcast_shapes(a, scores[:-2], v[:-2])
        return [tensor(dtype, (*batch, q[-2], v[-1]))]

    def fractal_heads(self) -> bool:
        """Whether the Cube loads q, k and v and stores the output as FRACTAL_NZ tiles of the
        [S, H*D] projections they are heads of: with the head dims (q's and v's) multiples of C0,
        each head is whole C0 column blocks of the projection's NZ array, itself the contiguous NZ
        array of an [S, D] matrix, so no element moves (GE's BatchMatMul reads NZ heads after
        ConfusionTransposeD the same way)."""
        c0 = c0_of(tensor_type_of(self.q).element_type)
        dims = (shape_of(tensor_type_of(self.q))[-1], shape_of(tensor_type_of(self.v))[-1])
        return c0 is not None and all(d is not None and d % c0 == 0 for d in dims)

    def projection(self, head: str) -> tuple[int | None, int | None]:
        """[S, H*D]: the matrix of the projection whose heads `head` ("q", "k", "v" or "output",
        [..., H, S, D]; k [..., H, D, S] when transposed) holds."""
        dims = shape_of(tensor_type_of(getattr(self, head)))
        rows, cols = (dims[-1], dims[-2]) if head == "k" and self.p("k_transposed") else (dims[-2], dims[-1])
        heads = dims[-3] if len(dims) >= 3 else 1
        return rows, None if heads is None or cols is None else heads * cols

    def macs(self) -> int:
        """Both matrix products: scores = q @ k^T, then scores @ v."""
        q, v = shape_of(tensor_type_of(self.q)), shape_of(tensor_type_of(self.v))
        keys = v[-2] or 1
        return elements(self.q) * keys + math.prod(d or 1 for d in q[:-1]) * keys * (v[-1] or 1)

    def transcendental_elements(self) -> int:
        """Scale, mask and softmax on the Vector, three costly passes over the score matrix (its size
        taken as MACs / q's head dim / 2, exact when q and v have one head dim)."""
        scores = self.macs() // max(1, shape_of(tensor_type_of(self.q))[-1] or 1) // 2
        return 3 * scores

    def reduced_row_elements(self) -> int:
        """A row of scores and a row of q: what one softmax row needs on chip."""
        return (shape_of(tensor_type_of(self.v))[-2] or 1) + (shape_of(tensor_type_of(self.q))[-1] or 1)

    # -- gradient ---------------------------------------------------------------------------------
    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """The probabilities are recomputed with the forward's steps as ge ops (the forward keeps
        none), then back through them: dP = dO v^T, dS = softmax_grad(P, dP), masked positions get
        none, the scale as the forward applied it (it is linear), and the two score products'
        cotangents summed back over broadcast batch dims. An additive mask gets dS (it may be a
        learned bias); a boolean mask gets none."""
        from ge.ge_dialects.ge.matmul_grad import matmul, swap_last
        from ge.ge_dialects.ge.norm_grad import SoftmaxGradOp

        (d_out,) = cotangents
        if d_out is None:
            return [None] * len(self.operands)
        where = self.p("scale_on")
        q = self._scaled(g, self.q) if where == "q" else self.q
        k = self._scaled(g, self.k) if where == "k" else self.k
        kt = k if self.p("k_transposed") else swap_last(g, k)
        scores = matmul(g, q, kt)
        probs = self._probabilities(g, self._scaled(g, scores) if where == "scores" else scores)
        d_probs = g.sum_to(matmul(g, d_out, swap_last(g, self.v)), static_shape(probs))
        dv = g.sum_to(matmul(g, swap_last(g, probs), d_out), static_shape(self.v))
        d_masked = g.value(SoftmaxGradOp, {"y": probs, "dy": d_probs}, {"axis": -1})
        d_scores, d_mask = self._mask_grads(g, d_masked)
        if where == "scores":
            d_scores = self._scaled(g, d_scores)
        dq = g.sum_to(matmul(g, d_scores, swap_last(g, kt)), static_shape(self.q))
        dkt = matmul(g, swap_last(g, q), d_scores)
        dk = g.sum_to(dkt if self.p("k_transposed") else swap_last(g, dkt), static_shape(self.k))
        if where == "q":
            dq = self._scaled(g, dq)
        elif where == "k":
            dk = self._scaled(g, dk)
        return [dq, dk, dv] if self.mask is None else [dq, dk, dv, d_mask]

    def _scaled(self, g: GradBuilder, value: SSAValue) -> SSAValue:
        """`value` times (or over) the scale, in its element type, as the kernel applies it."""
        scale = self.p("scale")
        if scale == 1.0:
            return value
        factor = g.scalar(scale, value)
        return g.div(value, factor) if self.p("scale_op") == "div" else g.mul(value, factor)

    def _probabilities(self, g: GradBuilder, scores: SSAValue) -> SSAValue:
        """softmax(mask(scores)) over the keys, as the forward computes it."""
        from ge.ge_dialects.ge.nn import SoftmaxOp
        from ge.ge_dialects.ge.tensor_ops import WhereOp

        if self.mask is not None and self.p("mask_kind") == "additive":
            scores = g.add(scores, self.mask)
        elif self.mask is not None:
            dtype = numpy_dtype(tensor_type_of(self.q).element_type)
            finite = ml_dtypes.finfo(dtype)  # the fill saturates to the type's range, as in the kernel
            fill = float(np.clip(self.p("fill"), float(finite.min), float(finite.max)))
            scores = g.value(WhereOp, {"condition": self.mask, "X": scores, "Y": g.scalar(fill, scores)})
        return g.value(SoftmaxOp, {"input": scores}, {"axis": -1})

    def _mask_grads(self, g: GradBuilder, d_masked: SSAValue) -> tuple[SSAValue, SSAValue | None]:
        """(the scores' cotangent, the mask's): a kept position passes dS, a filled one gets 0."""
        from ge.ge_dialects.ge.tensor_ops import WhereOp

        if self.mask is None:
            return d_masked, None
        if self.p("mask_kind") == "additive":
            return d_masked, g.sum_to(d_masked, static_shape(self.mask))
        zero = g.scalar(0.0, d_masked)
        return g.value(WhereOp, {"condition": self.mask, "X": d_masked, "Y": zero}), None


ATTENTION_OPS = [AttentionOp]

__all__ = ["AttentionOp", "ATTENTION_OPS"]
