"""The one limit on tensor sizes that input may ask for (`--max-tensor-bytes` of every tool).

A dense literal in IR text, a kernel's result and an imported initializer are all refused above it
before anything is allocated. It is a context variable so a tool sets it around one job
(`with tensor_byte_limit(n): ...`) and library users keep the default.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

DEFAULT_MAX_TENSOR_BYTES = 4 << 30
"""4 GiB: far above any model's tensors we run, far below what makes numpy thrash or die."""

_max_tensor_bytes: ContextVar[int] = ContextVar("max_tensor_bytes", default=DEFAULT_MAX_TENSOR_BYTES)


@contextmanager
def tensor_byte_limit(limit: int) -> Iterator[None]:
    """Sets the limit for the code run inside (parsing, the interpreter, constant folding)."""
    if limit < 0:
        raise ValueError(f"the tensor size limit must not be negative, got {limit}")
    token = _max_tensor_bytes.set(int(limit))
    try:
        yield
    finally:
        _max_tensor_bytes.reset(token)


def max_tensor_bytes() -> int:
    return _max_tensor_bytes.get()
