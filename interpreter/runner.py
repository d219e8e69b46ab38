"""Runs a ge module's `main` function on named numpy inputs."""

from __future__ import annotations

import contextlib
import math
import os
import weakref
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Attribute

from ge.ge_dialects import stream
from ge.ge_dialects.ge.control_flow import lowering_leaves
from ge.ge_dialects.ge.dims import DimsError, bind, input_dims, ranges_of
from ge.ge_dialects.ge.types import numpy_dtype, shape_of, type_name
from ge.ge_dialects.ge.weights import weights_of
from ge.ge_dialects.messages import one_line, quoted
from ge.interpreter.control_flow import ControlFlowFunctions
from ge.interpreter.fused import FusedFunctions
from ge.interpreter.ge import ConstantCache, GeFunctions
from ge.interpreter.kernels.parallel import kernel_threads
from ge.interpreter.layouts import to_logical, to_physical
from ge.interpreter.replicas import current_replica, replica_count, run_replicas, whole_batch_types
from ge.interpreter.stream_program import pool_bytes
from ge.interpreter.task import TaskFunctions


class InputError(Exception):
    """The inputs do not fit the graph: missing, extra, wrong shape or dtype. The message is kept to
    one line whatever the names in it hold (graph input names and file members are the user's)."""

    def __init__(self, message: str):
        super().__init__(one_line(message))


def main_function(module: ModuleOp) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == "main":
            return op
    raise InputError("the module has no func.func @main")


def _names(attrs, count: int, prefix: str) -> list[str]:
    names = []
    for i in range(count):
        name = None
        if attrs is not None:
            d = attrs.data[i].data
            if isinstance(d.get("ge.name"), StringAttr):
                name = d["ge.name"].data
        names.append(name or f"{prefix}{i}")
    return names


def input_names(fn: func.FuncOp) -> list[str]:
    return _names(fn.arg_attrs, len(fn.function_type.inputs), "arg")


def output_names(fn: func.FuncOp) -> list[str]:
    return _names(fn.res_attrs, len(fn.function_type.outputs), "result")


def signature_problem(fn: func.FuncOp) -> str | None:
    """Why `fn`'s signature is not a graph's, or None: a graph takes and returns tensors only (its
    inputs are fed, and its buffers planned, as tensors), so the first argument or result of another
    type is named, with its type."""
    sides = (
        ("argument", input_names(fn), fn.function_type.inputs.data),
        ("result", output_names(fn), fn.function_type.outputs.data),
    )
    for side, names, types in sides:
        for name, t in zip(names, types):
            if not isinstance(t, TensorType):
                return (
                    f"@{fn.sym_name.data}'s {side} {quoted(name)} has type {t}; a graph takes and returns "
                    "tensors only (a scalar is a rank-0 tensor such as tensor<i32>)"
                )
    return None


def tensor_types(types: Sequence[Attribute]) -> list[TensorType]:
    """`main`'s argument or result types, once `input_signature` has checked they are all tensors."""
    tensors = [t for t in types if isinstance(t, TensorType)]
    assert len(tensors) == len(types), "main's signature has a type that is no tensor"
    return tensors


def input_signature(module: ModuleOp) -> dict[str, TensorType]:
    """`main`'s inputs by name, after checking its whole signature (arguments and results) is tensors.

    The inputs a caller gives: for a data-parallel program, the whole batch (each split input
    `ge.replicas` times its rows); inside one replica's run, the replica's own slice."""
    fn = main_function(module)
    problem = signature_problem(fn)
    if problem is not None:
        raise InputError(problem)
    types = tensor_types(fn.function_type.inputs.data)
    if current_replica() is None:
        types = whole_batch_types(fn, types)
    return dict(zip(input_names(fn), types))


