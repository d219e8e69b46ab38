"""`ge-optimize{level=0..3}`: the optimization levels, as GE's `ge.oo.level` defines them.

  O0  nothing but the precision mode (a build option, not an optimization): the imported graph.
  O1  cleanup, simplification, mixed precision and data layouts; no fusion (GE's O1 turns graph
      and UB fusion off).
  O2  O1 plus graph fusion: Conv+BN folding, bias folding, LayerNorm / GELU / attention recognition.
  O3  O2 plus UB fusion into fused.group kernels (GE's default).

Each level is a textual pipeline in `LEVELS`, so `ge-opt -p` can run any part alone. GE's option
names are accepted too (passes/ge_options.py, ge-opt `--ge-option ge.oo.level=O1`).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from passes.pipeline import apply_all, parse_passes

CLEANUP = "fold-constants,merge-constants,cse,simplify,dce"
GRAPH_FUSION = ("fold-conv-bn,fold-bias-add,recognize-layer-norm,recognize-gelu,recognize-attention,"
                "simplify,cse,dce")
LAYOUT = "assign-formats,cancel-trans-data,merge-trans-data,fold-trans-data,dce"

LEVELS: dict[int, tuple[str, ...]] = {
    0: ("{precision}",),
    1: ("infer-shapes", CLEANUP, "{precision}", LAYOUT),
    2: ("infer-shapes", CLEANUP, GRAPH_FUSION, "{precision}", LAYOUT),
    3: ("infer-shapes", CLEANUP, GRAPH_FUSION, "{precision}", LAYOUT, "fuse-ops{{target={target}}}", "dce"),
}

PRECISION_MODES = ("force_fp16", "force_fp32", "allow_fp32_to_fp16", "must_keep_origin_dtype",
                   "allow_mix_precision", "allow_mix_precision_bf16")

def level_value(text: str) -> int:
    """`3`, `O3` or `o3` -> 3."""
    value = text[1:] if text[:1] in "Oo" else text
    if value not in ("0", "1", "2", "3"):
        raise DiagnosticException(f"ge-optimize: level '{text}' is not one of 0, 1, 2, 3 (or O0..O3)")
    return int(value)


@dataclass(frozen=True)
class GeOptimizePass(ModulePass):
    name = "ge-optimize"

    level: int = 3
    precision_mode: str = "must_keep_origin_dtype"
    target: str = "ascend910b"

    def pipeline(self) -> str:
        if self.level not in LEVELS:
            raise DiagnosticException(f"ge-optimize: level {self.level} is not one of 0, 1, 2, 3")
        if self.precision_mode not in PRECISION_MODES:
            raise DiagnosticException(f"ge-optimize: precision_mode '{self.precision_mode}' is not one of "
                                      f"{', '.join(PRECISION_MODES)}")
        precision = f"mixed-precision{{mode={self.precision_mode}}}"
        parts = [p.format(precision=precision, target=self.target) for p in LEVELS[self.level]]
        return ",".join(p for p in parts if p)

    def sub_passes(self) -> list[ModulePass]:
        spec = self.pipeline()
        return parse_passes(spec) if spec else []

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_all(ctx, op, self.sub_passes())
