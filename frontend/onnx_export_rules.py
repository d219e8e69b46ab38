"""The reverse operator table: the ONNX node(s) each ge op exports as (used by frontend/onnx_exporter.py).

Most ge ops are one ONNX operator whose inputs are the op's operands in definition order and whose
attributes are its properties of the same name: the importer's table (frontend/onnx_ops.py) read
backwards, so an op added to both directions needs no entry here. The others have an export
function: the ops the optimizer makes (`ge.attention`) decompose into standard nodes, and
`ge.custom` exports as the operator its plugin registered, in its own domain (docs/custom_ops.md), and
`ge.trans_data` exports its logical meaning (an Identity: the shape in a ge type is always the
logical one, the storage format only says how the device lays the bytes out); `ge.cum_prod`
exports as CumProd only at an export opset that has it (26 on). Training ops
(gradients, optimizer updates, variables) have no standard ONNX inference form and are refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ge.frontend.onnx_ops import ONNX_TO_GE, VARIADIC, ge_op_for
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.ge.types import numpy_dtype, shape_of, tensor_type_of

if TYPE_CHECKING:
    from ge.frontend.onnx_exporter import Scope

Export = Callable[["Scope", ge.GeOp, list[str], list[str], str], None]
"""(scope, op, input names ('' for an absent optional operand), output names, node name): adds the nodes."""


@dataclass(frozen=True)
class Rule:
    op_type: str
    """The ONNX operator (default domain) the op becomes, or a description when `export` is given."""
    operands: tuple[str, ...] | None = None
    """The ge operand names in ONNX input order; None: the op's definition order (the importer's)."""
    export: Export | None = None
    """Builds the nodes itself (decompositions, logical meanings)."""


def _identity(scope: Scope, op: ge.GeOp, ins: list[str], outs: list[str], name: str) -> None:
    src, dst = op.p("src_format"), op.p("dst_format")
    scope.node("Identity", ins[:1], outs, name, doc=f"ge.trans_data {src} -> {dst} (a storage relayout)")


def _attention(scope: Scope, op: ge.GeOp, ins: list[str], outs: list[str], name: str) -> None:
    """The chain `recognize-attention` replaced, in the kernel's order (interpreter/kernels/attention.py)."""
    assert isinstance(op, ge.AttentionOp)
    q, k, v = ins[:3]
    dtype = numpy_dtype(tensor_type_of(op.q).element_type)
    scale_op = "Div" if op.p("scale_op") == "div" else "Mul"
    scale = scope.constant(np.asarray(op.p("scale"), dtype=dtype), f"{name}/scale")
    where = op.p("scale_on")
    if where == "q":
        q = scope.node(scale_op, [q, scale], None, f"{name}/scale_q")[0]
    elif where == "k":
        k = scope.node(scale_op, [k, scale], None, f"{name}/scale_k")[0]
    if not op.p("k_transposed"):
        rank = len(shape_of(tensor_type_of(op.k)))
        perm = [*range(rank - 2), rank - 1, rank - 2]
        k = scope.node("Transpose", [k], None, f"{name}/k_transpose", perm=perm)[0]
    scores = scope.node("MatMul", [q, k], None, f"{name}/scores")[0]
    if where == "scores":
        scores = scope.node(scale_op, [scores, scale], None, f"{name}/scale")[0]
    if op.mask is not None:
        if op.p("mask_kind") == "additive":
            scores = scope.node("Add", [scores, ins[3]], None, f"{name}/mask")[0]
        else:
            info = np.finfo(dtype) if dtype.kind == "f" else None
            fill = op.p("fill") if info is None else float(np.clip(op.p("fill"), info.min, info.max))
            filler = scope.constant(np.asarray(fill, dtype=dtype), f"{name}/fill")
            scores = scope.node("Where", [ins[3], scores, filler], None, f"{name}/mask")[0]
    probs = scope.node("Softmax", [scores], None, f"{name}/softmax", axis=-1)[0]
    scope.node("MatMul", [probs, v], outs, name)


CUM_PROD_OPSET = 26
"""The first default-domain opset with CumProd."""


