"""Hostile ONNX models and weight sidecars: each bad input ends in one line naming the place and
the reason, exit code 1, no traceback and no output file; none is accepted with a wrong module.

Every case mutates a model that imports fine (`test_the_unmutated_models_import` keeps the
controls honest), so each test shows its check catching what it guards."""

from __future__ import annotations

import json
import os
import signal
import warnings
from contextlib import contextmanager

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper, numpy_helper

from ge.frontend.onnx_importer import import_model, load_onnx
from ge.frontend.onnx_ops import OnnxImportError
from ge.frontend.sidecar import SAFETENSORS_DTYPES, TAGGED_DTYPES, SidecarError, WeightStore, open_weights, save
from ge.frontend.validate import NESTING_LIMIT
from ge.tools import ge_run, ge_translate
from ge.tools.common import parse_module


# -- building models -------------------------------------------------------------------------------
def vi(name, shape, elem=TP.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def relu(x_shape=(2, 4)):
    return model(
        [helper.make_node("Relu", ["x"], ["y"], name="/relu")], [vi("x", list(x_shape))], [vi("y", list(x_shape))]
    )


def single(op_type, shape=(2, 4), out_shape=None, inputs=("x",), initializers=(), **attrs):
    node = helper.make_node(op_type, list(inputs), ["y"], name="/n", **attrs)
    return model([node], [vi("x", list(shape))], [vi("y", list(out_shape or shape))], initializers)


def constants(op_type, arrays: dict[str, np.ndarray], out_elem, **attrs):
    """A graph computing `op_type` on Constant nodes only (folded at import; a float initializer
    would be a parameter, which import-time folding leaves alone)."""
    nodes = [
        helper.make_node("Constant", [], [n], name=f"/{n}", value=numpy_helper.from_array(a, n))
        for n, a in arrays.items()
    ]
    node = helper.make_node(op_type, list(arrays), ["y"], name="/n", **attrs)
    return model([*nodes, node], [], [vi("y", None, out_elem)])


def external_model(location, offset=None, length=None):
    t = numpy_helper.from_array(np.zeros(4, np.float32), "w")
    t.ClearField("raw_data")
    t.data_location = TP.EXTERNAL
    for key, value in (("location", location), ("offset", offset), ("length", length)):
        if value is not None:
            entry = t.external_data.add()
            entry.key, entry.value = key, str(value)
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="/add")], [vi("x", [4])], [vi("y", [4])], [t])


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def nested_model_bytes(depth: int) -> bytes:
    """A model whose graph holds an If whose branch holds an If ... `depth` times (3 messages a
    level), built on the wire: protobuf itself refuses to build it that deep."""
    graph = helper.make_graph([helper.make_node("Identity", ["c"], ["o"])], "g", [], [vi("o", [], TP.BOOL)])
    payload = graph.SerializeToString()
    for _ in range(depth):
        attr = onnx.AttributeProto(name="then_branch", type=onnx.AttributeProto.GRAPH).SerializeToString()
        node = helper.make_node("If", ["c"], ["o"]).SerializeToString() + _field(5, attr + _field(6, payload))
        payload = _field(1, node) + helper.make_graph([], "g", [], [vi("o", [], TP.BOOL)]).SerializeToString()
    m = helper.make_model(helper.make_graph([], "x", [], []), opset_imports=[helper.make_opsetid("", 17)])
    m.ClearField("graph")
    return m.SerializeToString() + _field(7, payload)


# -- running the tools -----------------------------------------------------------------------------
@contextmanager
def deadline(seconds=20):
    """Fails instead of hanging (a FIFO opened for reading blocks until a writer comes)."""

    def expire(*_):
        raise TimeoutError("blocked")

    old = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def translate(tmp_path, capsys, m, name="m.onnx"):
    """Runs ge-translate on `m` (a ModelProto or raw bytes); (exit code, stderr lines, output written)."""
    path = tmp_path / name
    path.write_bytes(m if isinstance(m, bytes) else m.SerializeToString())
    out = tmp_path / "out.mlir"
    code = 0
    with deadline(), warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would be a second line on stderr
        try:
            ge_translate.main(["--import-onnx", str(path), "-o", str(out)])
        except SystemExit as e:
            code = e.code
    return code, capsys.readouterr().err.strip().splitlines(), out.exists()


