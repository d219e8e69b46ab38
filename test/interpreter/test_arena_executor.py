"""The arena executor catches what streams, events and the memory plan get wrong: intermediates
live in one arena at their planned offsets and the tasks run in random orders the streams and
events allow, so a missing event or an offset on a live buffer gives wrong outputs or an error.
Mutations (an event deleted, a buffer moved) check that the executor and the simulator notice."""

from __future__ import annotations

import dataclasses
import functools

import ml_dtypes
import numpy as np
import onnx
import pytest
from tool_server import run as run_tool

from ge.device import ScheduleError, simulate
from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.arena_executor import (
    POISON,
    ArenaError,
    _Arena,
    from_device_bytes,
    random_order,
    run_in_arena,
    to_device_bytes,
)
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import main_function, run
from ge.interpreter.stream_executor import sim_tasks
from ge.interpreter.stream_program import stream_program
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context

TINY = {
    "gpt2": lambda: models.gpt2(layers=1, seq=8, hidden=64, heads=4, vocab=100),
    "bert_base": lambda: models.bert_base(layers=1, seq=8, hidden=64, heads=4, intermediate=128, vocab=100),
    "resnet50": lambda: models.small("resnet50", image=32),
    "mobilenet_v2": lambda: models.small("mobilenet_v2", image=32),
}
SEEDS = range(20)
FEWER_SEEDS = {"resnet50": range(6)}
"""ResNet-50 takes ~1.5 s a run; the 20 seeds of the others cover the strategies several times."""


def seeds(name: str) -> range:
    return FEWER_SEEDS.get(name, SEEDS)


@functools.cache
def graph(name: str):
    """(ge-level module, inputs, its outputs)."""
    model = TINY[name]()
    module, weights = import_model(model)
    attach_weights(module, weights)
    inputs = models.random_inputs(model, 0)
    return module, inputs, run(module, inputs)


def lowered(name: str, level: int, streams: int, plan: str = "plan-memory"):
    """A copy (tests mutate it) of the model compiled once per configuration."""
    return clone_with_weights(_lowered(name, level, streams, plan))


@functools.cache
def _lowered(name: str, level: int, streams: int, plan: str):
    module = clone_with_weights(graph(name)[0])
    GeOptimizePass(level=level).apply(make_context(), module)
    apply_all(make_context(), module, parse_passes(f"lower-to-tasks,{plan},lower-to-streams{{streams={streams}}}"))
    return module


def error(name: str, outputs) -> float:
    reference = graph(name)[2]
    errors = [relative_error(reference[k], outputs[k]) for k in reference]
    return float("nan") if any(np.isnan(errors)) else max(errors)


def wrong(name: str, module, seed, program=None) -> str | None:
    """Why the run with `seed` is caught (an error, or outputs off the ge level), or None."""
    try:
        outputs = run_in_arena(module, graph(name)[1], seed=seed, program=program)
    except (ScheduleError, ArenaError) as e:
        return type(e).__name__
    e = error(name, outputs)
    return None if e <= 1e-4 else f"error {e:.3g}"


# ------------------------------------------------------------------------------- the right outputs


@pytest.mark.parametrize("count", [1, 2, 4])
@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("name", list(TINY))
def test_every_order_over_the_arena_gives_the_ge_level_outputs(name, level, count):
    module = lowered(name, level, count)
    bad = {seed: why for seed in seeds(name) if (why := wrong(name, module, seed))}
    assert not bad, f"{name} O{level} streams={count}: {len(bad)}/{len(seeds(name))} seeds wrong: {bad}"


@pytest.mark.parametrize("name", list(TINY))
def test_without_reuse_every_order_on_four_streams_is_right(name):
    """With a buffer per value no order can clobber one: only the events matter, and they hold."""
    module = lowered(name, 0, 4, "plan-memory{reuse=false}")
    assert stream_program(main_function(module)).tasks[-1].stream is not None
    assert not {seed: why for seed in seeds(name) if (why := wrong(name, module, seed))}


@pytest.mark.parametrize("name", list(TINY))
def test_with_reuses_given_up_every_order_on_four_streams_is_right(name):
    """relax-reuse moves buffers after plan-memory: the offsets it picks hold in every order."""
    module = lowered(name, 3, 4, "plan-memory,relax-reuse{streams=4 budget_mib=1}")
    assert "given_up" in module.attributes["task.memory"].data
    bad = {seed: why for seed in seeds(name) if (why := wrong(name, module, seed))}
    assert not bad, f"{name} O3 relaxed: {len(bad)}/{len(seeds(name))} seeds wrong: {bad}"


