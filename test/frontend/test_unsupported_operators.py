"""A model with operators the importer lacks is refused in one line that names every one of them,
with its node count and a node, before any node is imported (frontend/onnx_ops.py
`unsupported_operators`): a user sees the whole list at once, not one operator per attempt."""

from __future__ import annotations

import onnx
import pytest
from onnx import helper

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import REGISTER_HINT, OnnxImportError
from ge.tools import ge_translate

HINT = f"; {REGISTER_HINT}"
"""How the list ends: the way to register an operator (docs/custom_ops.md)."""


def chain(*ops: tuple[str, str, str], opset: int = 17) -> onnx.ModelProto:
    """x -> op -> op -> ... -> y, each (op type, domain, node name)."""
    nodes, current = [], "x"
    for i, (op_type, domain, name) in enumerate(ops):
        out = "y" if i == len(ops) - 1 else f"t{i}"
        nodes.append(helper.make_node(op_type, [current], [out], name=name, domain=domain))
        current = out
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])
    imports = [helper.make_opsetid("", opset)] + [
        helper.make_opsetid(d, 1) for d in sorted({d for _, d, _ in ops if d})
    ]
    return helper.make_model(helper.make_graph(nodes, "g", [x], [y]), opset_imports=imports)


def refusal(model: onnx.ModelProto) -> str:
    with pytest.raises(OnnxImportError) as e:
        import_model(model)
    return str(e.value)


def test_every_unsupported_operator_is_named_once_with_its_count_in_order_of_appearance():
    model = chain(
        ("Relu", "", "/a/Relu"),
        ("StringNormalizer", "", "/b/StringNormalizer"),
        ("FusedConv", "com.acme", "/c/Fused"),
        ("StringNormalizer", "", "/d/StringNormalizer"),
        ("Relu", "", "/e/Relu"),
        ("StringNormalizer", "", "/f/StringNormalizer"),
    )
    assert refusal(model) == (
        "2 operators are not supported at opset 17: StringNormalizer (3 nodes, e.g. '/b/StringNormalizer'), com.acme.FusedConv (1 node: '/c/Fused')"
        f"{HINT}"
    )


def test_one_unsupported_operator():
    assert (
        refusal(chain(("Relu", "", "/a"), ("StringNormalizer", "", "/b")))
        == f"1 operator is not supported at opset 17: StringNormalizer (1 node: '/b'){HINT}"
    )


def test_an_operator_onnx_does_not_know_at_an_old_opset_is_listed_not_a_converter_error():
    """The version converter would stop at the first operator without a schema; the list comes first."""
    model = chain(("Relu", "", "/a"), ("Frobnicate", "", "/b"), ("StringNormalizer", "", "/c"), opset=9)
    assert refusal(model) == (
        f"2 operators are not supported at opset 9: Frobnicate (1 node: '/b'), StringNormalizer (1 node: '/c'){HINT}"
    )


def test_the_tool_prints_the_list_as_its_one_error_line(tmp_path, run_main):
    onnx.save(chain(("StringNormalizer", "", "/b"), ("Foo", "", "/c")), tmp_path / "m.onnx")
    code, out, err = run_main(ge_translate.main, ["--import-onnx", tmp_path / "m.onnx", "-o", tmp_path / "m.mlir"])
    assert code == 1 and out == ""
    assert err == (
        f"ge-translate: error: {tmp_path / 'm.onnx'}: 2 operators are not supported at opset 17: "
        f"StringNormalizer (1 node: '/b'), Foo (1 node: '/c'){HINT}\n"
    )
    assert not (tmp_path / "m.mlir").exists()
