"""The acceptance measurements of the stream level: is it sound, and are the checks real?

Two tables, on the test models (small variants by default: the same layers at a 32x32 resolution
for the CNNs, one layer of width 64 for the transformers, as test/interpreter/test_arena_executor.py):

1. Mutations. For every event of the lowered module (its `stream.record` and the waits on it
   deleted, on a clone) and a seeded sample of buffers (one task result moved onto the offset of
   another buffer live at the same time: neither buffer's accesses all happen before the other's
   writer), each mutant is
     - rejected by the stream verifier (`verify_stream_function`), or
     - caught by the randomized arena executor, run with the verifier bypassed (`run_in_arena` on the
       mutant's StreamProgram; the pool grown so a moved buffer never ends past it), within K seeds,
       stopping at the first: outputs off the ge level, or a ScheduleError / ArenaError, or
     - undetected (listed).
   The executor runs on every mutant (not only those the verifier misses), so its own catch rate
   shows too. Columns per kind (ev: events, buf: buffers, shown as sampled/live pairs): rejected
   by the verifier; caught by the executor only (the verifier accepted); caught by the executor
   in all (verifier bypassed); undetected by both. Plans: `plan-memory` (reuse),
   `plan-memory,relax-reuse{...}` (relax) and
   `plan-memory{reuse=false}` (no-reuse: a buffer per value, so streams are limited by data edges
   only and there are more events).
2. Soundness matrix. Each model x level x stream count: the verifier accepts, the arena executor
   over N seeds matches the ge level, and the independent race checker
   (test/lowering/streams/race_check.py, which walks the lowered IR and shares no code with
   lowering/streams) finds no unordered reuse pair.

    python -m bench.stream_soundness                           # both tables, all four models
    python -m bench.stream_soundness --tables mutations --models gpt2 --buffers 20
    python -m bench.stream_soundness --tables matrix --levels 0,3 --streams 1,4 --markdown out.md
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import importlib.util
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, ModuleOp, i64

from ge.device import ScheduleError
from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import stream, task
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.arena_executor import ArenaError, run_in_arena
from ge.interpreter.differential import relative_error
from ge.interpreter.ge import KernelError
from ge.interpreter.runner import main_function, run
from ge.interpreter.stream_program import StreamProgram, stream_program
from ge.lowering.streams.verify import StreamError, verify_stream_function
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context

TOLERANCE = 1e-4
"""Largest relative error (interpreter/differential.py) still counted as the ge level's output."""

RACE_CHECK = Path(__file__).resolve().parent.parent / "test" / "lowering" / "streams" / "race_check.py"


def _race_check():
    """The independent race checker, loaded from the test tree (it is deliberately not part of the
    compiler's packages)."""
    spec = importlib.util.spec_from_file_location("race_check", RACE_CHECK)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("race_check", module)  # its dataclasses look their module up by name
    spec.loader.exec_module(sys.modules["race_check"])
    return sys.modules["race_check"]


race_check = _race_check()


def at_resolution(model: onnx.ModelProto, size: int) -> onnx.ModelProto:
    """An image model with a `size` x `size` input: the same layers and storage formats."""
    dims = model.graph.input[0].type.tensor_type.shape.dim
    dims[2].dim_value = dims[3].dim_value = size
    return model


SMALL: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet50": lambda: at_resolution(models.resnet50(), 32),
    "mobilenet_v2": lambda: at_resolution(models.mobilenet_v2(), 32),
    "bert_base": lambda: models.bert_base(layers=1, seq=8, hidden=64, heads=4, intermediate=128, vocab=100),
    "gpt2": lambda: models.gpt2(layers=1, seq=8, hidden=64, heads=4, vocab=100),
}
FULL: dict[str, Callable[[], onnx.ModelProto]] = {
    "resnet50": models.resnet50,
    "mobilenet_v2": models.mobilenet_v2,
    "bert_base": models.bert_base,
    "gpt2": models.gpt2,
}
SIZES = {"small": SMALL, "full": FULL}