def test_program_order_is_the_seedless_run():
    module = lowered("gpt2", 0, 4)
    assert error("gpt2", run_in_arena(module, graph("gpt2")[1], seed=None)) == 0.0


# ------------------------------------------------------------------------------------ the orders


def test_orders_keep_stream_order_and_events_and_differ_from_program_order():
    program = stream_program(main_function(lowered("gpt2", 0, 4)))
    assert len({t.stream for t in program.tasks}) >= 2  # reuse edges may merge streams
    recorder = {k: t.index for t in program.tasks for k in t.records}
    orders = {tuple(random_order(program, seed)) for seed in range(30)}
    assert len(orders) >= 10
    assert any(list(o) != sorted(o) for o in orders)
    for order in orders:
        assert sorted(order) == list(range(len(program.tasks)))
        at = {j: i for i, j in enumerate(order)}
        for t in program.tasks:
            later = [u for u in program.tasks if u.stream == t.stream and u.index > t.index]
            assert all(at[t.index] < at[u.index] for u in later)
            assert all(at[recorder[k]] < at[t.index] for k in t.waits)


def test_a_deadlock_names_the_blocked_streams():
    program = stream_program(main_function(lowered("gpt2", 0, 2)))
    first = {}
    for t in program.tasks:
        first.setdefault(t.stream, t)
    a, b = first[0], first[1]
    tasks = list(program.tasks)
    tasks[a.index] = dataclasses.replace(a, waits=("x",), records=("y",))
    tasks[b.index] = dataclasses.replace(b, waits=("y",), records=("x",))
    with pytest.raises(
        ScheduleError, match=r"deadlock after 0 tasks: stream 0 at '.*' waits x; stream 1 at '.*' waits y"
    ):
        random_order(dataclasses.replace(program, tasks=tuple(tasks)), 0)


# ------------------------------------------------------------------------------------- the arena


def test_the_arena_starts_as_poison_that_reads_as_nan():
    program = stream_program(main_function(lowered("gpt2", 3, 1)))
    arena = _Arena(program)
    assert arena.bytes.size == program.pool and (arena.bytes == POISON).all()
    assert np.isnan(arena.bytes[:8].view(np.float32)).all() and np.isnan(arena.bytes[:8].view(np.float16)).all()


def test_a_buffer_moved_to_free_bytes_changes_nothing():
    """Only placement matters: the same run with one result moved past the pool gives the same outputs."""
    module = lowered("gpt2", 3, 1)
    program = stream_program(main_function(module))
    t = next(t for t in program.tasks if t.offsets and t.offsets[0] >= 0)
    tasks = list(program.tasks)
    tasks[t.index] = dataclasses.replace(t, offsets=(program.pool,) + t.offsets[1:])
    grown = dataclasses.replace(program, tasks=tuple(tasks), pool=program.pool + t.sizes[0])
    assert error("gpt2", run_in_arena(module, graph("gpt2")[1], seed=0, program=grown)) == 0.0


def test_a_result_bigger_than_its_plan_is_an_arena_error():
    module = lowered("gpt2", 3, 1)
    program = stream_program(main_function(module))
    t = next(t for t in program.tasks if t.offsets and t.offsets[0] >= 0)
    tasks = list(program.tasks)
    tasks[t.index] = dataclasses.replace(t, sizes=(t.sizes[0] - 4,) + t.sizes[1:])
    with pytest.raises(
        ArenaError,
        match=f"task '{t.name}' result #0 is stored in {t.sizes[0]} bytes but plan-memory reserved {t.sizes[0] - 4}",
    ):
        run_in_arena(module, graph("gpt2")[1], program=dataclasses.replace(program, tasks=tuple(tasks)))


def test_an_offset_past_the_pool_is_an_arena_error():
    module = lowered("gpt2", 3, 1)
    program = stream_program(main_function(module))
    t = next(t for t in program.tasks if t.offsets and t.offsets[0] >= 0)
    tasks = list(program.tasks)
    tasks[t.index] = dataclasses.replace(t, offsets=(program.pool - 4,) + t.offsets[1:])
    with pytest.raises(
        ArenaError, match=f"task '{t.name}' result #0: {t.sizes[0]} bytes at offset {program.pool - 4} end past the"
    ):
        run_in_arena(module, graph("gpt2")[1], program=dataclasses.replace(program, tasks=tuple(tasks)))


# ------------------------------------------------------------------------------------- mutations


def without_wait(program, task_index: int, key):
    """The program with one event deleted: `task_index` no longer waits `key`, nobody records it."""
    tasks = [dataclasses.replace(t, records=tuple(k for k in t.records if k != key)) for t in program.tasks]
    t = tasks[task_index]
    tasks[task_index] = dataclasses.replace(t, waits=tuple(k for k in t.waits if k != key))
    return dataclasses.replace(program, tasks=tuple(tasks))


