"""xDSL interpreter functions for the ge dialect: each op runs its numpy kernel."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.irdl import OptOperandDef, VarOperandDef
from xdsl.utils.exceptions import InterpretationError

from ge.ge_dialects.messages import one_line
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import constant_value, describe
from ge.ge_dialects.ge.layout import LayoutError, is_stored_logically, storage_shape
from ge.ge_dialects.ge.tensor_ops import ShapeError
from ge.ge_dialects.ge.types import numpy_dtype, shape_of
from ge.interpreter.kernels import AllocationError, DataError, check_alloc, load_all
from ge.interpreter.layouts import constant_to_logical, matches_storage, to_logical, to_physical


class KernelError(Exception):
    """A kernel failed or produced a value that contradicts the op's result type. The message is kept
    to one line whatever the op's node name (a model's) holds."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


class TensorTooLarge(KernelError):
    """An op's result would have a negative dimension or more bytes than the kernels' limit
    (`ge.interpreter.kernels.check_alloc`): the input's sizes ask for it, so the user is told."""


def _check_static_results(op: ge.GeOp) -> None:
    """Refuses results whose static type is already too large, before the kernel allocates them;
    results with unknown dims are checked by their kernels (`check_alloc`) and afterwards here."""
    for result in op.results:
        dims = shape_of(result.type)
        if all(d is not None for d in dims):
            check_alloc(dims, numpy_dtype(result.type.element_type))


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


def run_kernel(op: ge.GeOp, values: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
    """Runs `op`'s kernel on operand values and checks results against the op's result types.

    Values are held as stored: a value whose type has a non-trivial storage format (e.g.
    `#ge.fmt<NCHW, NC1HWC0>`) is its physical array. Kernels compute on logical arrays, so the
    operands of such an op are converted to logical first and its results back to their storage
    formats; `ge.trans_data` (OPERATES_ON_STORAGE) gets the stored arrays themselves."""
    fn = load_all().get(type(op))
    if fn is None:
        raise KernelError(f"{describe(op)}: no kernel for {op.name}")
    on_storage = getattr(type(op), "OPERATES_ON_STORAGE", False)
    relayout = not on_storage and not all(map(is_stored_logically, (*op.operand_types, *op.result_types)))
    try:
        if relayout:
            values = tuple(_logical(v, operand) for v, operand in zip(values, op.operands))
        _check_static_results(op)
        out = fn(op, operand_groups(op, values))
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
        raise KernelError(f"{describe(op)}: operand shapes {shapes} do not fit together at run time, "
                          f"in dims the graph leaves unknown ({reason})") from None
    results = out if isinstance(out, tuple) else (out,)
    results = results[: len(op.results)]
    held = []
    for i, (value, result) in enumerate(zip(results, op.results)):
        want_dtype = numpy_dtype(result.type.element_type)
        if not isinstance(value, np.ndarray):
            value = np.asarray(value)
        try:
            check_alloc(value.shape, value.dtype)  # a kernel that did not check before allocating
        except AllocationError as e:
            raise TensorTooLarge(f"{describe(op)}: result #{i}: {e}") from None
        if value.dtype != want_dtype:
            raise KernelError(f"{describe(op)}: result #{i} is {value.dtype}, type says {want_dtype}")
        want = storage_shape(result.type) if on_storage else shape_of(result.type)
        if len(want) != value.ndim or any(w is not None and w != d for w, d in zip(want, value.shape)):
            raise KernelError(f"{describe(op)}: result #{i} has shape {value.shape}, type says {result.type}")
        if relayout and not is_stored_logically(result.type):
            try:
                value = to_physical(value, result.type)
            except LayoutError as e:
                raise KernelError(f"{describe(op)}: result #{i}: {e}") from None
            if not matches_storage(value, result.type):
                raise KernelError(f"{describe(op)}: result #{i} is stored with shape {value.shape}, "
                                  f"{result.type} is stored as {list(storage_shape(result.type))}")
        held.append(value)
    return tuple(held)


def _has_unknown_dims(op: ge.GeOp) -> bool:
    """Whether the verifier could not check all of `op`'s shapes: some operand or result dim is `?`."""
    return any(isinstance(t, TensorType) and None in shape_of(t) for t in (*op.operand_types, *op.result_types))


def _has_unseen_integer_operands(op: ge.GeOp) -> bool:
    """Whether an integer operand (where shapes, axes and sizes come from) holds a value the verifier
    could not see: a graph input, a computed tensor, or a block argument of a lowered kernel."""
    return any(isinstance(v.type, TensorType) and isinstance(v.type.element_type, IntegerType)
               and constant_value(v) is None for v in op.operands)


def _logical(value: np.ndarray, operand) -> np.ndarray:
    """The logical array of an operand value; a constant's is converted once, not on every run."""
    if isinstance(operand.owner, ge.ConstantOp):
        return constant_to_logical(value, operand.type)
    return to_logical(value, operand.type)


@register_impls
class GeFunctions(InterpreterFunctions):
    """Runs ge ops. `weights` resolves `#ge.weight<"key">` constants (the module's sidecar)."""

    def __init__(self, weights: Mapping[str, np.ndarray] | None = None):
        self.weights = weights if weights is not None else {}
        self._constants: dict[ge.ConstantOp, np.ndarray] = {}

    @impl(ge.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: ge.ConstantOp, args: tuple[Any, ...]):
        value = self._constants.get(op)
        if value is None:
            value = op.inline_value()
            if value is None:
                key = op.weight_key
                if key not in self.weights:
                    raise InterpretationError(one_line(f"{describe(op)}: weight '{key}' is not in the weights sidecar"))
                value = np.asarray(self.weights[key])
            self._constants[op] = value
        return (value,)


def _register_kernels() -> None:
    """Adds one `@impl` per op that has a numpy kernel (the registry is the source of truth)."""

    def run(self, interpreter: Interpreter, op: ge.GeOp, args: tuple[Any, ...]):
        return run_kernel(op, args)

    for op_type in load_all():
        setattr(GeFunctions, f"run_{op_type.name.replace('.', '_')}", impl(op_type)(run))
    register_impls(GeFunctions)


_register_kernels()
