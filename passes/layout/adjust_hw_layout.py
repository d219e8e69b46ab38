"""adjust-hw-layout: the graph's inputs and outputs in NC1HWC0, as GE's ATC options
`--is_input_adjust_hw_layout` and `--is_output_adjust_hw_layout` give them.

By default a graph keeps the formats its signature declares, so an image read by a convolution
enters through a TransData (NCHW -> NC1HWC0) and a feature map returned from a convolution leaves
through another. Where the data pipeline already produces the device's format (GE's AIPP, or a
host that writes NC1HWC0), those conversions are the caller's: with `inputs`, an argument read
only by TransData to NC1HWC0 takes that storage in the signature and the TransData go; with
`outputs`, a result returned through a TransData from NC1HWC0 is returned as it is stored. Runs
after insert-trans-data. Before:

    func.func @main(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x8x8xf32> {
      %0 = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"} : ...
      %y = ge.conv %0, %w : ...
      %1 = ge.trans_data %y {src_format = "NC1HWC0", dst_format = "ND"} : ...
      func.return %1 : tensor<1x8x8x8xf32>
    }

after:

    func.func @main(%x: tensor<1x3x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x8x8x8xf32, #ge.fmt<NCHW, NC1HWC0>> {
      %y = ge.conv %x, %w : ...
      func.return %y : tensor<1x8x8x8xf32, #ge.fmt<NCHW, NC1HWC0>>
    }

The element type stays the graph's (GE's options also make it f16: here that is the precision
mode's business). The interpreter and ge-run still take and give logical arrays, converting at
the boundary (docs/layout.md); the modeled device time no longer counts the conversions.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from ge.ge_dialects.ge.layout import NC1HWC0, TransDataOp
from ge.interpreter.runner import input_names, output_names
from ge.passes import remarks
from ge.passes.graph_main import main_of

PASS = "adjust-hw-layout"
FORMAT = NC1HWC0
"""The storage format GE's options give the graph's inputs and outputs."""


def adjust_inputs(fn: func.FuncOp) -> None:
    """Each argument read only by TransData to NC1HWC0 takes that storage; the TransData go."""
    for arg, name in zip(fn.body.block.args, input_names(fn)):
        readers = [use.operation for use in arg.uses]
        if not readers or not all(isinstance(r, TransDataOp) and r.p("dst_format") == FORMAT for r in readers):
            continue
        stored = readers[0].results[0].type
        if any(r.results[0].type != stored for r in readers):
            continue
        given = Rewriter.replace_value_with_new_type(arg, stored)
        for reader in readers:
            reader.results[0].replace_all_uses_with(given)
            reader.detach()
            reader.erase()
        remarks.emit(PASS, "applied", "input", [fn], f"input '{name}' is given in {FORMAT}: no TransData")


def adjust_outputs(fn: func.FuncOp) -> None:
    """Each result returned through a TransData from NC1HWC0 is returned as it is stored."""
    ret = fn.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    for index, (value, name) in enumerate(zip(ret.arguments, output_names(fn))):
        conversion = value.owner
        if not isinstance(conversion, TransDataOp) or conversion.p("src_format") != FORMAT:
            continue
        ret.operands[index] = conversion.src
        if not conversion.results[0].uses:
            conversion.detach()
            conversion.erase()
        remarks.emit(PASS, "applied", "output", [fn], f"output '{name}' is returned in {FORMAT}: no TransData")


@dataclass(frozen=True)
class AdjustHwLayoutPass(ModulePass):
    """The graph's inputs (`inputs`) and outputs (`outputs`) in NC1HWC0 where a TransData would
    convert them."""

    name = "adjust-hw-layout"

    inputs: bool = True
    outputs: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fn = main_of(op, PASS)
        if self.inputs:
            adjust_inputs(fn)
        if self.outputs:
            adjust_outputs(fn)
        ret = fn.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        fn.function_type = FunctionType.from_lists(list(fn.body.block.arg_types), list(ret.operand_types))
