"""Fuzz the tools against their contract and print the outcome counts.

    python test/fuzz/run.py --tool all --n 10000 --seed 0 --save fuzz-failures
    python test/fuzz/run.py --tool ge-opt --only 4711 --seed 0     # one case again, verbosely

(or `PYTHONPATH=.:test python -m fuzz.run ...`: `test` is not a package, so the stdlib's `test`
package would shadow `python -m test.fuzz.run`).

The table counts each outcome per tool (contract.py defines them); below it, every distinct failure
signature (exception type @ innermost project frame, or the shape of the message) with its count
and the first case that shows it. `--save DIR` keeps up to 3 cases per signature in
DIR/<tool>/<index>-<outcome>/: the input files, `cmd` (the command line to run there) and
`result.txt`; `--minimize` first shrinks IR cases line by line while the signature holds.
Exit status 1 when a contract violation was found.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make `fuzz` and the project importable
    _TEST = Path(__file__).resolve().parents[1]
    sys.path[:0] = [str(_TEST), str(_TEST.parent)]

from fuzz.contract import INTERNAL, OUTCOMES, OUTSIDE, SENTINEL, VIOLATIONS, Case, Result, lay_files, run_case
from fuzz.seeds import corpus
from fuzz.strategies import TOOLS, make_case

EXAMPLES_PER_SIGNATURE = 3


@dataclass
class ToolReport:
    tool: str
    counts: Counter = field(default_factory=Counter)
    signatures: dict[tuple[str, str], list[int]] = field(default_factory=lambda: defaultdict(list))
    seconds: float = 0.0
    examples: dict[int, tuple[Case, Result]] = field(default_factory=dict)

    @property
    def violations(self) -> int:
        return sum(self.counts[o] for o in VIOLATIONS)

    def add(self, index: int, case: Case, result: Result) -> None:
        self.counts[result.outcome] += 1
        if result.outcome in VIOLATIONS or result.outcome == INTERNAL:
            seen = self.signatures[(result.outcome, result.signature)]
            seen.append(index)
            if len(seen) <= EXAMPLES_PER_SIGNATURE:
                self.examples[index] = (case, result)


def warm_up() -> None:
    """Imports what the tools import, once, so that each forked case starts warm."""
    import ge.frontend.onnx_importer
    import ge.tools.ge_opt
    import ge.tools.ge_run
    import ge.tools.ge_translate  # noqa: F401

    corpus()


def fuzz(
    tool: str,
    n: int,
    seed: int = 0,
    start: int = 0,
    time_limit: float = 10.0,
    memory_mb: int = 2048,
    progress: bool = False,
) -> ToolReport:
    warm_up()
    report = ToolReport(tool)
    began = time.monotonic()
    for index in range(start, start + n):
        case = make_case(corpus(), tool, index, seed)
        report.add(index, case, run_case(case, time_limit, memory_mb))
        if progress and (index - start + 1) % 100 == 0:
            rate = (index - start + 1) / (time.monotonic() - began)
            print(
                f"  {tool}: {index - start + 1}/{n} ({rate:.1f}/s) {dict(report.counts)}", file=sys.stderr, flush=True
            )
    report.seconds = time.monotonic() - began
    return report


# ------------------------------------------------------------------------------------- output
def table(reports: list[ToolReport]) -> str:
    columns = [o for o in OUTCOMES if any(r.counts[o] for r in reports) or o not in VIOLATIONS]
    rows = [["tool", "inputs", *columns, "violations", "s/input"]]
    for r in reports:
        total = sum(r.counts.values())
        rows.append(
            [
                r.tool,
                str(total),
                *(str(r.counts[c]) for c in columns),
                str(r.violations),
                f"{r.seconds / max(total, 1):.3f}",
            ]
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [
        "  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(row, widths))) for row in rows
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def signature_lines(report: ToolReport) -> list[str]:
    lines = []
    ranked = sorted(report.signatures.items(), key=lambda item: (item[0][0] == INTERNAL, -len(item[1])))
    for (outcome, signature), indices in ranked:
        case, result = report.examples[indices[0]]
        lines.append(f"  {len(indices):5d}  {outcome:11s} {signature}")
        lines.append(f"         first: case {indices[0]} ({case.origin[:150]})")
        lines.append(
            f"         {' '.join(shlex.quote(a) for a in [case.tool, *case.argv])[:150]}: {result.detail[:200]!r}"
        )
    return lines


def save_examples(
    report: ToolReport, folder: Path, seed: int, minimize: bool, time_limit: float, memory_mb: int
) -> None:
    for index, (case, result) in sorted(report.examples.items()):
        if minimize:
            case = minimized(case, result, time_limit, memory_mb)
        where = folder / case.tool / f"{index:06d}-{result.outcome}"
        where.mkdir(parents=True, exist_ok=True)
        lay_files(where, case.files)
        (folder / case.tool / OUTSIDE).write_bytes(b"\x00" * 64)  # what ../outside.bin links point to
        if case.sentinels:  # the outputs that existed before the run, as the fuzzer laid them
            for name in case.outputs:
                if name not in case.files and (where / name).parent.is_dir():
                    (where / name).write_bytes(SENTINEL)
        (where / "cmd").write_text(" ".join(shlex.quote(a) for a in [case.tool, *case.argv]) + "\n")
        (where / "result.txt").write_text(
            f"tool: {case.tool}\ncase: {index} (--seed {seed})\norigin: {case.origin}\n"
            f"outputs existed before: {case.sentinels} {case.outputs}\noutcome: {result.outcome} "
            f"{result.problems}\nexit code: {result.exit_code}\nsignature: {result.signature}\n"
            f"detail: {result.detail}\n--- stderr ---\n{result.stderr}"
        )


def minimized(case: Case, result: Result, time_limit: float, memory_mb: int, budget: int = 60) -> Case:
    """Drops lines of the IR input while the same outcome and signature come back (cheap: IR only)."""
    name = next((n for n in ("model.mlir",) if n in case.files), None)
    if name is None:
        return case
    try:
        lines = case.files[name].decode().splitlines(keepends=True)
    except UnicodeDecodeError:
        return case
    chunk = max(1, len(lines) // 4)
    while chunk >= 1 and budget > 0:
        i = 0
        while i < len(lines) and budget > 0:
            trial = lines[:i] + lines[i + chunk :]
            candidate = Case(
                case.tool,
                {**case.files, name: "".join(trial).encode()},
                case.argv,
                case.outputs,
                case.sentinels,
                case.origin + " (minimized)",
            )
            budget -= 1
            again = run_case(candidate, time_limit, memory_mb)
            if (again.outcome, again.signature) == (result.outcome, result.signature):
                lines, case = trial, candidate
            else:
                i += chunk
        chunk //= 2
    return case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", choices=[*TOOLS, "all"], default="all")
    parser.add_argument("--n", type=int, default=1000, help="inputs per tool (default %(default)s)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", type=int, default=0, help="first case index (to split a long run)")
    parser.add_argument("--only", type=int, metavar="INDEX", help="run this one case and show everything")
    parser.add_argument("--save", type=Path, metavar="DIR", help="write failing cases here for reproduction")
    parser.add_argument("--minimize", action="store_true", help="shrink saved IR cases first (a few runs each)")
    parser.add_argument("--time-limit", type=float, default=10.0, help="seconds per input (default %(default)s)")
    parser.add_argument("--memory-mb", type=int, default=2048, help="address space per input above the fuzzer's")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    tools = list(TOOLS) if args.tool == "all" else [args.tool]

    if args.only is not None:
        warm_up()
        for tool in tools:
            case = make_case(corpus(), tool, args.only, args.seed)
            result = run_case(case, args.time_limit, args.memory_mb)
            print(
                f"{tool} case {args.only}: {case.origin}\n  argv: {case.argv}\n  files: "
                f"{ {k: len(v) for k, v in case.files.items()} }\n  outcome: {result.outcome} {result.problems} "
                f"exit {result.exit_code} in {result.seconds:.2f} s\n  signature: {result.signature}\n"
                f"  detail: {result.detail}\n--- stderr ---\n{result.stderr}"
            )
        return 0

    reports = []
    for tool in tools:
        report = fuzz(tool, args.n, args.seed, args.start, args.time_limit, args.memory_mb, not args.quiet)
        reports.append(report)
        if args.save:
            save_examples(report, args.save, args.seed, args.minimize, args.time_limit, args.memory_mb)
    print(
        f"seed {args.seed}, cases {args.start}..{args.start + args.n - 1} per tool, "
        f"time limit {args.time_limit} s, memory cap +{args.memory_mb} MiB"
    )
    print(table(reports))
    for report in reports:
        if report.signatures:
            print(f"\n{report.tool}: distinct signatures (count, outcome, signature, first case)")
            print("\n".join(signature_lines(report)))
    if args.save:
        print(f"\nfailing cases saved under {args.save}/<tool>/ (cmd and result.txt in each)")
    return 1 if any(r.violations for r in reports) else 0


if __name__ == "__main__":
    sys.exit(main())
