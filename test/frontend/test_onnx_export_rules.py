"""The reverse table and the exporter's refusals, on small hand-written modules.

A broken table entry (Sub's operands swapped, attention's mask dropped) must change the numbers
onnxruntime computes; every ge op is either exported or refused with a reason; refusals are one
line naming the op and its node, exit 1 and no file from the tool."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr

from ge.frontend import onnx_export_rules
from ge.frontend.onnx_export_rules import REFUSED, RULES, Rule
from ge.frontend.onnx_exporter import OnnxExportError, export_module
from ge.ge_dialects import ge
from ge.interpreter.runner import run
from ge.tools.common import parse_module
from ge.tools.ge_translate import main as translate_main

ort = pytest.importorskip("onnxruntime")

SUB = """
func.func @main(%a: tensor<2x3xf32> {ge.name = "a"}, %b: tensor<2x3xf32> {ge.name = "b"}) -> (tensor<2x3xf32> {ge.name = "y"}) {
  %0 = ge.sub %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32> loc("/Sub")
  func.return %0 : tensor<2x3xf32>
}
"""

ATTENTION = """
func.func @main(%q: tensor<1x2x4x8xf32> {ge.name = "q"}, %k: tensor<1x2x8x4xf32> {ge.name = "k"},
                %v: tensor<1x2x4x8xf32> {ge.name = "v"}, %m: tensor<1x1x4x4xi1> {ge.name = "m"})
    -> (tensor<1x2x4x8xf32> {ge.name = "y"}) {
  %0 = ge.attention %q, %k, %v, mask = %m {k_transposed = 1 : i64, scale = 2.0 : f32, scale_op = "div", mask_kind = "keep"}
     : (tensor<1x2x4x8xf32>, tensor<1x2x8x4xf32>, tensor<1x2x4x8xf32>, tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> loc("/attn")
  func.return %0 : tensor<1x2x4x8xf32>
}
"""

RELU_GRAD = """
func.func @main(%dy: tensor<4xf32> {ge.name = "dy"}, %x: tensor<4xf32> {ge.name = "x"}) -> (tensor<4xf32> {ge.name = "dx"}) {
  %0 = ge.relu_grad %dy, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("/relu/grad")
  func.return %0 : tensor<4xf32>
}
"""

CAST_ROUND = """
func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> (tensor<4xf32> {ge.name = "y"}) {
  %0 = ge.cast %x {to = 1 : i64, round_mode = "down"} : (tensor<4xf32>) -> tensor<4xf32> loc("/Cast")
  func.return %0 : tensor<4xf32>
}
"""


BF16_CONV = """
func.func @main(%x: tensor<1x1x4x4xbf16> {ge.name = "x"}) -> (tensor<1x1x4x4xbf16> {ge.name = "y"}) {
  %w = ge.constant dense<1.0> : tensor<1x1x1x1xbf16> loc("w")
  %0 = ge.conv %x, %w : (tensor<1x1x4x4xbf16>, tensor<1x1x1x1xbf16>) -> tensor<1x1x4x4xbf16> loc("/Conv")
  func.return %0 : tensor<1x1x4x4xbf16>
}
"""


def ort_run(model, inputs):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip([o.name for o in session.get_outputs()], session.run(None, inputs)))


def agrees(text: str, inputs) -> bool:
    module = parse_module(text, "test.mlir")
    want = run(module, inputs)
    got = ort_run(export_module(module), inputs)
    return all(np.allclose(got[k], want[k], rtol=1e-5, atol=1e-6) for k in want)


def sub_inputs():
    rng = np.random.default_rng(0)
    return {n: rng.standard_normal((2, 3)).astype(np.float32) for n in ("a", "b")}


def attention_inputs():
    rng = np.random.default_rng(1)
    return {
        "q": rng.standard_normal((1, 2, 4, 8)).astype(np.float32),
        "k": rng.standard_normal((1, 2, 8, 4)).astype(np.float32),
        "v": rng.standard_normal((1, 2, 4, 8)).astype(np.float32),
        "m": np.tril(np.ones((4, 4), bool))[None, None],
    }


def test_sub_and_attention_agree_with_the_interpreter():
    assert agrees(SUB, sub_inputs())
    assert agrees(ATTENTION, attention_inputs())


def test_mutation_swapped_sub_operands_is_caught(monkeypatch):
    monkeypatch.setitem(RULES, "ge.sub", Rule("Sub", operands=("b", "a")))
    assert not agrees(SUB, sub_inputs())


def test_mutation_attention_with_the_wrong_scale_op_is_caught(monkeypatch):
    real = onnx_export_rules._attention

    def broken(scope, op, ins, outs, name):
        wrong = op.clone()  # multiplies where the graph divided
        wrong.properties["scale_op"] = StringAttr("mul")
        try:
            real(scope, wrong, ins, outs, name)
        finally:
            wrong.drop_all_references()

    monkeypatch.setitem(RULES, "ge.attention", Rule("attention, scale inverted", export=broken))
    assert not agrees(ATTENTION, attention_inputs())


def test_every_op_is_exported_or_refused_with_a_reason():
    decided = set(RULES) | set(REFUSED) | {ge.ConstantOp.name}
    missing = sorted(op.name for op in ge.ALL_OPS if op.name not in decided)
    assert not missing, f"ops with no export decision: {missing}"
    assert not set(RULES) & set(REFUSED)


def test_training_op_is_refused_in_one_line():
    module = parse_module(RELU_GRAD, "grad.mlir")
    with pytest.raises(OnnxExportError) as e:
        export_module(module)
    message = str(e.value)
    assert "\n" not in message
    assert "ge.relu_grad '/relu/grad'" in message and "training op" in message


def test_property_without_onnx_attribute_is_refused():
    with pytest.raises(OnnxExportError, match=r"ge.cast '/Cast': property round_mode = 'down' has no attribute"):
        export_module(parse_module(CAST_ROUND, "cast.mlir"))


def test_element_type_the_onnx_operator_lacks_is_refused():
    with pytest.raises(
        OnnxExportError, match=r"ge.conv '/Conv': ONNX Conv \(opset 21\) does not take tensor\(bfloat16\)"
    ):
        export_module(parse_module(BF16_CONV, "bf16.mlir"))


def test_cli_refusal_exits_1_and_writes_nothing(tmp_path, run_main):
    src = tmp_path / "grad.mlir"
    src.write_text(RELU_GRAD)
    out = tmp_path / "grad.onnx"
    code, _, stderr = run_main(translate_main, [src, "--export-onnx", "-o", out])
    assert code == 1
    assert stderr.count("\n") == 1 and f"{src}: ge.relu_grad '/relu/grad'" in stderr
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["grad.mlir"]


def test_cli_export_writes_a_model_onnxruntime_runs(tmp_path, run_main):
    src = tmp_path / "sub.mlir"
    src.write_text(SUB)
    out = tmp_path / "sub.onnx"
    code, _, stderr = run_main(translate_main, [src, "--export-onnx", "-o", out])
    assert code == 0, stderr
    inputs = sub_inputs()
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, inputs)[0], inputs["a"] - inputs["b"], rtol=1e-6)


def test_cli_needs_output_file_and_graph_level(tmp_path, run_main):
    src = tmp_path / "sub.mlir"
    src.write_text(SUB)
    code, _, stderr = run_main(translate_main, [src, "--export-onnx"])
    assert code == 1 and "give -o FILE.onnx" in stderr
    code, _, stderr = run_main(translate_main, ["--export-onnx", "-o", tmp_path / "x.onnx"])
    assert code == 1 and "need the IR file" in stderr
    code, _, stderr = run_main(translate_main, [src, "--export-onnx", "--remarks", "-o", tmp_path / "x.onnx"])
    assert code == 1 and "--remarks goes with --export-dot" in stderr
    assert not (tmp_path / "x.onnx").exists()
