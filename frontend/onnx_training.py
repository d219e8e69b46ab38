"""Import of the ONNX training domain's update ops (ai.onnx.preview.training Momentum, Adam, Adagrad).

An ONNX update node is variadic: inputs R (learning rate), T (update count), then X1..Xn, G1..Gn and
each slot's S1..Sn; outputs X1_new..Xn_new, then each slot's S1_new..Sn_new. It becomes one ge
update op per optimized tensor (GE's ApplyMomentum / ApplyAdam / ApplyAdagrad), plus elementwise ge
ops only where ONNX's formula has a term GE's op lacks:

- Momentum: G_reg = norm_coefficient * X + G (ge.mul, ge.add) and beta's scaling of G_reg
  (ge.mul) before ge.apply_momentum; with mode=nesterov and a beta other than 1, ONNX's direct
  term is R * G_reg while GE's is lr * grad = R * beta * G_reg, so ge.sub adds R (1 - beta) G_reg.
- Adam: ge.apply_adam with decoupled=0 is ONNX's L2 norm_coefficient exactly; T = 0 (ONNX: no bias
  correction) runs it at step 1 with lr = R (1 - alpha) / sqrt(1 - beta), which cancels step 1's
  correction; norm_coefficient_post scales X_new afterwards (ge.mul).
- Adagrad: ONNX's decayed rate R / (1 + T decay_factor) is ge.apply_adagrad's lr; epsilon is
  ApplyAdagradV2's; norm_coefficient as for Momentum.

R and T must be constants (initializers or Constant nodes): the ge ops take the rate as a property
(and ONNX's T > 0 branches are decided at import), so a runtime R or T is refused in one line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import onnx
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import VerifyException

from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import ge
from ge.ge_dialects.ge.base import constant_value
from ge.ge_dialects.ge.types import numpy_dtype

if TYPE_CHECKING:
    from ge.frontend.onnx_importer import _Importer

TRAINING_DOMAIN = "ai.onnx.preview.training"
TRAINING_OPSET = 1

Operands = dict[str, SSAValue | Sequence[SSAValue] | None]


@dataclass
class _Node:
    """One update node being imported: its name, hyper-parameters and where its ops go."""

    importer: _Importer
    name: str
    op_type: str
    attrs: dict[str, Any]
    rate: float
    count: int

    def fail(self, reason: str) -> OnnxImportError:
        return OnnxImportError(f"node '{self.name}': {TRAINING_DOMAIN} {self.op_type}: {reason}")

    def emit(self, op_cls: type[ge.GeOp], operands: Operands, props: dict[str, Any] | None = None):
        try:
            op = op_cls.create(operands, props or {}, name=self.name)
        except VerifyException as e:
            raise self.fail(str(e)) from None
        self.importer.block.add_op(op)
        return op

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        dtype = numpy_dtype(like.type.element_type)  # type: ignore[attr-defined]
        return self.importer.constant(np.asarray(value, dtype=dtype), f"{self.name}/scalar")

    def scaled(self, x: SSAValue, factor: float) -> SSAValue:
        return self.emit(ge.MulOp, {"a": x, "b": self.scalar(factor, x)}).results[0]

    def regularized(self, x: SSAValue, g: SSAValue) -> SSAValue:
        """ONNX's G_reg = norm_coefficient * X + G (the gradient of 0.5 norm ||X||^2 added)."""
        norm = self.attrs["norm_coefficient"]
        if norm == 0:
            return g
        return self.emit(ge.AddOp, {"a": self.scaled(x, norm), "b": g}).results[0]


def _momentum(node: _Node, x: SSAValue, g: SSAValue, v: SSAValue) -> list[SSAValue]:
    beta = node.attrs["beta"] if node.count > 0 else 1.0  # ONNX: beta is 1 on the first update
    nesterov = node.attrs["mode"] == "nesterov"
    g_reg = node.regularized(x, g)
    grad = g_reg if beta == 1 else node.scaled(g_reg, beta)
    props = {"lr": node.rate, "momentum": node.attrs["alpha"], "use_nesterov": int(nesterov)}
    x_new, v_new = node.emit(ge.ApplyMomentumOp, {"var": x, "accum": v, "grad": grad}, props).results
    if nesterov and beta != 1:
        x_new = node.emit(ge.SubOp, {"a": x_new, "b": node.scaled(g_reg, node.rate * (1 - beta))}).results[0]
    return [x_new, v_new]


def _adam(node: _Node, x: SSAValue, g: SSAValue, v: SSAValue, h: SSAValue) -> list[SSAValue]:
    alpha, beta = node.attrs["alpha"], node.attrs["beta"]
    step, lr = float(node.count), node.rate
    if node.count == 0:  # ONNX: no bias correction; step 1's correction cancelled in lr
        step, lr = 1.0, node.rate * (1 - alpha) / float(np.sqrt(1 - beta))
    props = {
        "lr": lr,
        "beta1": alpha,
        "beta2": beta,
        "epsilon": node.attrs["epsilon"],
        "weight_decay": node.attrs["norm_coefficient"],
        "decoupled": 0,
    }
    step_value = node.importer.constant(np.asarray(step, dtype=np.float32), f"{node.name}/step")
    operands: Operands = {"var": x, "m": v, "v": h, "step": step_value, "grad": g}
    x_new, v_new, h_new = node.emit(ge.ApplyAdamOp, operands, props).results
    post = node.attrs["norm_coefficient_post"]
    if post != 0:
        x_new = node.scaled(x_new, 1 - post)
    return [x_new, v_new, h_new]