PLANS = {
    "reuse": "plan-memory",
    "relax": "plan-memory,relax-reuse{{streams={streams} budget_mib=1}}",
    "no-reuse": "plan-memory{{reuse=false}}",
}


# --------------------------------------------------------------------------------------- lowering


@dataclass(frozen=True)
class Reference:
    """A model at the ge level: its module (weights attached), seeded inputs and its outputs."""

    name: str
    module: ModuleOp
    inputs: dict[str, np.ndarray]
    outputs: dict[str, np.ndarray]


@functools.cache
def reference(name: str, size: str = "small") -> Reference:
    model = SIZES[size][name]()
    module, weights = import_model(model)
    attach_weights(module, weights)
    inputs = models.random_inputs(model, 0)
    return Reference(name, module, inputs, run(module, inputs))


def planned(ref: Reference, level: int, plan: str = "plan-memory") -> ModuleOp:
    """The model at `level`, lowered to tasks with `plan` (plan-memory and what follows it)."""
    module = clone_with_weights(ref.module)
    GeOptimizePass(level=level).apply(make_context(), module)
    apply_all(make_context(), module, parse_passes(f"lower-to-tasks,{plan}"))
    return module


def on_streams(module: ModuleOp, streams: int) -> ModuleOp:
    out = clone_with_weights(module)
    apply_all(make_context(), out, parse_passes(f"lower-to-streams{{streams={streams}}}"))
    return out


def lowered(ref: Reference, level: int, streams: int, plan: str) -> ModuleOp:
    return on_streams(planned(ref, level, PLANS[plan].format(streams=streams)), streams)


def records(fn: func.FuncOp) -> list[stream.RecordOp]:
    return [op for op in fn.body.block.ops if isinstance(op, stream.RecordOp)]


def kernels(fn: func.FuncOp) -> list[task.KernelOp]:
    return [op for op in fn.body.block.ops if isinstance(op, task.KernelOp)]


# --------------------------------------------------------------------------------------- checking


def max_error(ref: Reference, outputs: dict[str, np.ndarray]) -> float:
    errors = [relative_error(ref.outputs[k], outputs[k]) for k in ref.outputs]
    return float("nan") if any(np.isnan(errors)) else max(errors)


def run_seed(
    ref: Reference, module: ModuleOp, seed: int, program: StreamProgram | None = None
) -> tuple[float, str | None]:
    """(relative error, why the run is wrong or None) of one randomized run over the arena."""
    try:
        outputs = run_in_arena(module, ref.inputs, seed=seed, program=program)
    except (ScheduleError, ArenaError, KernelError) as e:  # KernelError: a kernel refused clobbered data
        return float("inf"), f"{type(e).__name__}: {e}"
    except Exception as e:
        return float("inf"), f"unexpected {type(e).__name__}: {e}"
    error = max_error(ref, outputs)
    return error, None if error <= TOLERANCE else f"error {error:.3g}"


def executor_catch(ref: Reference, module: ModuleOp, seeds: int, program: StreamProgram | None = None) -> str | None:
    """'seed S: why' for the first of `seeds` seeds whose run is wrong, or None."""
    for seed in range(seeds):
        _, why = run_seed(ref, module, seed, program)
        if why:
            return f"seed {seed}: {why}"
    return None


def verifier_reject(fn: func.FuncOp) -> str | None:
    try:
        verify_stream_function(fn)
    except StreamError as e:
        return str(e)
    return None


# -------------------------------------------------------------------------------------- mutations


@dataclass(frozen=True)
class Mutant:
    kind: str  # "event" or "buffer"
    label: str
    module: ModuleOp
    program: StreamProgram  # what the executor runs (the mutant's, pool grown for a moved buffer)


@dataclass(frozen=True)
class Verdict:
    mutant: Mutant
    verifier: str | None  # the verifier's message, or None: accepted
    executor: str | None  # the executor's first catch, or None (also None when not run)

    @property
    def outcome(self) -> str:
        return "rejected" if self.verifier else "caught" if self.executor else "undetected"


