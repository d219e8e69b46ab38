"""xDSL interpreter functions for the ge dialect, and the interpreter compile-time folding uses.

`GeFunctions` is the dialect's one `InterpreterFunctions` class: the kernel families of
`interpreter/kernels/` (each an `InterpreterFunctions` with one `@impl` per op) plus `ge.constant`,
which reads inline values and the weights sidecar. ge-run registers it with the other dialects'
functions; folding passes build `folding_interpreter(module)` once per run and evaluate an op with
`ge.interpreter.run_op(op, operand_values)`, as xDSL's `constant_fold_interp` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation
from xdsl.utils.exceptions import InterpretationError

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.messages import one_line
from ge.interpreter.kernels.attention import AttentionFunctions
from ge.interpreter.kernels.checked import KernelError, TensorTooLarge  # noqa: F401 (re-exported: what a run raises)
from ge.interpreter.kernels.conv_grad import ConvGradFunctions
from ge.interpreter.kernels.elementwise import ElementwiseFunctions
from ge.interpreter.kernels.layout import LayoutFunctions
from ge.interpreter.kernels.loss import LossFunctions
from ge.interpreter.kernels.nn import NnFunctions
from ge.interpreter.kernels.norm_grad import NormGradFunctions
from ge.interpreter.kernels.optimizer import OptimizerFunctions
from ge.interpreter.kernels.resize import ResizeFunctions
from ge.interpreter.kernels.tensor import TensorFunctions
from ge.interpreter.kernels.tensor_grad import TensorGradFunctions

KERNEL_FAMILIES: tuple[type[InterpreterFunctions], ...] = (
    ElementwiseFunctions,
    NnFunctions,
    ConvGradFunctions,
    NormGradFunctions,
    TensorFunctions,
    TensorGradFunctions,
    AttentionFunctions,
    LayoutFunctions,
    ResizeFunctions,
    LossFunctions,
    OptimizerFunctions,
)


def op_types(functions: type[InterpreterFunctions]) -> frozenset[type[Operation]]:
    """The op classes `functions` implements (xDSL keeps them on the class, by `@register_impls`)."""
    return frozenset(op_type for op_type, _ in functions._impls())


def check_one_kernel_each(families: tuple[type[InterpreterFunctions], ...]) -> None:
    """Refuses two families that implement the same op: combined into one class, one would silently
    shadow the other."""
    seen: dict[type[Operation], str] = {}
    for family in families:
        for op_type in op_types(family):
            if op_type in seen:
                raise ValueError(f"{op_type.name} has two kernels ({seen[op_type]} and {family.__name__})")
            seen[op_type] = family.__name__


check_one_kernel_each(KERNEL_FAMILIES)


@register_impls
class GeFunctions(*KERNEL_FAMILIES):  # type: ignore[misc]
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
                assert key is not None  # the value property is inline or a weight reference
                if key not in self.weights:
                    raise InterpretationError(one_line(f"{describe(op)}: weight '{key}' is not in the weights sidecar"))
                value = np.asarray(self.weights[key])
            self._constants[op] = value
        return (value,)


def folding_interpreter(module: ModuleOp | None = None) -> Interpreter:
    """An interpreter that evaluates single ge ops (`run_op`) for compile-time folding: the same
    kernels and checks (tensor-size limit, result types) as a run. Built once per pass run."""
    interpreter = Interpreter(module if module is not None else ModuleOp([]))
    interpreter.register_implementations(GeFunctions())
    return interpreter


def can_evaluate(op: Operation) -> bool:
    """Whether the ge functions implement `op` (folding asks before evaluating)."""
    return type(op) in _implemented(GeFunctions)


@cache
def _implemented(functions: type[InterpreterFunctions]) -> frozenset[type[Operation]]:
    return op_types(functions)
