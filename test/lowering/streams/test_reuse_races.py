"""Memory reuse on streams is race-free, by the verifier and by an independent checker.

- The lowered test models have no unordered reuse pair (race_check.py, which shares no code
  with lowering/streams), at every optimization level and stream count.
- A plan with events for data edges only (no reuse edges) has races on ResNet-50 and
  BERT, which the checker counts and the verifier rejects.
- Mutations: deleting any one event, or moving a buffer onto one live at the same time, makes
  `verify_stream_function` reject the function naming the tasks.

`pytest -s` prints the figures (pool, lower bound, events, events for reuse, races before, modeled
latency before and after).
"""

import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, i64

from ge.device import simulate
from ge.frontend import models
from ge.ge_dialects import stream, task
from ge.ge_dialects.ge.weights import clone_with_weights
from ge.interpreter.stream_executor import memory_figures, sim_tasks
from ge.lowering.streams.verify import StreamError, verify_stream_function
from ge.passes.pipeline import apply_all, parse_passes
from ge.target import load_target
from ge.tools.common import make_context

sys.path.insert(0, str(Path(__file__).parent))
from race_check import races

MODELS = {
    "resnet50": models.resnet50,
    "bert_base": models.bert_base,
    "gpt2": models.gpt2,
    "mobilenet_v2": models.mobilenet_v2,
}


FULL_SIZE_CASES = [(name, count) for name in ("resnet50", "bert_base") for count in (1, 4, 8)]


def planned(references, name: str, level: int, size: str = "small"):
    """`name` after ge-optimize{level}, lower-to-tasks and plan-memory, from the session's cache."""
    return references.module(name, size=size, level=level, lower="lower-to-tasks,plan-memory")


def streamed(module, count: int, relax: str = ""):
    """`module` (planned) lowered to `count` streams, after `relax-reuse{streams=count <relax>}` when
    `relax` is given (e.g. "budget_mib=1")."""
    out = clone_with_weights(module)
    first = f"relax-reuse{{streams={count} {relax}}}," if relax else ""
    apply_all(make_context(), out, parse_passes(f"{first}lower-to-streams{{streams={count}}}"))
    return out


def racy_old_plan(module, count: int):
    """What lower-to-streams produced before reuse edges: streams and events from the data edges
    alone (the offsets hidden from it), then the same offsets."""
    out = clone_with_weights(module)
    fn = main(out)
    kernels = [k for k in fn.body.block.ops if isinstance(k, task.KernelOp)]
    saved = [k.offsets for k in kernels]
    for k in kernels:
        k.offsets = None
    apply_all(make_context(), out, parse_passes(f"lower-to-streams{{streams={count}}}"))
    for k, offsets in zip(kernels, saved):
        k.offsets = offsets
    return out


def main(module):
    return next(op for op in module.ops if op.name == "func.func")


def event_count(fn) -> int:
    return sum(1 for op in fn.body.block.ops if isinstance(op, stream.RecordOp))


@pytest.mark.parametrize("name", ["resnet50", "bert_base", "gpt2", "mobilenet_v2"])
def test_no_unordered_reuse_pair_at_any_level_and_stream_count(name, references):
    """At the small size: which pairs share a buffer and which streams order them is the graph's."""
    for level in range(4):
        module = planned(references, name, level)
        for count in (1, 2, 4, 8):
            fn = main(streamed(module, count))
            assert races(fn) == [], (name, level, count)
            verify_stream_function(fn)


@pytest.mark.parametrize("name, count", FULL_SIZE_CASES)
def test_figures_and_the_old_plan_races(name, count, references):
    module = planned(references, name, 3, size="full")  # the printed figures are the full models'

    new, old = streamed(module, count), racy_old_plan(module, count)
    new_fn, old_fn = main(new), main(old)
    old_races = races(old_fn)
    if old_races:
        with pytest.raises(StreamError, match="may still access it"):
            verify_stream_function(old_fn)
    if count == 1:
        assert old_races == []
    target = load_target("ascend910b")
    new_latency = simulate(sim_tasks(new_fn), target, "graph").latency
    old_latency = simulate(sim_tasks(old_fn), target, "graph").latency
    mem = memory_figures(new)
    print(
        f"\n{name} O3 streams={count}: pool {mem.pool / 2**20:.2f} MiB (lower bound {mem.lower_bound / 2**20:.2f}, "
        f"same plan as before), streams used {new_fn.attributes[stream.COUNT_ATTR].value.data} "
        f"(before {old_fn.attributes[stream.COUNT_ATTR].value.data}), events {event_count(new_fn)} (before "
        f"{event_count(old_fn)}), reuse events {new_fn.attributes[stream.REUSE_EVENTS_ATTR].value.data}, "
        f"racy pairs before {len(old_races)}, latency {new_latency * 1e6:.1f} us (before {old_latency * 1e6:.1f})"
    )
    assert races(new_fn) == []


