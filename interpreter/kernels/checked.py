"""A numpy kernel run as an xDSL interpreter implementation, with the checks every ge op gets.

`kernel_impl(fn)` turns a kernel `fn(op, ins)` (see `ge.interpreter.kernels`) into the function
`@impl(OpClass)` registers: `(functions, interpreter, op, args) -> results`. Around the kernel it
converts operands held in a storage format to logical arrays (and results back), refuses results
over the tensor-size limit (`ge_dialects/limits.py`) before and after the kernel allocates them,
checks each result's dtype and shape against the op's result types, and turns the kernel's
refusals into one-line errors that name the op. The interpreter (ge-run) and compile-time folding
(`Interpreter.run_op`) both go through here, so a folded constant is what a run would compute.
"""

from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, Operation
from xdsl.irdl import OperandDef, OptOperandDef, VarOperandDef

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import constant_value, describe
from ge.ge_dialects.ge.facts import PreservesZero
from ge.ge_dialects.ge.layout import LayoutError, is_stored_logically, storage_shape
from ge.ge_dialects.ge.tensor_ops import ShapeError
from ge.ge_dialects.ge.types import numpy_dtype, shape_of
from ge.ge_dialects.limits import max_tensor_bytes
from ge.ge_dialects.messages import one_line
from ge.interpreter.kernels import AllocationError, DataError, Kernel, check_alloc
from ge.interpreter.layouts import constant_to_logical, matches_storage, to_logical, to_physical


class KernelError(Exception):
    """A kernel failed or produced a value that contradicts the op's result type. The message is kept
    to one line whatever the op's node name (a model's) holds."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


class TensorTooLarge(KernelError):
    """An op's result would have a negative dimension or more bytes than the kernels' limit
    (`ge.interpreter.kernels.check_alloc`): the input's sizes ask for it, so the user is told."""


