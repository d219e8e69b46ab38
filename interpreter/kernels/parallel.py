"""Kernel work cut into blocks that the calling thread and helper threads claim one at a time.

numpy releases the GIL inside BLAS calls and inside ufunc loops over large arrays, so a kernel can
use the run's threads by cutting its work into independent blocks (rows of a GEMM's output, bands of
a convolution's output, rows of a layer norm) and running the blocks on threads.

Blocks are claimed, not assigned: the caller works through them itself and waits only for blocks a
helper has started. On a busy machine a helper that does not get a core takes no block, so the work
costs its one-thread time instead of waiting for a thread the scheduler runs now and then (a threaded
BLAS divides the work up front and waits: 4-6x slower than one thread under load).

The blocks depend on the shape only, never on the thread count: BLAS may round a block of rows
differently from the whole matrix (another kernel for another size), so a split chosen by the threads
available would make the reference interpreter's numbers depend on the machine's load.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

_THREADS = threading.local()
_POOL: ThreadPoolExecutor | None = None
_POOL_SIZE = 0

# Row-wise work of at least this many elements that goes over them more than once runs in blocks, so
# that a block's passes find it in cache (a layer norm over 128 x 768, one thread: 25.1 ms for
# BERT-base's 25 in blocks, 29.5 ms whole).
SPLIT_ELEMENTS = 1 << 16
# Below this much work (elements times passes over them) the blocks stay on the calling thread.
# Handing a block to a helper costs about 20 us, and a helper running small numpy steps holds the
# GIL the caller waits for: on 2 cores, one Add over 98k or 393k f32 elements took 3x and 1.1x its
# one-call time when split, 0.92x at 800k; BERT-base's layer norms took 34.6 ms at two threads
# against 25.1 at one when shared at 64k elements.
SPLIT_WORK = 1 << 20
# How many blocks row-wise work is cut into, whatever the thread count: two per thread on a 2-core
# machine, enough for a claimed split to balance.
ROW_BLOCKS = 4


@contextlib.contextmanager
def kernel_threads(count: int) -> Iterator[None]:
    """Lets the kernels run inside split their work over `count` threads (the caller's included)."""
    previous = thread_count()
    _THREADS.count = count
    try:
        yield
    finally:
        _THREADS.count = previous


def thread_count() -> int:
    """The threads the kernels may use on this thread (1 outside `kernel_threads`)."""
    return getattr(_THREADS, "count", 1)


def _pool(workers: int) -> ThreadPoolExecutor:
    global _POOL, _POOL_SIZE
    if _POOL is None or workers > _POOL_SIZE:
        _POOL = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ge-kernel")
        _POOL_SIZE = workers
    return _POOL


def run_blocks(count: int, work: Callable[[int], object]) -> None:
    """work(i) for each i in range(count), once each, on the calling thread and up to
    `thread_count()` - 1 helpers; the first error is raised on the calling thread."""
    threads = thread_count()
    if count <= 1 or threads <= 1:
        for i in range(count):
            work(i)
        return
    claims = itertools.count()
    lock = threading.Lock()
    done = threading.Event()
    finished = [0]
    errors: list[BaseException] = []

    def claim() -> None:
        while True:
            with lock:
                i = next(claims)
            if i >= count:
                return
            try:
                work(i)
            except BaseException as e:  # reported on the calling thread
                errors.append(e)
            with lock:
                finished[0] += 1
                if finished[0] == count:
                    done.set()

    pool = _pool(threads - 1)
    for _ in range(min(threads, count) - 1):
        pool.submit(claim)
    claim()
    done.wait()
    if errors:
        raise errors[0]


def spans(size: int, blocks: int, align: int = 1) -> list[tuple[int, int]]:
    """[0, size) cut into at most `blocks` spans of equal length (a multiple of `align`, the last
    shorter)."""
    step = -(-size // max(1, blocks))
    step = max(align, -(-step // align) * align)
    return [(lo, min(lo + step, size)) for lo in range(0, size, step)]


def for_rows(rows: int, row_elements: int, work: Callable[[int, int], object], passes: int = 1) -> None:
    """work(lo, hi) over [0, rows), for row-wise kernels (an elementwise function over a flattened
    array, a layer norm over its rows) whose results do not depend on the split. `passes` is about
    how many times the kernel goes over each element. The job runs in `ROW_BLOCKS` spans when it has
    at least `SPLIT_ELEMENTS` elements and more than one pass (for the cache), and the run's threads
    claim them when elements times passes is at least `SPLIT_WORK`; else once."""
    how = _split(rows * row_elements, passes) if rows > 1 else "whole"
    if how == "whole":
        work(0, rows)
        return
    blocks = spans(rows, ROW_BLOCKS)
    if how == "shared":
        run_blocks(len(blocks), lambda i: work(*blocks[i]))
    else:
        for lo, hi in blocks:
            work(lo, hi)


def _split(elements: int, passes: int) -> str:
    """How `for_rows` runs a job: "whole", in "blocks" on the calling thread, or in blocks "shared"
    with the run's threads."""
    if elements * passes >= SPLIT_WORK:
        return "shared"
    return "blocks" if passes > 1 and elements >= SPLIT_ELEMENTS else "whole"


def elementwise(fn: Callable[..., object], out: np.ndarray, *operands, passes: int = 1) -> np.ndarray:
    """fn(*operands, out=out) for an elementwise `fn` (a ufunc, or a few in a row), in blocks along
    the first axis of `out` longer than one (`for_rows`): each operand is sliced where it spans that
    axis and broadcast where it does not. Elementwise, so the blocks cannot change a bit; a block's
    passes run while it is in cache."""
    axis = next((i for i, d in enumerate(out.shape) if d > 1), None)
    if axis is None or _split(out.size, passes) == "whole":
        fn(*operands, out=out)
        return out
    aligned = [np.reshape(x, (1,) * (out.ndim - np.ndim(x)) + np.shape(x)) for x in operands]

    def block(lo: int, hi: int) -> None:
        index = (*[slice(None)] * axis, slice(lo, hi))
        fn(*(x[index] if x.shape[axis] > 1 else x for x in aligned), out=out[index])

    for_rows(out.shape[axis], out.size // out.shape[axis], block, passes)
    return out
