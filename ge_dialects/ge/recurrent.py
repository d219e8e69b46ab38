"""`ge.lstm`: an ONNX LSTM layer kept whole, GE's DynamicRNN (one AI Core kernel: the Cube's gate
products and the Vector's gate activations, step after step), and `ge.lstm_grad`, its gradient
(GE's DynamicRNNGrad).

    gates_t = X_t W^T + H_{t-1} R^T + Wb + Rb        (gate order i, o, f, c, as ONNX)
    C_t = sigmoid(f) * C_{t-1} + sigmoid(i) * tanh(c)
    H_t = sigmoid(o) * tanh(C_t)

- X: [S, B, I] (`layout` 0) or [B, S, I] (`layout` 1); W: [D, 4H, I]; R: [D, 4H, H]; B: [D, 8H]
  (Wb then Rb); sequence_lens: [B] (past a row's length its state is kept and Y is zero);
  initial_h / initial_c: [D, B, H] ([B, D, H] with `layout` 1), zeros when absent. D is 2 for a
  bidirectional layer (the reverse direction reads the sequence from its end).
- Y: [S, D, B, H] ([B, S, D, H]); Y_h, Y_c: the last states, shaped like initial_h.

The op takes the LSTM DynamicRNN runs: the default activations (sigmoid, tanh, tanh), no cell
clip, no peepholes, no coupled input and forget gates. A node that asks for any of them is unrolled
at import into plain ge ops instead (frontend/onnx_decompositions.py), so every LSTM imports.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    AttrSizedResultSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from ge.ge_dialects.ge.base import GeOp, InferArgs, IntProp, StrProp
from ge.ge_dialects.ge.facts import Engine, RunsOn
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable
from ge.ge_dialects.ge.types import FLOAT_TYPES, INT_TYPES, Shape, shape_of, tensor, tensor_type_of

DIRECTIONS = {"forward": 1, "reverse": 1, "bidirectional": 2}
GATES = 4
TRANSCENDENTALS_PER_STATE = 5
"""Per element of a state: three sigmoid gates, the candidate's tanh and the output's tanh."""
ELEMENTWISE_PER_STATE = 2 * GATES
"""Per element of a state: the four gates' bias adds, then f*C, i*g, their sum and o*tanh(C)."""


def _known(a: InferArgs, what: str, x: int | None, y: int | None) -> int | None:
    if x is not None and y is not None and x != y:
        raise a.fail(f"{what}: {x} vs {y}")
    return x if x is not None else y


class _Layer:
    """The sizes of a layer, read and checked from the operands."""

    def __init__(self, a: InferArgs):
        self.dtype = a.expect_dtype("X", FLOAT_TYPES)
        a.expect_same_dtype("X", "W", "R", "B", "initial_h", "initial_c")
        direction = a.prop("direction")
        if direction not in DIRECTIONS:
            raise a.fail(f'direction must be "forward", "reverse" or "bidirectional", got "{direction}"')
        self.layout = a.prop("layout")
        if self.layout not in (0, 1):
            raise a.fail(f"layout must be 0 or 1, got {self.layout}")
        for name in ("X", "W", "R"):
            a.expect_rank(name, 3)
        x, w, r = a.shape("X"), a.shape("W"), a.shape("R")
        self.steps, self.batch = (x[1], x[0]) if self.layout else (x[0], x[1])
        dirs = DIRECTIONS[direction]
        hidden = _known(a, "hidden_size and R's last dim differ", a.prop("hidden_size"), r[2])
        for name, dims in (("W", w), ("R", r)):
            _known(a, f"{name}'s first dim is not the {dirs} direction(s)", dims[0], dirs)
            if dims[1] is not None and hidden is not None and dims[1] != GATES * hidden:
                raise a.fail(f"{name}'s second dim must be 4 * hidden_size = {GATES * hidden}, got {dims[1]}")
        _known(a, "W's input size and X's last dim differ", w[2], x[2])
        self.dirs, self.hidden = dirs, hidden
        if a.has("B"):
            b, want = a.shape("B"), (dirs, None if hidden is None else 2 * GATES * hidden)
            if len(b) != 2 or any(g is not None and w is not None and g != w for g, w in zip(b, want)):
                raise a.fail(f"B must be {_show(want)} (directions, 8 * hidden_size), got {_show(b)}")
        if a.has("sequence_lens"):
            a.expect_dtype("sequence_lens", INT_TYPES)
            lengths = a.shape("sequence_lens")
            if len(lengths) != 1:
                raise a.fail(f"sequence_lens must be [batch], got rank {len(lengths)}")
            self.batch = _known(a, "sequence_lens and X differ in batch", lengths[0], self.batch)
        for name in ("initial_h", "initial_c"):
            if a.has(name) and a.shape(name) != self.state:
                got = a.shape(name)
                if len(got) != 3 or any(g is not None and s is not None and g != s for g, s in zip(got, self.state)):
                    raise a.fail(f"{name} must be {_show(self.state)}, got {_show(got)}")

    @property
    def state(self) -> Shape:
        return (self.batch, self.dirs, self.hidden) if self.layout else (self.dirs, self.batch, self.hidden)

    @property
    def sequence(self) -> Shape:
        if self.layout:
            return (self.batch, self.steps, self.dirs, self.hidden)
        return (self.steps, self.dirs, self.batch, self.hidden)


