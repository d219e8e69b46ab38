"""Function bodies ge writes itself, for operators whose ONNX schema has none: the recurrent
layers (RNN, GRU, and the LSTMs `ge.lstm` does not take: peepholes, a cell clip, coupled gates,
other activations) unrolled over their static sequence length, LpNormalization, and
ReverseSequence and TensorScatter as one GatherElements / ScatterElements at computed indices, and
the reductions whose schema has a body only from opset 18 (ReduceL2, ...) read as that node. Like a
schema's context-dependent function, each is built for the node's attributes and input types,
and the importer expands it as it expands any function body (frontend/onnx_functions.py): the
result is plain ge ops, so the recurrent layers fold, fuse, get gradients and lower like the rest
of the graph.

The recurrent bodies follow the ONNX equations (gate orders iofc for LSTM, zrh for GRU; the
activations by name, with their alpha and beta; past a row's `sequence_lens` the state is kept
and Y is zero). A sequence length the input types leave unknown is refused: the body is unrolled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ge.frontend.onnx_ops import OnnxImportError

DECOMPOSITION_OPSET = 18
"""The default-domain opset the bodies are written at (ReduceL1/L2 take `axes` as an input)."""


class _Body:
    """Nodes of a body under construction; each op returns its output's name."""

    def __init__(self, node: onnx.NodeProto, where: str):
        self.node, self.where = node, where
        self.nodes: list[onnx.NodeProto] = []
        self.attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}

    def op(self, op_type: str, *inputs: str, outputs: int = 1, **attrs) -> str | list[str]:
        names = [f"v{len(self.nodes)}_{k}" for k in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, **attrs))
        return names[0] if outputs == 1 else names

    def one(self, op_type: str, *inputs: str, **attrs) -> str:
        out = self.op(op_type, *inputs, **attrs)
        assert isinstance(out, str)
        return out

    def split(self, x: str, sizes: Sequence[int], axis: int) -> list[str]:
        """x cut into pieces of `sizes` along `axis`."""
        out = self.op("Split", x, self.ints(*sizes), outputs=len(sizes), axis=axis)
        return [out] if isinstance(out, str) else out

    def const(self, array: np.ndarray | np.generic) -> str:
        return self.one("Constant", value=numpy_helper.from_array(np.asarray(array)))

    def scalar(self, value: float, like: str) -> str:
        """A scalar of `like`'s element type."""
        return self.one("CastLike", self.const(np.float32(value)), like)

    def zeros(self, like: str) -> str:
        return self.one("CastLike", self.one("ConstantOfShape", self.one("Shape", like)), like)

    def ints(self, *values: int) -> str:
        return self.const(np.asarray(values, dtype=np.int64))

    def attr(self, name: str, default=None):
        value = self.attrs.get(name, default)
        return value.decode() if isinstance(value, bytes) else value

    def input(self, index: int) -> str | None:
        """The formal name of input `index` when the node gives it, else None."""
        return f"in{index}" if index < len(self.node.input) and self.node.input[index] else None

    def function(self, outputs: dict[int, str]) -> onnx.FunctionProto:
        """The body with `outputs` (node output index -> value) bound to the formal outputs."""
        for index, value in outputs.items():
            self.nodes.append(helper.make_node("Identity", [value], [f"out{index}"]))
        return helper.make_function(
            "ge.decompositions",
            self.node.op_type,
            [f"in{i}" for i in range(len(self.node.input))],
            [f"out{i}" for i in range(len(self.node.output))],
            self.nodes,
            [helper.make_opsetid("", DECOMPOSITION_OPSET)],
        )

    def fail(self, reason: str) -> OnnxImportError:
        return OnnxImportError(f"{self.where}: {reason}")


def _dims(t: onnx.TypeProto) -> list[int | None]:
    return [d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim]


# -- activations ---------------------------------------------------------------------------------

_ALPHA_BETA = {"Affine": 2, "LeakyRelu": 1, "ThresholdedRelu": 1, "ScaledTanh": 2, "HardSigmoid": 2, "Elu": 1}
"""Activations that read activation_alpha (and activation_beta): how many of the two."""
_DEFAULT_ALPHA = {"LeakyRelu": 0.01, "ThresholdedRelu": 1.0, "HardSigmoid": 0.2, "Elu": 1.0}
_DEFAULT_BETA = {"HardSigmoid": 0.5}


