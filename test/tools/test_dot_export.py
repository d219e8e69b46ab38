"""ge-translate --export-dot: clusters for fused groups, formats on edges, escaping, remarks of
rejected fusions, deterministic text, and the one-line refusal of a lowered module."""

from __future__ import annotations

import re

import onnx
import pytest

from ge.frontend import models
from ge.ge_dialects import fused
from ge.tools.common import parse_module, print_module, read_module
from ge.tools.dot_export import escape, module_to_dot, type_label
from ge.tools.ge_opt import main as opt_main
from ge.tools.ge_translate import main as translate_main


@pytest.fixture(scope="module")
def gpt2_files(tmp_path_factory):
    """A small GPT-2 imported (ge level) and at O3 (fused level)."""
    folder = tmp_path_factory.mktemp("gpt2")
    onnx.save(models.gpt2(seq=16, layers=1, hidden=64, heads=4, vocab=100), folder / "g.onnx")
    for argv in (
        ["--import-onnx", str(folder / "g.onnx"), "-o", str(folder / "g.mlir")],
        [str(folder / "g.mlir"), "-p", "ge-optimize{level=3}", "-o", str(folder / "g3.mlir")],
    ):
        try:
            (translate_main if argv[0] == "--import-onnx" else opt_main)(argv)
        except SystemExit as e:
            assert not e.code
    return folder


def _clusters(text: str) -> int:
    return len(re.findall(r"^\s*subgraph cluster_\d+ \{$", text, re.M))


def test_fused_groups_are_clusters_with_their_ops(gpt2_files):
    module = read_module(str(gpt2_files / "g3.mlir"))
    groups = [op for op in module.walk() if isinstance(op, fused.GroupOp)]
    text = module_to_dot(module)
    assert groups and _clusters(text) == len(groups)
    assert 'label="attention: attention_layout' in text
    # the attention op sits inside its cluster
    inside = text[text.index('label="attention: attention_layout') :]
    assert inside.index("ge.attention") < inside.index("\n  }")
    # every node referenced by an edge is declared
    declared = set(re.findall(r"^\s*(\w+) \[label=", text, re.M))
    for a, b in re.findall(r"^\s*(\w+) -> (\w+) \[", text, re.M):
        assert a in declared and b in declared


def test_edges_carry_shape_type_and_storage_format(gpt2_files):
    text = module_to_dot(read_module(str(gpt2_files / "g3.mlir")))
    assert '[label="1x16x64 f32 FRACTAL_NZ"]' in text
    assert '-> out0 [label="1x16x64 f32"]' in text
    plain = module_to_dot(read_module(str(gpt2_files / "g.mlir")))
    assert "FRACTAL_NZ" not in plain and _clusters(plain) == 0


def test_nc1hwc0_edge_label():
    module = parse_module(
        """
func.func @main(%x: tensor<1x64x56x56xf16, #ge.fmt<NCHW>> {ge.name = "x"})
    -> (tensor<1x64x56x56xf16, #ge.fmt<NCHW, NC1HWC0>> {ge.name = "y"}) {
  %0 = ge.trans_data %x {src_format = "NCHW", dst_format = "NC1HWC0"}
     : (tensor<1x64x56x56xf16, #ge.fmt<NCHW>>) -> tensor<1x64x56x56xf16, #ge.fmt<NCHW, NC1HWC0>>
  func.return %0 : tensor<1x64x56x56xf16, #ge.fmt<NCHW, NC1HWC0>>
}""",
        "t.mlir",
    )
    assert 'n0 -> out0 [label="1x64x56x56 f16 NC1HWC0"]' in module_to_dot(module)
    assert type_label(module.body.block.first_op.function_type.inputs.data[0]) == "1x64x56x56 f16 NCHW"


def test_names_are_escaped():
    assert escape('a"b\\c\nd') == 'a\\"b\\\\c d'
    module = parse_module(
        """
func.func @main(%x: tensor<4xf32> {ge.name = "in \\"x\\""}) -> (tensor<4xf32> {ge.name = "y\\\\n"}) {
  %0 = ge.relu %x : (tensor<4xf32>) -> tensor<4xf32> loc("/relu \\"1\\" \\\\N")
  func.return %0 : tensor<4xf32>
}""",
        "e.mlir",
    )
    text = module_to_dot(module)
    assert 'n0 [label="ge.relu\\n/relu \\"1\\" \\\\N"];' in text
    assert 'in0 [label="in \\"x\\"\\n4 f32"' in text
    assert 'out0 [label="y\\\\n"' in text
    # no unescaped quote inside any label
    for label in re.findall(r'label="((?:[^"\\]|\\.)*)"', text):
        assert '"' not in label.replace('\\"', "")


def test_output_is_deterministic(gpt2_files):
    first = module_to_dot(read_module(str(gpt2_files / "g3.mlir")), remarks=True)
    second = module_to_dot(parse_module(print_module(read_module(str(gpt2_files / "g3.mlir"))), "again.mlir"), True)
    assert first == second


def test_remarks_of_rejected_fusions(tmp_path, run_main):
    """ResNet-50 at O1: fuse-ops rejects BN+ReLU fusions on an inference graph; each rejection is a
    note tied by dashed edges to the ops it names."""
    onnx.save(models.small("resnet50"), tmp_path / "r.onnx")
    code, _, err = run_main(translate_main, ["--import-onnx", tmp_path / "r.onnx", "-o", tmp_path / "r.mlir"])
    assert code == 0, err
    code, _, err = run_main(opt_main, [tmp_path / "r.mlir", "-p", "ge-optimize{level=1}", "-o", tmp_path / "o1.mlir"])
    assert code == 0, err
    code, text, err = run_main(translate_main, [tmp_path / "o1.mlir", "--export-dot", "--remarks"])
    assert code == 0, err
    notes = re.findall(r'^  (r\d+) \[label="rejected ([\w-]+): ', text, re.M)
    assert notes and ("r0", "batch_norm_activation") in notes
    bn1 = re.search(r'^  (n\d+) \[label="ge.batch_norm\\n/bn1/BatchNormalization', text, re.M)
    assert bn1 and f"  r0 -> {bn1.group(1)} [style=dashed" in text
    code, plain, _ = run_main(translate_main, [tmp_path / "o1.mlir", "--export-dot"])
    assert code == 0 and "rejected" not in plain


def test_remarks_of_a_fused_module_come_from_its_dissolved_groups(gpt2_files):
    """On a fused module the groups are dissolved on a copy before fuse-ops runs: the module itself
    is unchanged, and the drawing still shows its clusters."""
    module = read_module(str(gpt2_files / "g3.mlir"))
    before = print_module(module)
    text = module_to_dot(module, remarks=True)
    assert print_module(module) == before
    assert _clusters(text) == _clusters(module_to_dot(module))


def test_lowered_module_is_refused_in_one_line(gpt2_files, tmp_path, run_main):
    streams = tmp_path / "s.mlir"
    code, _, err = run_main(
        opt_main, [gpt2_files / "g3.mlir", "-p", "lower-to-tasks,plan-memory,lower-to-streams", "-o", streams]
    )
    assert code == 0, err
    out = tmp_path / "s.dot"
    code, stdout, err = run_main(translate_main, [streams, "--export-dot", "-o", out])
    assert code == 1 and stdout == ""
    assert err.count("\n") == 1 and "the module is lowered" in err and str(streams) in err
    assert not out.exists()
