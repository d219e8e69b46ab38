"""infer-shapes: re-runs every ge op's shape function in program order and refines result types.

After an edit that makes types more precise (a function argument's `?` dims made static, a
constant folded into a shape operand), the declared result types downstream are still the old,
less precise ones; the verifier accepts that (`?` is compatible with anything). This pass walks
each function in program order, re-infers each ge op's results from its (already refined)
operands with `GeOp.infer` (constant operands visible, sidecar weights included) and, where the
inferred type is more precise, replaces the declared one:

- a `?` dim becomes the inferred static dim; a static dim is never made `?`;
- the result's format (encoding) is kept as declared;
- a contradiction (element type, rank, or a static dim that differs) is one error naming the op.

Finally each function's result types are set to what its `func.return` now returns. Running the
pass twice changes nothing the second time.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, FunctionType, ModuleOp, TensorType
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects.ge.base import GeOp, InferArgs, describe
from ge.ge_dialects.ge.types import shape_of
from ge.passes import remarks
from ge.passes.fold_constants import ConstantInferArgs

PASS = "infer-shapes"


def refined_type(op: GeOp, index: int, declared: Attribute, inferred: TensorType) -> Attribute:
    """`declared` with its unknown dims taken from `inferred`; raises on a contradiction."""
    if not isinstance(declared, TensorType):
        raise DiagnosticException(f"{describe(op)}: result #{index} must be a tensor, got {declared}")
    old, new = shape_of(declared), shape_of(inferred)
    if (
        declared.element_type != inferred.element_type
        or len(old) != len(new)
        or any(a is not None and b is not None and a != b for a, b in zip(old, new))
    ):
        raise DiagnosticException(
            f"{describe(op)}: result #{index} is declared {declared} but its operands now imply {inferred}"
        )
    dims = [a if a is not None else b for a, b in zip(old, new)]
    if dims == list(old):
        return declared
    return TensorType(declared.element_type, [DYNAMIC_INDEX if d is None else d for d in dims], declared.encoding)


@dataclass(frozen=True)
class InferShapesPass(ModulePass):
    """Refines result types from the shape functions (see the module docstring)."""

    name = "infer-shapes"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [f for f in op.walk() if isinstance(f, func.FuncOp)]:
            refined = 0
            for inner in list(fn.body.walk()):
                if isinstance(inner, GeOp) and inner.has_shape_function():
                    refined += refine(inner)
            update_signature(fn)
            if refined:
                remarks.emit(PASS, "note", "refine", [fn], f"@{fn.sym_name.data}: {refined} result types refined")


def refine(op: GeOp, args: InferArgs | None = None) -> int:
    """Re-infers `op`'s results from its operands (as `args` shows them, by default the op's own),
    refining the declared types; how many changed."""
    try:
        inferred = type(op).infer(args if args is not None else ConstantInferArgs.of(op))
    except DiagnosticException as e:
        raise DiagnosticException(f"{e} (after refining its operand types)") from None
    if len(op.results) > len(inferred):
        raise DiagnosticException(f"{describe(op)}: has {len(op.results)} results, at most {len(inferred)} allowed")
    changed = 0
    for i, want in enumerate(inferred[: len(op.results)]):
        result = op.results[i]
        new_type = refined_type(op, i, result.type, want)
        if new_type != result.type:
            Rewriter.replace_value_with_new_type(result, new_type)
            changed += 1
    return changed


def update_signature(fn: func.FuncOp) -> None:
    """The function's result types: what its `func.return` returns."""
    returns = [b.last_op for b in fn.body.blocks if isinstance(b.last_op, func.ReturnOp)]
    if not returns:
        return
    types = list(returns[0].arguments.types)
    if any(list(r.arguments.types) != types for r in returns[1:]):
        return  # blocks disagree: leave the signature to the verifier
    if tuple(types) != fn.function_type.outputs.data:
        fn.function_type = FunctionType.from_lists(list(fn.function_type.inputs.data), types)
