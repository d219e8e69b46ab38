"""bench.stream_soundness on small GPT-2 (CI-sized): every deleted event and a sample of buffers
moved onto live ones are detected, the unmutated lowering matches the ge level, and the
classifier itself can say "undetected" (a harmless move is not counted as caught)."""

import dataclasses
from pathlib import Path

import pytest
import tool_server

from bench import stream_soundness as bench
from ge.interpreter.runner import main_function

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpt2():
    return bench.reference("gpt2")


@pytest.mark.parametrize("plan", ["reuse", "no-reuse"])
def test_every_event_and_sampled_buffers_are_detected(plan):
    row = bench.mutation_row("gpt2", 0, 4, plan, buffers=4, seeds=60)
    assert row.events >= 5 and row.count("event") == row.events
    assert row.count("buffer") == 4 <= row.live_pairs
    undetected = [v.mutant.label for v in row.verdicts if v.outcome == "undetected"]
    assert undetected == []
    assert row.count("event", "rejected") == row.events  # the event set is minimal: each one is needed
    assert row.count("event", executor=True) == row.events  # the executor alone catches them too
    assert all("no stream order or event between them" in v.verifier for v in row.verdicts if v.mutant.kind == "event")


def test_the_matrix_matches_the_ge_level_with_no_race(gpt2):
    rows = [r for level in (0, 3) for r in bench.matrix_rows("gpt2", level, [1, 4], seeds=5)]
    assert len(rows) == 4
    for r in rows:
        assert (r.verifier, r.matched, r.wrong, r.races) == (None, 5, [], 0), r
        assert r.max_error <= bench.TOLERANCE
    assert max(r.events for r in rows) > 0 and max(r.streams_used for r in rows) > 1


def test_the_unmutated_module_is_accepted_and_never_caught(gpt2):
    """No false alarms: the classifier's 'rejected' and 'caught' come from the mutation."""
    module = bench.lowered(gpt2, 0, 4, "reuse")
    assert bench.verifier_reject(main_function(module)) is None
    assert bench.executor_catch(gpt2, module, 10) is None


def test_a_harmless_move_is_reported_undetected(gpt2):
    """A buffer moved past the pool (onto free bytes) changes nothing: neither check fires, and the
    verdict says so, so the zero-undetected figure can fail."""
    module = bench.lowered(gpt2, 0, 4, "reuse")
    program = bench.stream_program(main_function(module))
    t = next(t for t in program.tasks if t.offsets and t.offsets[0] >= 0)
    buffer = (t.index, 0)
    mutant = bench.moved_buffer(module, buffer, buffer)  # onto itself: the module unchanged
    verdict = bench.judge(gpt2, mutant, seeds=3)
    assert (verdict.verifier, verdict.executor, verdict.outcome) == (None, None, "undetected")
    tasks = list(mutant.program.tasks)
    t = tasks[t.index]  # the clone's task
    tasks[t.index] = dataclasses.replace(t, offsets=(program.pool,) + t.offsets[1:])
    grown = dataclasses.replace(mutant.program, tasks=tuple(tasks), pool=program.pool + t.sizes[0])
    assert bench.judge(gpt2, dataclasses.replace(mutant, program=grown), seeds=3).outcome == "undetected"


def test_live_pairs_are_races_for_the_independent_checker(gpt2):
    """Each sampled (moved, onto) pair is live at the same time: moved, the race checker finds a race."""
    module = bench.lowered(gpt2, 0, 4, "reuse")
    pairs = bench.live_together(main_function(module))
    assert pairs
    for buffer, onto in pairs[:: max(1, len(pairs) // 6)]:
        mutant = bench.moved_buffer(module, buffer, onto)
        assert bench.race_check.races(main_function(mutant.module)), (buffer, onto)


def test_a_deleted_event_is_a_clone(gpt2):
    module = bench.lowered(gpt2, 0, 4, "reuse")
    before = len(bench.records(main_function(module)))
    mutant = bench.without_event(module, 0)
    assert len(bench.records(main_function(mutant))) == before - 1
    assert len(bench.records(main_function(module))) == before


def cli(*args):
    return tool_server.run("python", "-m", "bench.stream_soundness", *args, cwd=ROOT)


def test_the_command_prints_both_tables_and_writes_markdown(tmp_path):
    out = tmp_path / "tables.md"
    r = cli(
        "--models",
        "gpt2",
        "--levels",
        "0",
        "--streams",
        "4",
        "--seeds",
        "2",
        "--mutation-levels",
        "0",
        "--plans",
        "reuse",
        "--buffers",
        "2",
        "--markdown",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert "Mutations" in r.stdout and "Soundness matrix" in r.stdout and "UNDETECTED" not in r.stdout
    text = out.read_text()
    assert text.count("### ") == 2 and "| gpt2 | O0 | 4 |" in text


@pytest.mark.parametrize(
    "args, message",
    [
        (("--models", "gpt3"), "--models 'gpt3': unknown gpt3"),
        (("--levels", "x"), "--levels 'x': expected comma-separated integers"),
        (("--plans", "reuse,none"), "--plans 'reuse,none': unknown none"),
        (("--markdown", "/no/such/dir/x.md"), "--markdown /no/such/dir/x.md: no such directory"),
    ],
)
def test_a_bad_option_is_one_line_and_exit_1(args, message):
    r = cli(*args)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1 and len(lines) == 1 and lines[0].startswith(f"stream_soundness: {message}"), r.stderr


@pytest.mark.mutation
def test_a_kernel_refusing_clobbered_data_counts_as_caught(gpt2, monkeypatch):
    """A moved buffer can clobber an index tensor (BERT's Gather then refuses it): a detection."""

    def refuse(*args, **kwargs):
        raise bench.KernelError("ge.gather '/g': index -4813099698461714789 is out of range")

    monkeypatch.setattr(bench, "run_in_arena", refuse)
    error, why = bench.run_seed(gpt2, bench.lowered(gpt2, 0, 1, "reuse"), 0)
    assert error == float("inf") and why.startswith("KernelError: ge.gather '/g'")