def _show(shape: Shape) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


class _LstmBase(GeOp):
    """The properties and work facts both ops share (sizes from X and R)."""

    direction = opt_prop_def(StrProp)
    hidden_size = opt_prop_def(IntProp)
    layout = opt_prop_def(IntProp)
    traits = traits_def(Pure(), RunsOn(Engine.CUBE_VECTOR))
    DEFAULTS: ClassVar = {"direction": "forward", "layout": 0}

    def sizes(self) -> tuple[int, int, int, int, int]:
        """(steps, directions, batch, input size, hidden size), unknown dims as 1."""
        x = [d or 1 for d in shape_of(tensor_type_of(self.operands[0]))]
        r = [d or 1 for d in shape_of(tensor_type_of(self.operands[2]))]
        steps, batch = (x[1], x[0]) if self.p("layout") else (x[0], x[1])
        return steps, r[0], batch, x[2], r[2]

    def forward_macs(self) -> int:
        """Both gate products of every step: X W^T and H R^T."""
        steps, dirs, batch, inputs, hidden = self.sizes()
        return steps * dirs * batch * GATES * hidden * (inputs + hidden)

    def state_elements(self) -> int:
        steps, dirs, batch, _, hidden = self.sizes()
        return steps * dirs * batch * hidden


@irdl_op_definition
class LstmOp(_LstmBase):
    name = "ge.lstm"
    ONNX: ClassVar = ("LSTM",)
    PRECISION: ClassVar = "white"  # DynamicRNN: the gate products run on the Cube, in f16 as MatMul's
    ONNX_ONLY_AS: ClassVar = {
        "activations": None,
        "activation_alpha": None,
        "activation_beta": None,
        "clip": None,
        "input_forget": 0,
        "P": None,
    }
    DATA_OPERANDS: ClassVar = ("X", "W", "R", "B", "initial_h", "initial_c")
    NOT_DIFFERENTIABLE: ClassVar = frozenset({"sequence_lens"})
    X = operand_def(TensorType)
    W = operand_def(TensorType)
    R = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    sequence_lens = opt_operand_def(TensorType)
    initial_h = opt_operand_def(TensorType)
    initial_c = opt_operand_def(TensorType)
    Y = result_def(TensorType)
    Y_h = opt_result_def(TensorType)
    Y_c = opt_result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), AttrSizedResultSegments(as_property=True))

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        layer = _Layer(a)
        state = tensor(layer.dtype, layer.state)
        return [tensor(layer.dtype, layer.sequence), state, state]

    def macs(self) -> int:
        return self.forward_macs()

    def vector_elements(self) -> int:
        return ELEMENTWISE_PER_STATE * self.state_elements()

    def transcendental_elements(self) -> int:
        return TRANSCENDENTALS_PER_STATE * self.state_elements()

    def serial_steps(self) -> int:
        return self.sizes()[0]

    def vjp(self, g: GradBuilder, cotangents: Sequence[SSAValue | None]) -> Sequence[SSAValue | None]:
        """One `ge.lstm_grad`, fed zeros for the results the loss does not read."""
        if all(c is None for c in cotangents):
            return [None] * len(self.operands)
        if None in shape_of(tensor_type_of(self.X)):
            raise NotDifferentiable(f"ge.lstm: its gradient needs static shapes, X is {tensor_type_of(self.X)}")
        d_y, d_h, d_c = (*cotangents, None, None)[:3]
        operands: dict[str, SSAValue | None] = {
            name: getattr(self, name) for name in ("X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c")
        }
        operands["dY"] = d_y if d_y is not None else g.zeros(self.Y)
        for key, cotangent in (("dY_h", d_h), ("dY_c", d_c)):
            if cotangent is None:
                cotangent = g.expand(g.scalar(0.0, self.X), self._state_shape())
            operands[key] = cotangent
        props = {"direction": self.p("direction"), "hidden_size": self.p("hidden_size"), "layout": self.p("layout")}
        grads = dict(zip(("X", "W", "R", "B", "initial_h", "initial_c"), g.emit(LstmGradOp, operands, props).results))
        names = [name for name, _ in self.get_irdl_definition().operands]
        return [grads.get(name) for name in names if getattr(self, name) is not None]

    def _state_shape(self) -> tuple[int, ...]:
        _, dirs, batch, _, hidden = self.sizes()
        return (batch, dirs, hidden) if self.p("layout") else (dirs, batch, hidden)


