"""Runs a data-parallel program: N replicas of `main`, each on its shard of the batch, exchanging
their collectives' operands.

The replicas run on threads (numpy releases the GIL in its loops); a collective is a rendezvous:
each replica hands in its operands and waits until all have, then each computes the reduction
over the replicas in rank order, so every replica gets bit-identical results, as HCCL guarantees
for an AllReduce. A replica that fails breaks the rendezvous, so the others stop instead of waiting.

The inputs given are the whole batch: an input marked `ge.replica_split = 0` is cut into N equal
slices along dim 0 (replica r gets slice r); the others go whole to each replica. Each replica
may read its own state (`weights` per replica): the `local` parameters of data-parallel differ
between replicas after an update.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, TensorType

from ge.ge_dialects.ge.collective import REPLICAS_ATTR, SPLIT_ATTR
from ge.ge_dialects.messages import one_line

REDUCE = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}


class ReplicaError(Exception):
    """The replicas cannot run: an input that does not split, a replica that failed."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


class Communicator:
    """The group of a run's replicas: where a collective's operands meet."""

    def __init__(self, size: int):
        self.size = size
        self._barrier = threading.Barrier(size)
        self._slots: list[list[np.ndarray] | None] = [None] * size

    def all_reduce(self, rank: int, operands: Sequence[np.ndarray], reduction: str) -> list[np.ndarray]:
        self._slots[rank] = [np.asarray(a) for a in operands]
        self._wait()
        given = [s for s in self._slots if s is not None]
        combine = REDUCE[reduction]
        results = []
        for i in range(len(operands)):
            total = np.array(given[0][i], copy=True)
            for other in given[1:]:
                combine(total, other[i], out=total)
            results.append(total)
        self._wait()  # every replica has read the slots before any reuses them
        return results

    def _wait(self) -> None:
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            raise ReplicaError("another replica failed, so the collective cannot complete") from None

    def abort(self) -> None:
        self._barrier.abort()


@dataclass(frozen=True)
class Replica:
    rank: int
    communicator: Communicator


_CURRENT = threading.local()


def current_replica() -> Replica | None:
    """The replica this thread runs (None outside a data-parallel run)."""
    return getattr(_CURRENT, "replica", None)


def replica_count(fn: func.FuncOp) -> int:
    attr = fn.attributes.get(REPLICAS_ATTR)
    return attr.value.data if isinstance(attr, IntegerAttr) else 1


def whole_batch_types(fn: func.FuncOp, types: Sequence[TensorType]) -> list[TensorType]:
    """The input types a caller gives a data-parallel `fn`: each split input with all replicas' rows."""
    count = replica_count(fn)
    attrs = fn.arg_attrs.data if fn.arg_attrs is not None else []
    if count == 1 or not attrs:
        return list(types)
    out = []
    for t, a in zip(types, attrs):
        if SPLIT_ATTR in a.data and t.get_shape() and t.get_shape()[0] >= 0:
            t = TensorType(t.element_type, [t.get_shape()[0] * count, *t.get_shape()[1:]], t.encoding)
        out.append(t)
    return out


def split_inputs(
    fn: func.FuncOp, names: Sequence[str], inputs: Mapping[str, np.ndarray]
) -> list[dict[str, np.ndarray]]:
    """Each replica's inputs: the split inputs cut along dim 0, the others whole."""
    count = replica_count(fn)
    attrs = fn.arg_attrs.data if fn.arg_attrs is not None else []
    split = {n for n, a in zip(names, attrs) if SPLIT_ATTR in a.data}
    shards: list[dict[str, np.ndarray]] = [{} for _ in range(count)]
    for name, value in inputs.items():
        if name not in split:
            for shard in shards:
                shard[name] = value
            continue
        array = np.asarray(value)
        if array.ndim == 0 or array.shape[0] % count:
            rows = array.shape[0] if array.ndim else "no"
            raise ReplicaError(
                f"input '{name}' has {rows} rows, which do not split over the {count} replicas "
                "(the whole batch is given; each replica gets an equal slice)"
            )
        for r, part in enumerate(np.split(array, count, axis=0)):
            shards[r][name] = part
    return shards


def run_replicas(
    module: ModuleOp,
    fn: func.FuncOp,
    names: Sequence[str],
    inputs: Mapping[str, np.ndarray],
    weights: Mapping[str, np.ndarray] | Sequence[Mapping[str, np.ndarray]] | None,
    run_one,
) -> list[dict[str, np.ndarray]]:
    """Every replica's outputs, by rank. `run_one(module, inputs, weights)` runs one replica."""
    count = replica_count(fn)
    shards = split_inputs(fn, names, inputs)
    per_replica = list(weights) if isinstance(weights, Sequence) else [weights] * count
    if len(per_replica) != count:
        raise ReplicaError(f"{len(per_replica)} weight tables given for {count} replicas")
    communicator = Communicator(count)
    results: list[dict[str, np.ndarray] | None] = [None] * count
    errors: list[BaseException | None] = [None] * count

    def replica(rank: int) -> None:
        _CURRENT.replica = Replica(rank, communicator)
        try:
            results[rank] = run_one(module, shards[rank], per_replica[rank])
        except BaseException as e:
            errors[rank] = e
            communicator.abort()
        finally:
            _CURRENT.replica = None

    threads = [threading.Thread(target=replica, args=(r,), name=f"replica-{r}") for r in range(1, count)]
    for t in threads:
        t.start()
    replica(0)
    for t in threads:
        t.join()
    first = next((e for e in errors if e is not None and not isinstance(e, ReplicaError)), None)
    first = first or next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return [r for r in results if r is not None]
