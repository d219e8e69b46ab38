"""Op facts as xDSL traits: what the passes, the lowering and the device model ask of a ge op,
declared once on the op class instead of as name sets in each consumer.

- `RunsOn(engine)`: the unit of the AI Core the op's kernel runs on (every ge op declares one;
  `Engine.NONE` for ops that stay outside tasks, such as constants: weights the loader places).
- `Elementwise`: element i of each result depends on element i of the (broadcast) operands only.
- `Broadcasting`: operands broadcast to the result shape (ONNX multidirectional broadcasting).
- `Reduction`: the op reduces over whole axes (a kernel tile must hold the reduced row).
- `StorageFormats`: the storage formats the op's kernel reads and writes, with their conditions
  (GE's op info): `ComputesIn` a format it wants (Conv: NC1HWC0 activations, FRACTAL_Z weights),
  `Carries` formats that flow through it (elementwise ops, a concat along C in whole C0 blocks).
  assign-formats derives its rule table from them (passes/layout/rules.py names the conditions).
- `CopiesElements`: every element of the result is a copy of an element of the one data operand
  (reshapes, transposes, slices, gathers, tiling, max pooling): the op commutes with any monotone
  elementwise map, so it computes the same on a tensor's quantized integers as on its values.
- `MovesData`: data movement only, each result element taken from a computed position (those of
  the above but max pooling, and concat and split): a conversion beside it is done in the same copy.
- `PreservesZero`: an elementwise op with f(0, ..., 0) = 0, so zero padding stays zero and it may
  compute on a blocked, padded storage array directly (the interpreter runs it on storage).
- `Transcendental`: each result element costs the target's `transcendental_cost` vector
  lane-cycles instead of one (exp, erf, tanh, division, square root ...).

The cost metrics (`macs()`, `vector_elements()`, `transcendental_elements()`, `reduced_row_elements()`)
are methods of `GeOp` (ge_dialects/ge/base.py) with defaults read from these traits; ops whose work
is not one pass over their results (conv, matmul, gemm, attention, the reductions) override them.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from xdsl.traits import OpTrait


class Engine(StrEnum):
    """Where a kernel runs; the values are the `engine` attribute of a lowered `task.kernel`."""

    CUBE = "cube"
    """The matrix unit (conv, matmul, gemm): f16/bf16/f32 inputs, f32 accumulation."""
    CUBE_VECTOR = "cube+vector"
    """Both units in one kernel: matrix products on the Cube, the rest (softmax) on the Vector."""
    VECTOR = "vector"
    """The vector unit of the AI Core (float data; integer-only instances go to the AI CPU)."""
    AICPU = "aicpu"
    """The AI CPU, as GE places shape arithmetic (`ge.shape`, `ge.range`, fills)."""
    HCCL = "hccl"
    """The communication engine: a collective between the replicas (GE's HCCL ops kernel store),
    carried over the chips' links on its own streams, not by an AI Core unit."""
    NONE = "none"
    """No engine: the op stays outside tasks (constants are device memory the loader fills)."""

    @property
    def uses_cube(self) -> bool:
        return self in (Engine.CUBE, Engine.CUBE_VECTOR)


@dataclass(frozen=True)
class RunsOn(OpTrait):
    """The engine an op's kernel runs on."""

    engine: Engine


@dataclass(frozen=True)
class Elementwise(OpTrait):
    """Element i of each result depends on element i of the (broadcast) operands only."""


@dataclass(frozen=True)
class Broadcasting(OpTrait):
    """Operands broadcast (ONNX multidirectional) to the result shape."""


@dataclass(frozen=True)
class Reduction(OpTrait):
    """The op reduces over whole axes; `reduced_row_elements()` says how long a row is."""


Condition = tuple[str, ...]
"""A named condition of a storage format and its arguments, e.g. `("weight", "W")`: the operand W
is a constant or a variable. The names are those of `CONDITIONS` in passes/layout/rules.py."""


@dataclass(frozen=True)
class ComputesIn:
    """The op's kernel computes in `storage`: its `operands` are read in it (converted where stored
    otherwise) and its `results` written in it, when every condition holds. `rule` names the
    decision in remarks; `benefit` names what a remark reports (the Cube MACs); `backward` marks a
    kernel of a training step's backward (GE's Conv2DBackprop*, *Grad)."""

    rule: str
    storage: str
    operands: tuple[str, ...]
    results: tuple[str, ...] = ()
    conditions: tuple[Condition, ...] = ()
    benefit: str | None = None
    backward: bool = False


@dataclass(frozen=True)
class Carries:
    """A format flows through the op: when a full-shape operand arrives in one of `formats` (None:
    the formats the op instance declares, a custom op's), its full-shape operands and `results`
    take it, when every condition holds. `full_shape` names which operands count as full-shape
    (`same_shape`: the result's shape); `changes_c0`: the kernel re-blocks the channels between
    types (AscendQuant); `all_arrive`: every full-shape operand must already be stored so."""

    rule: str
    formats: tuple[str, ...] | None
    operands: tuple[str, ...]
    results: tuple[str, ...]
    conditions: tuple[Condition, ...] = ()
    full_shape: str = "same_shape"
    changes_c0: bool = False
    all_arrive: bool = False


@dataclass(frozen=True)
class StorageFormats(OpTrait):
    """The storage formats the op's kernel reads and writes, in order (one trait per op class: an
    op's traits are a set)."""

    rules: tuple[ComputesIn | Carries, ...]

    def __init__(self, *rules: ComputesIn | Carries):
        object.__setattr__(self, "rules", rules)


@dataclass(frozen=True)
class CopiesElements(OpTrait):
    """Each result element is a copy of an element of the data operand, chosen without regard to
    the values (data movement) or by their order (a max): a monotone elementwise map such as
    DequantizeLinear with a positive scale commutes with the op."""


@dataclass(frozen=True)
class MovesData(OpTrait):
    """Data movement only: each result element is an element of a data operand at a position
    computed from its own position (a reshape, transpose, slice, gather, tile, concat, split, a
    layout change), never by comparing values. One copy kernel can do two such index maps in a row."""


@dataclass(frozen=True)
class Reshapes(OpTrait):
    """The result holds the data operand's elements in the same order under another shape (a
    reshape, flatten, squeeze, unsqueeze): between arrays stored as their logical ones it is a
    view (`GeOp.is_view`), the same bytes read as another shape."""


@dataclass(frozen=True)
class PreservesZero(OpTrait):
    """An elementwise op with f(0, ..., 0) = 0: on padded storage the padding stays zero."""


@dataclass(frozen=True)
class Transcendental(OpTrait):
    """Each result element costs `[vector] transcendental_cost` lane-cycles instead of one."""


__all__ = [
    "Engine",
    "RunsOn",
    "Elementwise",
    "Broadcasting",
    "Reduction",
    "Condition",
    "ComputesIn",
    "Carries",
    "StorageFormats",
    "CopiesElements",
    "MovesData",
    "PreservesZero",
    "Transcendental",
]