@pytest.mark.parametrize("name, count", FULL_SIZE_CASES)
def test_giving_up_costly_reuses_is_race_free_within_budget_and_never_slower(name, count, references):
    """relax-reuse keeps apart the reuse pairs that serialize concurrent tasks when the re-plan fits
    the budget; the result is checked by the verifier and the independent race checker, and its
    modeled latency (what the pass recorded, and the simulator on the lowered IR) is no worse.
    Full size: which reuses cost time depends on the real task times and buffer sizes."""
    module = planned(references, name, 3, size="full")
    target = load_target("ascend910b")
    strict = main(streamed(module, count))
    strict_latency = simulate(sim_tasks(strict), target, "graph").latency
    for budget in (0, 1):
        relaxed = streamed(module, count, f"budget_mib={budget}")
        fn = main(relaxed)
        assert races(fn) == []
        verify_stream_function(fn)
        mem = relaxed.attributes["task.memory"].data
        pool, base = mem["pool"].value.data, memory_figures(module).pool
        latency = simulate(sim_tasks(fn), target, "graph").latency
        assert pool <= base + budget * 2**20 and mem["given_up_bytes"].value.data == pool - base
        assert abs(mem["latency_ns"].value.data - latency * 1e9) <= 1  # the pass scores what ge-run reports
        assert latency <= strict_latency * (1 + 1e-9)
        print(
            f"\n{name} O3 streams={count} relax-reuse budget {budget} MiB: pool {pool / 2**20:.2f} MiB "
            f"(+{(pool - base) / 2**20:.2f}, lower bound {mem['lower_bound'].value.data / 2**20:.2f}), "
            f"{mem['given_up'].value.data} reuses given up, streams used {fn.attributes[stream.COUNT_ATTR].value.data}, "
            f"events {event_count(fn)}, reuse events {fn.attributes[stream.REUSE_EVENTS_ATTR].value.data}, "
            f"latency {latency * 1e6:.1f} us (all reuses kept {strict_latency * 1e6:.1f})"
        )


def test_giving_up_the_serializing_reuses_of_gpt2_on_the_910_gains_time(references):
    """GPT-2 compiled for the 910 with its layouts placed op by op, where reuses serialize
    concurrent tasks: giving them up gains 1.2%. (BERT-base, ResNet-50 and MobileNet-v2 have no
    reuse that serializes concurrent tasks: their two plans time the same.)"""
    lower = "ge-optimize{level=3 target=ascend910 layout_choice=greedy},lower-to-tasks,plan-memory"
    module = references.module("gpt2", size="full", lower=lower)
    target = load_target("ascend910")
    strict = simulate(sim_tasks(main(streamed(module, 4))), target, "graph").latency
    relaxed = main(streamed(module, 4, "budget_mib=1"))
    assert races(relaxed) == []
    assert simulate(sim_tasks(relaxed), target, "graph").latency < 0.99 * strict


def test_the_resnet_race_of_the_issue_is_found_on_the_old_plan(references):
    old = main(racy_old_plan(planned(references, "resnet50", 3), 0))
    pairs = {(r.earlier, r.later) for r in races(old)}
    assert ("/layer2/layer2.0/conv2/Conv", "/layer2/layer2.0/downsample/downsample.0/Conv") in pairs, sorted(pairs)[:5]


@pytest.fixture(scope="module")
def bert_on_4_streams(references):
    return streamed(planned(references, "bert_base", 3), 4)  # three streams, nine events


@pytest.mark.mutation
def test_deleting_any_one_event_is_rejected(bert_on_4_streams):
    fn = main(bert_on_4_streams)
    records = [op for op in fn.body.block.ops if isinstance(op, stream.RecordOp)]
    assert records
    for i in range(len(records)):
        mutant = clone_with_weights(bert_on_4_streams)
        record = [op for op in main(mutant).body.block.ops if isinstance(op, stream.RecordOp)][i]
        for use in list(record.result.uses):
            use.operation.detach()
            use.operation.erase()
        record.detach()
        record.erase()
        with pytest.raises(StreamError, match="no stream order or event between them"):
            verify_stream_function(main(mutant))


@pytest.mark.mutation
def test_moving_a_buffer_onto_a_live_one_is_rejected(bert_on_4_streams):
    fn = main(bert_on_4_streams)
    kernels = [k for k in fn.body.block.ops if isinstance(k, task.KernelOp)]
    index = {k: i for i, k in enumerate(kernels)}
    placed = [(i, k.offsets.get_values()[0]) for i, k in enumerate(kernels) if k.offsets.get_values()[0] >= 0]
    moved = 0
    for (i, _), (j, _offset_j) in zip(placed, placed[1:]):
        a = kernels[i].results[0]
        if not any(index.get(u.operation, -1) > j for u in a.uses):
            continue  # move j's buffer onto i's only while i's is still read after j
        mutant = clone_with_weights(bert_on_4_streams)
        mk = [k for k in main(mutant).body.block.ops if isinstance(k, task.KernelOp)]
        mk[j].offsets = DenseArrayBase.from_list(i64, [kernels[i].offsets.get_values()[0]])
        with pytest.raises(StreamError, match="overwrites|reads"):
            verify_stream_function(main(mutant))
        moved += 1
    assert moved > 0


@pytest.mark.mutation
def test_a_task_beyond_the_stream_count_is_rejected(bert_on_4_streams):
    mutant = clone_with_weights(bert_on_4_streams)
    ops = list(main(mutant).body.block.ops)
    # a kernel no event record follows (a record's check would name its stream first)
    kernel = next(
        k for k, after in zip(ops, ops[1:]) if isinstance(k, task.KernelOp) and not isinstance(after, stream.RecordOp)
    )
    kernel.stream = IntegerAttr(1_000_000, 64)
    with pytest.raises(StreamError, match="stream 1000000"):
        verify_stream_function(main(mutant))
