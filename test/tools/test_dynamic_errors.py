"""Bad input to a dynamic graph, one line and exit 1 each: sizes that break a symbolic constraint
when the inputs bind them (two sizes for one name, a size outside the compiled range), an input
that fits no gear without hybrid mode, more than 100 gears, gears that contradict themselves, and a
broadcast or a reshape the sizes break (at the ge level and in a compiled artifact bound when it runs).
(A Loop past its maximum trip count: test/frontend/test_onnx_loops.py.)"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import helper

from ge.tools import ge_compile, ge_opt, ge_run, ge_translate

F32 = onnx.TensorProto.FLOAT


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """y = relu(x @ w) * mask over [batch, seq], imported."""
    w = onnx.numpy_helper.from_array(np.ones((4, 4), np.float32), "w")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"]),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("Mul", ["r", "mask"], ["y"]),
    ]
    inputs = [
        helper.make_tensor_value_info("x", F32, ["batch", "seq", 4]),
        helper.make_tensor_value_info("mask", F32, ["batch", "seq", 1]),
    ]
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", F32, ["batch", "seq", 4])], [w])
    folder = tmp_path_factory.mktemp("dynamic")
    model = folder / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), model)
    ge_translate.main(["--import-onnx", str(model), "-o", str(folder / "m.mlir")])
    return folder


def _inputs(folder, x_shape, mask_shape):
    path = folder / f"in_{'x'.join(map(str, x_shape))}_{'x'.join(map(str, mask_shape))}.npz"
    np.savez(path, x=np.ones(x_shape, np.float32), mask=np.ones(mask_shape, np.float32))
    return path


def _one_line(code, err) -> str:
    assert code == 1 and err.count("\n") == 1, err
    return err.strip()


def test_two_sizes_for_one_name(program, run_main):
    code, _, err = run_main(ge_run.main, [program / "m.mlir", "--inputs", _inputs(program, (2, 3, 4), (2, 5, 1))])
    assert _one_line(code, err).endswith("input 'mask' has seq = 5 (dim 1), but input 'x' gives seq = 3 (dim 1)")


def test_a_size_outside_the_compiled_range(program, run_main):
    out = program / "ranged.mlir"
    code, _, err = run_main(ge_opt.main, [program / "m.mlir", "-p", 'ge-optimize{dim_ranges="seq=1:8"}', "-o", out])
    assert code == 0, err
    code, _, err = run_main(ge_run.main, [out, "--inputs", _inputs(program, (1, 9, 4), (1, 9, 1))])
    assert _one_line(code, err).endswith(
        "input 'x' has seq = 9 (dim 1), outside the range [1, 8] the graph was compiled for"
    )


def test_an_input_that_fits_no_gear(program, run_main):
    out = program / "gears.mlir"
    code, _, err = run_main(
        ge_opt.main, [program / "m.mlir", "--ge-option", "ge.dynamicDims=1,4,1,4;2,2,2,2", "-o", out]
    )
    assert code == 0, err
    code, _, err = run_main(ge_run.main, [out, "--inputs", _inputs(program, (2, 2, 4), (2, 2, 1))])
    assert code == 0, err
    code, _, err = run_main(ge_run.main, [out, "--inputs", _inputs(program, (3, 2, 4), (3, 2, 1))])
    assert _one_line(code, err).endswith(
        "ge.gears 'gears': the inputs' shapes [3, 2, 4], [3, 2, 1] fit no gear (batch=1,seq=4; batch=2,seq=2)"
    )


def test_more_than_100_gears(program, run_main):
    gears = ";".join(f"batch={b},seq=1" for b in range(1, 102))
    code, _, err = run_main(ge_opt.main, [program / "m.mlir", "-p", f'specialize-gears{{dims="{gears}"}}'])
    assert _one_line(code, err) == "ge-opt: error: specialize-gears: 101 gears, more than 100"


def test_gears_that_contradict_themselves(program, run_main):
    """GE's positional form gives one size per unknown input dim: x's batch and mask's batch must agree."""
    code, _, err = run_main(ge_opt.main, [program / "m.mlir", "--ge-option", "ge.dynamicDims=1,4,2,4"])
    assert _one_line(code, err) == "ge-opt: error: specialize-gears: gear 0 ('1,4,2,4') gives batch both 1 and 2"


@pytest.fixture(scope="module")
def unrelated(tmp_path_factory):
    """z = reshape(x + y, [-1, 8]) over x [a, 4] and y [b, 4]: the add needs a = b and the reshape an
    element count divisible by 8, constraints that bind only when the inputs come; compiled whole
    (ge-compile: an artifact of a graph bound when it runs) and as ge IR."""
    nodes = [helper.make_node("Add", ["x", "y"], ["s"]), helper.make_node("Reshape", ["s", "shape"], ["z"])]
    shape = onnx.numpy_helper.from_array(np.array([-1, 8], np.int64), "shape")
    inputs = [helper.make_tensor_value_info("x", F32, ["a", 4]), helper.make_tensor_value_info("y", F32, ["b", 4])]
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("z", F32, None)], [shape])
    folder = tmp_path_factory.mktemp("unrelated")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), folder / "m.onnx")
    ge_translate.main(["--import-onnx", str(folder / "m.onnx"), "-o", str(folder / "m.mlir")])
    ge_compile.main([str(folder / "m.onnx"), "-o", str(folder / "m.ge"), "--no-cache", "--quiet"])
    for name, a, b in (("good", 4, 4), ("broadcast", 3, 2), ("count", 3, 3)):
        np.savez(folder / f"{name}.npz", x=np.ones((a, 4), np.float32), y=np.ones((b, 4), np.float32))
    return folder


@pytest.mark.parametrize("program", ["m.mlir", "m.ge"])
def test_a_constraint_the_sizes_break_is_one_line_naming_the_op(unrelated, program, run_main):
    code, out, err = run_main(ge_run.main, [unrelated / program, "--inputs", unrelated / "good.npz", "--print"])
    assert code == 0 and "z: float32[2, 8]" in out, err
    code, _, err = run_main(ge_run.main, [unrelated / program, "--inputs", unrelated / "broadcast.npz"])
    assert "ge.add 's'" in _one_line(code, err) and "(3, 4)" in err and "(2, 4)" in err
    code, _, err = run_main(ge_run.main, [unrelated / program, "--inputs", unrelated / "count.npz"])
    assert _one_line(code, err).endswith(
        ("ge.reshape 'z': cannot reshape 12 elements into [-1, 8]", "(after refining its operand types)")
    )
