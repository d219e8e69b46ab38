"""Rules of `recognize-attention`: the eager attention of the exported transformers

    scores = MatMul(q, k)                    k already [..., D, Sk] (k_transposed = 1), or
                                             Transpose(k) swapping the last two axes (k_transposed = 0)
    scores = scores / s  |  scores * s       or the same on q or k before the MatMul, or no scale
    scores = scores + mask                   BERT: additive mask
           | Where(mask, scores, fill)       GPT-2: boolean causal mask, fill a constant
    out    = MatMul(Softmax(scores, axis=-1), v)

becomes `ge.attention(q, k, v, mask = ...)`, the scale applied where the graph applied it.
"""

from __future__ import annotations

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import shape_of
from ge.passes.rewrite import Either, Match, Op, Reject, Rule
from ge.passes.tensor_values import tensor_type

_SCALE_OPS = (ge.MulOp, ge.DivOp)


def _swaps_last_two(op: ge.TransposeOp) -> bool:
    rank = len(tensor_type(op.operands[0]).get_shape())
    perm = ge.TransposeOp.permutation(op.p("perm"), rank)
    return rank >= 2 and perm == [*range(rank - 2), rank - 1, rank - 2]


_k = Either(Op(ge.TransposeOp, "k", where=_swaps_last_two, name="k_swap"), "k")


def _scaled(x, name: str) -> Op:
    return Op(_SCALE_OPS, x, "scale", name=name)


_scores = Either(
    _scaled(Op(ge.MatMulOp, "q", _k), "scale_scores"),
    Op(ge.MatMulOp, _scaled("q", "scale_q"), _k),
    Op(ge.MatMulOp, "q", _scaled(_k, "scale_k")),
    Op(ge.MatMulOp, "q", _k),
)
_masked = Either(
    Op(ge.AddOp, _scores, "mask", name="mask_add"),
    Op(ge.WhereOp, "mask", _scores, "fill", name="mask_where"),
    _scores,
)
_PATTERN = Op(ge.MatMulOp, Op(ge.SoftmaxOp, _masked, name="softmax"), "v")


def _scale_at(m: Match) -> str | None:
    return next((at for at in ("scores", "q", "k") if f"scale_{at}" in m), None)


def _softmax_not_last(m: Match) -> bool:
    softmax = m.op_as("softmax", ge.SoftmaxOp)
    rank = len(shape_of(tensor_type(softmax.results[0])))
    return softmax.p("axis") % rank != rank - 1


def _build(m: Match, b):
    props: dict = {"k_transposed": 0 if "k_swap" in m else 1}
    at = _scale_at(m)
    if at is not None:
        op = m.op(f"scale_{at}")
        props.update(scale=m.scalar("scale"), scale_on=at, scale_op="div" if isinstance(op, ge.DivOp) else "mul")
    if "mask_where" in m:
        props.update(mask_kind="keep", fill=m.scalar("fill"))
    elif "mask_add" in m:
        props["mask_kind"] = "additive"
    operands = {"q": m["q"], "k": m["k"], "v": m["v"], "mask": m.values.get("mask")}
    return b.op(ge.AttentionOp, operands, props).results[0]


def _divides_by_zero(m: Match) -> bool:
    at = _scale_at(m)
    return at is not None and isinstance(m.op(f"scale_{at}"), ge.DivOp) and m.scalar("scale") == 0


RULES: list[Rule] = [
    Rule(
        "attention",
        _PATTERN,
        _build,
        rejects=[
            Reject("softmax is not over the last axis", _softmax_not_last),
            Reject(
                "the scale is not a constant scalar", lambda m: _scale_at(m) is not None and m.scalar("scale") is None
            ),
            Reject("the scale divides by 0", _divides_by_zero),
            Reject(
                "the masked fill value is not a constant scalar",
                lambda m: "mask_where" in m and m.scalar("fill") is None,
            ),
        ],
    ),
]