def _cum_prod(scope: Scope, op: ge.GeOp, ins: list[str], outs: list[str], name: str) -> None:
    """CumProd as itself from the opset that has it; an older export opset has no equivalent."""
    from ge.frontend.onnx_exporter import OnnxExportError

    if scope.opset < CUM_PROD_OPSET:
        raise OnnxExportError(
            f"{describe(op)}: ONNX has CumProd from opset {CUM_PROD_OPSET}, the export writes opset {scope.opset}"
        )
    scope.node("CumProd", ins, outs, name, exclusive=op.p("exclusive"), reverse=op.p("reverse"))


def _custom(scope: Scope, op: ge.GeOp, ins: list[str], outs: list[str], name: str) -> None:
    """The registered operator itself, in its own domain, with its attributes (defaults filled in);
    the model imports the domain at `custom_domain_versions`."""
    assert isinstance(op, ge.CustomOp)
    definition = op.definition()
    if definition.gradient_of is not None:
        from ge.frontend.onnx_exporter import OnnxExportError

        raise OnnxExportError(f"{describe(op)}: the gradient of {definition.gradient_of} is {_TRAINING}")
    domain = op.domain.data
    scope.node(op.op_type.data, ins, outs, name, domain="" if domain == "ai.onnx" else domain, **op.attribute_values())


def custom_domain_versions(ops: list[ge.CustomOp]) -> dict[str, int]:
    """The version each custom domain is imported at: the latest first version of its registrations,
    which every one of them must map (their libraries loaded: the ops verified)."""
    from ge.frontend.onnx_exporter import OnnxExportError

    by_domain: dict[str, list[tuple[ge.CustomOp, tuple[int, int | None]]]] = {}
    for op in ops:
        domain = op.domain.data
        if domain not in ("", "ai.onnx"):
            by_domain.setdefault(domain, []).append((op, op.definition().opsets))
    versions = {}
    for domain, found in by_domain.items():
        version = max(first for _, (first, _) in found)
        for op, (first, last) in found:
            if last is not None and last < version:
                raise OnnxExportError(
                    f"{describe(op)}: {domain} is exported at version {version}, which {op.definition().describe()} "
                    f"does not map (it maps {first} to {last})"
                )
        versions[domain] = version
    return versions


def _table() -> dict[str, Rule]:
    rules: dict[str, Rule] = {}
    for onnx_type in ONNX_TO_GE:
        op_cls = ge_op_for(onnx_type)
        assert op_cls is not None, f"the import table names a missing op for {onnx_type}"
        rules[op_cls.name] = Rule(onnx_type)
    for onnx_type, (op_name, mean) in VARIADIC.items():  # Max of two for ge.maximum, ...
        op_cls = getattr(ge, op_name)
        if not mean and op_cls.name not in rules:
            rules[op_cls.name] = Rule(onnx_type)
    rules[ge.TransDataOp.name] = Rule("Identity (logical meaning)", export=_identity)
    rules[ge.AttentionOp.name] = Rule("MatMul, scale, mask, Softmax, MatMul", export=_attention)
    rules[ge.CumProdOp.name] = Rule("CumProd (opset 26 on)", export=_cum_prod)
    rules[ge.CustomOp.name] = Rule("the registered operator, in its domain", export=_custom)
    return rules


RULES: dict[str, Rule] = _table()
"""ge op name -> how it exports. ge.constant and fused.group are handled by the exporter itself."""

_TRAINING = "a training op with no ONNX inference form (export the inference graph)"

REFUSED: dict[str, str] = {
    **{op.name: _TRAINING for op in ge.CONV_GRAD_OPS},
    **{op.name: _TRAINING for op in ge.NORM_GRAD_OPS},
    **{op.name: _TRAINING for op in ge.TENSOR_GRAD_OPS},
    **{op.name: _TRAINING for op in ge.OPTIMIZER_OPS},
    ge.LstmGradOp.name: _TRAINING,
    **{op.name: _TRAINING for op in ge.LOSS_OPS if op.name not in RULES},
    **{op.name: _TRAINING for op in ge.ELEMENTWISE_OPS if op.name.endswith("_grad")},
    **{op.name: _TRAINING for op in ge.NN_OPS if op.name.endswith("_grad")},
    **{op.name: "a collective between data-parallel replicas, with no ONNX form" for op in ge.COLLECTIVE_OPS},
}
"""ge op name -> why it is not exported (the one-line error says so)."""