class _Activations:
    """The node's activation functions in order, each with its alpha and beta."""

    def __init__(self, body: _Body, defaults: Sequence[str], directions: int):
        names = [a.decode() if isinstance(a, bytes) else a for a in body.attr("activations", [])]
        names = names or list(defaults) * directions
        if len(names) != len(defaults) * directions:
            raise body.fail(f"needs {len(defaults) * directions} activations, got {len(names)}")
        alphas = list(body.attr("activation_alpha", []))
        betas = list(body.attr("activation_beta", []))
        self.functions: list[tuple[str, float | None, float | None]] = []
        for name in names:
            takes = _ALPHA_BETA.get(name, 0)
            alpha = alphas.pop(0) if takes and alphas else _DEFAULT_ALPHA.get(name)
            beta = betas.pop(0) if takes == 2 and betas else _DEFAULT_BETA.get(name)
            if (takes and alpha is None) or (takes == 2 and beta is None):
                raise body.fail(f"activation {name} needs activation_alpha and activation_beta")
            self.functions.append((name, alpha, beta))
        self.body = body

    def apply(self, index: int, x: str) -> str:
        name, alpha, beta = self.functions[index]
        b = self.body
        if name in ("Relu", "Tanh", "Sigmoid", "Softsign", "Softplus"):
            return b.one(name, x)
        if name in ("LeakyRelu", "ThresholdedRelu", "Elu"):
            return b.one(name, x, alpha=alpha)
        if name == "HardSigmoid":
            return b.one(name, x, alpha=alpha, beta=beta)
        if name == "Affine":
            assert alpha is not None and beta is not None  # checked when the list was read
            return b.one("Add", b.one("Mul", x, b.scalar(alpha, x)), b.scalar(beta, x))
        if name == "ScaledTanh":
            assert alpha is not None and beta is not None
            return b.one("Mul", b.one("Tanh", b.one("Mul", x, b.scalar(beta, x))), b.scalar(alpha, x))
        raise b.fail(f"activation '{name}' is not one ONNX defines for recurrent layers")


# -- the recurrent layers ------------------------------------------------------------------------


