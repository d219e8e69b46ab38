"""ONNX text fields that are not UTF-8 are refused at load, naming the field (frontend/text_fields.py).

Python's protobuf hands such a field over as bytes; before the check a flipped byte in a node name
reached the IR printer (fuzz ge-translate 1993: AttributeError) and one in an op type reached the
schema lookup (fuzz ge-run 3735: TypeError)."""

from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper

from ge.frontend.onnx_importer import load_onnx
from ge.frontend.onnx_ops import OnnxImportError
from ge.frontend.text_fields import first_non_utf8_field
from ge.tools.common import UserError, import_onnx_file


def _relu_model(**node_fields) -> onnx.ModelProto:
    node = helper.make_node("Relu", ["x"], ["y"], name=node_fields.pop("name", "/relu"), **node_fields)
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TP.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TP.FLOAT, [2])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _with_bad_byte(model: onnx.ModelProto, marker: bytes) -> bytes:
    """The serialized model with the marker's middle byte replaced by 0xFF (protobuf will not take
    invalid UTF-8 through its setters, so the bytes are edited as the fuzzer does)."""
    data = model.SerializeToString()
    assert data.count(marker) == 1
    middle = len(marker) // 2
    return data.replace(marker, marker[:middle] + b"\xff" + marker[middle + 1 :])


@pytest.mark.parametrize(
    "build, marker, field",
    [
        (lambda: _relu_model(name="/fc/Add"), b"/fc/Add", "graph.node[0].name (b'/fc\\xffAdd')"),
        (lambda: _relu_model(), b"Relu", "graph.node[0].op_type (b'Re\\xffu')"),
        (
            lambda: _relu_model(
                body=helper.make_graph(
                    [helper.make_node("Identity", ["a"], ["b"], name="/inner")],
                    "body",
                    [helper.make_tensor_value_info("a", TP.FLOAT, [2])],
                    [helper.make_tensor_value_info("b", TP.FLOAT, [2])],
                )
            ),
            b"/inner",
            "graph.node[0].attribute[0].g.node[0].name (b'/in\\xffer')",
        ),
    ],
)
def test_non_utf8_text_is_refused_at_load(tmp_path, build, marker, field):
    path = tmp_path / "m.onnx"
    path.write_bytes(_with_bad_byte(build(), marker))
    with pytest.raises(OnnxImportError) as info:
        load_onnx(path)
    assert str(info.value) == f"{path}: {field} is not UTF-8 text"
    with pytest.raises(UserError, match="is not UTF-8 text"):  # the tools' one line
        import_onnx_file(str(path))


def test_string_attribute_values_are_left_to_validation():
    """Their check (frontend/validate.py) names the node and attribute, so this walk skips them."""
    model = _relu_model(mode="nearest")
    data = _with_bad_byte(model, b"nearest")
    assert first_non_utf8_field(onnx.load_model_from_string(data)) is None


def test_utf8_text_is_accepted(tmp_path):
    model = _relu_model(name="/层/relu", mode="nearest")
    assert first_non_utf8_field(model) is None
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    assert load_onnx(path).graph.node[0].name == "/层/relu"
