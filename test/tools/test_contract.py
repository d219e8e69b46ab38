"""The tools' contract under hostile input: a user mistake is one line and exit code 1, a
compiler bug is one line saying "internal error" and where, exit code 2 (the traceback with --debug),
and outputs are written all together or not at all. Each test reproduces a finding first seen as a
traceback, a partial write or an allocation the input controlled."""

import io
import os
import subprocess
import sys
import time
import zipfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from tool_server import run as run_tool

from ge.tools import ge_opt, ge_run, ge_translate
from ge.tools.outputs import Outputs

IR = """builtin.module attributes {ge.weights = "w.safetensors"} {
  func.func @main(%x: tensor<2x4xf32> {ge.name = "x"}) -> (tensor<2x4xf32> {ge.name = "y"}) {
    %w = ge.constant #ge.weight<"w"> : tensor<4xf32>
    %0 = ge.add %x, %w : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32> loc("/add")
    func.return %0 : tensor<2x4xf32>
  }
}
"""


tool = run_tool


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def call(main, *args) -> int:
    """Runs a tool's main in this process and returns its exit code."""
    try:
        main([str(a) for a in args])
    except SystemExit as e:
        return e.code
    return 0


def fails(capsys, main, *args, code=1) -> str:
    assert call(main, *args) == code
    return one_line(capsys.readouterr().err)


def model(nodes, inputs, outputs, initializers=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def relu_model(dims):
    return model(
        [helper.make_node("Relu", ["x"], ["y"], name="/relu")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)],
    )


@pytest.fixture
def work(tmp_path):
    from ge.frontend.sidecar import save

    (tmp_path / "model.mlir").write_text(IR)
    save(tmp_path / "w.safetensors", {"w": np.arange(4, dtype=np.float32)})
    np.savez(tmp_path / "in.npz", x=np.ones((2, 4), np.float32))
    onnx.save(relu_model([2, 4]), tmp_path / "relu.onnx")
    return tmp_path


def no_temporaries(folder):
    return not [p.name for p in folder.iterdir() if p.name.startswith(".")]


# -- internal errors ------------------------------------------------------------------------------
RAISE_IN_RUN = """
import sys, ge.tools.ge_run as r
def broken(*a, **k):
    raise {exc}
r.run = broken
r.main(sys.argv[1:])
"""


def run_patched(exc, *args):
    return run_tool("python", "-c", RAISE_IN_RUN.format(exc=exc), *args)


def test_unexpected_exception_is_an_internal_error_with_its_place(work):
    r = run_patched("ZeroDivisionError('division by zero')", work / "model.mlir", "--inputs", work / "in.npz")
    assert r.returncode == 2
    line = one_line(r.stderr)
    assert line.startswith("ge-run: internal error: ZeroDivisionError: division by zero (at tools/ge_run.py:"), line
    debug = run_patched(
        "ZeroDivisionError('division by zero')", work / "model.mlir", "--inputs", work / "in.npz", "--debug"
    )
    assert debug.returncode == 2 and "Traceback" in debug.stderr and "internal error" in debug.stderr


@pytest.mark.mutation
def test_pass_that_breaks_the_ir_is_an_internal_error(work):
    """ge.passes.pipeline.PassVerificationError is a plain Exception: it takes the generic path."""
    script = """
import sys
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
class PassVerificationError(Exception):
    pass
def apply(self, ctx, module):
    raise PassVerificationError("cse produced invalid IR: ge.add '/add': operand types differ")
CommonSubexpressionElimination.apply = apply
import ge.tools.ge_opt
ge.tools.ge_opt.main(sys.argv[1:])
"""
    out = work / "out.mlir"
    r = run_tool("python", "-c", script, work / "model.mlir", "-p", "cse", "-o", out)
    assert r.returncode == 2, r.stderr
    assert "ge-opt: internal error: PassVerificationError: cse produced invalid IR" in one_line(r.stderr)
    assert not out.exists() and not (work / "out.safetensors").exists()


@pytest.mark.parametrize(
    "exc, needle",
    [
        ("MemoryError()", "ge-run: error: out of memory while running"),
        ("RecursionError('maximum recursion depth exceeded')", "ge-run: error: nesting too deep while running"),
    ],
)
def test_resource_errors_are_one_line_naming_the_step(work, exc, needle):
    r = run_patched(exc, work / "model.mlir", "--inputs", work / "in.npz")
    assert r.returncode == 1
    assert one_line(r.stderr).startswith(needle)


