"""The task dialect: kernels bound to an engine, with launch geometry and planned memory.

    %r = task.kernel "/layer1/conv1/Conv" (%x, %w) : (T0, T1) -> T2 attributes {engine = "cube+vector",
           block_dim = 24 : i64, workspace = 0 : i64, tiling = "m=3136 n=64 k=576 fractals=12544",
           pattern = "cube_epilogue", offsets = array<i64: 1048576>} {
    ^bb0(%a: T0, %b: T1):
      ... the ge ops of the kernel (a fused group's body, or one op) ...
      task.yield %v : T2
    }

`lower-to-tasks` makes one task per fused group or remaining op. The engine is where GE would run
it: `cube`, `vector`, `cube+vector` (a Cube op with a Vector epilogue), `aicpu` (what the AI Core
cannot run), `dma`, `hccl` (a collective between replicas, on the chips' links). `offsets` are the
byte offsets of the results in the planned memory pool; `lower-to-streams` adds `stream` and
`launch` (which host launch dispatches the task).
`state_alias` names, per result, the variable a training step's update writes in place ("" for none).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, ArrayAttr, DenseArrayBase, IntegerAttr, StringAttr
from xdsl.ir import Attribute, Dialect, Region, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, SingleBlockImplicitTerminator
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects.outlined import OutlinedYield, parse_signature, print_signature, verify_body
from ge.ge_dialects.stream import DeviceEffects, check_stream_id

ENGINES = ("cube", "vector", "cube+vector", "aicpu", "dma", "hccl")
MAX_BLOCK_DIM = 65535
"""The most blocks one launch may ask for (the runtime's blockDim is a 16-bit count)."""


@irdl_op_definition
class YieldOp(OutlinedYield):
    name = "task.yield"


@irdl_op_definition
class KernelOp(IRDLOperation):
    name = "task.kernel"

    inputs = var_operand_def()
    outputs = var_result_def()
    task_name = prop_def(StringAttr, prop_name="name")
    engine = prop_def(StringAttr)
    pattern = prop_def(StringAttr)
    block_dim = prop_def(IntegerAttr[I64])
    workspace = prop_def(IntegerAttr[I64])
    tiling = prop_def(StringAttr)
    offsets = opt_prop_def(DenseArrayBase[I64])
    stream = opt_prop_def(IntegerAttr[I64])
    launch = opt_prop_def(IntegerAttr[I64])
    state_alias = opt_prop_def(ArrayAttr[StringAttr])
    """Per result, the variable it is written over in place ("" for none): lowering/memory/state.py."""
    body = region_def("single_block")

    # Not Pure: a kernel writes device memory at its planned offsets and occupies its stream.
    traits = traits_def(IsolatedFromAbove(), DeviceEffects(), SingleBlockImplicitTerminator(YieldOp))

    def __init__(
        self,
        name: str,
        inputs: Sequence[SSAValue],
        result_types: Sequence[Attribute],
        body: Region,
        properties: dict[str, Attribute],
    ):
        super().__init__(
            operands=[inputs],
            result_types=[result_types],
            regions=[body],
            properties={"name": StringAttr(name), **properties},
        )

    def get(self, key: str) -> int | None:
        attr = self.properties.get(key)
        return attr.value.data if isinstance(attr, IntegerAttr) else None

    @property
    def members(self):
        return [op for op in self.body.block.ops if not isinstance(op, YieldOp)]

    def verify_(self) -> None:
        where = f"task.kernel '{self.task_name.data}'"
        if self.engine.data not in ENGINES:
            raise VerifyException(f"{where}: unknown engine '{self.engine.data}'; expected one of {', '.join(ENGINES)}")
        if not 1 <= self.block_dim.value.data <= MAX_BLOCK_DIM:
            raise VerifyException(f"{where}: block_dim must be in 1..{MAX_BLOCK_DIM}, got {self.block_dim.value.data}")
        if self.workspace.value.data < 0:
            raise VerifyException(f"{where}: workspace must not be negative")
        if self.offsets is not None:
            offsets = self.offsets.get_values()
            if len(offsets) != len(self.outputs):
                raise VerifyException(f"{where}: {len(offsets)} offsets for {len(self.outputs)} results")
            if any(o < -1 for o in offsets):
                raise VerifyException(f"{where}: offsets must be >= 0 (or -1 for an unplanned graph output)")
        if self.state_alias is not None and len(self.state_alias.data) != len(self.outputs):
            raise VerifyException(
                f"{where}: {len(self.state_alias.data)} state_alias keys for {len(self.outputs)} results"
            )
        launch = self.get("launch")
        if launch is not None and launch < 0:
            raise VerifyException(f"{where}: launch must not be negative")
        stream = self.get("stream")
        if stream is not None:
            check_stream_id(self, where, stream)
        verify_body(where, self, self.body, YieldOp)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.task_name.data)
        extra = {k: v for k, v in self.properties.items() if k != "name"}
        extra.update(self.attributes)
        print_signature(printer, self, self.body, extra)

    @classmethod
    def parse(cls, parser: Parser) -> KernelOp:
        name = parser.parse_str_literal("task name")
        inputs, result_types, extra, body = parse_signature(parser)
        props = {k: v for k, v in extra.items() if k in cls.get_irdl_definition().properties}
        op = cls(name, inputs, result_types, body, props)
        op.attributes.update({k: v for k, v in extra.items() if k not in props})
        return op


TASK = Dialect("task", [KernelOp, YieldOp], [])
