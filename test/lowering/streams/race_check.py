"""An independent race checker for functions lowered to streams (a test utility).

It shares no code with lowering/streams: it walks the IR only. Happens-before is the reachability
of the stream order (each task before the next task of its stream) plus the events (a record's
`after` task before the first task of the waiting stream after the wait), computed by a plain
depth-first search per task. Buffers are the results with a planned offset >= 0 and their bytes
`[offset, offset + size)`, size in the storage format (padded). For every two buffers sharing a
byte, every task touching the one written first (its writer and readers) must happen before the
writer of the other, except the writer of the other reading it in place (same offset). Each
unordered (first buffer, second buffer) pair is one race.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType

from ge.ge_dialects import stream, task
from ge.ge_dialects.ge.layout import storage_shape
from ge.ge_dialects.ge.types import numpy_dtype


def stored_bytes(value) -> int:
    """Bytes of a value in its storage format (padded blocks included), computed here from the
    layout's physical shape rather than by the compiler's size function."""
    t = value.type
    if not isinstance(t, TensorType):
        return 0
    width = t.element_type.bitwidth
    bits = width if width in (2, 4) else 8 * numpy_dtype(t.element_type).itemsize  # int4/fp4/int2 packed
    return (math.prod(d or 1 for d in storage_shape(t)) * bits + 7) // 8


@dataclass(frozen=True)
class Race:
    earlier: str
    """The task still touching the first buffer."""
    later: str
    """The task writing the second buffer over it."""


def happens_before(fn) -> tuple[list, dict]:
    """The kernels in program order and, per kernel index, the set of indices it happens before."""
    kernels, stream_of, succ = [], [], {}
    last_on = {}
    record_task = {}
    waiting = {}  # stream -> [record task index]
    for op in fn.body.block.ops:
        if isinstance(op, task.KernelOp):
            i = len(kernels)
            s = op.properties["stream"].value.data
            succ[i] = set()
            if s in last_on:
                succ[last_on[s]].add(i)
            for src in waiting.pop(s, []):
                succ[src].add(i)
            last_on[s] = i
            kernels.append(op)
            stream_of.append(s)
        elif isinstance(op, stream.RecordOp):
            record_task[op] = kernels.index(op.after.owner)
        elif isinstance(op, stream.WaitOp):
            waiting.setdefault(op.stream.value.data, []).append(record_task[op.event.owner])
    after = {}
    for i in range(len(kernels)):
        seen, stack = set(), list(succ[i])
        while stack:
            j = stack.pop()
            if j not in seen:
                seen.add(j)
                stack.extend(succ[j])
        after[i] = seen
    return kernels, after


def races(fn) -> list[Race]:
    kernels, after = happens_before(fn)
    index = {k: i for i, k in enumerate(kernels)}
    buffers = []  # (offset, end, writer, touching tasks)
    for i, k in enumerate(kernels):
        offsets = k.properties.get("offsets")
        for r, off in zip(k.results, offsets.get_values() if offsets else ()):
            if off >= 0 and stored_bytes(r) > 0:
                touch = {i} | {index[u.operation] for u in r.uses if u.operation in index}
                buffers.append((off, off + stored_bytes(r), i, touch))
    found = []
    for a in buffers:
        for b in buffers:
            if a is b or not (a[0] < b[1] and b[0] < a[1]) or a[2] > b[2] or (a[2] == b[2] and a[0] > b[0]):
                continue
            for t in sorted(a[3], reverse=True):  # name the latest unordered access
                if t == b[2] and a[0] == b[0]:
                    continue  # in place
                if b[2] not in after[t]:
                    found.append(Race(kernels[t].properties["name"].data, kernels[b[2]].properties["name"].data))
                    break
    return found
