"""Training state and its updates: GE's Variable and the optimizer update ops.

- `ge.variable` (GE's Variable) reads the current value of a piece of device-resident state (a
  parameter or an optimizer slot) by key. Like `ge.constant` it stays outside tasks (device memory
  the loader fills), but it is no constant: the value changes between training steps, so it
  declares a memory read and folding, cse and merge-constants leave it alone.

      %w = ge.variable "fc1.weight" : tensor<4x5xf32>

- `ge.apply_gradient_descent`, `ge.apply_momentum`, `ge.apply_adam`, `ge.apply_adagrad` (GE's
  ApplyGradientDescent, ApplyMomentum, ApplyAdam, ApplyAdagrad / ApplyAdagradV2) compute the new
  state values from the current ones and a gradient. They are pure: the write back into the
  variables (GE's Assign) is the step's outputs marked `ge.state = "<key>"` (passes/apply_optimizer.py).
  Hyper-parameters are float properties.

- `ge.all_finite` and `ge.loss_scale_update` are dynamic loss scaling (passes/loss_scale.py): GE's
  NPUClearFloatStatus / NPUGetFloatStatus overflow check as a value (true when every gradient is
  finite), and the scale's update from it (the loss-scale manager's rule).
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, TensorType, f32, i1
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def, var_operand_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import EffectInstance, MemoryEffect, MemoryEffectKind, Pure
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.ge.base import FloatProp, GeOp, InferArgs, IntProp, describe
from ge.ge_dialects.ge.facts import Engine, RunsOn, Transcendental
from ge.ge_dialects.ge.types import FLOAT_TYPES, numpy_dtype, shape_of, tensor


class ReadsState(MemoryEffect):
    """A variable reads state a previous step wrote: two reads of one key are one value within a
    step, but no pass may treat the value as a compile-time constant."""

    @classmethod
    def get_effects(cls, op) -> set[EffectInstance]:
        return {EffectInstance(MemoryEffectKind.READ)}


@irdl_op_definition
class VariableOp(GeOp):
    """GE's Variable: the current value of the state named `key` (a parameter or an optimizer slot)."""

    name = "ge.variable"
    NO_GRADIENT: ClassVar = "training state and its update come after the gradients"
    PRECISION: ClassVar = "keep"  # training state keeps its dtype (f32 master weights) under every mode

    key = prop_def(StringAttr)
    output = result_def(TensorType)

    traits = traits_def(ReadsState(), RunsOn(Engine.NONE))

    @staticmethod
    def of(key: str, result_type: TensorType) -> VariableOp:
        return VariableOp.build(properties={"key": StringAttr(key)}, result_types=[result_type])

    @property
    def state_key(self) -> str:
        return self.key.data

    def verify_(self) -> None:
        t = self.output.type
        if not isinstance(t, TensorType):
            raise VerifyException(f"{describe(self)}: result must be a tensor, got {t}")
        numpy_dtype(t.element_type)
        if not self.key.data:
            raise VerifyException(f"{describe(self)}: the state key is empty")
        if any(d is None for d in shape_of(t)):
            raise VerifyException(f"{describe(self)}: a variable must have a static shape, got {t}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.key.data)
        printer.print_string(" : ")
        printer.print_attribute(self.output.type)

    @classmethod
    def parse(cls, parser: Parser) -> VariableOp:
        key = parser.parse_optional_str_literal()
        if key is None:
            parser.raise_error('ge.variable expects its state key as a string: ge.variable "key" : tensor<...>')
        parser.parse_punctuation(":")
        result_type = parser.parse_type()
        return cls.build(properties={"key": StringAttr(key)}, result_types=[result_type])


# -- update ops ----------------------------------------------------------------------------------


def _same_types(a: InferArgs, *names: str) -> TensorType:
    """The state and gradient operands share one float tensor type (the var's)."""
    var = a.type(names[0])
    a.expect_dtype(names[0], FLOAT_TYPES)
    for name in names[1:]:
        t = a.type(name)
        if t != var:
            raise a.fail(f"operand '{name}' has type {t}, '{names[0]}' has {var}; they must be equal")
    return var


def _check_range(a: InferArgs, name: str, low: float, high: float | None = None, open_low: bool = False) -> None:
    value = a.prop(name)
    bad = value < low or (open_low and value == low) or (high is not None and value >= high)
    if bad:
        bound = f"> {low}" if open_low else f">= {low}"
        if high is not None:
            bound = f"in [{low}, {high})"
        raise a.fail(f"{name} = {value} must be {bound}")


def _check_flag(a: InferArgs, name: str) -> None:
    if a.prop(name) not in (0, 1):
        raise a.fail(f"{name} = {a.prop(name)} must be 0 or 1")


@irdl_op_definition
class ApplyGradientDescentOp(GeOp):
    """GE's ApplyGradientDescent: var' = var - alpha * grad."""

    name = "ge.apply_gradient_descent"
    NO_GRADIENT: ClassVar = "training state and its update come after the gradients"
    PRECISION: ClassVar = "keep"  # the optimizer's state keeps its dtype under every mode
    var = operand_def(TensorType)
    grad = operand_def(TensorType)
    var_out = result_def(TensorType)
    alpha = opt_prop_def(FloatProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    DEFAULTS: ClassVar = {"alpha": 0.01}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        t = _same_types(a, "var", "grad")
        _check_range(a, "alpha", 0.0)
        return [t]


@irdl_op_definition
class ApplyMomentumOp(GeOp):
    """GE's ApplyMomentum: accum' = momentum * accum + grad; var' = var - lr * accum', or with
    use_nesterov var' = var - lr * grad - lr * momentum * accum'."""

    name = "ge.apply_momentum"
    NO_GRADIENT: ClassVar = "training state and its update come after the gradients"
    PRECISION: ClassVar = "keep"  # the optimizer's state keeps its dtype under every mode
    var = operand_def(TensorType)
    accum = operand_def(TensorType)
    grad = operand_def(TensorType)
    var_out = result_def(TensorType)
    accum_out = result_def(TensorType)
    lr = opt_prop_def(FloatProp)
    momentum = opt_prop_def(FloatProp)
    use_nesterov = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    DEFAULTS: ClassVar = {"lr": 0.01, "momentum": 0.9, "use_nesterov": 0}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        t = _same_types(a, "var", "accum", "grad")
        _check_range(a, "lr", 0.0)
        _check_range(a, "momentum", 0.0, 1.0)
        _check_flag(a, "use_nesterov")
        return [t, t]


@irdl_op_definition
class ApplyAdamOp(GeOp):
    """GE's ApplyAdam with the step count t (1-based, this update's) as an f32 scalar:
    m' = b1 m + (1-b1) g, v' = b2 v + (1-b2) g^2, lr_t = lr sqrt(1-b2^t) / (1-b1^t),
    var' = var - lr_t m' / (sqrt(v') + eps). weight_decay with decoupled=1 is AdamW (var is first
    scaled by 1 - lr wd); with decoupled=0 it is L2 regularisation (g += wd var)."""

    name = "ge.apply_adam"
    NO_GRADIENT: ClassVar = "training state and its update come after the gradients"
    PRECISION: ClassVar = "keep"  # the optimizer's state keeps its dtype under every mode
    var = operand_def(TensorType)
    m = operand_def(TensorType)
    v = operand_def(TensorType)
    step = operand_def(TensorType)
    grad = operand_def(TensorType)
    var_out = result_def(TensorType)
    m_out = result_def(TensorType)
    v_out = result_def(TensorType)
    lr = opt_prop_def(FloatProp)
    beta1 = opt_prop_def(FloatProp)
    beta2 = opt_prop_def(FloatProp)
    epsilon = opt_prop_def(FloatProp)
    weight_decay = opt_prop_def(FloatProp)
    decoupled = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Transcendental())
    DEFAULTS: ClassVar = {
        "lr": 0.001,
        "beta1": 0.9,
        "beta2": 0.999,
        "epsilon": 1e-8,
        "weight_decay": 0.0,
        "decoupled": 0,
    }

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        t = _same_types(a, "var", "m", "v", "grad")
        step = a.type("step")
        if step != tensor(f32, ()):
            raise a.fail(f"operand 'step' must be a scalar tensor<f32>, got {step}")
        _check_range(a, "lr", 0.0)
        _check_range(a, "beta1", 0.0, 1.0)
        _check_range(a, "beta2", 0.0, 1.0)
        _check_range(a, "epsilon", 0.0, open_low=True)
        _check_range(a, "weight_decay", 0.0)
        _check_flag(a, "decoupled")
        return [t, t, t]


@irdl_op_definition
class ApplyAdagradOp(GeOp):
    """GE's ApplyAdagrad (ApplyAdagradV2 when epsilon > 0): accum' = accum + grad^2 (accum' = accum
    with update_slots = 0), var' = var - lr * grad / (sqrt(accum') + epsilon). ONNX's Adagrad
    (ai.onnx.preview.training) imports onto it: its decayed rate R / (1 + T decay) is `lr`."""

    name = "ge.apply_adagrad"
    NO_GRADIENT: ClassVar = "training state and its update come after the gradients"
    PRECISION: ClassVar = "keep"  # the optimizer's state keeps its dtype under every mode
    var = operand_def(TensorType)
    accum = operand_def(TensorType)
    grad = operand_def(TensorType)
    var_out = result_def(TensorType)
    accum_out = result_def(TensorType)
    lr = opt_prop_def(FloatProp)
    epsilon = opt_prop_def(FloatProp)
    update_slots = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR), Transcendental())
    DEFAULTS: ClassVar = {"lr": 0.01, "epsilon": 0.0, "update_slots": 1}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        t = _same_types(a, "var", "accum", "grad")
        _check_range(a, "lr", 0.0)
        _check_range(a, "epsilon", 0.0)
        _check_flag(a, "update_slots")
        return [t, t]


