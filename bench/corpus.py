"""The corpus of real architectures (test/corpus/): ge against onnxruntime at O0, O3 and the stream level.

    python -m bench.corpus [--models resnet18,bert] [--levels O0,O3,stream]

The models are torchvision, timm and transformers architectures exported by test/corpus/export.py
(which needs torch; this module does not). Each is stored without its large float weights: `load`
draws them again (seeded, with each tensor's recorded mean and std), `inputs` draws inputs (integer
inputs within their recorded ranges). A level passes when every output's error, max|ge - ort| /
max|ort| (`relative_error`), is at most TOLERANCE:

- O0: the imported module after `ge-optimize{level=0}`, run by the reference interpreter;
- O3: after `ge-optimize{level=3}`;
- stream: the O3 module lowered (`lower-to-tasks,plan-memory,lower-to-streams{streams=2}`) and run.

Per model the table gives the exporter, the ge ops after import and the kernels at O3 (counted as
bench.optimize counts them: fused groups plus the ops outside them, TransData apart), the nodes
onnxruntime keeps at ORT_ENABLE_ALL, and each level's result: "ok", the error over the tolerance, or
the first failure in one line. The totals follow.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import importlib.util
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from xdsl.dialects.builtin import ModuleOp

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import run
from ge.passes.fusion.census import census
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context

CORPUS = Path(__file__).resolve().parent.parent / "test" / "corpus"
FOLDER = CORPUS / "models"
TOLERANCE = 1e-3
LEVELS = ("O0", "O3", "stream")
STREAMS = 2
LOWER = f"lower-to-tasks,plan-memory,lower-to-streams{{streams={STREAMS}}}"


def _weights_module():
    """test/corpus/weights.py, the draws that export.py calibrates on (it lives beside the export
    script, which runs in a venv without the project)."""
    spec = importlib.util.spec_from_file_location("corpus_weights", CORPUS / "weights.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


draws = _weights_module()


def names() -> list[str]:
    """Every model of the corpus, sorted."""
    return sorted(p.name.removesuffix(".onnx.gz") for p in FOLDER.glob("*.onnx.gz"))


@functools.cache
def _stored(name: str) -> bytes:
    return gzip.decompress((FOLDER / f"{name}.onnx.gz").read_bytes())


def stored(name: str) -> onnx.ModelProto:
    """The model as stored: without its large float weights."""
    if name not in names():
        raise KeyError(f"no corpus model {name!r} in {FOLDER}")
    return onnx.load_from_string(_stored(name))


meta = draws.meta
with_weights = draws.with_weights
inputs = draws.inputs


def load(name: str, seed: int = 0) -> onnx.ModelProto:
    """The corpus model `name` with its weights drawn (test/corpus/weights.py)."""
    return with_weights(stored(name), seed)


# ------------------------------------------------------------------------------------- checking


def one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:240]


@dataclass(frozen=True)
class Outcome:
    """One level of one model: its largest output error, or why it has none."""

    error: float = float("inf")
    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None and self.error <= TOLERANCE

    def __str__(self) -> str:
        if self.failure is not None:
            return self.failure
        return "ok" if self.ok else f"error {self.error:.3g}"


@dataclass
class Case:
    """A corpus model with its weights and inputs drawn, and onnxruntime's outputs on them."""

    name: str
    model: onnx.ModelProto
    feeds: dict[str, np.ndarray]
    expected: dict[str, np.ndarray]
    meta: dict = field(default_factory=dict)
    session: Any = None  # the onnxruntime session that gave `expected`


