"""`torch.compile(model, backend="ge")` on the corpus's transformers architectures, against eager
PyTorch; and the first call's compile time against `backend="inductor"`.

    python -m bench.torch_compile [--models bert,gpt2] [--timing bert,gpt2,segformer] [--repeats 3] [--export]

The architectures are the corpus's (test/corpus/export.py: small configurations, seeded random
weights, nothing downloaded); its torchvision and timm entries need a torchvision built for the
installed torch, which the project's PyTorch pin lacks, so they are listed as skipped. Each model
runs in eval mode under `torch.no_grad()`, compiled with `dynamic=False`, on the corpus's inputs. A
model passes when max|ge - eager| / max|eager| <= 1e-4 on its output. The table gives the error,
the graphs Dynamo handed over, the operators that ran in eager PyTorch (the backend's warnings),
and the compile time (the first call, which compiles, less an eager call).

With `--export`, each architecture is also exported by `torch.export` (non-strict), imported
(`import_exported_program`) and run at O0, O3 (ge-optimize, the reference interpreter at the ge
level) and at the stream level (the O3 module lowered by ge-compile's pipeline and run), each
against eager PyTorch with the same tolerance.

The last table times the first call of `torch.compile` with each backend (inductor's caches off:
ge keeps none), side by side in one process, `--repeats` times each (Dynamo reset between), and
gives the medians and their ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

CORPUS = Path(__file__).resolve().parent.parent / "test" / "corpus"
TOLERANCE = 1e-4
TIMED = ("bert", "gpt2", "segformer")


def corpus_specs() -> list:
    """The corpus's architecture entries (test/corpus/export.py)."""
    sys.path.insert(0, str(CORPUS))  # export.py imports weights.py beside it
    spec = importlib.util.spec_from_file_location("corpus_export", CORPUS / "export.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return list(module.SPECS)


def build(spec):
    """The model (eval mode) and its inputs, seeded as the corpus's export seeds them."""
    import torch

    torch.manual_seed(0)
    model = spec.build().eval()
    generator = torch.Generator().manual_seed(1)
    return model, tuple(i.tensor(generator) for i in spec.inputs)


def relative_error(got, want) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    return float(np.max(np.abs(got - want))) / (scale or 1.0) if want.size else 0.0


def run_one(spec) -> dict:
    """One architecture through torch.compile(backend="ge"): error, graphs, fallbacks, compile time."""
    import torch

    from ge.api.torch_backend import ge_backend

    torch._dynamo.reset()
    model, args = build(spec)
    with torch.no_grad():
        start = time.perf_counter()
        want = model(*args)
        eager = time.perf_counter() - start
        before_reports, before_fallbacks = len(ge_backend.reports), len(ge_backend.fallbacks)
        compiled = torch.compile(model, backend="ge", dynamic=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            got = compiled(*args)
            first = time.perf_counter() - start
    fallbacks = ge_backend.fallbacks[before_fallbacks:]
    ops = sorted({op for f in fallbacks for op in f.operators})
    whole = [f.whole_graph for f in fallbacks if f.whole_graph is not None]
    return {
        "error": relative_error(got.numpy(), want.numpy()),
        "graphs": len(ge_backend.reports) - before_reports + len(whole),
        "fallback_ops": ops,
        "whole_graphs_eager": whole,
        "compile_s": first - eager,
    }


LEVELS = ("O0", "O3", "stream")


def export_one(spec) -> dict[str, float | str]:
    """One architecture through torch.export and the import: each level's error against eager
    PyTorch, or the first line of why it could not run."""
    import torch

    from ge.frontend.torch_fx import import_exported_program
    from ge.ge_dialects.context import make_context
    from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
    from ge.interpreter.runner import run
    from ge.lowering.compile import compile_module
    from ge.passes.ge_optimize import GeOptimizePass

    model, args = build(spec)
    names = [i.name for i in spec.inputs]
    with torch.no_grad():
        want = model(*args).numpy()
        program = torch.export.export(model, args, strict=False)
    module, weights = import_exported_program(program, input_names=names, output_names=["output"])
    attach_weights(module, weights)
    feeds = {n: a.numpy() for n, a in zip(names, args)}
    found: dict[str, float | str] = {}
    for level in LEVELS:
        try:
            copy = clone_with_weights(module)
            if level == "stream":
                compile_module(copy, level=3)
            else:
                GeOptimizePass(level=int(level[1])).apply(make_context(), copy)
            found[level] = relative_error(run(copy, feeds)["output"], want)
        except Exception as e:  # the level's failure, in one line
            found[level] = str(e).strip().splitlines()[0][:80] if str(e).strip() else type(e).__name__
    return found


def first_call_seconds(spec, backend: str) -> float:
    """The first call of the compiled model (it compiles); inductor without its on-disk caches,
    as ge has none."""
    import torch
    import torch._inductor.config

    torch._inductor.config.force_disable_caches = True
    torch._dynamo.reset()
    model, args = build(spec)
    compiled = torch.compile(model, backend=backend, dynamic=False)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        compiled(*args)
        return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", help="comma-separated corpus names (default: every transformers one)")
    parser.add_argument("--timing", default=",".join(TIMED), help="models timed against inductor ('' for none)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--export", action="store_true", help="also torch.export each model: O0, O3, stream")
    args = parser.parse_args(argv)
    import torch

    torch.backends.mha.set_fastpath_enabled(False)
    specs = corpus_specs()
    wanted = set(args.models.split(",")) if args.models else None
    chosen = [s for s in specs if (wanted is None and s.library == "transformers") or (wanted and s.name in wanted)]
    skipped = [s for s in specs if wanted is None and s.library != "transformers"]
    print(f"{'model':14} {'family':13} {'error':>9} {'graphs':>6} {'compile s':>9}  eager fallback")
    passed = fell_back = 0
    for spec in chosen:
        try:
            r = run_one(spec)
        except Exception as e:  # one line per architecture that fails
            print(f"{spec.name:14} {spec.family:13} failed: {str(e).strip().splitlines()[0][:100]}", flush=True)
            continue
        ok = r["error"] <= TOLERANCE
        passed += ok
        fell_back += bool(r["fallback_ops"] or r["whole_graphs_eager"])
        eager = ", ".join(r["fallback_ops"] + [f"whole graph: {w}" for w in r["whole_graphs_eager"]]) or "-"
        print(
            f"{spec.name:14} {spec.family:13} {r['error']:9.2e} {r['graphs']:6d} {r['compile_s']:9.2f}  "
            f"{eager[:120]}{'' if ok else '  OVER TOLERANCE'}",
            flush=True,
        )
    print(f"\n{passed} of {len(chosen)} within {TOLERANCE:g} of eager; {fell_back} needed an eager fallback")
    if skipped:
        print(f"skipped ({len(skipped)}, no torchvision for this torch): {', '.join(s.name for s in skipped)}")
    if args.export:
        print(f"\ntorch.export, imported: error against eager per level (ok: <= {TOLERANCE:g})")
        print(f"{'model':14} " + " ".join(f"{level:>10}" for level in LEVELS))
        level_passes = dict.fromkeys(LEVELS, 0)
        for spec in chosen:
            try:
                found = export_one(spec)
            except Exception as e:  # the export or the import: one line
                print(f"{spec.name:14} failed: {str(e).strip().splitlines()[0][:100]}", flush=True)
                continue
            cells = []
            for level in LEVELS:
                value = found[level]
                ok = isinstance(value, float) and value <= TOLERANCE
                level_passes[level] += ok
                cells.append(f"{value:10.2e}" if isinstance(value, float) else f"  {value}")
            print(f"{spec.name:14} " + " ".join(cells), flush=True)
        print(", ".join(f"{level}: {n} of {len(chosen)}" for level, n in level_passes.items()))
    timed = [s for s in specs if s.name in set(filter(None, args.timing.split(",")))]
    if timed:
        print(f"\nfirst call of torch.compile, median of {args.repeats}, same process")
        print(f"{'model':14} {'ge s':>8} {'inductor s':>11} {'ge / inductor':>14}")
        for spec in timed:
            times: dict[str, list[float]] = {"ge": [], "inductor": []}
            for _ in range(args.repeats):
                for backend in times:  # side by side, alternating
                    times[backend].append(first_call_seconds(spec, backend))
            ge_s, ind_s = statistics.median(times["ge"]), statistics.median(times["inductor"])
            print(f"{spec.name:14} {ge_s:8.2f} {ind_s:11.2f} {ge_s / ind_s:14.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
