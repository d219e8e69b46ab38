"""The reduction and selection kernels against onnxruntime on configurations the ONNX node tests
leave out: the attribute axes of opsets before 18, several and negative axes, integer and f16 data, ties (TopK's order, ArgMax's select_last_index, Hardmax's first maximum), constant K,
i32 axes, empty reduced sets; Size folded at import for static shapes and run as an op otherwise;
and the export of the family (CumProd only at an opset that has it).

Each case is one ONNX node run twice (`test_tensor_kernels.compare`): the inputs after the first as
graph inputs, then as initializers (exact result dims). The mutation tests break one kernel rule
each and show a comparison here fails."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_oracle import ONNX_TYPES, compare_with_onnxruntime, node_model
from test_tensor_kernels import compare, ints, rand

from ge.frontend.onnx_exporter import OnnxExportError, export_module
from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import ge
from ge.interpreter.kernels import reductions
from ge.interpreter.kernels.checked import KernelError
from ge.interpreter.runner import run

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(5)


def ties(*shape: int, dtype=np.float32) -> np.ndarray:
    """Values from a handful, so rows repeat their extremes."""
    return RNG.integers(-2, 3, shape).astype(dtype)


def model_at(opset: int, op_type: str, inputs: dict[str, np.ndarray], outputs: int = 1, **attrs) -> onnx.ModelProto:
    """A one-node model at `opset`, every input a graph input."""
    outs = [f"out{i}" for i in range(outputs)]
    graph = helper.make_graph(
        [helper.make_node(op_type, list(inputs), outs, **attrs)],
        "g",
        [helper.make_tensor_value_info(n, ONNX_TYPES[v.dtype], v.shape) for n, v in inputs.items()],
        [onnx.ValueInfoProto(name=n) for n in outs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin", "ReduceProd"])
@pytest.mark.parametrize(
    "data, axes, keepdims",
    [
        (rand(3, 4, 5), ints(0, -1), 0),
        (ties(2, 3, 4, dtype=np.int32), ints(1), 1),
        (ties(3, 4, dtype=np.int64), ints(-2), 0),
        (rand(2, 3, 4, dtype=np.float16) / 4, ints(2, 0), 1),
    ],
)
def test_reduce(op_type, data, axes, keepdims):
    compare(op_type, {"data": data, "axes": axes}, keepdims=keepdims)


@pytest.mark.parametrize("op_type", ["ReduceMax", "ReduceMin", "ReduceProd"])
def test_reduce_with_attribute_axes_before_opset_18(op_type):
    data = rand(3, 4, 5)
    model = model_at(13, op_type, {"data": data}, axes=[-1, 0], keepdims=0)
    compare_with_onnxruntime(model, {"data": data}, rtol=1e-5, atol=1e-6)


def test_reduce_of_empty_sets():
    """ONNX's values for an empty reduced set: the type's lowest for a max, highest for a min, 1."""
    data = np.zeros((2, 0, 3), np.int32)
    for op_type, want in (("ReduceMax", np.iinfo(np.int32).min), ("ReduceMin", np.iinfo(np.int32).max)):
        model = model_at(20, op_type, {"data": data, "axes": ints(1)}, keepdims=0)
        module, weights = import_model(model)
        got = run(module, {"data": data, "axes": ints(1)}, weights)["out0"]
        assert got.dtype == np.int32 and got.shape == (2, 3) and (got == want).all(), op_type
    compare("ReduceProd", {"data": rand(2, 0, 3), "axes": ints(1)}, keepdims=1)
    compare("ReduceMax", {"data": rand(2, 0, 3), "axes": ints(-2)}, keepdims=0)


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize(
    "data, axis, keepdims, last",
    [
        (ties(3, 4, 5), 1, 1, 1),
        (ties(3, 4, 5), -1, 0, 0),
        (ties(4, 6, dtype=np.int64), 0, 0, 1),
        (ties(6, dtype=np.float16), 0, 1, 1),
        (ties(2, 5, dtype=np.int32), -1, 1, 0),
    ],
)
def test_arg(op_type, data, axis, keepdims, last):
    compare(op_type, {"data": data}, axis=axis, keepdims=keepdims, select_last_index=last)


@pytest.mark.parametrize(
    "x, k, axis, largest",
    [
        (ties(3, 6), 4, 1, 1),  # equal values: lower index first, largest and smallest alike
        (ties(3, 6), 4, -1, 0),
        (ties(5, 2, 3, dtype=np.int32), 3, 0, 1),
        (RNG.integers(0, 4, (2, 7)).astype(np.int64), 7, 1, 0),
        (rand(2, 5, dtype=np.float16), 0, 1, 1),
        (np.array([[np.iinfo(np.int64).min, 0, np.iinfo(np.int64).min, 5]]), 3, 1, 1),
    ],
)
def test_top_k(x, k, axis, largest):
    compare("TopK", {"X": x, "K": ints(k)}, outputs=2, axis=axis, largest=largest)


@pytest.mark.parametrize("op_type", ["CumSum", "CumProd"])
@pytest.mark.parametrize(
    "x, axis, exclusive, reverse",
    [
        (rand(3, 4, 2) / 4, np.array(1, np.int32), 1, 1),
        (rand(3, 4) / 4, ints(-1), 0, 1),
        (ties(2, 5, dtype=np.int64), np.array(-2, np.int64), 1, 0),
        (rand(6, dtype=np.float16) / 4, np.array(0, np.int32), 0, 0),
        (rand(2, 0), ints(1), 1, 0),  # an empty axis stays empty
    ],
)
def test_cumulative(op_type, x, axis, exclusive, reverse):
    model = model_at(26, op_type, {"x": x, "axis": axis}, exclusive=exclusive, reverse=reverse)
    compare_with_onnxruntime(model, {"x": x, "axis": axis}, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("x, axis", [(ties(3, 4, 5), 1), (ties(2, 6), -1), (ties(4, 3, dtype=np.float16), 0)])
def test_hardmax(x, axis):
    compare("Hardmax", {"x": x}, axis=axis)


def _size_model(dims) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Size", ["x"], ["out0"])],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, dims)],
        [onnx.ValueInfoProto(name="out0")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def test_size_folds_for_static_shapes_and_runs_otherwise():
    x = rand(3, 4, 5)
    static, _ = import_model(_size_model([3, 4, 5]))
    assert not any(isinstance(op, ge.SizeOp) for op in static.walk())
    assert run(static, {"x": x})["out0"] == 60
    dynamic, _ = import_model(_size_model(["n", 4, 5]))
    assert any(isinstance(op, ge.SizeOp) for op in dynamic.walk())
    got = run(dynamic, {"x": x[:2]})["out0"]
    assert got.dtype == np.int64 and got.shape == () and got == 40


def test_the_family_exports_and_onnxruntime_agrees():
    """ReduceMax, ArgMin, TopK, CumSum, Hardmax and Size exported at opset 21 compute what ge does."""
    text = """
