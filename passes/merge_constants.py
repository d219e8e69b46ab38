"""merge-constants: one `ge.constant` per distinct (type, value) in a block.

Constants with equal result types (element type, shape and format) and bitwise-equal values are
merged into one, whether they are inline or sidecar weights: equality is on the bytes, so NaNs
with equal bits are equal and 0.0 and -0.0 are not. Values are compared by hashing (blake2b of
the bytes), never pairwise: constants are first grouped by type, only types held by more than
one constant are fingerprinted (a hash of a few sampled bytes), and only fingerprint collisions
are hashed in full, so a model's distinct large weights are barely read.

The kept constant is an inline one if the group has one (it needs no sidecar), else the first in
program order; it moves to the group's first position so it dominates every use. Ops that became
identical because their operands merged are left to `cse`, constants left unused to `dce`.

A parameter (`ge.constant parameter`) merges only with constants of the same parameter: never with
a literal, nor with another parameter of equal value (two zero biases are two parameters, trained
apart). `merge-constants{parameters=true}` merges them all, the kept constant a literal unless the
group is one parameter's: for a graph that is run as it is (inference, or a training step after
apply-optimizer, whose trained parameters are variables), as ge-optimize does.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from ge.ge_dialects import ge
from ge.ge_dialects.ge.weights import constant_array
from ge.passes import remarks

PASS = "merge-constants"
_SAMPLES = 64
"""Elements sampled (evenly spaced) for a large constant's fingerprint."""


def _fingerprint(array: np.ndarray) -> bytes:
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.size > 4 * _SAMPLES:
        flat = flat[:: flat.size // _SAMPLES]
    return hashlib.blake2b(flat.tobytes(), digest_size=16).digest()


def _digest(array: np.ndarray) -> bytes:
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    return hashlib.blake2b(raw.data, digest_size=32).digest()


def _equal_value_groups(consts: list[ge.ConstantOp]) -> list[list[ge.ConstantOp]]:
    """Groups of two or more constants (of one type) with bitwise-equal values, in program order."""
    found = {c: constant_array(c) for c in consts}
    arrays = {c: a for c, a in found.items() if a is not None}
    known = [c for c in consts if c in arrays]  # a weight missing from the sidecar is unknown
    by_print: dict[bytes, list[ge.ConstantOp]] = defaultdict(list)
    for c in known:
        by_print[_fingerprint(arrays[c])].append(c)
    groups: list[list[ge.ConstantOp]] = []
    for candidates in by_print.values():
        if len(candidates) < 2:
            continue
        by_digest: dict[bytes, list[ge.ConstantOp]] = defaultdict(list)
        for c in candidates:
            by_digest[_digest(arrays[c])].append(c)
        groups.extend(g for g in by_digest.values() if len(g) > 1)
    return groups


@dataclass(frozen=True)
class MergeConstantsPass(ModulePass):
    """Merges equal constants (see the module docstring)."""

    name = "merge-constants"

    parameters: bool = False
    """Also merge parameters with equal constants (the graph is run as it is, not trained)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        merged = kept = 0
        blocks: dict[Block, list[ge.ConstantOp]] = defaultdict(list)
        for c in op.walk():
            if isinstance(c, ge.ConstantOp) and c.parent is not None:
                blocks[c.parent].append(c)
        for consts in blocks.values():
            by_type: dict[tuple[Attribute, str | None], list[ge.ConstantOp]] = defaultdict(list)
            for c in consts:
                by_type[(c.output.type, None if self.parameters else c.parameter_key)].append(c)
            order = {c: i for i, c in enumerate(consts)}
            for same_type in by_type.values():
                if len(same_type) < 2:
                    continue
                for group in _equal_value_groups(same_type):
                    group.sort(key=order.__getitem__)
                    self._merge(group)
                    merged += len(group) - 1
                    kept += 1
        if merged:
            remarks.emit(
                PASS,
                "note",
                "merge-constants",
                [],
                f"{merged} duplicate constants removed ({merged + kept} constants merged into {kept})",
            )

    @staticmethod
    def _merge(group: list[ge.ConstantOp]) -> None:
        keep = next((c for c in group if c.weight_key is None), group[0])
        if keep is not group[0]:
            keep.detach()
            Rewriter.insert_op(keep, InsertPoint.before(group[0]))
        if len({c.parameter_key for c in group}) > 1:  # parameters=true: the merged value is no one parameter
            keep.properties.pop("parameter", None)
        remarks.emit(
            PASS, "applied", "merge", group, f"{len(group)} equal constants of type {keep.output.type} merged into one"
        )
        for c in group:
            if c is not keep:
                c.output.replace_all_uses_with(keep.output)
                Rewriter.erase_op(c)
