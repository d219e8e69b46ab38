"""The code blocks of README.md and docs/*.md run as tests, so the docs cannot rot.

The per-language convention (info strings such as ```mlir fragment) is in doc_checks.py's docstring.
The mutation tests at the end break a block once per kind of check and show that the checker fails.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from doc_checks import ROOT, check_block, run
from markdown_blocks import Block, BlockError, read_blocks
from onnx import TensorProto, helper

DOCUMENTS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def all_blocks() -> list[tuple[Block, Block | None]]:
    """Each block with the block after it in the same file (a pipeline's expected output)."""
    pairs = []
    for document in DOCUMENTS:
        blocks = read_blocks(document, document.relative_to(ROOT))
        pairs += zip(blocks, [*blocks[1:], None], strict=False)
    return pairs


BLOCKS = [pair for pair in all_blocks() if pair[0].lang]


def small_onnx_model() -> onnx.ModelProto:
    """Conv + Relu + global pooling + Gemm on a 1x3x8x8 input: every tool runs it in a second."""
    rng = np.random.default_rng(0)
    weights = [
        onnx.numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "conv.weight"),
        onnx.numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "conv.bias"),
        onnx.numpy_helper.from_array(rng.standard_normal((4, 5)).astype(np.float32), "fc.weight"),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "conv.weight", "conv.bias"], ["c"], name="/conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="/relu"),
        helper.make_node("GlobalAveragePool", ["r"], ["p"], name="/pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="/flatten"),
        helper.make_node("Gemm", ["f", "fc.weight"], ["output"], name="/fc"),
    ]
    graph = helper.make_graph(
        nodes,
        "doc_model",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 5])],
        initializer=weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """The files the docs' commands name: model.onnx/.mlir, in.npz and in.safetensors, my_chip.toml and
    the file= blocks."""
    from ge.frontend.sidecar import save

    folder = tmp_path_factory.mktemp("doc_inputs")
    onnx.save(small_onnx_model(), folder / "model.onnx")
    np.savez(folder / "in.npz", input=np.ones((1, 3, 8, 8), np.float32))
    save(folder / "in.safetensors", {"input": np.ones((1, 3, 8, 8), np.float32)})
    translated = run(["ge-translate", "--import-onnx", "model.onnx", "-o", "model.mlir"], folder)
    assert translated.returncode == 0, translated.stderr
    packages = [top for top in ROOT.iterdir() if top.is_dir() and not top.name.startswith(".")]
    chip = next(path for package in packages for path in package.rglob("ascend910b.toml"))  # wherever it moves
    shutil.copy(chip, folder / "my_chip.toml")
    for block, _ in BLOCKS:
        if "file" in block.options:
            (folder / block.options["file"]).write_text(block.text)
    return folder


@pytest.fixture
def workdir(inputs, tmp_path) -> Path:
    return Path(shutil.copytree(inputs, tmp_path / "work"))


@pytest.mark.parametrize(("block", "following"), BLOCKS, ids=[block.where for block, _ in BLOCKS])
def test_doc_block(block, following, workdir):
    check_block(block, following, workdir)


def test_every_document_has_checked_blocks():
    """A guard on the collector itself: a fence regex that stopped matching would pass everything."""
    checked = {block.path for block, _ in BLOCKS}
    assert len(BLOCKS) >= 40 and Path("README.md") in checked and Path("docs/rewrites.md") in checked


# --- mutations: each kind of check fails on a broken block ------------------------------------


def blocks_of(tmp_path: Path, markdown: str) -> list[Block]:
    (tmp_path / "doc.md").write_text(markdown)
    return read_blocks(tmp_path / "doc.md")


def check_all(tmp_path: Path, markdown: str) -> None:
    blocks = blocks_of(tmp_path, markdown)
    for block, following in zip(blocks, [*blocks[1:], None], strict=False):
        check_block(block, following, tmp_path)


FUNC = (
    "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = ge.OP %x : (tensor<2xf32>) -> tensor<2xf32>\n"
    "  func.return %0 : tensor<2xf32>\n}\n"
)
BODY = '```mlir args="%x: tensor<2xf32>" {info}\n%0 = ge.{op} %x : (tensor<2xf32>) -> tensor<2xf32>\n```\n'


