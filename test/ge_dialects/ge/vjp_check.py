"""Checks an op's VJP against central finite differences of its own kernel, in float64.

For an op with float operands x and results y, and random cotangents c of the results, the VJP's
operand cotangents g must satisfy, for any direction v,

    sum_k <g_k, v_k>  ==  d/dt sum_r <y_r(x + t v), c_r>  at t = 0

The right side is taken by central differences of the op's kernel (step `eps`), once per float
operand (v nonzero only there), so a wrong gradient names its operand. Integer operands (indices,
axes, shapes) and the operands given in `constants` become inline constants, as the importer makes
them; every other operand is an argument of the function the VJP is built in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Block, Region, SSAValue

from ge.ge_dialects import ge
from ge.ge_dialects.ge.grad import GradBuilder
from ge.ge_dialects.ge.types import element_type_of, tensor
from ge.interpreter.ge import GeFunctions

Operand = np.ndarray | Sequence[np.ndarray] | None


def _is_float(array: np.ndarray) -> bool:
    return array.dtype.kind == "f"


class _Built:
    """The op applied to the arguments, its VJP, and the interpreter to run them."""

    def __init__(
        self, op_cls: type[ge.GeOp], operands: Mapping[str, Operand], props, num_results, constants: Sequence[str]
    ):
        self.names: list[tuple[str, int]] = []  # (operand group, index) of each float argument
        self.arrays: list[np.ndarray] = []
        block = Block()
        consts: list[ge.ConstantOp] = []
        built: dict[str, Any] = {}
        for name, value in operands.items():
            if value is None:
                built[name] = None
                continue
            group = [value] if isinstance(value, np.ndarray) else list(value)
            values: list[SSAValue] = []
            for i, array in enumerate(group):
                if _is_float(array) and name not in constants:
                    arg = block.insert_arg(tensor(element_type_of(array.dtype), array.shape), len(block.args))
                    self.names.append((name, i))
                    self.arrays.append(array)
                    values.append(arg)
                else:
                    c = ge.ConstantOp.inline(array)
                    consts.append(c)
                    values.append(c.output)
            built[name] = values[0] if isinstance(value, np.ndarray) else values
        block.add_ops(consts)
        self.op = op_cls.create(built, props, num_results=num_results, name="/op")
        block.add_op(self.op)
        self.float_results = [r for r in self.op.results if isinstance(r.type, TensorType) and _is_float_type(r.type)]
        self.cotangent_args = [block.insert_arg(r.type, len(block.args)) for r in self.float_results]
        ret = func.ReturnOp()
        block.add_op(ret)
        g = GradBuilder(block, ret)
        by_result = dict(zip(self.float_results, self.cotangent_args))
        cotangents = self.op.vjp(g, [by_result.get(r) for r in self.op.results])
        self.grads = list(cotangents)
        assert len(self.grads) == len(self.op.operands), "a VJP returns one cotangent per operand"
        arg_index = {id(v): k for k, v in enumerate(block.args[: len(self.arrays)])}
        self.grad_of_arg: dict[int, int] = {}
        returned: list[SSAValue] = [*self.float_results]
        for operand, grad in zip(self.op.operands, self.grads):
            k = arg_index.get(id(operand))
            if k is not None and grad is not None:
                assert grad.type == operand.type, f"cotangent type {grad.type} != operand type {operand.type}"
                self.grad_of_arg[k] = len(returned)
                returned.append(grad)
        ret.operands = returned
        fn = func.FuncOp("main", ([a.type for a in block.args], [v.type for v in returned]), Region(block))
        self.module = ModuleOp([fn])
        self.module.verify()
        self.fn = fn
        self.interpreter = Interpreter(self.module)
        self.interpreter.register_implementations(FuncFunctions())
        self.interpreter.register_implementations(GeFunctions())

    def run(self, xs: Sequence[np.ndarray], cts: Sequence[np.ndarray]) -> list[np.ndarray]:
        return [np.asarray(r) for r in self.interpreter.call_op(self.fn, (*xs, *cts))]


def _is_float_type(t: TensorType) -> bool:
    return np.dtype(ge.types.numpy_dtype(t.element_type)).kind == "f"


def check_vjp(
    op_cls: type[ge.GeOp],
    operands: Mapping[str, Operand],
    props: Mapping[str, Any] | None = None,
    *,
    num_results: int | None = None,
    constants: Sequence[str] = (),
    no_gradient: Sequence[str] = (),
    seed: int = 0,
    eps: float = 1e-6,
    rtol: float = 1e-6,
) -> None:
    """Asserts the VJP of `op_cls` on these operands (float64 arrays for the differentiable ones)
    agrees with central differences; `no_gradient` names float operands the VJP must leave None."""
    built = _Built(op_cls, operands, dict(props or {}), num_results, constants)
    rng = np.random.default_rng(seed)
    xs = built.arrays
    probe = built.run(xs, [np.zeros(r.type.get_shape(), np.float64) for r in built.float_results])
    cts = [rng.standard_normal(np.shape(y)) for y in probe[: len(built.float_results)]]
    outputs = built.run(xs, cts)

    def objective(values: list[np.ndarray]) -> float:
        ys = built.run(values, cts)[: len(cts)]
        return float(sum(np.sum(y * c) for y, c in zip(ys, cts)))

    checked = 0
    for k, (name, i) in enumerate(built.names):
        if name in no_gradient:
            assert k not in built.grad_of_arg, f"operand '{name}' must get no gradient"
            continue
        assert k in built.grad_of_arg, f"operand '{name}'[{i}] got no gradient"
        grad = outputs[built.grad_of_arg[k]]
        v = rng.standard_normal(xs[k].shape)
        plus = [x + eps * v if j == k else x for j, x in enumerate(xs)]
        minus = [x - eps * v if j == k else x for j, x in enumerate(xs)]
        numeric = (objective(plus) - objective(minus)) / (2 * eps)
        analytic = float(np.sum(grad * v))
        scale = max(abs(numeric), abs(analytic), 1e-3)
        assert abs(numeric - analytic) <= rtol * scale + 1e-7, (
            f"{op_cls.name} operand '{name}'[{i}]: VJP gives {analytic!r}, finite differences {numeric!r}"
        )
        checked += 1
    assert checked or no_gradient, "nothing was checked"
