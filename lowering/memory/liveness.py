"""Buffers and their live intervals over a task sequence.

A task sequence is the order the device runs the graph's tasks in. Each tensor a task writes is a
`Buffer` that is live from the task that defines it (`start`) to the last task that reads it (`end`),
both inclusive: two buffers whose intervals share a task index are live at the same time and may not
share memory (except an in-place pair, see `Buffer.inplace_of`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

#: One task of a schedule: (task name, tensors it reads, tensors it writes).
Task = tuple[str, Sequence[str], Sequence[str]]


@dataclass(frozen=True)
class Buffer:
    """A tensor to place in device memory.

    `start`/`end`: the live interval in task indices, inclusive (defined by task `start`, last read by
    task `end`). `inplace_of`: buffers this one may overwrite when their last use is this buffer's
    defining task (an elementwise op writing over its dead input); the planner takes the first legal
    one. `pinned`: graph inputs, outputs and weights, which live in their own memory, not in the pool.
    """

    name: str
    size: int
    start: int
    end: int
    inplace_of: tuple[str, ...] = ()
    pinned: bool = False

    def __post_init__(self):
        if not isinstance(self.size, int) or self.size < 0:
            raise ValueError(f"buffer {self.name!r}: size must be a non-negative int, got {self.size!r}")
        if self.start > self.end:
            raise ValueError(f"buffer {self.name!r}: live interval [{self.start}, {self.end}] ends before it starts")
        if isinstance(self.inplace_of, str):
            raise TypeError(f"buffer {self.name!r}: inplace_of must be a tuple of names, not a string")
        object.__setattr__(self, "inplace_of", tuple(self.inplace_of))

    def overlaps(self, other: Buffer) -> bool:
        """Whether the two live intervals share a task."""
        return self.start <= other.end and other.start <= self.end


def intervals_from_schedule(
    tasks: Sequence[Task],
    sizes: Mapping[str, int],
    keep_alive: Iterable[str] = frozenset(),
    *,
    pinned: Iterable[str] = (),
    inplace: Mapping[str, Sequence[str]] | None = None,
) -> list[Buffer]:
    """The buffers of a task order: one per tensor written by a task.

    - `start` is the index of the first task writing the tensor, `end` the last task reading (or
      writing) it; a tensor nobody reads is live only at its defining task.
    - `keep_alive`: tensors that stay live to the last task (e.g. results read after the sequence).
    - `pinned`: tensors kept out of the reusable pool (graph inputs/outputs, weights).
    - Tensors that are read but written by no task (graph inputs, weights) become pinned buffers
      live from task 0 when `sizes` knows them, and are skipped otherwise.
    - `inplace`: tensor -> tensors it may overwrite (`Buffer.inplace_of`).

    Raises ValueError when a written tensor has no size or a tensor is read before it is written.
    The buffers come in order of `start`, then first appearance.
    """
    keep_alive = set(keep_alive)
    pinned = set(pinned)
    inplace = inplace or {}
    last = len(tasks) - 1
    first_def: dict[str, int] = {}
    first_read: dict[str, tuple[int, str]] = {}
    last_use: dict[str, int] = {}
    order: dict[str, int] = {}
    for i, (task, reads, writes) in enumerate(tasks):
        for t in reads:
            order.setdefault(t, len(order))
            first_read.setdefault(t, (i, task))
            last_use[t] = i
        for t in writes:
            order.setdefault(t, len(order))
            if t not in first_def:
                first_def[t] = i
                if t not in sizes:
                    raise ValueError(f"tensor {t!r} written by task {task!r} has no size")
                if t in first_read and first_read[t][0] < i:
                    raise ValueError(
                        f"tensor {t!r} is read by task {first_read[t][1]!r} before task {task!r} writes it"
                    )
            last_use[t] = max(last_use.get(t, i), i)
    buffers = []
    for t in sorted(order, key=lambda t: (first_def.get(t, 0), order[t])):
        if t in first_def:
            start, is_pinned = first_def[t], t in pinned
        elif t in sizes:
            start, is_pinned = 0, True  # an input of the sequence
        else:
            continue
        end = last if t in keep_alive else last_use[t]
        buffers.append(Buffer(t, int(sizes[t]), start, max(start, end), tuple(inplace.get(t, ())), is_pinned))
    return buffers
