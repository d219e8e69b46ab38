"""xDSL interpreter functions for the ge dialect, and the interpreter compile-time folding uses.

`GeFunctions` is the dialect's one `InterpreterFunctions` class: the kernel families of
`interpreter/kernels/` (each an `InterpreterFunctions` with one `@impl` per op) plus `ge.constant`,
which reads inline values and the weights sidecar. ge-run registers it with the other dialects'
functions; folding passes build `folding_interpreter(module)` once per run and evaluate an op with
`ge.interpreter.run_op(op, operand_values)`, as xDSL's `constant_fold_interp` does.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import InterpretationError

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.ge.weights import ModuleWeights
from ge.ge_dialects.messages import one_line
from ge.interpreter.kernels import vouch_for
from ge.interpreter.kernels.attention import AttentionFunctions
from ge.interpreter.kernels.checked import KernelError, TensorTooLarge  # noqa: F401 (re-exported: what a run raises)
from ge.interpreter.kernels.col2im import Col2ImFunctions
from ge.interpreter.kernels.collective import CollectiveFunctions
from ge.interpreter.kernels.conv_grad import ConvGradFunctions
from ge.interpreter.kernels.conv_transpose import ConvTransposeFunctions
from ge.interpreter.kernels.custom import CustomFunctions
from ge.interpreter.kernels.deform_conv import DeformConvFunctions
from ge.interpreter.kernels.elementwise import ElementwiseFunctions
from ge.interpreter.kernels.grid_sample import GridSampleFunctions
from ge.interpreter.kernels.indexing import IndexingFunctions
from ge.interpreter.kernels.instance_norm import InstanceNormFunctions
from ge.interpreter.kernels.layout import LayoutFunctions
from ge.interpreter.kernels.linalg import LinalgFunctions
from ge.interpreter.kernels.loss import LossFunctions
from ge.interpreter.kernels.nn import NnFunctions
from ge.interpreter.kernels.norm_grad import NormGradFunctions
from ge.interpreter.kernels.optimizer import OptimizerFunctions
from ge.interpreter.kernels.pooling import PoolingFunctions
from ge.interpreter.kernels.quantize import QuantizeFunctions
from ge.interpreter.kernels.recurrent import RecurrentFunctions
from ge.interpreter.kernels.reductions import ReductionFunctions
from ge.interpreter.kernels.resize import ResizeFunctions
from ge.interpreter.kernels.tensor import TensorFunctions
from ge.interpreter.kernels.tensor_grad import TensorGradFunctions
from ge.interpreter.kernels.unary_math import UnaryMathFunctions

KERNEL_FAMILIES: tuple[type[InterpreterFunctions], ...] = (
    ElementwiseFunctions,
    UnaryMathFunctions,
    LinalgFunctions,
    QuantizeFunctions,
    NnFunctions,
    ConvTransposeFunctions,
    Col2ImFunctions,
    DeformConvFunctions,
    PoolingFunctions,
    InstanceNormFunctions,
    ConvGradFunctions,
    NormGradFunctions,
    TensorFunctions,
    TensorGradFunctions,
    ReductionFunctions,
    RecurrentFunctions,
    IndexingFunctions,
    AttentionFunctions,
    LayoutFunctions,
    ResizeFunctions,
    GridSampleFunctions,
    LossFunctions,
    OptimizerFunctions,
    CollectiveFunctions,
    CustomFunctions,
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


_IN_MEMORY = (dict, MappingProxyType)
_FROM_STORE = object()  # the source token of an array read from a store (a sidecar file's view)


def _source(weights: Mapping[str, np.ndarray], key: str) -> object:
    """What tells whether weight `key` may have changed since it was read, without reading it.

    An in-memory table (a dict, or what passes added to a module's weights) is looked up on every
    run and its array compared by identity: a training loop that stores a new array under the key
    is seen. Any other mapping is a store, a read-only view of a file (the sidecar): reading it
    costs a file read, and its contents do not change, so its arrays are read once."""
    if isinstance(weights, ModuleWeights):
        return weights.added[key] if key in weights.added else _source(weights.base, key)
    if isinstance(weights, _IN_MEMORY):
        return weights.get(key)
    return _FROM_STORE


class ConstantCache:
    """The values of a module's `ge.constant`s for one weights table, kept across runs.

    An entry is reused while the op still has the same `value` property (attributes are immutable,
    so a pass that changes a constant replaces it) and its weight's source is unchanged (see
    `_source`). Arrays the cache vouches for (inline values, reads from a store) may have prepared
    forms (`ge.interpreter.kernels.prepared`), which live as long as the array; kernels never write into a constant's
    array (`donated` refuses them)."""

    def __init__(self, weights: Mapping[str, np.ndarray]):
        self.weights = weights
        self._entries: weakref.WeakKeyDictionary[ge.ConstantOp, tuple[Attribute, object, np.ndarray]] = (
            weakref.WeakKeyDictionary()
        )

    def value(self, op: ge.ConstantOp) -> np.ndarray:
        attr = op.value
        key = op.weight_key
        source = None if key is None else _source(self.weights, key)
        entry = self._entries.get(op)
        if entry is not None and entry[0] is attr and entry[1] is source:
            return entry[2]
        if key is None:
            value = op.inline_value()
            assert value is not None  # the value property is inline or a weight reference
            owned = True
        else:
            try:
                value = np.asarray(self.weights[key])  # one read: a Mapping's `in` reads the value too
            except KeyError:
                raise InterpretationError(
                    one_line(f"{describe(op)}: weight '{key}' is not in the weights sidecar")
                ) from None
            owned = source is _FROM_STORE
        if owned:
            vouch_for(value)
        self._entries[op] = (attr, source, value)
        return value


@register_impls
class GeFunctions(*KERNEL_FAMILIES):  # type: ignore[misc]
    """Runs ge ops. `weights` resolves `#ge.weight<"key">` constants (the module's sidecar);
    `constants` keeps their values across runs (ge-run's runner keeps one per module)."""

    def __init__(self, weights: Mapping[str, np.ndarray] | None = None, constants: ConstantCache | None = None):
        self.weights = weights if weights is not None else {}
        self.constants = constants if constants is not None and constants.weights is self.weights else None
        if self.constants is None:
            self.constants = ConstantCache(self.weights)

    @impl(ge.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: ge.ConstantOp, args: tuple[Any, ...]):
        assert self.constants is not None
        return (self.constants.value(op),)


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
