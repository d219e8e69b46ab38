"""ge.resize kernel on the ONNX backend node test cases (test_resize_*), built directly as ops.

X is a function argument; roi, scales and sizes are inline constants, so shape inference sees
them and the result type is exact. Checks both the inferred shape and the values."""

from __future__ import annotations

import importlib

import numpy as np
import onnx
import pytest
from onnx.backend.test.case import node as node_cases
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from ge.ge_dialects import ge
from ge.ge_dialects.ge.types import element_type_of, tensor
from ge.interpreter.runner import run


def resize_cases() -> dict:
    """onnx's Resize cases alone: importing the one case module runs its exports (collecting every
    operator's cases would take seconds per process)."""
    importlib.import_module("onnx.backend.test.case.node.resize")
    return {c.name: c for c in node_cases._NodeTestCases if c.name.startswith("test_resize_")}


CASES = resize_cases()


def build_module(node: onnx.NodeProto, inputs: dict[str, np.ndarray]) -> ModuleOp:
    x = inputs["X"]
    block = Block(arg_types=[tensor(element_type_of(x.dtype), x.shape)])
    operands = {"X": block.args[0]}
    for slot, name in zip(("roi", "scales", "sizes"), list(node.input)[1:]):
        if name:
            constant = ge.ConstantOp.inline(inputs[name])
            block.add_op(constant)
            operands[slot] = constant.output
    props = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    resize = ge.ResizeOp.create(operands, props, name=node.name or "resize")
    block.add_ops([resize, func.ReturnOp(resize.Y)])
    fn = func.FuncOp("main", ([block.args[0].type], [resize.Y.type]), Region(block))
    module = ModuleOp([fn])
    module.verify()
    return module


@pytest.mark.parametrize("case_name", sorted(CASES))
def test_node_case(case_name):
    case = CASES[case_name]
    node = case.model.graph.node[0]
    names = [i.name for i in case.model.graph.input]
    for ins, outs in case.data_sets:
        inputs = dict(zip(names, ins))
        module = build_module(node, inputs)
        got = run(module, {"arg0": inputs["X"]})
        (result,) = got.values()
        assert result.shape == outs[0].shape
        np.testing.assert_allclose(result, outs[0], rtol=1e-3, atol=1e-5)


def run_resize(x: np.ndarray, props: dict, **shape_operands: np.ndarray | None) -> np.ndarray:
    """Runs one ge.resize on `x`; scales/sizes/roi given here are runtime arguments (not constants)."""
    names = [n for n, v in shape_operands.items() if v is not None]
    values = [x] + [shape_operands[n] for n in names]
    block = Block(arg_types=[tensor(element_type_of(v.dtype), v.shape) for v in values])
    resize = ge.ResizeOp.create({"X": block.args[0], **dict(zip(names, block.args[1:]))}, props)
    block.add_ops([resize, func.ReturnOp(resize.Y)])
    fn = func.FuncOp("main", ([a.type for a in block.args], [resize.Y.type]), Region(block))
    module = ModuleOp([fn])
    module.verify()
    (result,) = run(module, {f"arg{i}": v for i, v in enumerate(values)}).values()
    return result


def test_runtime_sizes_and_empty_scales():
    """Sizes known only at run time; an empty scales tensor (opset 11 style) counts as absent."""
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    sizes = np.array([1, 1, 3, 3], dtype=np.int64)
    props = {"mode": "linear"}
    plain = run_resize(x, props, sizes=sizes)
    with_empty = run_resize(x, props, scales=np.zeros(0, np.float32), sizes=sizes)
    assert plain.shape == with_empty.shape == (1, 1, 3, 3)
    np.testing.assert_array_equal(plain, with_empty)


def test_half_and_uint8_follow_float32():
    """f16 interpolates in f32 and rounds once; ui8 rounds to nearest and saturates."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 255, size=(1, 2, 5, 7)).astype(np.float32)
    scales = np.array([1, 1, 1.7, 0.6], dtype=np.float32)
    props = {"mode": "cubic"}
    reference = run_resize(x, props, scales=scales)
    half = run_resize(x.astype(np.float16), props, scales=scales)
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, reference, rtol=1e-3)
    small = run_resize(x.round().astype(np.uint8), props, scales=scales)
    expected = np.clip(np.rint(run_resize(x.round(), props, scales=scales)), 0, 255).astype(np.uint8)
    np.testing.assert_array_equal(small, expected)


def test_nearest_keeps_bool():
    x = np.array([[True, False], [False, True]])
    y = run_resize(x, {}, scales=np.array([2, 2], dtype=np.float32))
    np.testing.assert_array_equal(y, x.repeat(2, axis=0).repeat(2, axis=1))