class _Recurrent:
    """What RNN, GRU and LSTM share: the layout, the directions, the weights per direction, the
    per-step loop, and Y / Y_h (/ Y_c) assembled from the steps."""

    GATES = 1
    ACTIVATIONS: tuple[str, ...] = ("Tanh",)

    def __init__(self, node: onnx.NodeProto, types: Sequence[onnx.TypeProto], where: str):
        b = self.body = _Body(node, where)
        self.lengths = b.input(4)
        self.layout = b.attr("layout", 0)
        dims = _dims(types[0])
        steps, self.batch = (dims[1], dims[0]) if self.layout else (dims[0], dims[1])
        if steps is None or len(dims) != 3:
            raise b.fail("the recurrent layer needs a static sequence length to be unrolled")
        self.steps = steps
        self.hidden = b.attr("hidden_size")
        if self.hidden is None:
            wdims = _dims(types[2])
            self.hidden = wdims[-1]
        direction = b.attr("direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise b.fail(f"direction must be forward, reverse or bidirectional, got '{direction}'")
        self.directions = ["forward", "reverse"] if direction == "bidirectional" else [direction]
        self.activations = _Activations(b, self.ACTIVATIONS, len(self.directions))
        self.clip = b.attr("clip")

    def update(self, t: int, new: str, old: str) -> str:
        """The state after step t: `new` where step t lies within the batch row's sequence_lens,
        else `old` (so a reverse pass starts at each row's last element)."""
        if self.lengths is None:
            return new
        b = self.body
        valid = b.one("Unsqueeze", b.one("Less", b.const(np.int32(t)), b.one("Cast", self.lengths, to=6)), b.ints(1))
        return b.one("Where", valid, new, old)

    def output(self, t: int, h: str) -> str:
        """Y at step t: h, or zeros past the row's sequence_lens."""
        return h if self.lengths is None else self.update(t, h, self.body.zeros(h))

    def clipped(self, x: str) -> str:
        """The cell clip, applied to the input of each activation."""
        if self.clip is None:
            return x
        b = self.body
        return b.one("Clip", x, b.scalar(-self.clip, x), b.scalar(self.clip, x))

    def act(self, index: int, direction: int, x: str, clip: bool = True) -> str:
        """Activation `index` of the direction; the cell clip applies to the gates' inputs (not to
        the cell state LSTM's output activation reads, as onnxruntime does it)."""
        return self.activations.apply(direction * len(self.ACTIVATIONS) + index, self.clipped(x) if clip else x)

    def per_direction(self, tensor: str, d: int) -> str:
        return self.body.one("Gather", tensor, self.body.ints(d), axis=0)  # [1, ...] -> squeezed below

    def squeezed(self, tensor: str) -> str:
        return self.body.one("Squeeze", tensor, self.body.ints(0))

    def initial(self, index: int, d: int, like: str) -> str:
        """Direction d's initial state (input `index`, [dirs, batch, H]), else zeros like `like`."""
        given = self.body.input(index)
        return self.body.zeros(like) if given is None else self.squeezed(self.per_direction(given, d))

    def build(self) -> onnx.FunctionProto:
        b = self.body
        x = b.input(0)
        assert x is not None
        if self.layout:
            x = b.one("Transpose", x, perm=[1, 0, 2])  # [batch, seq, in] -> [seq, batch, in]
            if b.input(5) is not None or b.input(6) is not None:
                raise b.fail("initial states with layout = 1 are not supported")
        ys, finals = [], []
        for d, direction in enumerate(self.directions):
            hs, last = self.direction(x, d, direction == "reverse")
            ordered = list(reversed(hs)) if direction == "reverse" else hs
            ys.append(b.one("Concat", *[b.one("Unsqueeze", h, b.ints(0)) for h in ordered], axis=0))
            finals.append(last)
        y = b.one("Concat", *[b.one("Unsqueeze", v, b.ints(1)) for v in ys], axis=1)  # [seq, dirs, batch, H]
        outputs = {0: y}
        for k, states in enumerate(zip(*finals), start=1):
            outputs[k] = b.one("Concat", *[b.one("Unsqueeze", s, b.ints(0)) for s in states], axis=0)
        if self.layout:
            outputs[0] = b.one("Transpose", y, perm=[2, 0, 1, 3])
            for k in list(outputs)[1:]:
                outputs[k] = b.one("Transpose", outputs[k], perm=[1, 0, 2])
        wanted = {k: v for k, v in outputs.items() if k < len(b.node.output) and b.node.output[k]}
        return b.function(wanted)

    def weights(self, d: int) -> tuple[str, str, str | None]:
        """(X's weights transposed [in, G*H], R transposed [H, G*H], W's and R's bias [2*G*H] or None)."""
        b = self.body
        w = b.one("Transpose", self.squeezed(self.per_direction("in1", d)), perm=[1, 0])
        r = b.one("Transpose", self.squeezed(self.per_direction("in2", d)), perm=[1, 0])
        bias = b.input(3)
        return w, r, None if bias is None else self.squeezed(self.per_direction(bias, d))

    def step_inputs(self, x: str, w: str, bias: str | None) -> list[str]:
        """X W^T + Wb for every step at once, split per step: [batch, G*H] each."""
        b = self.body
        xw = b.one("MatMul", x, w)
        if bias is not None:
            xw = b.one("Add", xw, b.split(bias, [self.GATES * self.hidden] * 2, axis=0)[0])
        return [self.squeezed(s) for s in b.split(xw, [1] * self.steps, axis=0)]

    def recurrent_bias(self, bias: str | None) -> str | None:
        if bias is None:
            return None
        return self.body.split(bias, [self.GATES * self.hidden] * 2, axis=0)[1]

    def gates(self, v: str) -> list[str]:
        return self.body.split(v, [self.hidden] * self.GATES, axis=-1)

    def direction(self, x: str, d: int, reverse: bool) -> tuple[list[str], list[str]]:
        raise NotImplementedError


class _Rnn(_Recurrent):
    GATES = 1
    ACTIVATIONS = ("Tanh",)

    def direction(self, x, d, reverse):
        b = self.body
        w, r, bias = self.weights(d)
        xs, rb = self.step_inputs(x, w, bias), self.recurrent_bias(bias)
        h = self.initial(5, d, xs[0])
        hs = []
        for t in reversed(range(self.steps)) if reverse else range(self.steps):
            pre = b.one("Add", xs[t], b.one("MatMul", h, r))
            if rb is not None:
                pre = b.one("Add", pre, rb)
            new = self.act(0, d, pre)
            hs.append(self.output(t, new))
            h = self.update(t, new, h)
        return hs, [h]


class _Gru(_Recurrent):
    GATES = 3
    ACTIVATIONS = ("Sigmoid", "Tanh")

    def direction(self, x, d, reverse):
        b = self.body
        w, r, bias = self.weights(d)
        xs, rb = self.step_inputs(x, w, bias), self.recurrent_bias(bias)
        r_zr, r_h = b.split(r, [2 * self.hidden, self.hidden], axis=-1)
        rb_zr, rb_h = (None, None) if rb is None else b.split(rb, [2 * self.hidden, self.hidden], axis=0)
        linear_before_reset = b.attr("linear_before_reset", 0)
        h = self.initial(5, d, self.gates(xs[0])[0])
        hs = []
        for t in reversed(range(self.steps)) if reverse else range(self.steps):
            xz, xr, xh = self.gates(xs[t])
            hzr = b.one("MatMul", h, r_zr)
            if rb_zr is not None:
                hzr = b.one("Add", hzr, rb_zr)
            hz, hr = b.split(hzr, [self.hidden, self.hidden], axis=-1)
            z = self.act(0, d, b.one("Add", xz, hz))
            reset = self.act(0, d, b.one("Add", xr, hr))
            if linear_before_reset:
                hh = b.one("MatMul", h, r_h)
                if rb_h is not None:
                    hh = b.one("Add", hh, rb_h)
                candidate = b.one("Add", xh, b.one("Mul", reset, hh))
            else:
                hh = b.one("MatMul", b.one("Mul", reset, h), r_h)
                if rb_h is not None:
                    hh = b.one("Add", hh, rb_h)
                candidate = b.one("Add", xh, hh)
            n = self.act(1, d, candidate)
            new = b.one("Add", b.one("Mul", b.one("Sub", b.scalar(1, z), z), n), b.one("Mul", z, h))
            hs.append(self.output(t, new))
            h = self.update(t, new, h)
        return hs, [h]


class _Lstm(_Recurrent):
    GATES = 4
    ACTIVATIONS = ("Sigmoid", "Tanh", "Tanh")

    def direction(self, x, d, reverse):
        b = self.body
        w, r, bias = self.weights(d)
        xs, rb = self.step_inputs(x, w, bias), self.recurrent_bias(bias)
        peephole = b.input(7)
        p = None
        if peephole is not None:
            weights = self.squeezed(self.per_direction(peephole, d))
            p = b.split(weights, [self.hidden] * 3, axis=0)
        input_forget = b.attr("input_forget", 0)
        h = self.initial(5, d, self.gates(xs[0])[0])
        c = self.initial(6, d, self.gates(xs[0])[0])
        hs = []
        for t in reversed(range(self.steps)) if reverse else range(self.steps):
            pre = b.one("Add", xs[t], b.one("MatMul", h, r))
            if rb is not None:
                pre = b.one("Add", pre, rb)
            gi, go, gf, gc = self.gates(pre)
            if p is not None:
                gi = b.one("Add", gi, b.one("Mul", p[0], c))
                gf = b.one("Add", gf, b.one("Mul", p[2], c))
            i = self.act(0, d, gi)
            f = b.one("Sub", b.scalar(1, i), i) if input_forget else self.act(0, d, gf)
            c_new = b.one("Add", b.one("Mul", f, c), b.one("Mul", i, self.act(1, d, gc)))
            if p is not None:
                go = b.one("Add", go, b.one("Mul", p[1], c_new))
            o = self.act(0, d, go)
            h_new = b.one("Mul", o, self.act(2, d, c_new, clip=False))
            hs.append(self.output(t, h_new))
            h, c = self.update(t, h_new, h), self.update(t, c_new, c)
        return hs, [h, c]


def _recurrent(cls: type[_Recurrent]) -> Callable:
    def build(node: onnx.NodeProto, types: Sequence[onnx.TypeProto], where: str) -> onnx.FunctionProto:
        return cls(node, types, where).build()

    return build


def _lp_normalization(node: onnx.NodeProto, types: Sequence[onnx.TypeProto], where: str) -> onnx.FunctionProto:
    """x / ||x||_p along `axis` (p 1 or 2), and 0 where the norm is 0."""
    b = _Body(node, where)
    p, axis = b.attr("p", 2), b.attr("axis", -1)
    if p not in (1, 2):
        raise b.fail(f"p must be 1 or 2, got {p}")
    norm = b.one("ReduceL2" if p == 2 else "ReduceL1", "in0", b.ints(axis), keepdims=1)
    is_zero = b.one("Equal", norm, b.scalar(0, norm))
    safe = b.one("Where", is_zero, b.scalar(1, norm), norm)
    return b.function({0: b.one("Div", "in0", safe)})  # a zero norm means a zero row: 0 / 1


def _along(b: _Body, values: str, rank: int, axis: int) -> str:
    """A vector reshaped to lie along `axis` of a rank-`rank` tensor (1 in every other dim)."""
    return b.one("Reshape", values, b.ints(*(-1 if d == axis else 1 for d in range(rank))))


def _positions(b: _Body, x: str, axis: int, rank: int) -> str:
    """0, 1, ..., x.shape[axis] - 1, lying along `axis`."""
    length = b.one("Gather", b.one("Shape", x), b.const(np.int64(axis)))
    return _along(b, b.one("Range", b.const(np.int64(0)), length, b.const(np.int64(1))), rank, axis)


def _rank(b: _Body, types: Sequence[onnx.TypeProto], index: int) -> int:
    t = types[index].tensor_type
    if not t.HasField("shape"):
        raise b.fail(f"input #{index} needs a known rank")
    return len(t.shape.dim)


def _reverse_sequence(node: onnx.NodeProto, types: Sequence[onnx.TypeProto], where: str) -> onnx.FunctionProto:
    """Each batch row's first sequence_lens[b] steps reversed, the rest kept: one GatherElements
    along the time axis at index lens - 1 - t where t < lens, else t."""
    b = _Body(node, where)
    rank = _rank(b, types, 0)
    time, batch = b.attr("time_axis", 0), b.attr("batch_axis", 1)
    if sorted((time, batch)) != [0, 1] or rank < 2:
        raise b.fail(f"time_axis and batch_axis must be 0 and 1 of a rank-2 or larger input, got {time} and {batch}")
    t = _positions(b, "in0", time, rank)
    lens = _along(b, "in1", rank, batch)
    reversed_t = b.one("Sub", b.one("Sub", lens, b.const(np.int64(1))), t)
    index = b.one("Where", b.one("Less", t, lens), reversed_t, t)
    index = b.one("Expand", index, b.one("Shape", "in0"))
    return b.function({0: b.one("GatherElements", "in0", index, axis=time)})


def _tensor_scatter(node: onnx.NodeProto, types: Sequence[onnx.TypeProto], where: str) -> onnx.FunctionProto:
    """The cache with `update` written along `axis` from each batch row's write index (0 when
    absent; modulo the cache length in "circular" mode): one ScatterElements."""
    b = _Body(node, where)
    rank = _rank(b, types, 0)
    axis, mode = b.attr("axis", -2), b.attr("mode", "linear")
    if not -rank < axis < rank or axis % rank == 0:
        raise b.fail(f"axis {axis} must name a dim after the batch dim of a rank-{rank} cache")
    if mode not in ("linear", "circular"):
        raise b.fail(f"mode must be 'linear' or 'circular', got '{mode}'")
    axis %= rank
    index = _positions(b, "in1", axis, rank)
    start = b.input(2)
    if start is not None:
        index = b.one("Add", _along(b, start, rank, 0), index)
    if mode == "circular":
        index = b.one("Mod", index, b.one("Gather", b.one("Shape", "in0"), b.const(np.int64(axis))))
    index = b.one("Expand", index, b.one("Shape", "in1"))
    return b.function({0: b.one("ScatterElements", "in0", index, "in1", axis=axis)})


def _at_opset_18(node: onnx.NodeProto, types: Sequence[onnx.TypeProto], where: str) -> onnx.FunctionProto:
    """The reduction as its opset-18 node (the `axes` attribute an input), whose schema has the
    function body the older opsets lack."""
    b = _Body(node, where)
    axes = b.attr("axes")
    inputs = ["in0"] if axes is None else ["in0", b.ints(*axes)]
    return b.function({0: b.one(node.op_type, *inputs, keepdims=b.attr("keepdims", 1))})


_REDUCTIONS_WITH_BODIES_FROM_18 = ("ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")

DECOMPOSED_BEFORE: dict[str, int] = dict.fromkeys(_REDUCTIONS_WITH_BODIES_FROM_18, 18)
"""Operators whose decomposition serves only the opsets before this one (from there their schema
has a body of its own)."""

DECOMPOSITIONS: dict[str, Callable[[onnx.NodeProto, Sequence[onnx.TypeProto], str], onnx.FunctionProto]] = {
    "RNN": _recurrent(_Rnn),
    "GRU": _recurrent(_Gru),
    "LSTM": _recurrent(_Lstm),
    "LpNormalization": _lp_normalization,
    "ReverseSequence": _reverse_sequence,
    "TensorScatter": _tensor_scatter,
    **dict.fromkeys(_REDUCTIONS_WITH_BODIES_FROM_18, _at_opset_18),
}
"""Default-domain operator -> the builder of its body (node, input types, where -> FunctionProto)."""
