"""A data-parallel training step lowered to streams: the collectives run on HCCL's stream of their
own, an independent happens-before walk over the stream IR shows that no collective starts before
every gradient of its bucket is written and no task reads a reduced gradient before its collective
ends (deleting any event to or from the collectives' stream is caught), and the stream-level step
gives the ge level's losses and parameters on every replica."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.ir import Operation

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import stream, task
from ge.ge_dialects.ge.sizes import device_bytes
from ge.ge_dialects.ge.weights import attach_weights
from ge.interpreter.runner import main_function, output_names, run_each_replica
from ge.lowering import plan_memory
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import DEFAULT_TARGET, load_target
from ge.tools.common import make_context

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "passes"))
from training_models import deep_mlp

STEP = 'autodiff,data-parallel{devices=4 split="idx:1,3"},apply-optimizer{kind=sgd lr=0.1}'
LOWER = "ge-optimize{level=3},lower-to-tasks,plan-memory,lower-to-streams"
ALIGNMENT = load_target(DEFAULT_TARGET).hbm.alignment


def _build(pipeline: str):
    model, inputs = deep_mlp(np.random.default_rng(0), depth=4, width=8, batch=8)
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    apply_all(make_context(), module, parse_passes(pipeline))
    return module, inputs


@pytest.fixture(scope="module")
def lowered():
    return _build(f"{STEP},{LOWER}")


def happens_before(fn: func.FuncOp) -> dict[Operation, set[Operation]]:
    """For each op of the stream IR, the ops that finish before it starts: a stream runs its tasks,
    records and waits in program order; a wait starts after its record."""
    before: dict[Operation, set[Operation]] = {}
    last_on: dict[int, Operation] = {}
    for op in fn.body.block.ops:
        if not isinstance(op, (task.KernelOp, stream.RecordOp, stream.WaitOp)):
            continue
        sid = op.stream.value.data
        preds: set[Operation] = set()
        if sid in last_on:
            prev = last_on[sid]
            preds |= {prev} | before[prev]
        if isinstance(op, stream.WaitOp):
            record = op.event.owner
            preds |= {record} | before[record]
        before[op] = preds
        last_on[sid] = op
    return before


def violations(fn: func.FuncOp) -> list[str]:
    before = happens_before(fn)
    kernels = [k for k in fn.body.block.ops if isinstance(k, task.KernelOp)]
    found = []
    for c in (k for k in kernels if k.engine.data == "hccl"):
        for v in c.inputs:
            producer = v.owner
            if isinstance(producer, task.KernelOp) and producer not in before[c]:
                found.append(f"{c.task_name.data} may start before {producer.task_name.data} wrote its gradient")
        for r in c.outputs:
            for use in r.uses:
                reader = use.operation
                if isinstance(reader, task.KernelOp) and c not in before[reader]:
                    found.append(f"{reader.task_name.data} may read {c.task_name.data}'s result before it ends")
    return found


def comm_stream_waits(fn: func.FuncOp) -> list[stream.WaitOp]:
    """The waits that order a collective: on the collectives' stream, or of an event it records."""
    comm = {k.stream.value.data for k in fn.body.block.ops if isinstance(k, task.KernelOp) and k.engine.data == "hccl"}
    return [
        w
        for w in fn.body.block.ops
        if isinstance(w, stream.WaitOp) and (w.stream.value.data in comm or w.event.owner.stream.value.data in comm)
    ]


def test_the_collectives_run_on_a_stream_of_their_own(lowered):
    fn = main_function(lowered[0])
    kernels = [k for k in fn.body.block.ops if isinstance(k, task.KernelOp)]
    collectives = [k for k in kernels if k.engine.data == "hccl"]
    assert len(collectives) == 3  # idx:1,3 over 5+ gradients: three buckets
    comm = {k.stream.value.data for k in collectives}
    assert len(comm) == 1
    assert all(k.stream.value.data not in comm for k in kernels if k.engine.data != "hccl")


def test_hcom_parallel_puts_the_readers_of_the_collectives_on_a_stream_of_their_own():
    fresh, _ = _build(f"{STEP},{LOWER.replace('lower-to-streams', 'lower-to-streams{hcom_parallel=true}')}")
    fn = main_function(fresh)
    kernels = [k for k in fn.body.block.ops if isinstance(k, task.KernelOp)]
    produced = {r for k in kernels if k.engine.data == "hccl" for r in k.outputs}
    readers = [k for k in kernels if k.engine.data != "hccl" and any(v in produced for v in k.inputs)]
    assert readers and len({k.stream.value.data for k in readers}) == 1
    others = {k.stream.value.data for k in kernels if k not in readers}
    assert readers[0].stream.value.data not in others
    assert violations(fn) == []


def bucket_layout_faults(fn: func.FuncOp) -> list[str]:
    """Each collective's gradients must lie back to back in one buffer (aligned), and its results
    over them: no pack copy, reduced in place."""
    offset_of = {}
    for k in fn.body.block.ops:
        if isinstance(k, task.KernelOp) and k.offsets is not None:
            offset_of.update(zip(k.outputs, k.offsets.get_values()))
    faults = []
    for c in (k for k in fn.body.block.ops if isinstance(k, task.KernelOp) and k.engine.data == "hccl"):
        at = offset_of[c.inputs[0]]
        for v, r in zip(c.inputs, c.outputs):
            if offset_of[v] != at or offset_of[r] != at:
                faults.append(f"{c.task_name.data}: {v.type} at {offset_of[v]}, result at {offset_of[r]}, not {at}")
            at += -(-device_bytes(v) // ALIGNMENT) * ALIGNMENT
    return faults


def test_each_bucket_is_one_buffer_reduced_in_place(lowered):
    assert bucket_layout_faults(main_function(lowered[0])) == []


def test_mutation_buckets_planned_apart_are_caught(monkeypatch):
    monkeypatch.setattr(plan_memory, "bucket_buffers", lambda kernel, index, names, buffers, within, alignment: buffers)
    module, _ = _build(f"{STEP},{LOWER}")
    assert bucket_layout_faults(main_function(module))


def test_no_collective_starts_early_and_no_reader_reads_early(lowered):
    fn = main_function(lowered[0])
    assert violations(fn) == []
    assert len(comm_stream_waits(fn)) >= 4


def test_mutation_deleting_any_event_of_the_collectives_is_caught():
    module, _ = _build(f"{STEP},{LOWER}")
    fn = main_function(module)
    count = len(comm_stream_waits(fn))
    for i in range(count):
        fresh, _ = _build(f"{STEP},{LOWER}")
        fresh_fn = main_function(fresh)
        wait = comm_stream_waits(fresh_fn)[i]
        wait.detach()
        wait.erase()
        assert violations(fresh_fn), f"deleting wait #{i} went unnoticed"


def test_the_stream_level_step_gives_the_ge_levels_results(lowered):
    module, inputs = lowered
    reference, _ = _build(STEP)
    want = run_each_replica(reference, inputs)
    got = run_each_replica(module, inputs)
    names = [n for n in output_names(main_function(reference)) if n != "y"]
    for w, g in zip(want, got):
        for name in names:
            np.testing.assert_allclose(g[name], w[name], rtol=1e-5, atol=1e-6, err_msg=name)
    for name in names:  # the replicas agree bit for bit on the new parameters and on nothing else they compute
        if name != "loss":
            assert all(np.array_equal(g[name], got[0][name]) for g in got), name
