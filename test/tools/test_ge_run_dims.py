"""Named dims (ge_dialects/ge/dims.py): the importer keeps an input's dim_params (a fresh name for an
unnamed unknown dim), `ge-run --random-inputs --dims batch=2,seq=8` sizes the inputs by name, and
inputs that give one name two sizes, a `--dims` naming no dim of the graph or not NAME=SIZE, are
one line each."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.dims import DimsError, bind, input_dims, parse_sizes, sized
from ge.interpreter.runner import InputError, main_function, run
from ge.tools import ge_run

F32 = onnx.TensorProto.FLOAT


def _model() -> onnx.ModelProto:
    inputs = [
        helper.make_tensor_value_info("ids", F32, ["batch", "seq"]),
        helper.make_tensor_value_info("mask", F32, ["batch", "seq"]),
        helper.make_tensor_value_info("extra", F32, [None, 4]),
    ]
    outputs = [
        helper.make_tensor_value_info("y", F32, ["batch", "seq"]),
        helper.make_tensor_value_info("z", F32, [None, 4]),
    ]
    nodes = [helper.make_node("Mul", ["ids", "mask"], ["y"]), helper.make_node("Relu", ["extra"], ["z"])]
    graph = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.fixture(scope="module")
def imported():
    return import_model(_model())


def test_the_importer_keeps_dim_params_and_names_an_unnamed_dim(imported):
    fn = main_function(imported[0])
    assert input_dims(fn.arg_attrs, 3) == [["batch", "seq"], ["batch", "seq"], ["extra.dim0", None]]


def test_inputs_that_give_a_name_two_sizes_are_one_line(imported):
    module, weights = imported
    feeds = {
        "ids": np.ones((2, 3), np.float32),
        "mask": np.ones((2, 3), np.float32),
        "extra": np.ones((5, 4), np.float32),
    }
    assert run(module, feeds, weights)["y"].shape == (2, 3)
    feeds["mask"] = np.ones((3, 3), np.float32)
    with pytest.raises(
        InputError, match=r"^input 'mask' has batch = 3 \(dim 0\), but input 'ids' gives batch = 2 \(dim 0\)$"
    ):
        run(module, feeds, weights)


def test_random_inputs_take_their_sizes_by_name(imported, tmp_path, run_main):
    path = tmp_path / "dyn.onnx"
    onnx.save(_model(), path)
    out = tmp_path / "out.npz"
    code, _, err = run_main(
        ge_run.main, [path, "--random-inputs", "0", "--dims", "batch=2,seq=8,extra.dim0=3", "-o", out]
    )
    assert code == 0, err
    with np.load(out) as saved:
        assert saved["y"].shape == (2, 8) and saved["z"].shape == (3, 4)


@pytest.mark.parametrize(
    "dims, message",
    [
        ("batch=2,sq=8", "--dims sq: the graph has no dim of that name (its named dims: batch, seq, extra.dim0)"),
        ("batch", "--dims 'batch': expected NAME=SIZE (a name and a non-negative integer)"),
        ("batch=2,batch=3", "--dims batch is given twice"),
        ("batch=-1", "--dims 'batch=-1': expected NAME=SIZE"),
    ],
)
def test_a_bad_dims_is_one_line(tmp_path, run_main, dims, message):
    path = tmp_path / "dyn.onnx"
    onnx.save(_model(), path)
    code, _, err = run_main(ge_run.main, [path, "--random-inputs", "0", "--dims", dims, "--print"])
    assert code == 1
    assert err.count("\n") == 1 and message in err, err


def test_dims_without_random_inputs_is_a_usage_error(tmp_path, run_main):
    path = tmp_path / "dyn.onnx"
    onnx.save(_model(), path)
    code, _, err = run_main(ge_run.main, [path, "--inputs", tmp_path / "x.npz", "--dims", "batch=2"])
    assert code != 0 and "--dims sizes the random inputs" in err


def test_the_helpers():
    assert sized((None, None, 4), ("batch", None, None), {"batch": 5}) == (5, 1, 4)
    assert parse_sizes("a=1, b=2", ["a", "b"]) == {"a": 1, "b": 2}
    assert bind(["x", "y"], [["n"], ["n", None]], [(3,), (3, 7)]) == {"n": 3}
    with pytest.raises(DimsError, match="input 'y' has n = 4"):
        bind(["x", "y"], [["n"], ["n"]], [(3,), (4,)])
