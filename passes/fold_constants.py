"""fold-constants: evaluates ge ops whose operands are all constants, with the interpreter's kernels.

An op whose operands are all `ge.constant`s (inline or sidecar weights) is evaluated by the
interpreter (`ge.interpreter.ge.folding_interpreter`, built once per run: `run_op` on the operand
values, the kernel and checks ge-run uses, as xDSL's `constant_fold_interp` does) and replaced by
one constant per result; `ge.shape` of a tensor whose (selected) dims are static, and `ge.size` of
one whose dims all are, become constants whatever the tensor's value, so whole shape subgraphs
fold. The new constants keep the folded op's location (its ONNX node name); small ones stay
inline, larger ones become new sidecar weights. They are literals, never parameters, also when an
operand was one (`ge.constant parameter`): a folded value is not a parameter's, and training does
not reach through it. Training folds after apply-optimizer, where the trained parameters are
variables, which folding leaves alone.

Folding never blows the model up:

- size guard: no folded result may have more than `max-elements` elements;
- growth guard: the results may not have more elements than the constant operands together
  times `growth-factor` (Expand / ConstantOfShape / broadcasting of a small constant into a big
  tensor stays an op). Results small enough to stay inline (<= 32 elements) are always allowed.

Never folded: ops that are not `Pure`, ops without a kernel, random ops (training-mode
`ge.dropout` with a nonzero ratio), ops whose result ONNX leaves undefined (integer division by
zero: kept as an op, not an error), and results whose folded (static) type a non-ge user such as
`func.return` would not accept. Each refusal of an otherwise foldable op is a `rejected` remark
that names the op and the reason (with the sizes for the guards).

Only the declared refusals become remarks: a shape function's verifier error on the operands'
values (`CANNOT_INFER`), a kernel's `KernelError` (`CANNOT_EVALUATE`). Any other exception raised
while evaluating an op is a compiler bug and stops the pass as a `PassInternalError` naming the op.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import GeOp, InferArgs, describe, location_name
from ge.ge_dialects.ge.layout import LayoutError
from ge.ge_dialects.ge.tensor_ops import ShapeError, shape_range
from ge.ge_dialects.ge.types import Shape, element_type_of, format_of, numpy_dtype, shape_of, tensor
from ge.ge_dialects.ge.weights import constant_array, make_constant
from ge.interpreter.ge import KernelError, can_evaluate, folding_interpreter
from ge.passes import remarks
from ge.passes.pipeline import PassInternalError
from ge.passes.tensor_values import tensor_type

PASS = "fold-constants"

CANNOT_INFER: tuple[type[Exception], ...] = (DiagnosticException, ShapeError, LayoutError)
"""What a shape function raises when the op's operands (here with the weights' values, which the
verifier does not read) break one of its rules: the op is not folded, and a `rejected` remark says why."""

CANNOT_EVALUATE: tuple[type[Exception], ...] = (KernelError,)
"""What a kernel run raises when these values cannot be evaluated (an index out of range, a result
over the tensor-size limit: `TensorTooLarge` is a KernelError): a `rejected` remark. Any other
exception from a shape function or a kernel is a compiler bug, a `PassInternalError` naming the op
(the tools' internal error, exit code 2), never a remark: a broken kernel must not look like an op
that was merely not folded."""


class ConstantInferArgs(InferArgs):
    """InferArgs that also see the values of sidecar weight constants (not only inline ones)."""

    def const(self, name: str) -> np.ndarray | None:
        v = self.value(name)
        return None if v is None else constant_array(v)

    @staticmethod
    def of(op: GeOp) -> ConstantInferArgs:
        operands = {name: getattr(op, name) for name, _ in op.get_irdl_definition().operands}
        return ConstantInferArgs(type(op), operands, dict(op.properties), len(op.results), describe(op))


def is_random(op: Operation) -> bool:
    """Ops whose results are drawn at random: training-mode dropout with a nonzero ratio."""
    return isinstance(op, ge.DropoutOp) and not op.is_identity()


def undefined_result(op: Operation, values) -> str | None:
    """Why evaluating `op` on these constant operand values would make up a result ONNX leaves
    undefined (integer division by zero), or None. Such an op stays unfolded: it is not an error
    in the model unless it runs."""
    if isinstance(op, ge.DivOp) and len(values) == 2:
        a, b = (np.asarray(v) for v in values)
        if a.dtype.kind in "iub" and b.dtype.kind in "iub" and not np.all(b):
            return f"{describe(op)} divides integers by zero (undefined)"
    return None


def _elements(shape: Shape) -> int:
    return math.prod(shape)  # type: ignore[arg-type]


def _static_dims(op: ge.ShapeOp) -> np.ndarray | None:
    """The value of `ge.shape` when the dims it selects are static, else None."""
    dims = shape_of(tensor_type(op.data))
    start, end = shape_range(len(dims), op.p("start"), op.p("end"))
    selected = dims[start:end]
    if any(d is None for d in selected):
        return None
    return np.asarray(selected, dtype=np.int64)


def _integer_zeros(op: ge.MulOp) -> np.ndarray | None:
    """An integer product of a static shape with a factor that is a zero constant: zeros, whatever
    the other factor holds (a dynamic export's zeros_like, input_ids * 0). A float product is not:
    NaN and infinity times 0 are NaN."""
    t = tensor_type(op.results[0])
    dims = shape_of(t)
    dtype = numpy_dtype(t.element_type)
    if dtype.kind not in "iu" or None in dims:
        return None
    for factor in op.operands:
        value = constant_array(factor) if isinstance(factor.owner, ge.ConstantOp) else None
        if value is not None and value.size and not value.any():
            return np.zeros([d for d in dims if d is not None], dtype)
    return None


@dataclass(frozen=True)
class FoldConstantsPass(ModulePass):
    """Replaces ge ops computable at compile time by constants (see the module docstring)."""

    name = "fold-constants"

    max_elements: int = 1 << 20
    """Largest folded result, in elements."""

    growth_factor: float = 2.0
    """Results may hold at most this many times the elements of the constant operands."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        interpreter = folding_interpreter(op)
        for candidate in list(op.walk()):
            if candidate.parent is None or not isinstance(candidate, GeOp):
                continue  # erased earlier in the sweep, or not a ge op
            self.fold(op, candidate, interpreter)

    def fold(self, module: ModuleOp, op: GeOp, interpreter: Interpreter) -> bool:
        """Replaces `op` by constants if it is computable now (`interpreter`: `folding_interpreter`
        of `module`); whether it did."""
        if isinstance(op, ge.ConstantOp):
            return False
        values = self._evaluate(op, interpreter)
        if values is None:
            return False
        self._replace(module, op, values)
        return True

    # -- deciding and evaluating ------------------------------------------------------------------
    def _reject(self, op: Operation, rule: str, reason: str) -> None:
        remarks.emit(PASS, "rejected", rule, [op], reason)

    def _evaluate(self, op: GeOp, interpreter: Interpreter) -> list[np.ndarray] | None:
        if isinstance(op, ge.ShapeOp):
            dims = _static_dims(op)
            if dims is not None:
                return [dims]
        if isinstance(op, ge.SizeOp) and (count := op.static_size()) is not None:
            return [np.asarray(count, dtype=np.int64)]  # like ge.shape: whatever the tensor holds
        if isinstance(op, ge.MulOp) and (zeros := _integer_zeros(op)) is not None:
            return [zeros]  # like ge.shape: whatever the other factor holds
        if not op.operands or not all(isinstance(v.owner, ge.ConstantOp) for v in op.operands):
            return None
        operand_values = [constant_array(v) for v in op.operands]  # loads weights: only now
        if any(v is None for v in operand_values):
            return None  # a weight whose sidecar is not attached
        if is_random(op):
            self._reject(op, "fold", f"{describe(op)} is random (training-mode dropout)")
            return None
        if not is_side_effect_free(op):
            self._reject(op, "fold", f"{describe(op)} is not pure (it may have side effects)")
            return None
        if not can_evaluate(op):
            self._reject(op, "fold", f"{describe(op)} has no kernel to evaluate it with")
            return None
        undefined = undefined_result(op, operand_values)
        if undefined is not None:
            self._reject(op, "fold", undefined)
            return None
        try:
            types = type(op).infer(ConstantInferArgs.of(op))[: len(op.results)]
        except CANNOT_INFER as e:  # the weights' values break a shape rule: the verifier would say so at run time
            self._reject(op, "fold", f"{describe(op)}: shape function failed: {e}")
            return None
        except Exception as e:  # any other exception is a bug in the shape function
            raise PassInternalError(PASS, f"the shape function of {describe(op)}", e) from e
        shapes = [shape_of(t) for t in types]
        if any(d is None for s in shapes for d in s):
            self._reject(op, "fold", f"{describe(op)}: result shape unknown before evaluation")
            return None
        sizes = [_elements(s) for s in shapes]
        biggest = max(sizes, default=0)
        if biggest > self.max_elements:
            self._reject(
                op,
                "size-guard",
                f"{describe(op)}: result of {biggest} elements exceeds max-elements={self.max_elements}",
            )
            return None
        total = sum(sizes)
        operand_elements = sum(int(np.asarray(v).size) for v in operand_values)
        if total > ge.ConstantOp.INLINE_LIMIT and total > self.growth_factor * operand_elements:
            self._reject(
                op,
                "growth-guard",
                f"{describe(op)}: results of {total} elements from constant operands of "
                f"{operand_elements} elements (more than growth-factor={self.growth_factor:g} times)",
            )
            return None
        try:
            with np.errstate(all="ignore"):
                results = interpreter.run_op(op, tuple(np.asarray(v) for v in operand_values))
        except CANNOT_EVALUATE as e:  # a kernel refusal at compile time stays a runtime matter
            reason = str(e).removeprefix(f"{describe(op)}: ")  # kernel errors already name the op
            self._reject(op, "fold", f"{describe(op)}: evaluation failed: {reason}")
            return None
        except Exception as e:  # any other exception is a bug in the kernel (see CANNOT_EVALUATE)
            raise PassInternalError(PASS, f"the kernel of {describe(op)}", e) from e
        return [np.asarray(r) for r in results]

    # -- rewriting ------------------------------------------------------------------------------
    def _replace(self, module: ModuleOp, op: GeOp, values: list[np.ndarray]) -> None:
        name = location_name(op) or op.name
        plans: list[tuple[bool, TensorType]] = []  # (as a weight, result type) per result
        for i, (result, value) in enumerate(zip(op.results, values)):
            plan = self._plan(result, value)
            if plan is None:
                self._reject(
                    op,
                    "fold",
                    f"{describe(op)}: result #{i} of type {result.type} feeds a non-ge op "
                    f"that would not accept the folded type {_plain_type(value)}",
                )
                return
            plans.append(plan)
        made: list[ge.ConstantOp] = []
        for i, (value, (as_weight, t)) in enumerate(zip(values, plans)):
            hint = name if len(op.results) == 1 else f"{name}:{i}"
            const = make_constant(module, value, hint, inline_limit=-1 if as_weight else None)
            if const.weight_key is not None:
                const = ge.ConstantOp.weight(const.weight_key, t)
            const.location = op.location
            made.append(const)
            Rewriter.insert_op(const, InsertPoint.before(op))
        operands = [v.owner for v in op.operands]
        for result, const in zip(op.results, made):
            result.replace_all_uses_with(const.output)
        elements = sum(int(v.size) for v in values)
        remarks.emit(PASS, "applied", "fold", [op], f"{describe(op)} folded into a constant of {elements} elements")
        Rewriter.erase_op(op)
        for owner in operands:  # constants only this op used are dead now
            if isinstance(owner, ge.ConstantOp) and owner.parent is not None and not owner.output.uses:
                Rewriter.erase_op(owner)

    @staticmethod
    def _plan(result: SSAValue, value: np.ndarray) -> tuple[bool, TensorType] | None:
        """How a folded result becomes a constant: (as a weight?, its type), or None if it cannot.

        The array is what the interpreter holds for the value: for a type with a storage format
        other than its origin format that may be the stored (physical) layout, so such a result
        becomes a weight of exactly the result's type. Otherwise small arrays go inline (a
        builtin dense value has no format) and large ones become weights; a weight keeps the
        result's type (and format) when that is static. Users that need the exact type (e.g.
        `func.return`) get it, or the result is not folded."""
        t = tensor_type(result)  # a result of a ge op
        static = _static(t)
        if not _stored_logically(t):
            return (True, t) if static else None
        plain = _plain_type(value)
        if value.size <= ge.ConstantOp.INLINE_LIMIT:
            if plain == t or not _needs_exact_type(result):
                return False, plain
            return (True, t) if static else None  # only the format differs: a small weight keeps it
        if static:
            return True, t
        return None if _needs_exact_type(result) else (True, plain)


def _plain_type(value: np.ndarray) -> TensorType:
    return tensor(element_type_of(value.dtype), value.shape)


def _stored_logically(t) -> bool:
    """Values of this type are surely held in logical order (no storage format of their own)."""
    fmt = format_of(t)
    return fmt is None or fmt.storage == fmt.origin


def _static(t) -> bool:
    return isinstance(t, TensorType) and all(d is not None for d in shape_of(t))


def _needs_exact_type(value: SSAValue) -> bool:
    """Whether a user of `value` requires its exact type (anything but a ge op, e.g. func.return;
    ge ops accept any compatible, more precise operand type)."""
    return any(not isinstance(use.operation, GeOp) for use in value.uses)
