"""The contract fuzzer, briefly (GE_FUZZ_N inputs per tool, default 60), and the checker itself.

The checker is tested first on fake tools that break the contract one way each: a check that
never fires would make the fuzz test pass for nothing. The long run is
`python test/fuzz/run.py --tool all --n 10000 --seed 0 --save DIR` (README, "Tests").
"""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from fuzz import contract
from fuzz.contract import Case, run_case
from fuzz.run import signature_lines, table
from fuzz.seeds import corpus
from fuzz.strategies import TOOLS, make_case

GOOD_IR = (
    "builtin.module {\n  func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
    "    func.return %x : tensor<2xf32>\n  }\n}\n"
)


# ------------------------------------------------------------------------------- fake tools
def fake_main(argv: list[str]) -> None:
    """A tool that does what argv[0] says, to show each outcome class is detected."""
    from ge.tools.common import write_atomic

    what = argv[0]
    if what == "ok":
        write_atomic("out.mlir", GOOD_IR)
    elif what == "user":
        print("fake: error: model.mlir:1:1: a user mistake", file=sys.stderr)
        sys.exit(1)
    elif what == "internal":
        print("fake: internal error: KeyError: 'x' (please report)", file=sys.stderr)
        sys.exit(2)
    elif what == "raise":
        {}["missing"]
    elif what == "printed-traceback":
        print("Traceback (most recent call last):\n  File \"x.py\", line 1, in f\nKeyError: 'x'", file=sys.stderr)
        sys.exit(1)
    elif what == "exit3":
        sys.exit(3)
    elif what == "two-lines":
        print("warning: something\nfake: error: then this", file=sys.stderr)
        sys.exit(1)
    elif what == "no-prefix":
        print("something went wrong", file=sys.stderr)
        sys.exit(1)
    elif what == "internal-as-1":
        print("fake: internal error: x", file=sys.stderr)
        sys.exit(1)
    elif what == "sleep":
        time.sleep(60)
    elif what == "stuck":  # the alarm cannot reach it: the parent's kill must
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        time.sleep(60)
    elif what == "die":
        os._exit(0)
    elif what == "clobber":
        with open("out.mlir", "w") as f:
            f.write("half")
        print("fake: error: failed after writing", file=sys.stderr)
        sys.exit(1)
    elif what == "leave-temp":
        write_atomic("out.mlir", GOOD_IR)
        with open(".out.mlir.tmp12345", "w") as f:
            f.write("x")
    elif what == "bad-ir":
        with open("out.mlir", "w") as f:
            f.write("builtin.module { this is not IR")
    elif what == "touch-input":
        with open("model.mlir", "a") as f:
            f.write("// changed")
        print("fake: error: x", file=sys.stderr)
        sys.exit(1)
    elif what == "memory":
        import numpy as np

        np.ones(1 << 40, np.uint8)


@pytest.fixture
def fake_tool(monkeypatch):
    import ge.tools.common  # noqa: F401 - warm, as the fuzzer is: an import in the child would eat the time limit

    monkeypatch.setitem(contract.TOOLS, "fake", (__name__, "fake_main", "ir"))

    def run(what: str, sentinels: bool = False, time_limit: float = 5.0, memory_mb: int = 2048, kill_after=5.0):
        case = Case("fake", {"model.mlir": GOOD_IR.encode()}, [what], ["out.mlir", "out.safetensors"], sentinels)
        return run_case(case, time_limit, memory_mb, kill_after)

    return run


@pytest.mark.parametrize(
    "what, sentinels, outcome",
    [
        ("ok", False, "ok"),
        ("ok", True, "ok"),
        ("user", True, "user-error"),
        ("internal", False, "internal"),
        ("raise", False, "traceback"),
        ("printed-traceback", False, "traceback"),
        ("exit3", False, "bad-exit"),
        ("two-lines", False, "bad-message"),
        ("no-prefix", False, "bad-message"),
        ("internal-as-1", False, "bad-message"),
        ("die", False, "crash"),
        ("clobber", True, "clobbered"),
        ("clobber", False, "partial"),
        ("leave-temp", False, "partial"),
        ("bad-ir", False, "bad-output"),
        ("touch-input", False, "clobbered"),
    ],
)
def test_checker_classifies(fake_tool, what, sentinels, outcome):
    result = fake_tool(what, sentinels)
    assert result.outcome == outcome, (result, result.stderr)