func.func @main(%x: tensor<3x5xf32> {ge.name = "x"}) -> (tensor<3x1xf32> {ge.name = "m"}, tensor<5xi64> {ge.name = "a"},
    tensor<3x2xi64> {ge.name = "i"}, tensor<3x5xf32> {ge.name = "c"}, tensor<3x5xf32> {ge.name = "h"},
    tensor<i64> {ge.name = "s"}) {
  %one = ge.constant dense<[1]> : tensor<1xi64>
  %two = ge.constant dense<[2]> : tensor<1xi64>
  %m = ge.reduce_max %x, axes = %one : (tensor<3x5xf32>, tensor<1xi64>) -> tensor<3x1xf32>
  %a = ge.arg_min %x {keepdims = 0 : i64, select_last_index = 1 : i64} : (tensor<3x5xf32>) -> tensor<5xi64>
  %v, %i = ge.top_k %x, %two {largest = 0 : i64} : (tensor<3x5xf32>, tensor<1xi64>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  %axis = ge.constant dense<1> : tensor<i64>
  %c = ge.cum_sum %x, %axis {reverse = 1 : i64} : (tensor<3x5xf32>, tensor<i64>) -> tensor<3x5xf32>
  %h = ge.hardmax %x {axis = 0 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
  %s = ge.size %x : (tensor<3x5xf32>) -> tensor<i64>
  func.return %m, %a, %i, %c, %h, %s : tensor<3x1xf32>, tensor<5xi64>, tensor<3x2xi64>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<i64>
}
"""
    from ge.tools.common import parse_module

    module = parse_module(text, "family.mlir")
    inputs = {"x": ties(3, 5)}
    want = run(module, inputs)
    session = ort.InferenceSession(export_module(module).SerializeToString(), providers=["CPUExecutionProvider"])
    got = dict(zip([o.name for o in session.get_outputs()], session.run(None, inputs)))
    for name, value in want.items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)


CUM_PROD = """
func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> (tensor<4xf32> {ge.name = "y"}) {
  %axis = ge.constant dense<0> : tensor<i64>
  %0 = ge.cum_prod %x, %axis {exclusive = 1 : i64} : (tensor<4xf32>, tensor<i64>) -> tensor<4xf32> loc("/CumProd")
  func.return %0 : tensor<4xf32>
}
"""


def test_cum_prod_exports_from_opset_26_and_is_refused_before():
    from ge.tools.common import parse_module

    module = parse_module(CUM_PROD, "cum_prod.mlir")
    with pytest.raises(OnnxExportError) as e:
        export_module(module)
    assert "\n" not in str(e.value)
    assert "ge.cum_prod '/CumProd'" in str(e.value) and "from opset 26" in str(e.value)
    x = rand(4)
    session = ort.InferenceSession(
        export_module(module, opset=26).SerializeToString(), providers=["CPUExecutionProvider"]
    )
    np.testing.assert_allclose(session.run(None, {"x": x})[0], run(module, {"x": x})["y"], rtol=1e-6)


def test_a_k_beyond_the_axis_is_refused_in_one_line():
    """At import when K is a constant (the verifier), else when the kernel reads it."""
    x = rand(3, 4)
    with pytest.raises(OnnxImportError, match=r"^node 'out0' \(TopK, opset 21\): K 5 is larger than axis 1 of size 4$"):
        import_model(node_model("TopK", {"X": x, "K": ints(5)}, 2, {"K"}))
    module, weights = import_model(node_model("TopK", {"X": x, "K": ints(5)}, 2))
    with pytest.raises(KernelError) as refused:
        run(module, {"X": x, "K": ints(5)}, weights)
    # the line the tools print (the interpreter adds the IR below)
    assert str(refused.value).splitlines()[0] == "ge.top_k 'out0': K 5 is larger than axis 1 of size 4"


# -- mutations ------------------------------------------------------------------------------------


def test_mutation_top_k_ties_in_reverse_index_order_are_caught(monkeypatch):
    """TopK ordering equal values higher index first (a stable ascending sort read backwards)."""
    monkeypatch.setattr(
        reductions,
        "_order",
        lambda x, axis, largest: (
            np.flip(np.argsort(x, axis=axis, kind="stable"), axis)
            if largest
            else np.argsort(x, axis=axis, kind="stable")
        ),
    )
    with pytest.raises(AssertionError, match="out1"):
        test_top_k(ties(3, 6), 4, 1, 1)


def test_mutation_select_last_index_ignored_is_caught(monkeypatch):
    monkeypatch.setattr(reductions, "_extreme_index", lambda x, axis, pick, last: pick(x, axis=axis))
    with pytest.raises(AssertionError, match="out0"):
        test_arg("ArgMax", ties(3, 4, 5), 1, 1, 1)


def test_mutation_hardmax_at_the_last_maximum_is_caught(monkeypatch):
    monkeypatch.setattr(
        reductions, "_extreme_index", lambda x, axis, pick, last: x.shape[axis] - 1 - pick(np.flip(x, axis), axis=axis)
    )
    with pytest.raises(AssertionError, match="out0"):
        test_hardmax(ties(3, 4, 5), 1)


def test_mutation_an_empty_max_of_zero_is_caught(monkeypatch):
    """ReduceMax of an empty set as 0 (numpy's `initial` of a sum) instead of -inf."""
    monkeypatch.setattr(reductions, "_lowest", lambda dtype: 0)
    with pytest.raises(AssertionError):
        test_reduce_of_empty_sets()


def test_mutation_exclusive_scan_shifted_the_wrong_way_is_caught(monkeypatch):
    """An exclusive running sum that drops the first element instead of the last."""
    real = reductions._cumulative

    def shifted(op, ins, scan):
        out = real(op, ins, scan)
        if op.p("exclusive"):
            axis = int(np.asarray(ins["axis"]).reshape(-1)[0]) % out.ndim
            out = np.roll(real(op, ins, scan), -1, axis)
        return out

    monkeypatch.setattr(reductions, "_cumulative", shifted)
    with pytest.raises(AssertionError, match="out0"):
        test_cumulative("CumSum", rand(3, 4, 2) / 4, np.array(1, np.int32), 1, 1)


def test_mutation_size_never_static_is_caught(monkeypatch):
    """Size's static count dropped: the import keeps a ge.size op for a static shape (the
    fold-constants pass reads the same count)."""
    monkeypatch.setattr(ge.SizeOp, "static_size", lambda self: None)
    with pytest.raises(AssertionError):
        test_size_folds_for_static_shapes_and_runs_otherwise()