def without_event(module: ModuleOp, i: int) -> ModuleOp:
    """A clone of `module` with its i-th record and the waits on it deleted."""
    mutant = clone_with_weights(module)
    record = records(main_function(mutant))[i]
    for use in list(record.result.uses):
        use.operation.detach()
        use.operation.erase()
    record.detach()
    record.erase()
    return mutant


def event_mutants(module: ModuleOp) -> Iterator[Mutant]:
    fn = main_function(module)
    for i, record in enumerate(records(fn)):
        waiting = sorted(u.operation.stream_id for u in record.result.uses)
        label = (
            f"event {record.event_id} on stream {record.stream_id} after '{record.task.task_name.data}', "
            f"waited on stream {', '.join(map(str, waiting))}"
        )
        mutant = without_event(module, i)
        yield Mutant("event", label, mutant, stream_program(main_function(mutant)))


Buffer = tuple[int, int]
"""(task index in program order, result index)."""


def live_together(fn: func.FuncOp) -> list[tuple[Buffer, Buffer]]:
    """(moved, onto) pairs of buffers live at the same time, by the race checker's happens-before:
    some access of each (other than the other's writer, which may work in place) is not ordered
    before the other's writer. Pairs whose bytes overlap already are left out."""
    order, after = race_check.happens_before(fn)
    index = {k: i for i, k in enumerate(order)}
    buffers = []  # (buffer, offset, end, writer, accesses)
    for i, k in enumerate(order):
        for r, (result, offset) in enumerate(zip(k.results, k.offsets.get_values())):
            size = race_check.stored_bytes(result)
            if offset >= 0 and size > 0:
                accesses = {i} | {index[u.operation] for u in result.uses if u.operation in index}
                buffers.append(((i, r), offset, offset + size, i, accesses))

    def live_at(a, b) -> bool:
        """Some access of `a` may still happen when b's writer runs."""
        return any(t != b[3] and b[3] not in after[t] for t in a[4])

    return [
        (b[0], a[0])
        for a in buffers
        for b in buffers
        if a is not b and not (a[1] < b[2] and b[1] < a[2]) and live_at(a, b) and live_at(b, a)
    ]


def moved_buffer(module: ModuleOp, buffer: Buffer, onto: Buffer) -> Mutant:
    """A clone of `module` with `buffer` at the offset of `onto`; its program's pool grown to hold it."""
    mutant = clone_with_weights(module)
    ks = kernels(main_function(mutant))
    (ti, i), (uj, j) = buffer, onto
    offsets = list(ks[ti].offsets.get_values())
    offsets[i] = ks[uj].offsets.get_values()[j]
    ks[ti].offsets = DenseArrayBase.from_list(i64, offsets)
    program = stream_program(main_function(mutant))
    end = offsets[i] + program.tasks[ti].sizes[i]
    program = dataclasses.replace(program, pool=max(program.pool, end))
    label = f"'{ks[ti].task_name.data}' #{i} moved onto '{ks[uj].task_name.data}' #{j} (offset {offsets[i]})"
    return Mutant("buffer", label, mutant, program)


def buffer_mutants(module: ModuleOp, count: int, seed: int = 0) -> tuple[int, Iterator[Mutant]]:
    """(number of live pairs, a seeded sample of `count` of them as mutants)."""
    pairs = live_together(main_function(module))
    rng = np.random.default_rng(seed)
    chosen = sorted(rng.choice(len(pairs), min(count, len(pairs)), replace=False).tolist()) if pairs else []
    return len(pairs), (moved_buffer(module, *pairs[k]) for k in chosen)


def judge(ref: Reference, mutant: Mutant, seeds: int, execute_all: bool = True) -> Verdict:
    rejected = verifier_reject(main_function(mutant.module))
    caught = executor_catch(ref, mutant.module, seeds, mutant.program) if execute_all or not rejected else None
    return Verdict(mutant, rejected, caught)