def seeds_to_catch(name, module, program, limit: int) -> tuple[int | None, str | None]:
    for seed in range(limit):
        why = wrong(name, module, seed, program)
        if why:
            return seed, why
    return None, None


def test_deleting_any_event_is_caught_by_the_executor_and_counted_for_the_simulator(capsys):
    """Every event of GPT-2 (tiny, O0, four streams, a buffer per value so the baseline has no race):
    deleted alone, the random orders catch it within 60 seeds (the least likely one needs a stream
    to lag behind three others: about 1 seed in 9); the simulator's timing catches it
    when the consumer happens to start first."""
    module = lowered("gpt2", 0, 4, "plan-memory{reuse=false}")
    fn = main_function(module)
    program = stream_program(fn)
    target_tasks = sim_tasks(fn)
    events = [(t.index, k) for t in program.tasks for k in t.waits]
    sim_waits = [(i, e) for i, t in enumerate(target_tasks) for e in t.waits]
    assert len(events) == len(sim_waits) >= 5
    caught, seeds_needed, by_simulator = 0, [], 0
    for (index, key), (sim_index, sim_event) in zip(events, sim_waits):
        assert index == sim_index
        seed, _ = seeds_to_catch("gpt2", module, without_wait(program, index, key), 60)
        if seed is not None:
            caught += 1
            seeds_needed.append(seed + 1)
        mutated = list(target_tasks)
        kept = [(e, src) for e, src in zip(mutated[index].waits, mutated[index].wait_from or ()) if e != sim_event]
        mutated[index] = dataclasses.replace(
            mutated[index], waits=tuple(e for e, _ in kept), wait_from=tuple(src for _, src in kept)
        )
        try:
            simulate(mutated, "ascend910b", "graph")
        except ScheduleError:
            by_simulator += 1
    with capsys.disabled():
        print(
            f"\nGPT-2 events deleted: {len(events)}; caught by the arena executor {caught} "
            f"(seeds needed {seeds_needed}); by the simulator {by_simulator}"
        )
    assert caught == len(events)
    assert by_simulator >= 1


def live_pairs(program):
    """(moved, onto) buffer pairs, (task index, result index) each, where `onto` is written before
    `moved` and read after it in program order: moving `moved` onto `onto` clobbers a live value."""
    producer = program.producer()
    last_read = {}
    for t in program.tasks:
        for v in t.inputs:
            if v in producer:
                last_read[v] = t.index
    buffers = [(t.index, i, v) for t in program.tasks for i, v in enumerate(t.outputs) if t.offsets[i] >= 0]
    return [((ti, i), (uj, j)) for ti, i, v in buffers for uj, j, w in buffers if uj < ti < last_read.get(w, -1)]


def moved(program, buffer, onto):
    (ti, i), (uj, j) = buffer, onto
    tasks = list(program.tasks)
    t = tasks[ti]
    off = tasks[uj].offsets[j]
    offsets = t.offsets[:i] + (off,) + t.offsets[i + 1 :]
    tasks[ti] = dataclasses.replace(t, offsets=offsets)
    pool = max(program.pool, off + t.sizes[i])
    return dataclasses.replace(program, tasks=tuple(tasks), pool=pool)


def test_moving_a_buffer_onto_a_live_one_gives_wrong_outputs(capsys):
    """A sample of buffers of GPT-2 (tiny, O0, one stream: its plan is right), each moved onto a
    buffer live when it is written: the outputs are wrong (in program order and random ones)."""
    module = lowered("gpt2", 0, 1)
    program = stream_program(main_function(module))
    pairs = live_pairs(program)
    rng = np.random.default_rng(0)
    sample = [pairs[i] for i in sorted(rng.choice(len(pairs), min(12, len(pairs)), replace=False))]
    caught = sum(
        1 for buffer, onto in sample if seeds_to_catch("gpt2", module, moved(program, buffer, onto), 3)[0] is not None
    )
    with capsys.disabled():
        print(f"\nGPT-2 buffers moved onto a live one: {len(sample)} (of {len(pairs)} pairs); caught {caught}")
    assert caught == len(sample)


# --------------------------------------------------------------------------------------- ge-run


def tool(*args):
    return run_tool("ge-run", *args)