def kernel_impl(fn: Kernel):
    """The interpreter implementation that runs numpy kernel `fn` with the checks above; a new
    function per call, so one kernel can serve several op classes (`@impl` marks the function)."""

    def run(functions: Any, interpreter: Any, op: ge.GeOp, args: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
        return run_checked(fn, op, args)

    run.__name__ = run.__qualname__ = f"run_{getattr(fn, '__name__', 'kernel')}"
    return run


LAYOUT_FREE: tuple[type[Operation], ...] = tuple(op for op in ge.ALL_OPS if op.has_trait(PreservesZero))
"""Elementwise ops with f(0, ..., 0) = 0 (`PreservesZero`). When every operand and result has the same type, they
compute on the stored arrays (blocked, padded: NC1HWC0, FRACTAL_NZ) what they compute on the logical
ones, element for element, and keep zero padding zero: so they run on the stored arrays, without the
two layout conversions per op (on ResNet-50 at O3, Relu and Add took 61 ms of a 315 ms run with the
conversions, 12 ms on the graph-fused module without layouts)."""


def _layout_free(op: Operation, types: tuple[Attribute, ...]) -> bool:
    return isinstance(op, LAYOUT_FREE) and all(t == types[0] for t in types)


class _Plan:
    """What `run_checked` works out from an op's types alone, kept per op while they stay the same
    objects (types are immutable attributes: a pass that changes one replaces it). Saves a dozen
    attribute walks per op and run (xDSL properties, type parameters, the operand definitions)."""

    __slots__ = ("types", "on_storage", "relayout", "names", "results", "static_bytes")

    def __init__(self, op: ge.GeOp, types: tuple[Attribute, ...]):
        self.types = types
        self.on_storage = getattr(type(op), "OPERATES_ON_STORAGE", False) or _layout_free(op, types)
        self.relayout = not self.on_storage and not all(map(is_stored_logically, types))
        defs = op.get_irdl_definition().operands
        # plain operands map by position; optional and variadic ones are grouped per run
        self.names = [name for name, _ in defs] if all(type(d) is OperandDef for _, d in defs) else None
        self.results = []
        self.static_bytes = 0
        for result in op.results:
            t = result.type
            assert isinstance(t, TensorType)  # every ge op result is a tensor
            dims = shape_of(t)
            dtype = numpy_dtype(t.element_type)
            want = storage_shape(t) if self.on_storage else dims
            known = [d for d in dims if d is not None]
            static = len(known) == len(dims)
            if static:
                self.static_bytes = max(self.static_bytes, math.prod(known) * dtype.itemsize)
            self.results.append((dtype, tuple(want), static and None not in want, is_stored_logically(t)))

    def check_static_results(self, op: ge.GeOp) -> None:
        """`_check_static_results`, skipped when the largest static result is within the limit."""
        if self.static_bytes > max_tensor_bytes():
            _check_static_results(op)


_PLANS: weakref.WeakKeyDictionary[Operation, _Plan] = weakref.WeakKeyDictionary()


def _plan(op: ge.GeOp) -> _Plan:
    types = (*op.operand_types, *op.result_types)
    plan = _PLANS.get(op)
    if plan is None or len(plan.types) != len(types) or not all(a is b for a, b in zip(plan.types, types)):
        plan = _PLANS[op] = _Plan(op, types)
    return plan


def operand_groups(op: ge.GeOp, values: tuple[Any, ...]) -> dict[str, Any]:
    """Maps the flat operand values onto the op's operand definitions by name."""
    groups: dict[str, Any] = {}
    it = iter(values)
    for name, d in op.get_irdl_definition().operands:
        present = getattr(op, name)
        if isinstance(d, OptOperandDef):
            groups[name] = next(it) if present is not None else None
        elif isinstance(d, VarOperandDef):
            groups[name] = [next(it) for _ in present]
        else:
            groups[name] = next(it)
    return groups


def run_checked(fn: Kernel, op: ge.GeOp, values: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
    """Runs kernel `fn` of `op` on operand values and checks results against the op's result types.

    Values are held as stored: a value whose type has a non-trivial storage format (e.g.
    `#ge.fmt<NCHW, NC1HWC0>`) is its physical array. Kernels compute on logical arrays, so the
    operands of such an op are converted to logical first and its results back to their storage
    formats; `ge.trans_data` (OPERATES_ON_STORAGE) gets the stored arrays themselves."""
    plan = _plan(op)
    out = _call(fn, op, values, plan)
    results = out if isinstance(out, tuple) else (out,)
    return tuple(
        _held(value, result, i, op, plan)
        for i, (value, result) in enumerate(zip(results[: len(op.results)], op.results))
    )


def _call(fn: Kernel, op: ge.GeOp, values: tuple[Any, ...], plan: _Plan) -> Any:
    """The kernel's raw output (on logical operands if the plan says to relayout); its refusals
    become KernelErrors unless they mean a compiler bug."""
    try:
        if plan.relayout:
            values = tuple(_logical(v, operand) for v, operand in zip(values, op.operands))
        plan.check_static_results(op)
        ins = dict(zip(plan.names, values)) if plan.names is not None else operand_groups(op, values)
        return fn(op, ins)
    except (LayoutError, DataError) as e:
        raise KernelError(f"{describe(op)}: {e}") from None
    except AllocationError as e:
        raise TensorTooLarge(f"{describe(op)}: {e}") from None
    except ShapeError as e:
        if not _has_unknown_dims(op) and not _has_unseen_integer_operands(op):
            raise  # the verifier saw every shape, axes and sizes value: a rule it let through is a compiler bug
        raise KernelError(f"{describe(op)}: {e}") from None
    except ValueError as e:
        if not _has_unknown_dims(op):
            raise  # the verifier checked a static op's shapes: a kernel refusing them is a compiler bug
        shapes = ", ".join(str(list(np.shape(v))) for v in values)
        reason = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise KernelError(
            f"{describe(op)}: operand shapes {shapes} do not fit together at run time, "
            f"in dims the graph leaves unknown ({reason})"
        ) from None


def _held(value: Any, result, i: int, op: ge.GeOp, plan: _Plan) -> np.ndarray:
    """Result #i as the interpreter holds it (stored), after checking it against its type."""
    want_dtype, want, static, logical = plan.results[i]
    if not isinstance(value, np.ndarray):
        value = np.asarray(value)
    if not (static and value.shape == want):  # a result of its static type's shape was checked before the run
        try:
            check_alloc(value.shape, value.dtype)  # a kernel that did not check before allocating
        except AllocationError as e:
            raise TensorTooLarge(f"{describe(op)}: result #{i}: {e}") from None
    if value.dtype != want_dtype and not (value.dtype == object and want_dtype.kind in "iu"):
        # an object array holds symbolic sizes (ge_dialects/ge/symbolic.py): the shape analysis
        # evaluates integer shape arithmetic on them with these same kernels
        raise KernelError(f"{describe(op)}: result #{i} is {value.dtype}, type says {want_dtype}")
    if len(want) != value.ndim or any(w is not None and w != d for w, d in zip(want, value.shape)):
        raise KernelError(f"{describe(op)}: result #{i} has shape {value.shape}, type says {result.type}")
    if plan.relayout and not logical:
        try:
            value = to_physical(value, result.type)
        except LayoutError as e:
            raise KernelError(f"{describe(op)}: result #{i}: {e}") from None
        if not matches_storage(value, result.type):
            raise KernelError(
                f"{describe(op)}: result #{i} is stored with shape {value.shape}, "
                f"{result.type} is stored as {list(storage_shape(result.type))}"
            )
    return value


def _check_static_results(op: ge.GeOp) -> None:
    """Refuses results whose static type is already too large, before the kernel allocates them;
    results with unknown dims are checked by their kernels (`check_alloc`) and afterwards here."""
    for result in op.results:
        t = result.type
        assert isinstance(t, TensorType)  # every ge op result is a tensor
        dims = shape_of(t)
        if all(d is not None for d in dims):
            check_alloc(dims, numpy_dtype(t.element_type))


def _has_unknown_dims(op: ge.GeOp) -> bool:
    """Whether the verifier could not check all of `op`'s shapes: some operand or result dim is `?`."""
    return any(isinstance(t, TensorType) and None in shape_of(t) for t in (*op.operand_types, *op.result_types))


def _has_unseen_integer_operands(op: ge.GeOp) -> bool:
    """Whether an integer operand (where shapes, axes and sizes come from) holds a value the verifier
    could not see: a graph input, a computed tensor, or a block argument of a lowered kernel."""
    return any(
        isinstance(v.type, TensorType) and isinstance(v.type.element_type, IntegerType) and constant_value(v) is None
        for v in op.operands
    )


def _logical(value: np.ndarray, operand) -> np.ndarray:
    """The logical array of an operand value; a constant's is converted once, not on every run."""
    if isinstance(operand.owner, ge.ConstantOp):
        return constant_to_logical(value, operand.type)
    return to_logical(value, operand.type)