def test_traceback_signature_names_the_exception(fake_tool):
    assert fake_tool("raise").signature.startswith("KeyError @ ")


@pytest.mark.mutation
def test_hang_is_caught_by_the_alarm_and_by_the_kill(fake_tool):
    start = time.monotonic()
    assert fake_tool("sleep", time_limit=0.5).outcome == "hang"
    assert fake_tool("stuck", time_limit=0.5, kill_after=0.5).outcome == "hang"
    assert time.monotonic() - start < 20


def test_memory_cap_stops_a_huge_allocation(fake_tool):
    result = fake_tool("memory", memory_mb=256)
    assert result.outcome == "traceback" and result.signature.startswith("MemoryError"), result


def test_cases_are_deterministic():
    for tool in TOOLS:
        a, b = make_case(corpus(), tool, 17, 3), make_case(corpus(), tool, 17, 3)
        assert (a.files, a.argv, a.origin) == (b.files, b.argv, b.origin)
        assert make_case(corpus(), tool, 18, 3).files != a.files or make_case(corpus(), tool, 18, 3).argv != a.argv


_CASE_DIGEST = """
import hashlib, sys
from fuzz.seeds import corpus
from fuzz.strategies import TOOLS, make_case
digest = hashlib.sha256()
for tool in TOOLS:
    for index in range(60):
        case = make_case(corpus(), tool, index, 5)
        digest.update(repr((sorted(case.files.items()), case.argv, case.origin, case.sentinels)).encode())
print(digest.hexdigest())
"""


def test_cases_are_the_same_in_another_process():
    """A saved case index reproduces later: no wall-clock time or hash order in a case's bytes."""
    import subprocess
    from pathlib import Path

    here = {}
    exec(_CASE_DIGEST.replace("print(", "here['digest'] = ("), {"here": here})
    test_dir = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(test_dir), str(test_dir.parent)]))
    other = subprocess.run(
        [sys.executable, "-c", _CASE_DIGEST], capture_output=True, text=True, env=env, check=True
    ).stdout.strip()
    assert other == here["digest"]


def test_seeds_cover_the_sources():
    seeds = corpus()
    assert {"bert_toy", "gpt2_toy", "resnet_block", "mobilenet_block"} <= set(seeds.onnx_models)
    assert len(seeds.ir) > 50 and seeds.lowered and len(seeds.pipelines) > 20


# --------------------------------------------------------------------------- the real tools
FUZZ_N = int(os.environ.get("GE_FUZZ_N", "60"))


_FUZZ_IN_A_FRESH_PROCESS = """
import pickle, sys
sys.path[:0] = {paths!r}
from fuzz.run import fuzz
reports = {{tool: fuzz(tool, {n}, seed=0, time_limit=10.0) for tool in {tools!r}}}
with open({out!r}, "wb") as f:
    pickle.dump(reports, f)
"""


@pytest.fixture(scope="module")
def contract_reports(tmp_path_factory) -> dict:
    """Each tool's report on FUZZ_N inputs, fuzzed in one fresh process: every case forks the
    process that runs it, and a test worker's heap (the shared models) makes each fork and its
    copy-on-write several times slower (in the suite, 9-10 s a tool, against 2-4 s alone)."""
    import pickle
    import subprocess
    from pathlib import Path

    here = Path(__file__).parent
    out = tmp_path_factory.mktemp("fuzz") / "reports.pickle"
    code = _FUZZ_IN_A_FRESH_PROCESS.format(
        paths=[str(here.parent), str(here.parent / "frontend")], n=FUZZ_N, tools=list(TOOLS), out=str(out)
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=1800)
    with open(out, "rb") as f:
        return pickle.load(f)  # written by the process above, from this checkout's own code


@pytest.mark.parametrize("tool", TOOLS)
def test_tool_keeps_its_contract(tool, contract_reports):
    report = contract_reports[tool]
    if report.violations == 0:
        return
    counts = ", ".join(f"{o} {n}" for o, n in report.counts.items() if o in contract.VIOLATIONS)
    signatures = "; ".join(sorted({sig for (outcome, sig) in report.signatures if outcome != contract.INTERNAL}))
    summary = f"{tool}: {report.violations} contract violations in {FUZZ_N} inputs ({counts}): {signatures}"
    details = "\n".join([table([report]), *signature_lines(report)])
    pytest.fail(f"{summary}\n{details}", pytrace=False)