@pytest.mark.parametrize("op", ["relu", "reluu"])
def test_mlir_block_with_a_wrong_op_name_fails(tmp_path, op):
    markdown = "```mlir\n" + FUNC.replace("OP", op) + "```\n"
    if op == "relu":
        check_all(tmp_path, markdown)  # the control: the same block, correct, passes
    else:
        with pytest.raises(BlockError, match=r"doc.md:1: mlir block: does not parse and verify: .*ge\.reluu"):
            check_all(tmp_path, markdown)


@pytest.mark.parametrize("op", ["relu", "reluu"])
def test_fragment_with_a_wrong_op_name_fails(tmp_path, op):
    markdown = f"```mlir fragment\n%0 = ge.{op} %x : ... attributes {{stream.count = 1 : i64}}\n```\n"
    if op == "relu":
        check_all(tmp_path, markdown)
    else:
        with pytest.raises(BlockError, match=r"unregistered .*\['ge\.reluu'\]"):
            check_all(tmp_path, markdown)


def test_fragment_with_a_wrong_attribute_name_fails(tmp_path):
    with pytest.raises(BlockError, match=r"\['#ge\.fmtt'\]"):
        check_all(tmp_path, "```mlir fragment\n%0 = ge.relu %x : tensor<2xf32, #ge.fmtt<NCHW>>\n```\n")


def test_pipeline_output_that_differs_from_the_expected_block_fails(tmp_path):
    before = BODY.format(info='pipeline="dce"', op="relu")
    with pytest.raises(BlockError, match="ge-opt -p dce prints"):
        check_all(tmp_path, before + BODY.format(info="expected", op="relu"))  # dce removed the unused relu
    check_all(tmp_path, before + '```mlir args="%x: tensor<2xf32>" expected\n```\n')


def test_python_block_that_raises_fails(tmp_path):
    check_all(tmp_path, "```python\nfrom ge.passes.rewrite import Rule\n```\n")
    with pytest.raises(BlockError, match="ImportError"):
        check_all(tmp_path, "```python\nfrom ge.passes.rewrite import Rulez\n```\n")
    with pytest.raises(BlockError, match="ImportError"):
        check_all(tmp_path, "```python fragment\nfrom ge.passes.rewrite import Rulez\nundefined_name(1)\n```\n")


def test_signature_that_differs_fails(tmp_path):
    with pytest.raises(BlockError, match=r"Buffer\(name, size\) but ge.lowering.memory.Buffer"):
        check_all(tmp_path, "```python signature module=ge.lowering.memory\nBuffer(name, size)\n```\n")


def test_sh_block_with_an_unknown_pass_or_flag_fails(tmp_path, inputs):
    shutil.copy(inputs / "model.mlir", tmp_path)
    shutil.copy(inputs / "model.safetensors", tmp_path)
    check_all(tmp_path, "```sh\nge-opt model.mlir -p dce -o out.mlir\n```\n")
    with pytest.raises(BlockError, match=r"exit code 1: .*no-such-pass"):
        check_all(tmp_path, "```sh\nge-opt model.mlir -p no-such-pass -o out.mlir\n```\n")
    with pytest.raises(BlockError, match="ge-bench has no option --no-such-flag"):
        check_all(tmp_path, "```sh no-run=ge-bench\nge-bench --no-such-flag   # --markdown is fine here\n```\n")


def test_malformed_blocks_fail(tmp_path):
    with pytest.raises(BlockError, match="unknown info-string word"):
        check_all(tmp_path, "```mlir fragmnt\n%0 = ge.relu %x\n```\n")
    with pytest.raises(BlockError, match=r"doc\.md:2: code block never closed"):
        blocks_of(tmp_path, "text\n```mlir\n%0 = ge.relu %x\n")
    with pytest.raises(BlockError, match="needs the next block"):
        check_all(tmp_path, BODY.format(info='pipeline="dce"', op="relu"))