def onnxruntime_session(model: onnx.ModelProto, optimized: str | None = None):
    """A CPU session at ORT_ENABLE_ALL on one thread: the models are small, and the test workers
    are one per core (onnxruntime's default pool of spinning threads per session slows the others)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    if optimized:
        options.optimized_model_filepath = optimized
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def case(name: str, seed: int = 0, model: onnx.ModelProto | None = None) -> Case:
    """`name` (or `model`, a stored model) with seeded weights and inputs, and onnxruntime's outputs."""
    model = with_weights(stored(name) if model is None else model, seed)
    feeds = inputs(model, seed)
    session = onnxruntime_session(model)
    outputs = [o.name for o in session.get_outputs()]
    return Case(name, model, feeds, dict(zip(outputs, session.run(outputs, feeds))), meta(model), session)


SPREAD = 5 * TOLERANCE
"""A reference output is taken as constant when its elements' std, or its change when the inputs
are drawn again, is below this fraction of its largest magnitude: not five times what the
comparison's tolerance lets pass."""


def constant_output(c: Case) -> str | None:
    """Why onnxruntime's outputs of a case are (nearly) constant, or None: a comparison with a
    constant output shows nothing (randomly initialised deep networks can shrink their activations
    to nothing; test/corpus/export.py calibrates them)."""
    session = c.session or onnxruntime_session(c.model)
    other = dict(zip(c.expected, session.run(list(c.expected), inputs(c.model, seed=1))))
    for key, want in c.expected.items():
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        if scale == 0 or not np.isfinite(scale):
            return f"{key}: largest magnitude {scale}"
        if (spread := float(np.std(want)) / scale) < SPREAD:
            return f"{key}: std {spread:.2g} of its largest magnitude"
        if (change := float(np.max(np.abs(other[key] - want))) / scale) < SPREAD:
            return f"{key}: changes by {change:.2g} of its largest magnitude with other inputs"
    return None


def imported(model: onnx.ModelProto, weights: Mapping[str, np.ndarray] | None = None) -> ModuleOp:
    """The model as a ge module with its weights attached (`weights` replaces the importer's)."""
    module, own = import_model(model)
    attach_weights(module, own if weights is None else weights)
    return module


def optimized(module: ModuleOp, level: int) -> ModuleOp:
    """A copy of an imported module after `ge-optimize{level}`."""
    out = clone_with_weights(module)
    GeOptimizePass(level=level).apply(make_context(), out)
    return out


def lowered(module: ModuleOp) -> ModuleOp:
    """A copy of a ge-level module lowered to the stream level (LOWER)."""
    out = clone_with_weights(module)
    apply_all(make_context(), out, parse_passes(LOWER))
    return out


def at_level(module: ModuleOp, level: str) -> ModuleOp:
    """A copy of an imported module at `level` (one of LEVELS)."""
    if level == "stream":
        return lowered(optimized(module, 3))
    return optimized(module, 0 if level == "O0" else 3)


def compare(expected: Mapping[str, np.ndarray], got: Mapping[str, np.ndarray]) -> Outcome:
    if set(got) != set(expected):
        return Outcome(failure=f"outputs {sorted(got)}, onnxruntime's {sorted(expected)}")
    return Outcome(max(relative_error(expected[k], got[k]) for k in expected))


def outcome(c: Case, module: ModuleOp, level: str | None = None) -> Outcome:
    """The comparison of an imported module at `level` (of a module as it is without one), or the
    first failure's one line."""
    try:
        return compare(c.expected, run(module if level is None else at_level(module, level), c.feeds))
    except Exception as e:  # a report: every kind of failure is one line of it
        return Outcome(failure=one_line(e))


def check(name: str, levels: Sequence[str] = LEVELS, seed: int = 0) -> dict[str, Outcome]:
    """Each level's outcome on `name` (every level fails with the import's error when it fails)."""
    c = case(name, seed)
    try:
        module = imported(c.model)
    except Exception as e:  # as in `outcome`
        return {level: Outcome(failure=one_line(e)) for level in levels}
    return {level: outcome(c, module, level) for level in levels}


REQUIRED = {"architectures": 40, "dynamo": 10, "torchscript": 10}
LIBRARIES = {"torchvision", "timm", "transformers"}