@dataclass
class MutationRow:
    model: str
    level: int
    streams: int
    plan: str
    events: int
    live_pairs: int
    verdicts: list[Verdict]
    seconds: float

    def count(self, kind: str, outcome: str | None = None, executor: bool = False) -> int:
        return sum(
            1
            for v in self.verdicts
            if v.mutant.kind == kind and (outcome is None or v.outcome == outcome) and (not executor or v.executor)
        )


def mutation_row(
    name: str,
    level: int,
    streams: int,
    plan: str,
    buffers: int,
    seeds: int,
    size: str = "small",
    execute_all: bool = True,
    sample_seed: int = 0,
) -> MutationRow:
    start = time.perf_counter()
    ref = reference(name, size)
    module = lowered(ref, level, streams, plan)
    events = len(records(main_function(module)))
    pairs, moved = buffer_mutants(module, buffers, sample_seed)
    verdicts = [judge(ref, m, seeds, execute_all) for m in event_mutants(module)]
    verdicts += [judge(ref, m, seeds, execute_all) for m in moved]
    return MutationRow(name, level, streams, plan, events, pairs, verdicts, time.perf_counter() - start)


def mutation_table(rows: list[MutationRow]) -> list[dict[str, str]]:
    out = []
    for r in rows:
        cells = {"model": r.model, "level": f"O{r.level}", "streams": str(r.streams), "plan": r.plan}
        for kind, short, total in (
            ("event", "ev", str(r.events)),
            ("buffer", "buf", f"{r.count('buffer')}/{r.live_pairs}"),
        ):
            cells[f"{kind}s"] = total
            cells[f"{short} rejected"] = str(r.count(kind, "rejected"))
            cells[f"{short} exec only"] = str(r.count(kind, "caught"))
            cells[f"{short} exec catches"] = str(r.count(kind, executor=True))
            cells[f"{short} undetected"] = str(r.count(kind, "undetected"))
        cells["seconds"] = f"{r.seconds:.1f}"
        out.append(cells)
    return out


# ----------------------------------------------------------------------------------------- matrix


@dataclass
class MatrixRow:
    model: str
    level: int
    streams: int
    verifier: str | None  # None: accepted
    matched: int
    seeds: int
    max_error: float
    wrong: list[str]
    races: int
    streams_used: int
    events: int
    seconds: float


def matrix_rows(
    name: str, level: int, stream_counts: list[int], seeds: int, size: str = "small"
) -> Iterator[MatrixRow]:
    ref = reference(name, size)
    base = planned(ref, level)
    for count in stream_counts:
        start = time.perf_counter()
        module = on_streams(base, count)
        fn = main_function(module)
        rejected = verifier_reject(fn)
        results = [run_seed(ref, module, seed) for seed in range(seeds)]
        wrong = [f"seed {s}: {why}" for s, (_, why) in enumerate(results) if why]
        yield MatrixRow(
            name,
            level,
            count,
            rejected,
            seeds - len(wrong),
            seeds,
            max(e for e, _ in results),
            wrong,
            len(race_check.races(fn)),
            len({k.get("stream") for k in kernels(fn)}),
            len(records(fn)),
            time.perf_counter() - start,
        )


def matrix_table(rows: list[MatrixRow]) -> list[dict[str, str]]:
    return [
        {
            "model": r.model,
            "level": f"O{r.level}",
            "streams": str(r.streams),
            "verifier": "ok" if r.verifier is None else "REJECTS",
            "seeds matched": f"{r.matched}/{r.seeds}",
            "max error": f"{r.max_error:.2g}",
            "race pairs": str(r.races),
            "streams used": str(r.streams_used),
            "events": str(r.events),
            "seconds": f"{r.seconds:.1f}",
        }
        for r in rows
    ]


# ----------------------------------------------------------------------------------------- output