def test_closed_stdout_ends_quietly(work):
    process = subprocess.Popen(
        [sys.executable, "-m", "ge.tools.ge_run", work / "relu.onnx", "--random-inputs", "0", "--print"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    process.stdout.close()  # like `| head -0`: the reader is gone before the tool prints
    stderr = process.stderr.read()
    assert process.wait() in (0, 1)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


@pytest.mark.parametrize(
    "main, args",
    [
        (ge_run.main, ["x.mlir", "--random-inputs", "-1"]),
        (ge_run.main, ["x.mlir", "--random-inputs", "0", "--max-tensor-bytes", "4 parsecs"]),
        (ge_translate.main, ["--import-onnx", "x.onnx", "--bogus"]),
        (ge_opt.main, ["x.mlir", "--max-tensor-bytes", "-3"]),
    ],
)
def test_bad_command_line_is_one_line_exit_1(capsys, main, args):
    assert "(see --help)" in fails(capsys, main, *args)


# -- outputs --------------------------------------------------------------------------------------
def test_output_naming_a_directory(capsys, work):
    (work / "adir").mkdir()
    for main, args in (
        (ge_translate.main, ["--import-onnx", work / "relu.onnx"]),
        (ge_opt.main, [work / "model.mlir"]),
        (ge_run.main, [work / "model.mlir", "--inputs", work / "in.npz"]),
    ):
        assert "adir: is a directory" in fails(capsys, main, *args, "-o", work / "adir")
    assert no_temporaries(work)


def test_ir_output_may_not_be_its_own_sidecar(capsys, work):
    assert "may not be named *.safetensors" in fails(
        capsys, ge_translate.main, "--import-onnx", work / "relu.onnx", "-o", work / "out.safetensors"
    )
    assert "may not be named *.safetensors" in fails(
        capsys, ge_opt.main, work / "model.mlir", "-o", work / "out.safetensors"
    )
    assert not (work / "out.safetensors").exists()


def test_two_outputs_naming_one_file(capsys, work):
    line = fails(
        capsys,
        ge_run.main,
        work / "model.mlir",
        "--inputs",
        work / "in.npz",
        "-o",
        work / "same",
        "--op-summary",
        work / "sub" / ".." / "same",
    )
    assert "would be the same file" in line
    assert not (work / "same").exists()


def test_outputs_may_not_overwrite_the_program_or_inputs(capsys, work):
    line = fails(capsys, ge_run.main, work / "model.mlir", "--inputs", work / "in.npz", "-o", work / "in.npz")
    assert "the outputs (-o) would overwrite the inputs" in line
    assert "would overwrite the program" in fails(
        capsys, ge_run.main, work / "model.mlir", "--inputs", work / "in.npz", "--trace", work / "model.mlir"
    )
    assert (work / "model.mlir").read_text() == IR


@pytest.fixture(scope="module")
def lowered(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lowered")
    onnx.save(relu_model([2, 4]), folder / "relu.onnx")
    assert ge_translate_ok(folder / "relu.onnx", folder / "relu.mlir")
    r = tool(
        "ge-opt",
        folder / "relu.mlir",
        "-p",
        "lower-to-tasks,plan-memory,lower-to-streams",
        "-o",
        folder / "streams.mlir",
    )
    assert r.returncode == 0, r.stderr
    return folder


def ge_translate_ok(onnx_path, out):
    return tool("ge-translate", "--import-onnx", onnx_path, "-o", out).returncode == 0


def test_bad_inputs_leave_trace_and_summary_untouched(capsys, lowered):
    """Found: the trace and op summary were written (over an existing trace) before the inputs were read."""
    np.savez(lowered / "bad.npz", z=np.ones(1))
    (lowered / "t.json").write_text("previous trace")
    line = fails(
        capsys,
        ge_run.main,
        lowered / "streams.mlir",
        "--inputs",
        lowered / "bad.npz",
        "--trace",
        lowered / "t.json",
        "--op-summary",
        lowered / "ops.csv",
    )
    assert "'z' is not an input" in line
    assert (lowered / "t.json").read_text() == "previous trace"
    assert not (lowered / "ops.csv").exists()
    # and with good inputs all three are written
    assert (
        call(
            ge_run.main,
            lowered / "streams.mlir",
            "--random-inputs",
            0,
            "-o",
            lowered / "o.npz",
            "--trace",
            lowered / "t.json",
            "--op-summary",
            lowered / "ops.csv",
        )
        == 0
    )
    assert (lowered / "t.json").read_text().startswith("{") and (lowered / "ops.csv").exists()


def test_failed_sidecar_write_keeps_the_previous_ir_and_sidecar(capsys, work, monkeypatch):
    """Found: ge-opt wrote the sidecar first and left it when the IR write failed (and vice versa)."""
    (work / "out.mlir").write_text("old ir")
    (work / "out.safetensors").write_bytes(b"old weights")

    def full_disk(tmp, *args):
        with open(tmp, "wb") as f:
            f.write(b"half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ge_opt, "save", full_disk)
    assert "out.safetensors: cannot write: No space left on device" in fails(
        capsys, ge_opt.main, work / "model.mlir", "-o", work / "out.mlir"
    )
    assert (work / "out.mlir").read_text() == "old ir"
    assert (work / "out.safetensors").read_bytes() == b"old weights"
    assert no_temporaries(work)


def test_outputs_commit_all_or_nothing(tmp_path):
    (tmp_path / "a").write_text("old a")
    outputs = Outputs()
    outputs.add(tmp_path / "a", "new a")

    def broken(tmp):
        raise RuntimeError("writer bug")

    outputs.add(tmp_path / "b", broken)
    with pytest.raises(RuntimeError):
        outputs.commit()
    assert (tmp_path / "a").read_text() == "old a" and not (tmp_path / "b").exists()
    assert no_temporaries(tmp_path)
    good = Outputs()
    good.add(tmp_path / "a", "new a")
    good.add(tmp_path / "b", b"new b")
    good.commit()
    assert (tmp_path / "a").read_text() == "new a" and (tmp_path / "b").read_bytes() == b"new b"


def test_new_outputs_get_ordinary_permissions(tmp_path):
    """mkstemp makes 0600 files; an output is readable like any file the user creates."""
    outputs = Outputs()
    outputs.add(tmp_path / "x", "text")
    outputs.commit()
    mask = os.umask(0)
    os.umask(mask)
    assert (tmp_path / "x").stat().st_mode & 0o777 == 0o666 & ~mask


def test_unknown_extension_names_the_file(capsys, work):
    (work / "model.txt").write_text(IR)
    line = fails(capsys, ge_opt.main, work / "model.txt")
    assert line.startswith(f"ge-opt: error: {work / 'model.txt'}: unrecognized file extension 'txt'"), line
    line = fails(capsys, ge_run.main, work / "model.txt", "--random-inputs", 0)
    assert line.startswith(f"ge-run: error: {work / 'model.txt'}: unrecognized file extension '.txt'"), line
    (work / "model").write_text(IR)  # no extension (lit's %t): IR text
    assert call(ge_run.main, work / "model", "--inputs", work / "in.npz") == 0


# -- inputs ---------------------------------------------------------------------------------------
def test_npy_and_random_bytes_are_not_npz(capsys, work):
    np.save(work / "x.npy", np.ones((2, 4), np.float32))
    (work / "noise.npz").write_bytes(np.random.default_rng(0).bytes(4096))
    for name in ("x.npy", "noise.npz"):
        line = fails(capsys, ge_run.main, work / "model.mlir", "--inputs", work / name)
        assert f"{name}: not an .npz archive" in line, line


def npz_with_member(path, member, payload: bytes):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(member, payload)


def npy_header(shape, dtype="<f4") -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {"descr": dtype, "fortran_order": False, "shape": shape})
    return buffer.getvalue()


def test_huge_header_is_refused_before_reading(capsys, work):
    """Found: an .npy header claiming 1e12 elements ended in MemoryError. (The graph's input dim is
    symbolic: a static 1e12 is already refused by the importer.)"""
    relu = work / "big.onnx"
    onnx.save(relu_model(["n"]), relu)
    npz_with_member(work / "big.npz", "x.npy", npy_header((10**12,)))
    line = fails(capsys, ge_run.main, relu, "--inputs", work / "big.npz")
    assert "input 'x'" in line and "more than the limit of 4 GiB" in line, line


def test_names_are_checked_before_any_data(capsys, work):
    """Found: a small .npz holding gigabytes of zeros under an unknown key was read whole first."""
    with zipfile.ZipFile(work / "bomb.npz", "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("unknown.npy", "w", force_zip64=True) as member:
            member.write(npy_header((64 << 20,), "|u1"))
            zeros = bytes(1 << 20)
            for _ in range(64):
                member.write(zeros)
        z.writestr("x.npy", b"not even an npy header")
    start = time.perf_counter()
    line = fails(capsys, ge_run.main, work / "model.mlir", "--inputs", work / "bomb.npz")
    assert "'unknown' is not an input" in line and time.perf_counter() - start < 5


@pytest.mark.parametrize(
    "payload, needle",
    [
        (npy_header((2, 4), "|O"), "holds Python objects"),
        (npy_header((2, 4)) + bytes(8), "is truncated"),
        (npy_header((2, 5)) + bytes(40), "has shape [2, 5]"),
        (b"\x93NUMPY\x01\x00\x05\x00{'de", "not an .npy array"),
    ],
)
def test_bad_members(capsys, work, payload, needle):
    npz_with_member(work / "bad.npz", "x.npy", payload)
    line = fails(capsys, ge_run.main, work / "model.mlir", "--inputs", work / "bad.npz", "-o", work / "o.npz")
    assert "input 'x'" in line and needle in line, line
    assert not (work / "o.npz").exists()


def test_inputs_read_from_headers_equal_numpys(capsys, work):
    """The header-first reader gives what np.load gives, Fortran order and bf16 (saved as raw V2) included."""
    import ml_dtypes

    np.savez(work / "f.npz", x=np.asfortranarray(np.arange(8, dtype=np.float32).reshape(2, 4)))
    assert call(ge_run.main, work / "model.mlir", "--inputs", work / "f.npz", "-o", work / "o.npz") == 0
    np.testing.assert_array_equal(np.load(work / "o.npz")["y"], np.arange(8).reshape(2, 4) + np.arange(4))
    (work / "bf.mlir").write_text("""builtin.module {
  func.func @main(%x: tensor<3xbf16> {ge.name = "x"}) -> (tensor<3xbf16> {ge.name = "y"}) {
    %0 = ge.relu %x : (tensor<3xbf16>) -> tensor<3xbf16> loc("/relu")
    func.return %0 : tensor<3xbf16>
  }
}
""")
    np.savez(work / "bf.npz", x=np.array([-1, 2, 3], ml_dtypes.bfloat16))
    assert call(ge_run.main, work / "bf.mlir", "--inputs", work / "bf.npz", "--print") == 0
    assert "y: bfloat16[3]" in capsys.readouterr().out


# -- allocations the input controls ---------------------------------------------------------------
def relu_ir(dims: str) -> str:
    t = f"tensor<{dims}xf32>"
    return f"""func.func @main(%x: {t}) -> {t} {{
  %y = ge.relu %x : ({t}) -> {t}
  func.return %y : {t}
}}
"""


@pytest.mark.parametrize(
    "dims, needle",
    [
        ("1000000000000", "needs 3.64 TiB, more than the limit of 4 GiB"),
        ("4611686018427387904x4611686018427387904", "more than the limit"),  # the element count overflows int64
    ],
)
def test_random_inputs_check_sizes(capsys, tmp_path, dims, needle):
    (tmp_path / "m.mlir").write_text(relu_ir(dims))
    line = fails(capsys, ge_run.main, tmp_path / "m.mlir", "--random-inputs", 0)
    assert "random input 'arg0'" in line and needle in line, line


@pytest.mark.parametrize(
    "dims, needle",
    [
        ([10**12], "more than max-tensor-bytes"),
        ([-5], "dim #0 is -5"),
        ([2**62, 2**62], "more than max-tensor-bytes"),
    ],
)
def test_importer_checks_input_sizes_first(capsys, tmp_path, dims, needle):
    """The same models as ONNX files are refused by the importer's validation, before any input exists."""
    onnx.save(relu_model(dims), tmp_path / "m.onnx")
    line = fails(capsys, ge_run.main, tmp_path / "m.onnx", "--random-inputs", 0)
    assert "graph input 'x'" in line and needle in line, line


def test_verify_numerics_checks_sizes(capsys, tmp_path):
    (tmp_path / "m.mlir").write_text(relu_ir("1000000000000"))
    line = fails(capsys, ge_opt.main, tmp_path / "m.mlir", "-p", "cse", "--verify-numerics")
    assert "--verify-numerics" in line and "more than the limit" in line, line


def test_verify_numerics_negative_seed(capsys, work):
    line = fails(capsys, ge_opt.main, work / "model.mlir", "-p", "cse", "--verify-numerics=-1")
    assert "--verify-numerics: the random seed must be a non-negative integer, not -1" in line


def test_max_tensor_bytes_option(capsys, work):
    line = fails(capsys, ge_run.main, work / "model.mlir", "--inputs", work / "in.npz", "--max-tensor-bytes", "31")
    assert "needs 32 bytes, more than the limit of 31 bytes" in line
    assert call(ge_run.main, work / "model.mlir", "--inputs", work / "in.npz", "--max-tensor-bytes", "32") == 0


def shape_driven(op_type, *extra_inputs):
    inputs = [helper.make_tensor_value_info(name, TensorProto.INT64, [n]) for name, n in extra_inputs]
    return model(
        [helper.make_node(op_type, [name for name, _ in extra_inputs], ["y"], name=f"/{op_type.lower()}")],
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )


def range_model():
    scalars = [helper.make_tensor_value_info(n, TensorProto.INT64, []) for n in ("start", "limit", "delta")]
    return model(
        [helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="/range")],
        scalars,
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
    )


def expand_model():
    return model(
        [helper.make_node("Expand", ["x", "shape"], ["y"], name="/expand")],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
            helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )


def resize_model():
    return model(
        [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], name="/resize", mode="nearest")],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2]),
            helper.make_tensor_value_info("sizes", TensorProto.INT64, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )


def pad_model():
    return model(
        [helper.make_node("Pad", ["x", "pads"], ["y"], name="/pad")],
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2]),
            helper.make_tensor_value_info("pads", TensorProto.INT64, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )


@pytest.mark.parametrize(
    "build, inputs, needle",
    [
        (
            lambda: shape_driven("ConstantOfShape", ("s", 1)),
            {"s": np.array([10**15])},
            "ge.constant_of_shape '/constantofshape': a tensor of shape [1000000000000000]",
        ),
        (lambda: shape_driven("ConstantOfShape", ("s", 1)), {"s": np.array([-3])}, "negative dimension"),
        (expand_model, {"x": np.ones(1, np.float32), "shape": np.array([10**6, 10**6])}, "ge.expand '/expand'"),
        (range_model, {"start": np.array(0), "limit": np.array(10**13), "delta": np.array(1)}, "ge.range '/range'"),
        (range_model, {"start": np.array(0), "limit": np.array(5), "delta": np.array(0)}, "no finite length"),
        (
            resize_model,
            {"x": np.ones((1, 1, 2, 2), np.float32), "sizes": np.array([1, 1, 10**6, 10**6])},
            "ge.resize '/resize': a tensor of shape [1, 1, 1000000, 1000000]",
        ),
        (
            pad_model,
            {"x": np.ones((2, 2), np.float32), "pads": np.array([0, 0, 10**6, 10**6])},
            "ge.pad '/pad': a tensor of shape [1000002, 1000002]",
        ),
    ],
)
def test_data_dependent_sizes_are_checked_before_allocating(capsys, tmp_path, build, inputs, needle):
    """Found: ConstantOfShape of 1e15 elements at run time was a 62-line traceback that dumped the IR."""
    onnx.save(build(), tmp_path / "m.onnx")
    np.savez(
        tmp_path / "in.npz", **{k: np.asarray(v, np.int64) if v.dtype.kind == "i" else v for k, v in inputs.items()}
    )
    line = fails(capsys, ge_run.main, tmp_path / "m.onnx", "--inputs", tmp_path / "in.npz")
    assert needle in line, line