def assert_refused(tmp_path, capsys, m, *needles):
    code, lines, written = translate(tmp_path, capsys, m)
    assert code == 1, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"ge-translate: error: {tmp_path / 'm.onnx'}: "), lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not written
    return lines[0]


def assert_imports(tmp_path, capsys, m) -> str:
    code, lines, written = translate(tmp_path, capsys, m)
    assert code == 0 and lines == [] and written, lines
    text = (tmp_path / "out.mlir").read_text()
    parse_module(text, "out.mlir")  # ge-opt can read what was written
    return text


# -- the graph -------------------------------------------------------------------------------------
def test_the_unmutated_models_import(tmp_path, capsys):
    assert "ge.relu" in assert_imports(tmp_path, capsys, relu())
    assert "ge.softmax" in assert_imports(tmp_path, capsys, single("Softmax", axis=1))
    assert "ge.transpose" in assert_imports(tmp_path, capsys, single("Transpose", out_shape=(4, 2), perm=[1, 0]))
    conv = model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="/conv", strides=[1, 1])],
        [vi("x", [1, 1, 4, 4])],
        [vi("y", [1, 1, 4, 4])],
        [numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float32), "w")],
    )
    assert "ge.conv" in assert_imports(tmp_path, capsys, conv)
    assert "ge.relu" in assert_imports(tmp_path, capsys, relu(("batch", 4)))  # a named dim is dynamic


@pytest.mark.parametrize("dim", [-1, -5])
def test_negative_dims(tmp_path, capsys, dim):
    assert_refused(tmp_path, capsys, relu((dim, 4)), "graph input 'x'", f"dim #0 is {dim}")


def test_negative_dim_of_an_initializer(tmp_path, capsys):
    w = numpy_helper.from_array(np.zeros(4, np.float32), "w")
    w.dims[0] = -4
    m = model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [4])], [vi("y", [4])], [w])
    assert_refused(tmp_path, capsys, m, "initializer 'w'", "dim #0 is -4")


@pytest.mark.parametrize(
    "op_type, attrs, out_shape, needle",
    [
        ("Softmax", {"axis": 1.5}, None, "attribute 'axis' is FLOAT, the operator expects INT"),
        ("Transpose", {"perm": "10"}, (4, 2), "attribute 'perm' is STRING, the operator expects INTS"),
        ("Transpose", {"perm": [1.0, 0.0]}, (4, 2), "attribute 'perm' is FLOATS, the operator expects INTS"),
    ],
)
def test_attribute_of_the_wrong_type(tmp_path, capsys, op_type, attrs, out_shape, needle):
    line = assert_refused(tmp_path, capsys, single(op_type, out_shape=out_shape, **attrs), needle)
    assert f"node '/n' ({op_type}, opset 17)" in line


def test_conv_strides_as_floats(tmp_path, capsys):
    m = model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="/conv", strides=[1.0, 1.0])],
        [vi("x", [1, 1, 4, 4])],
        [vi("y", [1, 1, 4, 4])],
        [numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float32), "w")],
    )
    assert_refused(tmp_path, capsys, m, "node '/conv' (Conv", "'strides' is FLOATS, the operator expects INTS")


def test_attribute_holding_another_type_than_declared(tmp_path, capsys):
    m = single("Softmax", axis=1)
    attr = m.graph.node[0].attribute[0]
    attr.ClearField("i")
    attr.f = 1.0  # declared INT, holds a float: reading `i` would silently give 0
    assert_refused(tmp_path, capsys, m, "attribute 'axis' is declared INT but holds f")


def test_attribute_given_twice(tmp_path, capsys):
    m = single("Softmax", axis=1)
    m.graph.node[0].attribute.append(helper.make_attribute("axis", 0))
    assert_refused(tmp_path, capsys, m, "attribute 'axis' is given twice")


def test_attribute_string_not_utf8(tmp_path, capsys):
    m = model(
        [helper.make_node("Gelu", ["x"], ["y"], name="/gelu", approximate=b"\xff\xfe")],
        [vi("x", [2])],
        [vi("y", [2])],
        opset=20,
    )
    assert_refused(tmp_path, capsys, m, "node '/gelu'", "attribute 'approximate': string is not valid UTF-8")