def text_table(rows: list[dict[str, str]]) -> str:
    if not rows:
        return "(no rows)"
    keys = list(rows[0])
    width = {k: max(len(k), *(len(r[k]) for r in rows)) for k in keys}
    lines = ["  ".join(k.rjust(width[k]) for k in keys)]
    lines += ["  ".join(r[k].rjust(width[k]) for k in keys) for r in rows]
    return "\n".join(lines)


def markdown_table(rows: list[dict[str, str]]) -> str:
    if not rows:
        return "(no rows)"
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(r[k] for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def mutation_notes(rows: list[MutationRow]) -> list[str]:
    """One line per undetected mutant, per mutant the verifier accepted, and per verifier crash."""
    notes = []
    for r in rows:
        where = f"{r.model} O{r.level} streams={r.streams} {r.plan}"
        for v in r.verdicts:
            if v.outcome == "undetected":
                notes.append(f"UNDETECTED {where}: {v.mutant.kind} {v.mutant.label}")
            elif v.verifier and not v.executor:
                notes.append(f"executor missed (verifier rejected) {where}: {v.mutant.kind} {v.mutant.label}")
            elif v.outcome == "caught":
                notes.append(
                    f"verifier accepted, executor caught ({v.executor.splitlines()[0][:120]}) "
                    f"{where}: {v.mutant.kind} {v.mutant.label}"
                )
    return notes


def matrix_notes(rows: list[MatrixRow]) -> list[str]:
    notes = []
    for r in rows:
        where = f"{r.model} O{r.level} streams={r.streams}"
        if r.verifier:
            notes.append(f"verifier rejects {where}: {r.verifier}")
        for w in r.wrong:
            notes.append(f"wrong run {where}: {w.splitlines()[0][:160]}")
        if r.races:
            notes.append(f"{r.races} race pairs {where}")
    return notes


# ------------------------------------------------------------------------------------------- main


def int_list(text: str, option: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise SystemExit(f"stream_soundness: {option} {text!r}: expected comma-separated integers") from None
    if not values:
        raise SystemExit(f"stream_soundness: {option} is empty")
    return values


def name_list(text: str, option: str, known) -> list[str]:
    names = [x.strip() for x in text.split(",") if x.strip()]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise SystemExit(
            f"stream_soundness: {option} {text!r}: unknown {', '.join(unknown) or 'empty list'} "
            f"(known: {', '.join(known)})"
        )
    return names


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="mutations,matrix", help="mutations, matrix or both (comma-separated)")
    parser.add_argument("--models", default=",".join(SMALL), help="models of both tables")
    parser.add_argument("--size", default="small", help="small (default) or full model variants")
    parser.add_argument("--levels", default="0,1,2,3", help="optimization levels of the matrix")
    parser.add_argument("--streams", default="1,2,4,8", help="stream counts of the matrix")
    parser.add_argument("--seeds", default="20", help="executor seeds per matrix cell")
    parser.add_argument("--mutation-levels", default="0,3")
    parser.add_argument("--mutation-streams", default="4")
    parser.add_argument(
        "--plans", default=",".join(PLANS), help=f"memory plans of the mutation table ({', '.join(PLANS)})"
    )
    parser.add_argument("--mutation-seeds", default="60", help="executor seeds per mutant (stops at the first catch)")
    parser.add_argument("--buffers", default="10", help="buffers moved per mutation row (a seeded sample)")
    parser.add_argument(
        "--verifier-first",
        action="store_true",
        help="run the executor only on mutants the verifier accepts (faster; no executor catch rate)",
    )
    parser.add_argument("--markdown", metavar="FILE", help="also write the tables as markdown to FILE")
    return parser


@dataclass(frozen=True)
class _Options:
    """The command line, checked."""

    tables: list[str]
    size: str
    names: list[str]
    plans: list[str]
    levels: list[int]
    mutation_levels: list[int]
    stream_counts: list[int]
    mutation_streams: list[int]
    seeds: int
    mutation_seeds: int
    buffers: int
    executor_on_all: bool  # run the executor on mutants the verifier rejects too
    markdown: str | None


def _check_options(args: argparse.Namespace) -> _Options:
    """The options as lists and numbers; a bad one ends the run with one line (SystemExit)."""
    tables = name_list(args.tables, "--tables", ("mutations", "matrix"))
    if args.size not in SIZES:
        raise SystemExit(f"stream_soundness: --size {args.size!r}: expected small or full")
    names = name_list(args.models, "--models", SMALL)
    plans = name_list(args.plans, "--plans", PLANS)
    levels, mutation_levels = int_list(args.levels, "--levels"), int_list(args.mutation_levels, "--mutation-levels")
    stream_counts = int_list(args.streams, "--streams")
    mutation_streams = int_list(args.mutation_streams, "--mutation-streams")
    (seeds,), (mutation_seeds,), (buffers,) = (
        int_list(args.seeds, "--seeds"),
        int_list(args.mutation_seeds, "--mutation-seeds"),
        int_list(args.buffers, "--buffers"),
    )
    if (markdown_path := args.markdown) and not Path(markdown_path).parent.is_dir():
        raise SystemExit(f"stream_soundness: --markdown {markdown_path}: no such directory")
    return _Options(
        tables,
        args.size,
        names,
        plans,
        levels,
        mutation_levels,
        stream_counts,
        mutation_streams,
        seeds,
        mutation_seeds,
        buffers,
        not args.verifier_first,
        markdown_path,
    )


#: A table of the report: (title, rows, notes).
Section = tuple[str, list[dict[str, str]], list[str]]


def _mutations_section(o: _Options) -> Section:
    """The mutation table, each row printed to stderr as it is measured."""
    rows = []
    for name in o.names:
        for level in o.mutation_levels:
            for count in o.mutation_streams:
                for plan in o.plans:
                    row = mutation_row(name, level, count, plan, o.buffers, o.mutation_seeds, o.size, o.executor_on_all)
                    rows.append(row)
                    print(text_table(mutation_table([row])).splitlines()[-1], file=sys.stderr, flush=True)
    title = (
        f"Mutations ({o.size} models; every event deleted, {o.buffers} buffers per row moved onto a live "
        f"one; executor up to {o.mutation_seeds} seeds, verifier bypassed)"
    )
    return title, mutation_table(rows), mutation_notes(rows)


def _matrix_section(o: _Options) -> Section:
    """The soundness matrix, each row printed to stderr as it is measured."""
    rows = []
    for name in o.names:
        for level in o.levels:
            for row in matrix_rows(name, level, o.stream_counts, o.seeds, o.size):
                rows.append(row)
                print(text_table(matrix_table([row])).splitlines()[-1], file=sys.stderr, flush=True)
    return (
        f"Soundness matrix ({o.size} models, {o.seeds} executor seeds per cell)",
        matrix_table(rows),
        matrix_notes(rows),
    )


def _print_sections(sections: list[Section], elapsed: float) -> None:
    for title, rows, notes in sections:
        print(f"\n{title}\n{text_table(rows)}")
        for note in notes:
            print(f"  {note}")
    print(f"\n{elapsed:.0f} s")


def _write_markdown(path: str, sections: list[Section], elapsed: float) -> None:
    text = "\n\n".join(
        f"### {title}\n\n{markdown_table(rows)}" + "".join(f"\n- {n}" for n in notes) for title, rows, notes in sections
    )
    Path(path).write_text(f"{text}\n\nTotal time {elapsed:.0f} s.\n")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    warnings.simplefilter("ignore", RuntimeWarning)  # mutants compute on poison (NaN) bytes: expected
    options = _check_options(args)
    sections: list[Section] = []
    start = time.perf_counter()
    if "mutations" in options.tables:
        sections.append(_mutations_section(options))
    if "matrix" in options.tables:
        sections.append(_matrix_section(options))
    elapsed = time.perf_counter() - start
    _print_sections(sections, elapsed)
    if options.markdown:
        _write_markdown(options.markdown, sections, elapsed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