def coverage_problems(metas: Mapping[str, Mapping]) -> list[str]:
    """What the corpus (name -> its "ge.corpus" record) lacks of its promise: REQUIRED architectures
    and exports of each exporter, from each of LIBRARIES."""
    problems = []
    if len(metas) < REQUIRED["architectures"]:
        problems.append(f"{len(metas)} architectures, fewer than {REQUIRED['architectures']}")
    exporters = Counter(m["exporter"] for m in metas.values())
    for exporter in ("dynamo", "torchscript"):
        if exporters[exporter] < REQUIRED[exporter]:
            problems.append(f"{exporters[exporter]} {exporter} exports, fewer than {REQUIRED[exporter]}")
    if missing := LIBRARIES - {m["library"] for m in metas.values()}:
        problems.append(f"no model from {', '.join(sorted(missing))}")
    return problems


# ------------------------------------------------------------------------------------ the table


def ort_nodes(model: onnx.ModelProto) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "optimized.onnx")
        onnxruntime_session(model, path)
        return len(onnx.load(path, load_external_data=False).graph.node)


def row(name: str, levels: Sequence[str]) -> dict[str, object]:
    c = case(name)
    result: dict[str, object] = {"model": name, "library": c.meta["library"], "exporter": c.meta["exporter"]}
    result["ort nodes"] = ort_nodes(c.model)
    try:
        module = imported(c.model)
    except Exception as e:  # as in `outcome`
        failure = one_line(e)
        result.update({"ops imported": "-", "kernels O3": "-"})
        result.update({level: failure if i == 0 else "(import)" for i, level in enumerate(levels)})
        return result
    result["ops imported"] = census(module).kernels
    try:
        result["kernels O3"] = census(at_level(module, "O3")).kernels
    except Exception:  # the O3 column says why
        result["kernels O3"] = "-"
    result.update({level: str(outcome(c, module, level)) for level in levels})
    return result


def table(rows: list[dict[str, object]]) -> str:
    keys = list(rows[0])
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in keys}
    lines = [" | ".join(k.ljust(widths[k]) for k in keys), "-|-".join("-" * widths[k] for k in keys)]
    lines += [" | ".join(str(r[k]).ljust(widths[k]) for k in keys) for r in rows]
    return "\n".join(lines)


def totals(rows: list[dict[str, object]], levels: Sequence[str]) -> str:
    exporters = Counter(str(r["exporter"]) for r in rows)
    libraries = Counter(str(r["library"]) for r in rows)
    lines = [
        f"{len(rows)} models: " + ", ".join(f"{n} {k}" for k, n in sorted(libraries.items()))
        + "; " + ", ".join(f"{n} {k}" for k, n in sorted(exporters.items())),
    ]  # fmt: skip
    for level in levels:
        passed = sum(r[level] == "ok" for r in rows)
        lines.append(f"{level}: {passed}/{len(rows)} ok")
    counted = [r for r in rows if isinstance(r["kernels O3"], int)]
    if counted:
        lines.append(
            f"over the {len(counted)} models that compile at O3: {sum(int(r['ops imported']) for r in counted)} ops"
            f" imported, {sum(int(r['kernels O3']) for r in counted)} kernels at O3,"
            f" {sum(int(r['ort nodes']) for r in counted)} onnxruntime nodes"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="", help="comma-separated names (default: all)")
    parser.add_argument("--levels", default=",".join(LEVELS))
    args = parser.parse_args(argv)
    levels = args.levels.split(",")
    if unknown := set(levels) - set(LEVELS):
        parser.error(f"--levels: {sorted(unknown)} not among {LEVELS}")
    selected = args.models.split(",") if args.models else names()
    rows = []
    for name in selected:
        rows.append(row(name, levels))
        print(f"{name}: " + ", ".join(f"{level} {rows[-1][level]}" for level in levels), flush=True)
    print()
    print(table(rows))
    print()
    print(totals(rows, levels))


if __name__ == "__main__":
    main()