@irdl_op_definition
class AllFiniteOp(GeOp):
    """True (an i1 scalar) when every element of every operand is finite: GE's overflow check
    (NPUClearFloatStatus before the backward, NPUGetFloatStatus after it) as a value the step can
    select on, so that an overflowing step leaves the state as it was."""

    name = "ge.all_finite"
    NO_GRADIENT: ClassVar = "loss scaling's overflow check, after the gradients"
    PRECISION: ClassVar = "keep"  # dynamic loss scaling: a flag
    inputs = var_operand_def(TensorType)
    output = result_def(TensorType)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        values = a.values("inputs")
        if not values:
            raise a.fail("needs at least one operand")
        for i, v in enumerate(values):
            t = v.type
            if not isinstance(t, TensorType) or t.element_type not in FLOAT_TYPES:
                raise a.fail(f"operand #{i} must be a float tensor, got {t}")
        return [tensor(i1, ())]


@irdl_op_definition
class LossScaleUpdateOp(GeOp):
    """Dynamic loss scaling's update (GE's DynamicLossScaleUpdateCell, PyTorch's GradScaler rule):
    on a non-finite step scale' = scale * backoff_factor, good' = 0; else good' = good + 1, and when
    good' reaches growth_interval, scale' = scale * growth_factor (kept when that overflows f32) and
    good' = 0. The scale and the count of good steps are f32 scalars (state, as optimizer.step)."""

    name = "ge.loss_scale_update"
    NO_GRADIENT: ClassVar = "loss scaling's bookkeeping, after the gradients"
    PRECISION: ClassVar = "keep"  # dynamic loss scaling: f32 state
    scale = operand_def(TensorType)
    good_steps = operand_def(TensorType)
    finite = operand_def(TensorType)
    scale_out = result_def(TensorType)
    good_steps_out = result_def(TensorType)
    growth_interval = opt_prop_def(IntProp)
    growth_factor = opt_prop_def(FloatProp)
    backoff_factor = opt_prop_def(FloatProp)
    traits = traits_def(Pure(), RunsOn(Engine.VECTOR))
    DEFAULTS: ClassVar = {"growth_interval": 2000, "growth_factor": 2.0, "backoff_factor": 0.5}

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        scalar = tensor(f32, ())
        for name in ("scale", "good_steps"):
            if a.type(name) != scalar:
                raise a.fail(f"operand '{name}' must be a scalar tensor<f32>, got {a.type(name)}")
        if a.type("finite") != tensor(i1, ()):
            raise a.fail(f"operand 'finite' must be a scalar tensor<i1>, got {a.type('finite')}")
        if a.prop("growth_interval") < 1:
            raise a.fail(f"growth_interval = {a.prop('growth_interval')} must be >= 1")
        _check_range(a, "growth_factor", 1.0)
        backoff = a.prop("backoff_factor")
        if not 0 < backoff <= 1:
            raise a.fail(f"backoff_factor = {backoff} must be in (0, 1]")
        return [scalar, scalar]


OPTIMIZER_OPS: list[type[GeOp]] = [
    VariableOp,
    ApplyGradientDescentOp,
    ApplyMomentumOp,
    ApplyAdamOp,
    ApplyAdagradOp,
    AllFiniteOp,
    LossScaleUpdateOp,
]

__all__ = [
    "VariableOp",
    "ApplyGradientDescentOp",
    "ApplyMomentumOp",
    "ApplyAdamOp",
    "ApplyAdagradOp",
    "AllFiniteOp",
    "LossScaleUpdateOp",
    "OPTIMIZER_OPS",
]