def test_two_nodes_writing_one_tensor(tmp_path, capsys):
    m = model(
        [helper.make_node("Relu", ["x"], ["y"], name="/a"), helper.make_node("Sigmoid", ["x"], ["y"], name="/b")],
        [vi("x", [2])],
        [vi("y", [2])],
    )
    assert_refused(tmp_path, capsys, m, "node '/b' (Sigmoid", "tensor 'y' is already defined by node '/a'")


def test_node_overwriting_a_graph_input(tmp_path, capsys):
    m = model([helper.make_node("Relu", ["x"], ["x"], name="/a")], [vi("x", [2])], [vi("x", [2])])
    assert_refused(tmp_path, capsys, m, "node '/a'", "tensor 'x' is already defined by graph input 'x'")


def test_graph_output_listed_twice(tmp_path, capsys):
    m = relu()
    m.graph.output.append(vi("y", [2, 4]))
    assert_refused(tmp_path, capsys, m, "graph output 'y' is listed twice")


def test_graph_input_listed_twice(tmp_path, capsys):
    m = relu()
    m.graph.input.append(vi("x", [2, 4]))
    assert_refused(tmp_path, capsys, m, "graph input 'x' is listed twice")


def test_initializer_given_twice(tmp_path, capsys):
    m = external_model("unused")
    m.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.zeros(4, np.float32), "w"))
    m.graph.initializer.append(numpy_helper.from_array(np.ones(4, np.float32), "w"))
    assert_refused(tmp_path, capsys, m, "initializer 'w' is given twice")


def test_unknown_data_types(tmp_path, capsys):
    assert_refused(
        tmp_path,
        capsys,
        model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2], 999)], [vi("y", [2])]),
        "input 'x' has data type 999",
    )
    w = numpy_helper.from_array(np.zeros(2, np.float32), "w")
    w.data_type = 999
    m = model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2])], [vi("y", [2])], [w])
    assert_refused(tmp_path, capsys, m, "initializer 'w' has data type 999, which ge does not support")
    value = helper.make_tensor("", TP.STRING, [1], [b"a"])
    m = model([helper.make_node("Constant", [], ["y"], name="/c", value=value)], [], [vi("y", [1])])
    assert_refused(tmp_path, capsys, m, "node '/c' (Constant, opset 17): attribute 'value' has data type STRING")


def test_raw_data_of_the_wrong_length(tmp_path, capsys):
    m = external_model("unused")
    m.graph.initializer[0].CopyFrom(numpy_helper.from_array(np.zeros(4, np.float32), "w"))
    m.graph.initializer[0].raw_data = b"\0" * 12
    assert_refused(tmp_path, capsys, m, "tensor 'w': raw data holds 12 bytes", "need 16")


def test_names_with_line_breaks_stay_on_one_line(tmp_path, capsys):
    m = model(
        [helper.make_node("Relu", ["x"], ["y"], name="/a\nb"), helper.make_node("Relu", ["x"], ["y"], name="/c")],
        [vi("x", [2])],
        [vi("y", [2])],
    )
    assert_refused(tmp_path, capsys, m, "tensor 'y' is already defined by node '/a\\nb'")


def test_input_used_before_it_is_defined(tmp_path, capsys):
    m = model(
        [helper.make_node("Relu", ["t"], ["y"], name="/b"), helper.make_node("Relu", ["x"], ["t"], name="/a")],
        [vi("x", [2])],
        [vi("y", [2])],
    )
    assert_refused(tmp_path, capsys, m, "node '/b'", "input #0 't' is not defined before the node")


@pytest.mark.parametrize("opset", [1 << 62, -1, 0])
def test_opset_outside_the_supported_range(tmp_path, capsys, opset):
    """Fuzz ge-translate / ge-run 000842: 2^62 reached onnx's get_schema, whose C int refused it with a
    TypeError (an internal error); the version is checked before any schema is looked up."""
    from ge.frontend.onnx_ops import MAX_OPSET, OLDEST_OPSET

    assert_refused(
        tmp_path, capsys, relu_at(opset), f"opset {opset} is not supported (supported: {OLDEST_OPSET} to {MAX_OPSET})"
    )
    assert "ge.relu" in assert_imports(tmp_path, capsys, relu_at(MAX_OPSET))


def relu_at(opset: int):
    m = relu()
    m.opset_import[0].version = opset
    return m


