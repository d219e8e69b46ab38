"""Optimization remarks: one line per rewrite a pass applied or refused, with the reason.

Passes call `emit`; `ge-opt --remarks` prints what was emitted while its pipeline ran. A remark
names the rule, the model nodes involved (ONNX node names when the IR has them), the benefit the
rule's model estimated and why the rewrite was applied or rejected, so a user can see which fusion
happened where, and why another did not.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from xdsl.ir import Operation

from ge.ge_dialects.ge.base import location_name


@dataclass(frozen=True)
class Remark:
    pass_name: str
    kind: str  # "applied", "rejected" or "note"
    rule: str
    nodes: tuple[str, ...]
    reason: str
    benefit: float | None = None

    def __str__(self) -> str:
        nodes = ", ".join(self.nodes) if self.nodes else "-"
        benefit = "" if self.benefit is None else f" (benefit {self.benefit:.3g})"
        return f"remark: {self.pass_name}: {self.kind} {self.rule} on [{nodes}]: {self.reason}{benefit}"


_SINKS: list[list[Remark]] = []


def node_names(ops: Iterable[Operation]) -> tuple[str, ...]:
    """How a remark names ops: ONNX node name when known, else the op name."""
    return tuple(location_name(op) or op.name for op in ops)


def emit(
    pass_name: str, kind: str, rule: str, ops: Iterable[Operation], reason: str, benefit: float | None = None
) -> None:
    """Records a remark in every active collector (a no-op when nobody collects)."""
    if not _SINKS:
        return
    remark = Remark(pass_name, kind, rule, node_names(ops), reason, benefit)
    for sink in _SINKS:
        sink.append(remark)


@contextmanager
def collected() -> Iterator[list[Remark]]:
    """Collects the remarks emitted inside the `with` block into the yielded list."""
    sink: list[Remark] = []
    _SINKS.append(sink)
    try:
        yield sink
    finally:
        _SINKS.remove(sink)
