"""Kernels of the training-state ops: `ge.variable` and the optimizer updates.

`ge.variable` reads the current value of its key from the same mapping `#ge.weight` constants
come from (`GeFunctions(weights)`); unlike a constant it is read afresh on every call, since the
state changes between steps, and handed out read-only, so no kernel writes its result into the
caller's state array (`donated` only takes arrays that own their memory).

The updates compute in the var's dtype (hyper-parameters and the step count cast to it), with GE's
formulas (ge_dialects/ge/optimizer.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.utils.exceptions import InterpretationError

from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import describe
from ge.ge_dialects.ge.layout import is_stored_logically, storage_shape
from ge.ge_dialects.ge.types import numpy_dtype, shape_of
from ge.ge_dialects.messages import one_line
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.layouts import to_physical


def read_state(op: ge.VariableOp, state: Mapping[str, np.ndarray]) -> np.ndarray:
    """The current value of `op`'s key, checked against its result type, as a read-only view."""
    key = op.state_key
    if key not in state:
        raise InterpretationError(one_line(f"{describe(op)}: state '{key}' is not in the weights sidecar"))
    value = np.asarray(state[key])
    t = op.output.type
    if not is_stored_logically(t) and value.shape == tuple(shape_of(t)):
        value = to_physical(value, t)  # state is logical; a variable's storage format is a device detail
    want_dtype, want_shape = numpy_dtype(t.element_type), tuple(storage_shape(t))  # held as stored
    if value.dtype != want_dtype or value.shape != want_shape:
        raise InterpretationError(
            one_line(f"{describe(op)}: state '{key}' holds {value.dtype} {list(value.shape)}, the variable is {t}")
        )
    view = value.view()
    view.flags.writeable = False
    return view


def _hyper(op: ge.GeOp, name: str, dtype: np.dtype) -> Any:
    return np.asarray(op.p(name), dtype=dtype)


def apply_gradient_descent(op: ge.ApplyGradientDescentOp, ins: dict[str, Any]) -> np.ndarray:
    var, grad = ins["var"], ins["grad"]
    return var - _hyper(op, "alpha", var.dtype) * grad


def apply_momentum(op: ge.ApplyMomentumOp, ins: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    var, accum, grad = ins["var"], ins["accum"], ins["grad"]
    lr, momentum = _hyper(op, "lr", var.dtype), _hyper(op, "momentum", var.dtype)
    accum_out = momentum * accum + grad
    step = lr * grad + lr * momentum * accum_out if op.p("use_nesterov") else lr * accum_out
    var_out = var - step
    return var_out, accum_out


def apply_adam(op: ge.ApplyAdamOp, ins: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    var, m, v, grad = ins["var"], ins["m"], ins["v"], ins["grad"]
    dtype = var.dtype
    lr, b1, b2 = (_hyper(op, n, dtype) for n in ("lr", "beta1", "beta2"))
    eps, decay = _hyper(op, "epsilon", dtype), _hyper(op, "weight_decay", dtype)
    one = np.asarray(1, dtype=dtype)
    t = np.asarray(ins["step"], dtype=dtype)
    if op.p("decoupled"):
        var = var * (one - lr * decay)  # AdamW: the decay does not pass through the moments
    else:
        grad = grad + decay * var  # L2 regularisation: the decay is part of the gradient
    m_out = b1 * m + (one - b1) * grad
    v_out = b2 * v + (one - b2) * grad * grad
    lr_t = lr * np.sqrt(one - b2**t) / (one - b1**t)
    var_out = var - lr_t * m_out / (np.sqrt(v_out) + eps)
    return var_out.astype(dtype), m_out.astype(dtype), v_out.astype(dtype)


def apply_adagrad(op: ge.ApplyAdagradOp, ins: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    var, accum, grad = ins["var"], ins["accum"], ins["grad"]
    dtype = var.dtype
    lr, eps = _hyper(op, "lr", dtype), _hyper(op, "epsilon", dtype)
    accum_out = accum + grad * grad if op.p("update_slots") else accum
    var_out = var - lr * grad / (np.sqrt(accum_out) + eps)
    return var_out.astype(dtype), accum_out.astype(dtype)


def all_finite(op: ge.AllFiniteOp, ins: dict[str, Any]) -> np.ndarray:
    return np.asarray(all(bool(np.isfinite(x).all()) for x in ins["inputs"]), dtype=np.bool_)


def loss_scale_update(op: ge.LossScaleUpdateOp, ins: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The loss-scale manager's rule in f32 (ge_dialects/ge/optimizer.py); a growth that would make
    the scale infinite keeps it, as PyTorch's GradScaler does."""
    scale, good = np.float32(ins["scale"]), np.float32(ins["good_steps"])
    if not bool(ins["finite"]):
        return np.asarray(scale * np.float32(op.p("backoff_factor"))), np.asarray(np.float32(0))
    good = good + np.float32(1)
    if good >= op.p("growth_interval"):
        with np.errstate(over="ignore"):
            grown = scale * np.float32(op.p("growth_factor"))
        return np.asarray(grown if np.isfinite(grown) else scale), np.asarray(np.float32(0))
    return np.asarray(scale), np.asarray(good)


@register_impls
class OptimizerFunctions(InterpreterFunctions):
    """The interpreter implementations of the training-state ops. `ge.variable` reads `self.weights`,
    which `GeFunctions` (the class this family is combined into) holds."""

    weights: Mapping[str, np.ndarray]

    @impl(ge.VariableOp)
    def run_variable(self, interpreter: Interpreter, op: ge.VariableOp, args: tuple[Any, ...]):
        return (read_state(op, getattr(self, "weights", {})),)

    run_apply_gradient_descent = impl(ge.ApplyGradientDescentOp)(kernel_impl(apply_gradient_descent))
    run_apply_momentum = impl(ge.ApplyMomentumOp)(kernel_impl(apply_momentum))
    run_apply_adam = impl(ge.ApplyAdamOp)(kernel_impl(apply_adam))
    run_apply_adagrad = impl(ge.ApplyAdagradOp)(kernel_impl(apply_adagrad))
    run_all_finite = impl(ge.AllFiniteOp)(kernel_impl(all_finite))
    run_loss_scale_update = impl(ge.LossScaleUpdateOp)(kernel_impl(loss_scale_update))
