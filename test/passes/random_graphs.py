"""A hypothesis strategy for random ge modules, for property tests of graph passes.

`ge_graphs()` draws a small random DAG over one to three f32 inputs and returns
`(module, weights, inputs)`: the module (`func.func @main`, weights attached), the sidecar arrays
its `#ge.weight` constants name, and input arrays by name. Every op is built with the ge dialect's
`Op.create(...)`, so its result types are the inferred ones, and carries a node name
(`loc("/n3/matmul")`). Graphs stay small (at most `max_ops` non-constant ops, tensors of at most a
few thousand elements) so an example runs in milliseconds.

Ops: unary maps (relu, gelu, sigmoid, tanh, erf), broadcasting add/sub/mul/div, matmul, gemm, conv
(NCHW, optional bias, groups, pads, strides), batch_norm (inference), softmax, layer_norm,
reduce_mean, transpose, reshape, concat, slice; small inline and large weight constants. Plus the
patterns optimization passes look for: conv -> batch_norm -> relu, matmul -> add -> gelu, the
decomposed erf GELU x*0.5*(1+erf(x/sqrt2)), transpose pairs, reshape chains, duplicate constants
(inline and weight), constant-only subgraphs and a shape subgraph (shape -> slice -> concat ->
reshape) whose result has `?` dims until it is folded.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, f32
from xdsl.ir import Block, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import element_type_of, shape_of, tensor
from ge.ge_dialects.ge.weights import attach_weights

MAX_ELEMENTS = 4096
"""No tensor of a random graph holds more elements than this."""


class _Builder:
    """Grows one function body; `draw` makes every structural choice, `rng` fills the arrays."""

    def __init__(self, draw, rng: np.random.Generator, max_ops: int):
        self.draw = draw
        self.rng = rng
        self.max_ops = max_ops
        self.ops = 0
        self.block = Block()
        self.pool: list[SSAValue] = []  # f32 values with static shapes, usable as operands
        self.dynamic: list[SSAValue] = []  # values with `?` dims: kept as outputs only
        self.weights: dict[str, np.ndarray] = {}
        self.inputs: dict[str, np.ndarray] = {}
        self.arg_names: list[str] = []

    # -- basics -----------------------------------------------------------------------------------
    def full(self) -> bool:
        return self.ops >= self.max_ops

    def input(self, shape: tuple[int, ...]) -> SSAValue:
        name = f"x{len(self.arg_names)}"
        arg = self.block.insert_arg(tensor(f32, shape), len(self.block.args))
        arg.name_hint = name
        self.arg_names.append(name)
        self.inputs[name] = self.rng.standard_normal(shape).astype(np.float32)
        self.pool.append(arg)
        return arg

    def const(self, array: np.ndarray, weight: bool | None = None) -> SSAValue:
        """A constant: inline when small, else a sidecar weight (`weight` forces either way)."""
        array = np.ascontiguousarray(array)
        as_weight = array.size > ge.ConstantOp.INLINE_LIMIT if weight is None else weight
        if as_weight:
            key = f"w{len(self.weights)}"
            self.weights[key] = array
            op = ge.ConstantOp.weight(key, tensor(element_type_of(array.dtype), array.shape))
        else:
            op = ge.ConstantOp.inline(array)
        self.block.add_op(op)
        return op.output

    def randn(self, *shape: int, scale: float = 1.0) -> np.ndarray:
        return (self.rng.standard_normal(shape) * scale).astype(np.float32)

    def op(self, cls: type[ge.GeOp], operands: dict, props: dict | None = None, keep: bool = True) -> SSAValue | None:
        """Builds one op (None when its types are invalid or too big, or the graph is full) and adds
        its result to the pool."""
        if self.full():
            return None
        try:
            op = cls.create(operands, props or {}, name=f"/n{self.ops}/{cls.name.removeprefix('ge.')}")
        except VerifyException:
            return None
        shape = shape_of(op.results[0].type)
        if None not in shape and math.prod(shape) > MAX_ELEMENTS:
            op.erase(safe_erase=False)
            return None
        self.block.add_op(op)
        self.ops += 1
        result = op.results[0]
        if None in shape:
            self.dynamic.append(result)
        elif keep and result.type.element_type == f32:
            self.pool.append(result)
        return result

    def pick(self, pred: Callable[[tuple[int, ...]], bool] = lambda s: True) -> SSAValue | None:
        """A pool value whose shape satisfies `pred` (recent values are likelier)."""
        fits = [v for v in self.pool if pred(shape_of(v.type))]
        if not fits:
            return None
        i = self.draw(st.integers(0, len(fits) - 1))
        j = self.draw(st.integers(i, len(fits) - 1))  # skews toward the end
        return fits[j]

    def choice(self, options):
        return self.draw(st.sampled_from(options))

    def dims(self, v: SSAValue) -> tuple[int, ...]:
        return shape_of(v.type)  # type: ignore[return-value]

    # -- single ops -------------------------------------------------------------------------------
    def unary(self, x=None):
        x = x or self.pick()
        kind = self.choice(["relu", "gelu", "sigmoid", "tanh", "erf"])
        cls = {"relu": ge.ReluOp, "gelu": ge.GeluOp, "sigmoid": ge.SigmoidOp, "tanh": ge.TanhOp, "erf": ge.ErfOp}[kind]
        props = {"approximate": self.choice(["none", "tanh"])} if kind == "gelu" else {}
        return self.op(cls, {"x": x}, props)

    def broadcast_shape(self, shape: tuple[int, ...]) -> tuple[int, ...]:
        """A shape that broadcasts to `shape`: equal, a suffix, with 1s, or a scalar."""
        mode = self.choice(["same", "suffix", "ones", "scalar"])
        if mode == "same":
            return shape
        if mode == "scalar":
            return ()
        k = self.draw(st.integers(1, len(shape))) if shape else 0
        tail = shape[len(shape) - k :]
        if mode == "ones":
            tail = tuple(d if self.draw(st.booleans()) else 1 for d in tail)
        return tail

    def binary(self, x=None, kind=None):
        x = x or self.pick()
        shape = self.dims(x)
        kind = kind or self.choice(["add", "sub", "mul", "div"])
        cls = {"add": ge.AddOp, "sub": ge.SubOp, "mul": ge.MulOp, "div": ge.DivOp}[kind]
        other = None
        if kind != "div" and self.draw(st.booleans()):
            other = self.pick(lambda s: s == shape or (len(s) <= len(shape) and s == shape[len(shape) - len(s) :]))
        if other is None:
            cshape = self.broadcast_shape(shape)
            if kind == "div":  # divisors away from zero
                value = (self.rng.uniform(0.5, 2.0, cshape) * self.rng.choice([-1, 1], cshape)).astype(np.float32)
            else:
                value = self.randn(*cshape)
            other = self.const(value)
        a, b = (x, other) if kind == "div" or self.draw(st.booleans()) else (other, x)
        return self.op(cls, {"a": a, "b": b})

    def matmul(self, x=None):
        x = x or self.pick(lambda s: len(s) >= 1)
        k = self.dims(x)[-1]
        n = self.draw(st.integers(1, 8))
        if self.draw(st.booleans()):  # W^T as a constant transpose (work for constant folding)
            w = self.op(
                ge.TransposeOp,
                {"data": self.const(self.randn(n, k, scale=1 / math.sqrt(k)))},
                {"perm": [1, 0]},
                keep=False,
            )
        else:
            w = self.const(self.randn(k, n, scale=1 / math.sqrt(k)))
        return w and self.op(ge.MatMulOp, {"A": x, "B": w})

    def gemm(self):
        x = self.pick(lambda s: len(s) == 2)
        if x is None:
            return None
        m, k = self.dims(x)
        trans_a = self.draw(st.booleans())
        if trans_a:
            m, k = k, m
        n = self.draw(st.integers(1, 8))
        trans_b = self.draw(st.booleans())
        w = self.const(self.randn(*((n, k) if trans_b else (k, n)), scale=1 / math.sqrt(k)))
        operands = {"A": x, "B": w, "C": None}
        c_shape = self.choice([None, (n,), (1, n), (m, n)])
        if c_shape is not None:
            operands["C"] = self.const(self.randn(*c_shape))
        props = {
            "transA": int(trans_a),
            "transB": int(trans_b),
            "alpha": self.choice([1.0, 0.5]),
            "beta": self.choice([1.0, 2.0]),
        }
        return self.op(ge.GemmOp, operands, props)

    def conv(self, x=None):
        x = x or self.pick(lambda s: len(s) == 4)
        if x is None:
            return None
        _, c, h, w = self.dims(x)
        group = self.choice([1, c]) if c > 1 else 1
        out = group * self.draw(st.integers(1, max(1, 8 // group)))
        k = self.choice([1, 3]) if min(h, w) >= 3 else 1
        pad = self.choice([0, 1]) if k == 3 else 0
        stride = self.choice([1, 2])
        weight = self.const(self.randn(out, c // group, k, k, scale=1 / math.sqrt(c // group * k * k)))
        bias = self.const(self.randn(out)) if self.draw(st.booleans()) else None
        props = {"pads": [pad] * 4, "strides": [stride] * 2, "group": group, "kernel_shape": [k, k]}
        return self.op(ge.ConvOp, {"X": x, "W": weight, "B": bias}, props)

    def batch_norm(self, x=None):
        x = x or self.pick(lambda s: len(s) >= 2)
        if x is None:
            return None
        c = self.dims(x)[1]
        operands = {
            "X": x,
            "scale": self.const(self.rng.uniform(0.5, 1.5, c).astype(np.float32)),
            "B": self.const(self.randn(c)),
            "input_mean": self.const(self.randn(c)),
            "input_var": self.const(self.rng.uniform(0.5, 2.0, c).astype(np.float32)),
        }
        return self.op(ge.BatchNormOp, operands, {"epsilon": self.choice([1e-5, 1e-3])})

    def softmax(self):
        x = self.pick(lambda s: len(s) >= 1)
        r = len(self.dims(x))
        return self.op(ge.SoftmaxOp, {"input": x}, {"axis": self.draw(st.integers(-r, r - 1))})

    def layer_norm(self):
        x = self.pick(lambda s: len(s) >= 1)
        shape = self.dims(x)
        axis = self.draw(st.integers(-len(shape), -1))
        norm = shape[axis:]
        bias = self.const(self.randn(*norm)) if self.draw(st.booleans()) else None
        return self.op(
            ge.LayerNormOp,
            {"X": x, "Scale": self.const(self.rng.uniform(0.5, 1.5, norm).astype(np.float32)), "B": bias},
            {"axis": axis},
        )

    def reduce_mean(self):
        x = self.pick(lambda s: len(s) >= 1)
        r = len(self.dims(x))
        axes = sorted(self.draw(st.sets(st.integers(0, r - 1), min_size=1, max_size=r)))
        keepdims = int(self.draw(st.booleans()) or len(axes) == r)
        axes = [a - r if self.draw(st.booleans()) else a for a in axes]
        return self.op(
            ge.ReduceMeanOp, {"data": x, "axes": self.const(np.array(axes, np.int64))}, {"keepdims": keepdims}
        )

    def transpose(self, x=None, perm=None):
        x = x or self.pick(lambda s: len(s) >= 2)
        if x is None:
            return None
        r = len(self.dims(x))
        perm = perm or self.draw(st.permutations(list(range(r))))
        return self.op(ge.TransposeOp, {"data": x}, {"perm": list(perm)})

    def reshape_target(self, shape: tuple[int, ...]) -> list[int]:
        total = math.prod(shape)
        dims: list[int] = []
        rest = total
        for _ in range(self.draw(st.integers(0, 3))):
            divisors = [d for d in range(1, rest + 1) if rest % d == 0]
            d = self.choice(divisors)
            dims.append(d)
            rest //= d
        dims.append(rest)
        target = list(self.draw(st.permutations(dims)))
        if self.draw(st.booleans()):
            target[self.draw(st.integers(0, len(target) - 1))] = -1
        elif shape and target[0] == shape[0] and self.draw(st.booleans()):
            target[0] = 0  # copies the input's first dim
        return target

    def reshape(self, x=None):
        x = x or self.pick()
        target = self.reshape_target(self.dims(x))
        return self.op(ge.ReshapeOp, {"data": x, "shape": self.const(np.array(target, np.int64))})

    def concat(self):
        x = self.pick(lambda s: len(s) >= 1)
        shape = self.dims(x)
        axis = self.draw(st.integers(0, len(shape) - 1))
        other = self.pick(
            lambda s: len(s) == len(shape) and all(a == b for i, (a, b) in enumerate(zip(s, shape)) if i != axis)
        )
        if other is None or self.draw(st.booleans()):
            size = self.draw(st.integers(1, 3))
            other = self.const(self.randn(*shape[:axis], size, *shape[axis + 1 :]))
        inputs = [x, other] if self.draw(st.booleans()) else [other, x]
        return self.op(
            ge.ConcatOp, {"inputs": inputs}, {"axis": axis - len(shape) if self.draw(st.booleans()) else axis}
        )

    def slice(self, x=None):
        x = x or self.pick(lambda s: len(s) >= 1)
        shape = self.dims(x)
        axes = sorted(self.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape))))
        starts, ends, steps = [], [], []
        for a in axes:
            d = shape[a]
            step = self.choice([1, 1, 2, -1])
            start = self.draw(st.integers(0, d - 1))
            if step > 0:
                end = self.draw(st.integers(start + 1, d))
                form = self.choice(["plain", "negative", "huge"])
                if form == "huge" and end == d:
                    end = 2**62  # clamped to the dim
                elif form == "negative" and end < d:
                    end -= d
            else:
                end = self.draw(st.integers(-1, start - 1))
                end = -d - 1 if end == -1 else end  # -d-1 clamps to "through element 0"
            starts.append(start if self.draw(st.booleans()) else start - d)
            ends.append(end)
            steps.append(step)
        operands = {
            "data": x,
            "starts": self.const(np.array(starts, np.int64)),
            "ends": self.const(np.array(ends, np.int64)),
            "axes": self.const(np.array(axes, np.int64)),
            "steps": None,
        }
        if any(s != 1 for s in steps) or self.draw(st.booleans()):
            operands["steps"] = self.const(np.array(steps, np.int64))
        return self.op(ge.SliceOp, operands)

    def constants_only(self):
        """A constant-only subgraph feeding an op on a graph value (work for constant folding)."""
        x = self.pick()
        shape = self.dims(x)
        cshape = self.broadcast_shape(shape)
        c = self.const(self.randn(*cshape), weight=self.draw(st.booleans()) if cshape else False)
        kind = self.choice(["unary", "binary", "transpose"])
        if kind == "unary":
            c2 = self.op(ge.SigmoidOp, {"x": c}, keep=False)
        elif kind == "binary":
            c2 = self.op(ge.MulOp, {"a": c, "b": self.const(np.float32(self.rng.uniform(0.5, 2)))}, keep=False)
        else:
            c2 = self.op(ge.TransposeOp, {"data": c}, {"perm": list(range(len(cshape)))[::-1]}, keep=False)
            if c2 is not None and len(cshape) > 1:  # transpose back so it still broadcasts
                c2 = self.op(ge.TransposeOp, {"data": c2}, {"perm": list(range(len(cshape)))[::-1]}, keep=False)
        if c2 is None:
            return None
        return self.op(ge.AddOp, {"a": x, "b": c2})

    # -- patterns ---------------------------------------------------------------------------------
    def conv_bn_relu(self):
        y = self.conv()
        y = y and self.batch_norm(y)
        return y and self.op(ge.ReluOp, {"x": y})

    def matmul_add_gelu(self):
        y = self.matmul()
        if y is None:
            return None
        n = self.dims(y)[-1]
        y = self.op(ge.AddOp, {"a": y, "b": self.const(self.randn(n))})
        return y and self.op(ge.GeluOp, {"x": y}, {"approximate": self.choice(["none", "tanh"])})

    def erf_gelu(self):
        x = self.pick()
        d = self.op(ge.DivOp, {"a": x, "b": self.const(np.float32(math.sqrt(2)))})
        e = d and self.op(ge.ErfOp, {"x": d})
        p = e and self.op(ge.AddOp, {"a": e, "b": self.const(np.float32(1.0))})
        h = p and self.op(ge.MulOp, {"a": x, "b": self.const(np.float32(0.5))})
        return h and self.op(ge.MulOp, {"a": h, "b": p})

    def transpose_pair(self):
        x = self.pick(lambda s: len(s) >= 2)
        if x is None:
            return None
        perm = self.draw(st.permutations(list(range(len(self.dims(x))))))
        y = self.transpose(x, perm)
        inverse = [perm.index(i) for i in range(len(perm))]
        return y and self.transpose(y, inverse)

    def reshape_chain(self):
        y = self.reshape()
        y = y and self.reshape(y)
        return y and (self.reshape(y) if self.draw(st.booleans()) else y)

    def duplicate_constants(self):
        """The same value twice (inline or as weights, under different keys) feeding equal ops."""
        x = self.pick()
        shape = self.broadcast_shape(self.dims(x))
        value = self.randn(*shape)
        kind = self.choice(["add", "mul"])
        cls = ge.AddOp if kind == "add" else ge.MulOp
        ys = []
        for _ in range(2):
            c = self.const(value, weight=self.draw(st.booleans()) if value.size <= ge.ConstantOp.INLINE_LIMIT else None)
            ys.append(self.op(cls, {"a": x, "b": c}))
        if None in ys:
            return None
        return self.op(ge.SubOp, {"a": ys[0], "b": ys[1]})

    def shape_subgraph(self):
        """reshape(x, concat(shape(x)[:1], [-1])): `?` dims until the shape chain is folded."""
        x = self.pick(lambda s: len(s) >= 2)
        if x is None:
            return None
        s = self.op(ge.ShapeOp, {"data": x}, keep=False)
        one = np.array([0], np.int64), np.array([1], np.int64)
        head = s and self.op(
            ge.SliceOp,
            {"data": s, "starts": self.const(one[0]), "ends": self.const(one[1]), "axes": None, "steps": None},
            keep=False,
        )
        target = head and self.op(
            ge.ConcatOp, {"inputs": [head, self.const(np.array([-1], np.int64))]}, {"axis": 0}, keep=False
        )
        y = target and self.op(ge.ReshapeOp, {"data": x, "shape": target})
        return y and (self.op(ge.ReluOp, {"x": y}) if self.draw(st.booleans()) else y)

    STEPS = (
        "unary",
        "binary",
        "matmul",
        "gemm",
        "conv",
        "batch_norm",
        "softmax",
        "layer_norm",
        "reduce_mean",
        "transpose",
        "reshape",
        "concat",
        "slice",
        "constants_only",
        "conv_bn_relu",
        "matmul_add_gelu",
        "erf_gelu",
        "transpose_pair",
        "reshape_chain",
        "duplicate_constants",
        "shape_subgraph",
        "constants_only",
        "duplicate_constants",
    )
    """The kinds of steps (the two the cleanup passes feed on twice, to draw them more often)."""

    def module(self) -> ModuleOp:
        produced = [op.results[0] for op in self.block.ops if op.results and not isinstance(op, ge.ConstantOp)]
        outputs = [v for v in produced if not v.uses] or list(self.block.args[:1])
        self.block.add_op(func.ReturnOp(*outputs))
        names = ArrayAttr([DictionaryAttr({"ge.name": StringAttr(n)}) for n in self.arg_names])
        out_names = ArrayAttr([DictionaryAttr({"ge.name": StringAttr(f"y{i}")}) for i in range(len(outputs))])
        fn = func.FuncOp(
            "main",
            ([a.type for a in self.block.args], [v.type for v in outputs]),
            Region(self.block),
            arg_attrs=names,
            res_attrs=out_names,
        )
        return ModuleOp([fn])


@st.composite
def ge_graphs(draw, max_ops: int = 25, max_steps: int = 10, steps: tuple[str, ...] | None = None):
    """A random ge module with its weights and inputs: `(module, weights, inputs)`.

    `steps` limits the kinds of steps (names of `_Builder.STEPS`); at most `max_ops` non-constant
    ops are built."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    b = _Builder(draw, rng, max_ops)
    for _ in range(draw(st.integers(1, 3))):
        rank = draw(st.integers(2, 4))
        shape = tuple(draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
        b.input(shape)
    kinds = steps or _Builder.STEPS
    for step in draw(st.lists(st.sampled_from(kinds), min_size=min(3, max_steps), max_size=max_steps)):
        if b.full():
            break
        getattr(b, step)()
    module = b.module()
    module.verify()
    attach_weights(module, b.weights)
    return module, b.weights, b.inputs