def check_input(name: str, t: TensorType, dtype: np.dtype, shape: tuple[int, ...]) -> None:
    """Checks one input's dtype and shape against its signature type; a file reader calls this with
    the dtype and shape in a header, before reading any data."""
    want = numpy_dtype(t.element_type)
    if dtype != want:
        raise InputError(f"input '{name}' has dtype {dtype}, the graph expects {type_name(t.element_type)}")
    dims = shape_of(t)
    if len(dims) != len(shape) or any(s is not None and s != d for s, d in zip(dims, shape)):
        raise InputError(f"input '{name}' has shape {list(shape)}, the graph expects {t}")


def check_input_names(signature: Mapping[str, TensorType], names) -> None:
    """Every graph input is given and nothing else is."""
    extra = sorted(set(names) - set(signature))
    if extra:
        raise InputError(
            f"input {quoted(extra[0])} is not an input of the graph (inputs: {', '.join(map(quoted, signature))})"
        )
    for name, t in signature.items():
        if name not in names:
            raise InputError(f"input '{name}' is missing (expected {t})")


def check_inputs(module: ModuleOp, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The inputs in argument order, after checking each against the graph's signature.

    Inputs are logical arrays (the shape in the type), whatever storage format the graph keeps them in."""
    signature = input_signature(module)
    check_input_names(signature, inputs)
    ordered = []
    for name, t in signature.items():
        value = np.asarray(inputs[name])
        check_input(name, t, value.dtype, value.shape)
        ordered.append(value)
    fn = main_function(module)
    try:
        bind(list(signature), input_dims(fn.arg_attrs, len(signature)), [v.shape for v in ordered], ranges_of(fn))
    except DimsError as e:
        raise InputError(str(e)) from None
    return ordered


THREADS_ENV = "GE_INTERPRETER_THREADS"

# The constants of each module, kept across runs: reading a sidecar's weights is a file read per
# tensor (0.11 of 0.27 s of a ResNet-50 run), converting them is more. Dropped with the module.
_CONSTANTS: weakref.WeakKeyDictionary[ModuleOp, ConstantCache] = weakref.WeakKeyDictionary()


def _constant_cache(module: ModuleOp, weights: Mapping[str, np.ndarray]) -> ConstantCache:
    cache = _CONSTANTS.get(module)
    if cache is None or cache.weights is not weights:
        cache = _CONSTANTS[module] = ConstantCache(weights)
    return cache


def available_cores() -> int:
    """The cores this process may run on: its affinity mask, capped by a cgroup CPU quota."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
        if quota != "max":
            cores = min(cores, max(1, math.ceil(int(quota) / int(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def _others_running() -> int:
    """Threads other than this one that are runnable right now (Linux's /proc/loadavg), 0 if unknown."""
    try:
        running = Path("/proc/loadavg").read_text().split()[3].split("/")[0]
        return max(0, int(running) - 1)
    except (OSError, ValueError, IndexError):
        return 0


def blas_threads(threads: int | None = None) -> int:
    """How many threads numpy's BLAS gets for a run: `threads` if given, else $GE_INTERPRETER_THREADS,
    else the available cores that no other runnable thread wants at the start of the run.

    A threaded GEMM splits its work evenly and waits for its slowest thread: on a core another
    process is using, that thread gets a time slice now and then, so a run on a busy machine takes
    10-27x its quiet time. Asking for no more threads than there are idle cores keeps a
    busy machine's run near its one-thread time."""
    if threads is None:
        given = os.environ.get(THREADS_ENV, "").strip()
        if given:
            try:
                threads = int(given)
            except ValueError:
                raise InputError(f"${THREADS_ENV} is '{given}', not a number of threads") from None
    if threads is not None:
        if threads < 1:
            raise InputError(f"the interpreter needs at least one thread, {threads} asked for")
        return threads
    cores = available_cores()
    return max(1, cores - _others_running())


@cache
def keep_freed_memory() -> None:
    """Asks glibc to keep freed blocks for reuse instead of returning them to the system.

    Process-wide, so the library never does it on its own: `ge-run` and the benchmarks call it, and
    a program that runs the interpreter in a loop may (a library that retunes its host's allocator
    behind its back would surprise the host).

    Every op allocates its result afresh. glibc hands blocks over its mmap threshold back to the
    system when they are freed, so the next op's result is new pages the kernel must fault in and
    zero: 12,900 faults per ResNet-50 run, 0.02-0.03 s of system time in a 0.15 s run. With the
    threshold at 32 MiB and trimming at 512 MiB, a run reuses the previous run's blocks. A no-op
    where the C library is not glibc."""
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
    mallopt(-1, 512 << 20)  # M_TRIM_THRESHOLD


@cache
def _blas_controller():
    from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

    return ThreadpoolController()


def module_interpreter(module: ModuleOp, weights: Mapping[str, np.ndarray]) -> Interpreter:
    """An interpreter for `module` with every dialect's functions, its constants kept for the next
    run of the same module and weights (ge-run's runner and the arena executor use it)."""
    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(GeFunctions(weights, _constant_cache(module, weights)))
    interpreter.register_implementations(FusedFunctions())
    interpreter.register_implementations(TaskFunctions())
    interpreter.register_implementations(ControlFlowFunctions())
    return interpreter


@contextlib.contextmanager
def run_threads(threads: int | None = None) -> Iterator[None]:
    """A run's thread policy: BLAS itself at one thread, the kernels splitting large work over
    `blas_threads(threads)` threads (kernels.parallel)."""
    count = blas_threads(threads)
    with _blas_controller().limit(limits=1, user_api="blas"), kernel_threads(count):
        yield


def run(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    weights: Mapping[str, np.ndarray] | None = None,
    threads: int | None = None,
) -> dict[str, np.ndarray]:
    """Executes `main` and returns its results by output name; `weights` defaults to the module's own
    (what a tool attached, plus what passes added). `threads` sizes the run (see `blas_threads`).
    Constant values are kept for the next run of the same module and weights. A function lowered to
    streams with a memory plan runs on the arena executor, in program order: its tasks over one
    arena of the planned pool, as the device stores them (interpreter/arena_executor.py); a host
    program (partition-dynamic) runs its control flow here and its lowered subgraphs on the arena
    (interpreter/host_program.py). A data-parallel program runs every replica, each on its slice of
    the batch, and returns replica 0's outputs (`run_each_replica` returns them all)."""
    fn = main_function(module)
    if replica_count(fn) > 1 and current_replica() is None:
        return run_each_replica(module, inputs, weights, threads)[0]
    if stream.MODE_ATTR in fn.attributes and pool_bytes(module) is not None:
        from ge.interpreter.arena_executor import run_in_arena  # it builds on this module

        return run_in_arena(module, inputs, weights, seed=None, threads=threads)
    if lowering_leaves(fn):
        from ge.interpreter.host_program import run_host  # it builds on this module

        return run_host(module, inputs, weights, threads)[0]
    # graph inputs and outputs are logical; a signature type with a storage format is converted here
    args = [to_physical(a, t) for a, t in zip(check_inputs(module, inputs), tensor_types(fn.function_type.inputs.data))]
    interpreter = module_interpreter(module, weights_of(module) if weights is None else weights)
    with run_threads(threads):
        results = interpreter.call_op(fn, tuple(args))
    outputs = (to_logical(np.asarray(r), t) for r, t in zip(results, tensor_types(fn.function_type.outputs.data)))
    return dict(zip(output_names(fn), outputs))


def run_each_replica(
    module: ModuleOp,
    inputs: Mapping[str, np.ndarray],
    weights: Mapping[str, np.ndarray] | Sequence[Mapping[str, np.ndarray]] | None = None,
    threads: int | None = None,
    run_one=None,
) -> list[dict[str, np.ndarray]]:
    """Runs every replica of a data-parallel `main` (`ge.replicas`) on its slice of the batch and
    returns each one's outputs, by rank; `weights` is one table for all or one per replica.
    `run_one(module, inputs, weights)` runs one replica (default: `run`)."""
    fn = main_function(module)
    one = run_one or (lambda m, i, w: run(m, i, w, threads))
    with run_threads(threads):  # entered once here: the replicas' own entries nest inside it
        return run_replicas(module, fn, input_names(fn), inputs, weights, one)