@irdl_op_definition
class LstmGradOp(_LstmBase):
    """The gradient of `ge.lstm` (GE's DynamicRNNGrad): from the forward's operands and the
    cotangents of Y, Y_h and Y_c, those of X, W, R, B, initial_h and initial_c (each result
    whether or not the forward had the operand). The forward's states are recomputed step by step,
    then the steps are walked back."""

    name = "ge.lstm_grad"
    NO_GRADIENT: ClassVar = "it is a backward op, and second derivatives are not built"
    PRECISION: ClassVar = "white"  # DynamicRNNGrad: Cube products like the forward's
    DATA_OPERANDS: ClassVar = ("X", "W", "R", "B", "initial_h", "initial_c", "dY", "dY_h", "dY_c")
    X = operand_def(TensorType)
    W = operand_def(TensorType)
    R = operand_def(TensorType)
    B = opt_operand_def(TensorType)
    sequence_lens = opt_operand_def(TensorType)
    initial_h = opt_operand_def(TensorType)
    initial_c = opt_operand_def(TensorType)
    dY = operand_def(TensorType)
    dY_h = operand_def(TensorType)
    dY_c = operand_def(TensorType)
    dX = result_def(TensorType)
    dW = result_def(TensorType)
    dR = result_def(TensorType)
    dB = result_def(TensorType)
    dinitial_h = result_def(TensorType)
    dinitial_c = result_def(TensorType)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    @classmethod
    def infer(cls, a: InferArgs) -> list[TensorType]:
        layer = _Layer(a)
        a.expect_same_dtype("X", "dY", "dY_h", "dY_c")
        for name, want in (("dY", layer.sequence), ("dY_h", layer.state), ("dY_c", layer.state)):
            got = a.shape(name)
            if len(got) != len(want) or any(g is not None and w is not None and g != w for g, w in zip(got, want)):
                raise a.fail(f"{name} must be {_show(want)}, got {_show(got)}")
        dtype = layer.dtype
        w, r = a.shape("W"), a.shape("R")
        bias = (layer.dirs, None if layer.hidden is None else 2 * GATES * layer.hidden)
        state = tensor(dtype, layer.state)
        return [tensor(dtype, a.shape("X")), tensor(dtype, w), tensor(dtype, r), tensor(dtype, bias), state, state]

    def macs(self) -> int:
        """The forward's products again, then per step the cotangents of X, W, R and H_{t-1}."""
        return 3 * self.forward_macs()

    def vector_elements(self) -> int:
        return 3 * ELEMENTWISE_PER_STATE * self.state_elements()

    def transcendental_elements(self) -> int:
        return (TRANSCENDENTALS_PER_STATE + 1) * self.state_elements()

    def serial_steps(self) -> int:
        """The forward's steps, then as many back."""
        return 2 * self.sizes()[0]


RECURRENT_OPS = [LstmOp, LstmGradOp]

__all__ = ["LstmOp", "LstmGradOp", "RECURRENT_OPS"]