def test_a_node_name_that_is_not_utf8(tmp_path, capsys):
    """Fuzz ge-translate 1993: protobuf hands an invalid UTF-8 string over as bytes; the name reached
    the printer, whose AttributeError was an internal error."""
    m = model([helper.make_node("Relu", ["x"], ["y"], name="/reXlu")], [vi("x", [2])], [vi("y", [2])])
    data = m.SerializeToString()
    assert_imports(tmp_path, capsys, data)
    (tmp_path / "out.mlir").unlink()
    assert_refused(
        tmp_path, capsys, data.replace(b"/reXlu", b"/re\xfflu"), "graph.node[0].name (b'/re\\xfflu') is not UTF-8 text"
    )


# -- size limits -----------------------------------------------------------------------------------
def test_max_tensor_bytes_keyword():
    w = numpy_helper.from_array(np.zeros(64, np.float32), "w")  # 256 bytes
    m = model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [64])], [vi("y", [64])], [w])
    import_model(m, max_tensor_bytes=256)
    with pytest.raises(
        OnnxImportError,
        match=r"initializer 'w' has 64 elements \(256 bytes\), "
        r"more than max-tensor-bytes=255",
    ):
        import_model(m, max_tensor_bytes=255)


def test_max_tensor_bytes_of_a_node_result():
    """A result the model would make too large is refused even with no declared output shape."""
    shape = numpy_helper.from_array(np.array([1 << 20, 1 << 20], np.int64), "shape")
    m = model([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="/fill")], [], [vi("y", None)], [shape])
    with pytest.raises(
        OnnxImportError,
        match=r"node '/fill' \(ConstantOfShape, opset 17\): result #0 has "
        r"1099511627776 elements",
    ):
        import_model(m)
    shape = numpy_helper.from_array(np.array([1 << 10, 1 << 10], np.int64), "shape")
    m = model([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="/fill")], [], [vi("y", None)], [shape])
    import_model(m)
    with pytest.raises(OnnxImportError, match="result #0 has 1048576 elements"):
        import_model(m, max_tensor_bytes=1 << 20)


def test_constant_of_shape_whose_int64_element_count_wraps(tmp_path, capsys):
    """2^32 * 2^32 is 0 in int64: counted with Python ints, the size guard sees 2^64."""
    shape = numpy_helper.from_array(np.array([1 << 32, 1 << 32], np.int64), "shape")
    m = model([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="/fill")], [], [vi("y", None)], [shape])
    assert_refused(tmp_path, capsys, m, "node '/fill' (ConstantOfShape", "18446744073709551616 elements")


def test_input_beyond_max_tensor_bytes(tmp_path, capsys):
    assert_refused(tmp_path, capsys, relu((1 << 31, 4)), "graph input 'x' has 8589934592 elements")


# -- import-time folding ---------------------------------------------------------------------------
def test_gather_with_a_constant_index_out_of_range(tmp_path, capsys):
    m = constants("Gather", {"data": np.array([1, 2, 3], np.int64), "idx": np.array([7], np.int64)}, TP.INT64)
    assert_refused(tmp_path, capsys, m, "node '/n' (Gather", "index 7 is out of range for axis 0 of size 3")
    m = constants("Gather", {"data": np.array([1, 2, 3], np.int64), "idx": np.array([2], np.int64)}, TP.INT64)
    assert "dense<3>" in assert_imports(tmp_path, capsys, m)


def test_constant_node_without_outputs(tmp_path, capsys):
    value = numpy_helper.from_array(np.array([1.0], np.float32))
    m = relu()
    m.graph.node.insert(0, helper.make_node("Constant", [], [], name="/c", value=value))
    assert_refused(tmp_path, capsys, m, "node '/c' (Constant", "exactly one named output")


def test_integer_division_by_zero_is_not_folded(tmp_path, capsys):
    m = constants("Div", {"a": np.array([3, 1], np.int64), "b": np.array([0, 2], np.int64)}, TP.INT64)
    text = assert_imports(tmp_path, capsys, m)
    assert "ge.div" in text and "-9223372036854775808" not in text
    m = constants("Div", {"a": np.array([3, 1], np.int64), "b": np.array([2, 2], np.int64)}, TP.INT64)
    text = assert_imports(tmp_path, capsys, m)
    assert "ge.div" not in text and "dense<[1, 0]>" in text


