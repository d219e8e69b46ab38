"""How data-parallel packs gradients into fused AllReduces: GE's split strategies and DDP's buckets.

The gradients come in backward order (the order the backward produces them, last layer first), and
each bucket is a run of consecutive ones, so a bucket's collective can start as soon as its last
gradient exists while the backward goes on:

- `idx:20,100,159` (GE's `set_split_strategy_by_idx`): the bucket boundaries as the index (in
  backward order) of each bucket's last gradient; the gradients after the last index form one more;
- `size:60,20,20` (GE's `set_split_strategy_by_size`): percentages of the gradients' bytes, which
  must sum to 100; a bucket closes with the gradient that reaches its share;
- `bucket_mib` (PyTorch DDP's `bucket_cap_mb`, Horovod's fusion buffer): buckets of at most that
  many MiB (a larger gradient is a bucket of its own);
- neither: GE's default split, two segments of 96.54% and 3.46% of the bytes.

Every bucket is then capped at `fusion_tensor_size` bytes (`ge.fusionTensorSize`, default
524288000) and split by dtype, since one fused collective reduces one dtype.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.utils.exceptions import DiagnosticException

GE_DEFAULT_SPLIT = (96.54, 3.46)
"""GE's default split strategy: two segments by size (HCCL's gradient split defaults)."""
FUSION_TENSOR_SIZE = 524288000
"""GE's default `ge.fusionTensorSize`: the most bytes one fused collective's buffer holds."""


@dataclass(frozen=True)
class Gradient:
    """One gradient to reduce: its index in backward order, its bytes and its dtype."""

    index: int
    nbytes: int
    dtype: str


@dataclass(frozen=True)
class SplitStrategy:
    """`kind` is "idx", "size" or "mib"; `values` its numbers."""

    kind: str
    values: tuple[float, ...]

    @staticmethod
    def parse(split: str | None, bucket_mib: int | None, owner: str) -> SplitStrategy:
        if split and bucket_mib is not None:
            raise DiagnosticException(f"{owner}: give split or bucket_mib, not both")
        if bucket_mib is not None:
            if not bucket_mib > 0:
                raise DiagnosticException(f"{owner}: bucket_mib must be positive, got {bucket_mib}")
            return SplitStrategy("mib", (float(bucket_mib),))
        if not split:
            return SplitStrategy("size", GE_DEFAULT_SPLIT)
        kind, colon, rest = split.partition(":")
        kind = kind.strip()
        if not colon or kind not in ("idx", "size"):
            raise DiagnosticException(f"{owner}: split '{split}' is not 'idx:I1,I2,...' or 'size:P1,P2,...'")
        try:
            values = tuple(float(v) for v in rest.split(",") if v.strip())
        except ValueError:
            raise DiagnosticException(f"{owner}: split '{split}' holds something that is not a number") from None
        if not values:
            raise DiagnosticException(f"{owner}: split '{split}' names no boundary")
        if kind == "idx":
            if any(v != int(v) or v < 0 for v in values) or list(values) != sorted(set(values)):
                raise DiagnosticException(f"{owner}: split '{split}': indices must be increasing non-negative integers")
        else:
            if any(v <= 0 for v in values):
                raise DiagnosticException(f"{owner}: split '{split}': every percentage must be positive")
            if not math.isclose(sum(values), 100.0, abs_tol=1e-6):
                raise DiagnosticException(f"{owner}: split '{split}': the percentages sum to {sum(values):g}, not 100")
        return SplitStrategy(kind, values)

    def describe(self) -> str:
        if self.kind == "mib":
            return f"buckets of at most {self.values[0]:g} MiB"
        return f"split {self.kind}:" + ",".join(f"{v:g}" for v in self.values)


def segments(grads: Sequence[Gradient], strategy: SplitStrategy, owner: str) -> list[list[Gradient]]:
    """The strategy's runs of consecutive gradients (in backward order), none empty."""
    if strategy.kind == "idx":
        last = len(grads) - 1
        bad = [int(v) for v in strategy.values if v > last]
        if bad:
            raise DiagnosticException(
                f"{owner}: split index {bad[0]} is past the last gradient (there are {len(grads)}, indices 0 to {last})"
            )
        ends = [int(v) for v in strategy.values]
        if ends[-1] != last:
            ends.append(last)
        starts = [0] + [e + 1 for e in ends[:-1]]
        return [list(grads[s : e + 1]) for s, e in zip(starts, ends)]
    if strategy.kind == "mib":
        return _greedy(grads, int(strategy.values[0] * 2**20))
    total = sum(g.nbytes for g in grads)
    bounds = [total * sum(strategy.values[: i + 1]) / 100.0 for i in range(len(strategy.values))]
    out: list[list[Gradient]] = [[]]
    filled = 0
    k = 0
    for g in grads:
        out[-1].append(g)
        filled += g.nbytes
        while k < len(bounds) - 1 and filled >= bounds[k] - 1e-9:
            k += 1
            out.append([])
    return [s for s in out if s]


def _greedy(grads: Sequence[Gradient], cap: int) -> list[list[Gradient]]:
    """Consecutive runs of at most `cap` bytes (a larger gradient alone)."""
    out: list[list[Gradient]] = []
    size = 0
    for g in grads:
        if out and size + g.nbytes <= cap:
            out[-1].append(g)
            size += g.nbytes
        else:
            out.append([g])
            size = g.nbytes
    return out


def buckets(
    grads: Sequence[Gradient], strategy: SplitStrategy, owner: str, fusion_tensor_size: int = FUSION_TENSOR_SIZE
) -> list[list[Gradient]]:
    """The fused collectives: the strategy's segments, each capped at `fusion_tensor_size` bytes
    and split by dtype (in order of each dtype's first gradient)."""
    if fusion_tensor_size <= 0:
        raise DiagnosticException(f"{owner}: fusion_tensor_size must be positive, got {fusion_tensor_size}")
    out: list[list[Gradient]] = []
    for segment in segments(grads, strategy, owner):
        by_dtype: dict[str, list[Gradient]] = {}
        for g in segment:
            by_dtype.setdefault(g.dtype, []).append(g)
        for same in by_dtype.values():
            out.extend(_greedy(same, fusion_tensor_size))
    return out