@pytest.fixture(scope="module")
def streamed(tmp_path_factory):
    """GPT-2 (tiny, O0) on four streams without memory reuse, as a file with its sidecar."""
    folder = tmp_path_factory.mktemp("arena")
    onnx.save(TINY["gpt2"](), folder / "gpt2.onnx")
    r = run_tool("ge-translate", "--import-onnx", folder / "gpt2.onnx", "-o", folder / "gpt2.mlir")
    assert r.returncode == 0, r.stderr
    r = run_tool(
        "ge-opt",
        folder / "gpt2.mlir",
        "-p",
        "ge-optimize{level=0},lower-to-tasks,plan-memory{reuse=false},lower-to-streams{streams=4}",
        "-o",
        folder / "streams.mlir",
    )
    assert r.returncode == 0, r.stderr
    return folder


def test_ge_run_schedule_seed_prints_the_ge_level_outputs(streamed):
    plain = tool(streamed / "streams.mlir", "--random-inputs", 0, "--print")
    seeded = tool(streamed / "streams.mlir", "--random-inputs", 0, "--print", "--schedule-seed", 3)
    assert plain.returncode == 0 and seeded.returncode == 0, seeded.stderr
    assert plain.stdout.splitlines()[-1] == seeded.stdout.splitlines()[-1]
    assert "last_hidden_state: float32[1, 8, 64]" in seeded.stdout


def test_ge_run_schedule_seed_needs_a_planned_module(streamed):
    r = tool(streamed / "gpt2.onnx", "--random-inputs", 0, "--schedule-seed", 0)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "--schedule-seed" in lines[0] and "run plan-memory" in lines[0], r.stderr


def delete_first_event(text: str) -> str:
    """The module text without its first event: the record (`%ev = stream.record E on S after %v`)
    and the waits on it (`stream.wait %ev on S`)."""
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if " = stream.record " in line)
    event = lines[first].split()[0]
    return (
        "\n".join(line for i, line in enumerate(lines) if i != first and line.split()[:2] != ["stream.wait", event])
        + "\n"
    )


@pytest.mark.mutation
def test_ge_run_with_an_event_deleted_is_refused_or_caught(streamed):
    """Without the event the module still parses; the stream verifier rejects it in one line naming
    the two tasks (the executor alone catching it is test_deleting_any_event_is_caught_by_the_executor_... above)."""
    text = (streamed / "streams.mlir").read_text()
    (streamed / "broken.mlir").write_text(delete_first_event(text))
    (streamed / "broken.safetensors").write_bytes((streamed / "streams.safetensors").read_bytes())
    assert text.count("stream.record") == (streamed / "broken.mlir").read_text().count("stream.record") + 1
    r = tool(streamed / "broken.mlir", "--random-inputs", 0, "--print", "--schedule-seed", 0)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1 and "with no stream order or event between them" in lines[0], r.stderr


# ------------------------------------------------------------------------------ storage formats


def test_a_padded_storage_format_fits_its_planned_bytes():
    """An NC1HWC0 value with C=3 is stored padded to C0 (2048 bytes in f32, 768 logical): plan-memory
    reserves the stored bytes, so the conv's input and output do not overwrite each other."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((16, 3, 3, 3)).astype(np.float32), "w")
    conv = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], name="/conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["y"], name="/relu"),
        ],
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])],
        initializer=[w],
    )
    module, weights = import_model(helper.make_model(conv, opset_imports=[helper.make_opsetid("", 17)]))
    attach_weights(module, weights)
    inputs = {"x": rng.standard_normal((1, 3, 8, 8)).astype(np.float32)}
    reference = run(module, inputs)
    GeOptimizePass(level=3).apply(make_context(), module)
    apply_all(make_context(), module, parse_passes("lower-to-tasks,plan-memory,lower-to-streams"))
    padded = [t for t in stream_program(main_function(module)).tasks if t.op.pattern.data == "trans_data"]
    assert [t.sizes for t in padded][:1] == [(1 * 1 * 8 * 8 * 8 * 4,)]  # [N, C1, H, W, C0] f32, not 3*8*8*4
    assert relative_error(reference["y"], run_in_arena(module, inputs, seed=0)["y"]) <= 1e-4


@pytest.mark.parametrize(
    "dtype, packed", [(ml_dtypes.int4, 4), (ml_dtypes.uint4, 4), (ml_dtypes.int2, 2), (ml_dtypes.float4_e2m1fn, 4)]
)
def test_sub_byte_values_are_packed_in_the_arena(dtype, packed):
    """Seven int4 elements take 4 bytes on the device (what plan-memory reserves), and read back unchanged."""
    values = np.arange(7).astype(dtype)
    stored = to_device_bytes(values)
    assert stored.size == packed
    arena = np.concatenate([stored, np.full(5, POISON, np.uint8)])
    assert from_device_bytes(arena, values.dtype, (7,)).view(np.uint8).tolist() == values.view(np.uint8).tolist()
