"""The symbolic shape analysis: each op's own shape function run on symbols. Dims computed the same
way are the same symbol; what the shape function cannot decide (whether two symbols are equal, a
clamp without a range) is a fresh symbol, never one of the operands' guessed."""

from __future__ import annotations

from xdsl.parser import Parser

from ge.passes.symbolic_shapes import analyze
from ge.tools.common import make_context

GRAPH = """
func.func @main(%x: tensor<?x?x8xf32> {ge.name = "x", ge.dims = ["batch", "seq", ""]},
                %y: tensor<?x8xf32> {ge.name = "y", ge.dims = ["seq", ""]},
                %z: tensor<?x8xf32> {ge.name = "z", ge.dims = ["batch", ""]},
                %table: tensor<512x8xf32>,
                %img: tensor<1x3x?x?xf32> {ge.name = "img", ge.dims = ["", "", "h", "w"]}) -> tensor<?x?x8xf32> {
  %same = ge.add %x, %y : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> tensor<?x?x8xf32>
  %other = ge.add %x, %z : (tensor<?x?x8xf32>, tensor<?x8xf32>) -> tensor<?x?x8xf32>
  %w = ge.constant dense<1.0> : tensor<8x16xf32>
  %mm = ge.matmul %x, %w : (tensor<?x?x8xf32>, tensor<8x16xf32>) -> tensor<?x?x16xf32>
  %s = ge.shape %x : (tensor<?x?x8xf32>) -> tensor<3xi64>
  %c0 = ge.constant dense<[0]> : tensor<1xi64>
  %c1 = ge.constant dense<[1]> : tensor<1xi64>
  %c2 = ge.constant dense<[2]> : tensor<1xi64>
  %seq = ge.slice %s, %c1, %c2, axes = %c0 : (tensor<3xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  %rows = ge.slice %table, %c0, %seq, axes = %c0 : (tensor<512x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x8xf32>
  %pool = ge.max_pool %img {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>} : (tensor<1x3x?x?xf32>) -> tensor<1x3x?x?xf32>
  %flat = ge.flatten %pool : (tensor<1x3x?x?xf32>) -> tensor<1x?xf32>
  func.return %same : tensor<?x?x8xf32>
}
"""


def _shapes(ranges: str = "") -> dict[str, list[str]]:
    text = GRAPH
    if ranges:
        text = text.replace(
            "-> tensor<?x?x8xf32> {\n", f"-> tensor<?x?x8xf32> attributes {{ge.dim_ranges = {ranges}}} {{\n", 1
        )
    module = Parser(make_context(), text).parse_module()
    fn = module.ops.first
    known = analyze(fn)
    names = {}
    for op in fn.body.block.ops:
        for result in op.results:
            if result.name_hint:
                names[result.name_hint] = [str(d) for d in known.shape(result)]
    return names


def test_a_broadcast_keeps_a_symbol_only_where_every_operand_has_it():
    shapes = _shapes()
    assert shapes["same"] == ["batch", "seq", "8"]  # [batch, seq, 8] + [seq, 8]
    assert shapes["other"][:1] == ["batch"] and shapes["other"][1].startswith("?")  # seq against batch
    assert shapes["mm"] == ["batch", "seq", "16"]


def test_sizes_are_expressions_of_the_named_dims():
    """A 3x3 window fits only from h = 3 on (below, the pool has no output): with h and w of at least
    8 the output is an expression of them, without a range it is unknown."""
    shapes = _shapes("{h = array<i64: 8, 1024>, w = array<i64: 8, 1024>}")
    assert shapes["pool"] == ["1", "3", "(h - 3)//2 + 1", "(w - 3)//2 + 1"]
    assert shapes["flat"] == ["1", "3*((h - 3)//2) + 3*((h - 3)//2)*((w - 3)//2) + 3*((w - 3)//2) + 3"]
    assert all(d.startswith("?") for d in _shapes()["pool"][2:])


def test_a_clamp_is_decided_by_the_range():
    assert _shapes()["rows"][0].startswith("?")  # min(seq, 512): unknown without a range
    assert _shapes("{seq = array<i64: 1, 512>}")["rows"] == ["seq", "8"]
    assert _shapes("{seq = array<i64: 1, 1024>}")["rows"][0].startswith("?")