def _adagrad(node: _Node, x: SSAValue, g: SSAValue, h: SSAValue) -> list[SSAValue]:
    lr = node.rate / (1 + node.count * node.attrs["decay_factor"])
    props = {"lr": lr, "epsilon": node.attrs["epsilon"]}
    operands: Operands = {"var": x, "accum": h, "grad": node.regularized(x, g)}
    return list(node.emit(ge.ApplyAdagradOp, operands, props).results)


@dataclass(frozen=True)
class _Form:
    """An update operator: its per-tensor inputs after R and T (X, G, slots), its attributes with
    their ONNX defaults (None: required), the checks ge's op needs, and the import of one tensor."""

    inputs: int
    attributes: dict[str, Any]
    checks: tuple[tuple[str, Callable[[Any], bool], str], ...]
    one_tensor: Callable[..., list[SSAValue]]


_UNIT = (lambda a: 0 <= a < 1, "must be in [0, 1)")
_NON_NEGATIVE = (lambda a: a >= 0, "must be >= 0")

FORMS: dict[str, _Form] = {
    "Momentum": _Form(
        3,
        {"alpha": None, "beta": None, "mode": None, "norm_coefficient": None},
        (("alpha", *_UNIT), ("mode", lambda m: m in ("standard", "nesterov"), "must be 'standard' or 'nesterov'")),
        _momentum,
    ),
    "Adam": _Form(
        4,
        {"alpha": 0.9, "beta": 0.999, "epsilon": 1e-6, "norm_coefficient": 0.0, "norm_coefficient_post": 0.0},
        (
            ("alpha", *_UNIT),
            ("beta", *_UNIT),
            ("epsilon", lambda e: e > 0, "must be > 0"),
            ("norm_coefficient", *_NON_NEGATIVE),
        ),
        _adam,
    ),
    "Adagrad": _Form(
        3,
        {"decay_factor": 0.0, "epsilon": 1e-6, "norm_coefficient": 0.0},
        (("epsilon", *_NON_NEGATIVE), ("decay_factor", *_NON_NEGATIVE)),
        _adagrad,
    ),
}


def import_training_node(importer: _Importer, node: onnx.NodeProto, name: str) -> None:
    """Imports one ai.onnx.preview.training node into `importer`'s block and binds its outputs."""
    form = FORMS.get(node.op_type)
    if form is None:
        raise OnnxImportError(f"node '{name}': {TRAINING_DOMAIN} {node.op_type} is not supported")
    where = f"node '{name}': {TRAINING_DOMAIN} {node.op_type}"
    attrs = _attributes(importer, node, form, where)
    inputs = [_input(importer, node, i, where) for i in range(len(node.input))]
    count = (len(inputs) - 2) // form.inputs
    if len(inputs) < 2 + form.inputs or (len(inputs) - 2) % form.inputs:
        raise OnnxImportError(
            f"{where}: takes R, T and {form.inputs} inputs per optimized tensor, got {len(inputs)} inputs"
        )
    slots = form.inputs - 1  # X_new and each slot's new value per tensor
    if len(node.output) != slots * count:
        raise OnnxImportError(
            f"{where}: {count} optimized tensors need {slots * count} outputs, the node has {len(node.output)}"
        )
    rate = _constant_scalar(importer, inputs[0], node.input[0], "R", "f", where)
    step = _constant_scalar(importer, inputs[1], node.input[1], "T", "iu", where)
    if rate < 0:
        raise OnnxImportError(f"{where}: R = {rate} must be >= 0")
    if step < 0:
        raise OnnxImportError(f"{where}: T = {step} must be >= 0")
    state = _Node(importer, name, node.op_type, attrs, float(rate), int(step))
    for i in range(count):
        per_tensor = [inputs[2 + k * count + i] for k in range(form.inputs)]
        for k, value in enumerate(form.one_tensor(state, *per_tensor)):
            out = node.output[k * count + i]
            if out:
                importer.values[out] = value


def _attributes(importer: _Importer, node: onnx.NodeProto, form: _Form, where: str) -> dict[str, Any]:
    given = {a.name: importer.attribute_value(a, where) for a in node.attribute}
    unknown = sorted(set(given) - set(form.attributes))
    if unknown:
        raise OnnxImportError(f"{where}: unknown attribute '{unknown[0]}'")
    attrs = {**form.attributes, **given}
    missing = [k for k, v in attrs.items() if v is None]
    if missing:
        raise OnnxImportError(f"{where}: required attribute '{missing[0]}' is missing")
    for key, ok, why in form.checks:
        if not ok(attrs[key]):
            raise OnnxImportError(f"{where}: {key} = {attrs[key]!r} is not supported ({why})")
    return attrs


def _input(importer: _Importer, node: onnx.NodeProto, index: int, where: str) -> SSAValue:
    name = node.input[index]
    if not name:
        raise OnnxImportError(f"{where}: input #{index} is empty (every input is required)")
    if name not in importer.values:
        raise OnnxImportError(f"{where}: input #{index} '{name}' is not defined before the node")
    return importer.values[name]


def _constant_scalar(importer: _Importer, value: SSAValue, onnx_name: str, role: str, kinds: str, where: str):
    """The one value of a constant R or T, refused when it is computed at run time."""
    array = constant_value(value)
    owner = value.owner
    if array is None and isinstance(owner, ge.ConstantOp) and owner.weight_key in importer.weights:
        array = importer.weights[owner.weight_key]
    if array is None:
        raise OnnxImportError(
            f"{where}: {role} '{onnx_name}' must be a constant (an initializer or a Constant node), "
            "ge's update ops take it as a property"
        )
    if array.size != 1 or array.dtype.kind not in kinds:
        kind = "float" if kinds == "f" else "integer"
        raise OnnxImportError(
            f"{where}: {role} '{onnx_name}' must be one {kind} value, got {array.dtype} {list(array.shape)}"
        )
    return array.reshape(()).item()