def test_float_zero_by_zero_folds_to_nan_without_warnings(tmp_path, capsys):
    m = constants("Div", {"a": np.array([0.0, 1.0], np.float32), "b": np.array([0.0, 0.0], np.float32)}, TP.FLOAT)
    text = assert_imports(tmp_path, capsys, m)  # warnings are errors there
    assert "ge.div" not in text
    module, _ = import_model(m)
    from ge.ge_dialects.ge.base import constant_value

    ret = list(module.walk())[-1]
    value = constant_value(ret.operands[0])
    assert np.isnan(value[0]) and np.isposinf(value[1])


# -- external data ---------------------------------------------------------------------------------
@pytest.fixture
def weights_bin(tmp_path):
    (tmp_path / "w.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    return tmp_path / "w.bin"


def test_external_data_control(tmp_path, capsys, weights_bin):
    assert "ge.add" in assert_imports(tmp_path, capsys, external_model("w.bin"))
    assert "ge.add" in assert_imports(tmp_path, capsys, external_model("w.bin", offset=0, length=16))


@pytest.mark.parametrize(
    "offset, length, needle",
    [
        (8, None, "external data needs bytes 8 to 24 of w.bin, which has 16 bytes"),
        (None, 100, "external data length 100 does not match its dims [4] of FLOAT (16 bytes)"),
        (-4, None, "external data offset '-4' is not a non-negative integer"),
        ("1.5", None, "external data offset '1.5' is not a non-negative integer"),
        (None, -1, "external data length '-1' is not a non-negative integer"),
        (None, "abc", "external data length 'abc' is not a non-negative integer"),
        ("", None, "external data offset '' is not a non-negative integer"),
    ],
)
def test_external_data_range(tmp_path, capsys, weights_bin, offset, length, needle):
    assert_refused(tmp_path, capsys, external_model("w.bin", offset, length), "initializer 'w'", needle)


def test_external_data_missing_file(tmp_path, capsys):
    assert_refused(tmp_path, capsys, external_model("nope.bin"), "initializer 'w'", "cannot open: No such file")


def test_external_data_directory(tmp_path, capsys):
    (tmp_path / "d").mkdir()
    assert_refused(tmp_path, capsys, external_model("d"), "initializer 'w'", "is not a regular file")


def test_external_data_empty_location(tmp_path, capsys):
    assert_refused(tmp_path, capsys, external_model(""), "initializer 'w': external data has no location")


def test_external_data_fifo_does_not_block(tmp_path, capsys):
    os.mkfifo(tmp_path / "f")
    assert_refused(tmp_path, capsys, external_model("f"), "initializer 'w'", "f is not a regular file")


def test_model_file_fifo_does_not_block(tmp_path, capsys):
    os.mkfifo(tmp_path / "m.onnx")
    with deadline(), pytest.raises(SystemExit) as e:
        ge_translate.main(["--import-onnx", str(tmp_path / "m.onnx")])
    assert e.value.code == 1
    assert "is not a regular file" in capsys.readouterr().err


def test_external_data_beyond_max_tensor_bytes(tmp_path, weights_bin):
    (tmp_path / "m.onnx").write_bytes(external_model("w.bin").SerializeToString())
    load_onnx(tmp_path / "m.onnx")
    with pytest.raises(OnnxImportError, match="initializer 'w' has 4 elements"):
        load_onnx(tmp_path / "m.onnx", max_tensor_bytes=15)


def test_unloaded_external_data_is_not_read_from_the_working_folder(weights_bin, monkeypatch):
    monkeypatch.chdir(weights_bin.parent)
    with pytest.raises(OnnxImportError, match="tensor 'w' has external data that is not loaded"):
        import_model(external_model("w.bin"))


# -- nesting ---------------------------------------------------------------------------------------
def test_protobuf_nesting_limit_is_not_a_truncated_file(tmp_path, capsys):
    deep = nested_model_bytes(NESTING_LIMIT // 3 + 4)
    line = assert_refused(tmp_path, capsys, deep, "model nesting too deep")
    assert "truncated" not in line
    assert_refused(tmp_path, capsys, deep[: len(deep) // 2], "truncated or corrupt")
    # shallow nesting parses; the importer names the unsupported subgraph operator
    assert_refused(tmp_path, capsys, nested_model_bytes(3), "(If, opset 17)")


# -- ge-run on an .onnx ----------------------------------------------------------------------------
def test_ge_run_on_a_bad_onnx(tmp_path, capsys):
    m = relu()
    m.graph.output.append(vi("y", [2, 4]))
    (tmp_path / "m.onnx").write_bytes(m.SerializeToString())
    with pytest.raises(SystemExit) as e:
        ge_run.main([str(tmp_path / "m.onnx"), "--random-inputs", "0"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 1 and len(lines) == 1, lines
    assert lines[0] == f"ge-run: error: {tmp_path / 'm.onnx'}: graph output 'y' is listed twice"


# -- weight sidecars -------------------------------------------------------------------------------
def write_safetensors(path, tensors, metadata=None):
    """A safetensors file as other writers (torch) make it: {key: (dtype name, shape, bytes)}."""
    header, data = {}, b""
    for key, (dtype, shape, raw) in tensors.items():
        header[key] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(len(text).to_bytes(8, "little") + text + data)
    return path


def test_bf16_and_float8_as_torch_writes_them(tmp_path):
    bf16 = np.array([1.0, 2.0, -0.5], ml_dtypes.bfloat16)
    f8 = np.array([1.0, 2.0], ml_dtypes.float8_e4m3fn)
    e5 = np.array([4.0], ml_dtypes.float8_e5m2)
    store = WeightStore(
        write_safetensors(
            tmp_path / "w.safetensors",
            {
                "b": ("BF16", [3], bf16.tobytes()),
                "f": ("F8_E4M3", [2], f8.tobytes()),
                "e": ("F8_E5M2", [1], e5.tobytes()),
            },
        )
    )
    assert store["b"].dtype == ml_dtypes.bfloat16 and store["b"].tolist() == bf16.tolist()
    assert store["f"].dtype == ml_dtypes.float8_e4m3fn and store["f"].tolist() == [1.0, 2.0]
    assert store["e"].dtype == ml_dtypes.float8_e5m2 and store.spec("e") == (np.dtype(ml_dtypes.float8_e5m2), (1,))


@pytest.mark.parametrize("dtype", ["F4", "C64", "F6_E2M3", "STRING"])
def test_unsupported_safetensors_dtype(tmp_path, dtype):
    path = write_safetensors(tmp_path / "w.safetensors", {"w": (dtype, [2], b"\0\0")})
    with pytest.raises(SidecarError, match=f"tensor 'w' has dtype {dtype}, which ge does not support"):
        WeightStore(path)


@pytest.mark.parametrize(
    "metadata, needle",
    [
        ({"ge.bf16": "not json"}, "metadata ge.bf16 is not a JSON list of tensor names"),
        ({"ge.bf16": "5"}, "metadata ge.bf16 is not a JSON list of tensor names"),
        ({"ge.bf16": '["other"]'}, "metadata names tensor 'other', which the file does not hold"),
        ({"ge.dtypes": "[1]"}, "metadata ge.dtypes is not a JSON object of dtype names"),
        ({"ge.dtypes": '{"w": "float128"}'}, "gives tensor 'w' dtype 'float128'"),
        ({"ge.dtypes": '{"w": "int4"}'}, "tensor 'w' is tagged int4 but stored as U16"),
        ({"ge.bf16": 5}, "__metadata__ is not an object of strings"),
    ],
)
def test_bad_sidecar_metadata(tmp_path, metadata, needle):
    path = write_safetensors(tmp_path / "w.safetensors", {"w": ("U16", [1], b"\0\0")}, metadata)
    with pytest.raises(SidecarError) as e:
        WeightStore(path)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_legacy_bf16_tag_still_reads(tmp_path):
    bits = np.array([1.0, 3.0], ml_dtypes.bfloat16).view(np.uint16)
    path = write_safetensors(tmp_path / "w.safetensors", {"w": ("U16", [2], bits.tobytes())}, {"ge.bf16": '["w"]'})
    assert WeightStore(path)["w"].tolist() == [1.0, 3.0]


@pytest.mark.parametrize(
    "header, needle",
    [
        (b"[1, 2]", "header is not a JSON object"),
        (b"{not json", "header is not JSON"),
        (b'{"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 400]}}', "not a range inside"),
        (b'{"w": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}}', "not a list of dims >= 0"),
        (b'{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}}', "needs 8 bytes, data_offsets give 16"),
        (b'{"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}, "w": {}}', "key 'w' appears twice"),
    ],
)
def test_bad_sidecar_header(tmp_path, header, needle):
    header += b" " * (-len(header) % 8)
    path = tmp_path / "w.safetensors"
    path.write_bytes(len(header).to_bytes(8, "little") + header + b"\0" * 16)
    with pytest.raises(SidecarError, match="is not a valid safetensors file") as e:
        WeightStore(path)
    assert needle in str(e.value)


def test_sidecar_key_with_a_line_break(tmp_path):
    path = write_safetensors(tmp_path / "w.safetensors", {"a\nb": ("C64", [1], b"\0" * 8)})
    with pytest.raises(SidecarError, match=r"tensor 'a\\nb' has dtype C64") as e:
        WeightStore(path)
    assert "\n" not in str(e.value)


def test_sidecar_header_longer_than_the_file(tmp_path):
    path = tmp_path / "w.safetensors"
    path.write_bytes((1 << 40).to_bytes(8, "little") + b"{}")
    with pytest.raises(SidecarError, match="header of 1099511627776 bytes in a file of 10"):
        WeightStore(path)


def test_sidecar_fifo_does_not_block(tmp_path):
    os.mkfifo(tmp_path / "w.safetensors")
    with deadline(), pytest.raises(SidecarError, match="w.safetensors is not a regular file"):
        WeightStore(tmp_path / "w.safetensors")


def test_sidecar_fifo_through_ge_run(tmp_path, capsys):
    os.mkfifo(tmp_path / "w.safetensors")
    (tmp_path / "m.mlir").write_text(
        'builtin.module attributes {ge.weights = "w.safetensors"} {\n'
        "  func.func @main() -> tensor<4xf32> {\n"
        '    %w = ge.constant #ge.weight<"w"> : tensor<4xf32>\n'
        "    func.return %w : tensor<4xf32>\n  }\n}\n"
    )
    with deadline(), pytest.raises(SystemExit) as e:
        ge_run.main([str(tmp_path / "m.mlir"), "--random-inputs", "0"])
    lines = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 1 and len(lines) == 1 and "is not a regular file" in lines[0], lines


def test_every_ge_dtype_round_trips_through_a_sidecar(tmp_path):
    """Narrow types of more than 32 elements (weights, not inline) are written and read back."""
    weights = {
        str(dtype): np.arange(40).astype(np.float32).astype(dtype).reshape(5, 8)
        for dtype in (*SAFETENSORS_DTYPES.values(), *TAGGED_DTYPES.values())
    }
    weights["scalar"] = np.array(2.5, np.float32)
    save(tmp_path / "w.safetensors", weights)
    store = WeightStore(tmp_path / "w.safetensors")
    assert set(store) == set(weights)
    for key, array in weights.items():
        assert store[key].dtype == array.dtype and store[key].shape == array.shape, key
        assert store[key].tobytes() == array.tobytes(), key
    from safetensors import safe_open  # the reference reader accepts the file too

    with safe_open(str(tmp_path / "w.safetensors"), framework="np") as f:
        assert f.get_slice("bfloat16").get_dtype() == "BF16"
        np.testing.assert_array_equal(f.get_tensor("float32"), weights["float32"])


def test_narrow_weights_through_ge_translate(tmp_path, capsys):
    """An fp8 initializer above the inline limit goes to the sidecar and back through open_weights."""
    w = numpy_helper.from_array(np.zeros((8, 8), np.float32), "w")
    values = np.linspace(-2, 2, 64).astype(ml_dtypes.float8_e4m3fn).reshape(8, 8)
    w.data_type = TP.FLOAT8E4M3FN
    w.raw_data = values.tobytes()
    m = model([helper.make_node("Cast", ["w"], ["y"], name="/cast", to=TP.FLOAT)], [], [vi("y", [8, 8])], [w])
    text = assert_imports(tmp_path, capsys, m)
    assert "#ge.weight" in text
    store = open_weights(parse_module(text, "out.mlir"), tmp_path / "out.mlir")
    assert store["w"].dtype == ml_dtypes.float8_e4m3fn
    assert store["w"].tobytes() == values.tobytes()


def test_external_data_location_with_nul(tmp_path, capsys, weights_bin):
    """Found by the contract fuzzer: a NUL in the location reached os.open (ValueError, exit 2)."""
    assert_refused(
        tmp_path, capsys, external_model("w.bin\x00.txt"), "external data of 'w'", "contains a NUL character"
    )
