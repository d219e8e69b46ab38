"""The numerical error of GE's precision modes on the reference models.

For each model of frontend/models.py and each mode, the interpreter runs the model before and
after `mixed-precision{mode=...}` on the same seeded inputs. The error of an output is

    rel_err = max |ref - got| / max |ref|

(the largest absolute error, relative to the output's largest magnitude, so it does not blow up
on outputs near zero); a model's error is the largest over its outputs.

    python bench/precision_error.py                 # all models, the three reducing modes
    python bench/precision_error.py gpt2 --modes force_fp16,force_fp32
    python bench/precision_error.py --level 3      # the whole O3 pipeline in each mode, against f32 O0
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from ge.frontend import models
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.tensor_ops import CastOp
from ge.ge_dialects.ge.weights import ModuleWeights, attach_weights, weights_of
from ge.interpreter.runner import run
from ge.passes import remarks
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.mixed_precision import MODES, MixedPrecisionPass

MODEL_NAMES = ("resnet50", "mobilenet_v2", "bert_base", "gpt2")
REDUCING_MODES = ("force_fp16", "allow_mix_precision", "allow_mix_precision_bf16")
EXACT_MODES = ("force_fp32", "must_keep_origin_dtype")


@dataclass
class Loaded:
    name: str
    module: ModuleOp
    inputs: dict[str, np.ndarray]
    reference: dict[str, np.ndarray]


@dataclass
class Row:
    model: str
    mode: str
    rel_err: float
    max_abs_err: float
    ref_max: float
    converted: int
    kept: int
    casts: int
    seconds: float


def load(name: str, seed: int = 0) -> Loaded:
    """Builds and imports a model, and runs it once in f32 (the reference)."""
    model = models.MODELS[name]()
    module, weights = import_model(model)
    attach_weights(module, weights)
    inputs = models.random_inputs(model, seed)
    return Loaded(name, module, inputs, run(module, inputs))


def convert(module: ModuleOp, mode: str, lists: str | None = None, level: int | None = None) -> tuple[ModuleOp, list]:
    """A copy of `module` after `mixed-precision{mode}` (or the whole `ge-optimize{level}` in that
    precision mode; the original is unchanged), and the remarks the passes emitted."""
    clone = module.clone()
    attach_weights(clone, ModuleWeights(weights_of(module)))
    with remarks.collected() as found:
        if level is None:
            MixedPrecisionPass(mode=mode, lists=lists).apply(Context(), clone)
        else:
            GeOptimizePass(level=level, precision_mode=mode).apply(Context(), clone)
    clone.verify()
    return clone, found


def error(reference: dict[str, np.ndarray], got: dict[str, np.ndarray]) -> tuple[float, float, float]:
    """(rel_err, max_abs_err, max |ref|) over all outputs; rel_err as defined above."""
    rel = worst_abs = worst_ref = 0.0
    for name, ref in reference.items():
        ref64, got64 = ref.astype(np.float64), got[name].astype(np.float64)
        abs_err = float(np.max(np.abs(ref64 - got64))) if ref.size else 0.0
        ref_max = float(np.max(np.abs(ref64))) if ref.size else 0.0
        r = abs_err / ref_max if ref_max else abs_err
        if r >= rel:
            rel, worst_abs, worst_ref = r, abs_err, ref_max
    return rel, worst_abs, worst_ref


def measure(loaded: Loaded, mode: str, level: int | None = None) -> Row:
    start = time.perf_counter()
    converted, found = convert(loaded.module, mode, level=level)
    got = run(converted, loaded.inputs)
    seconds = time.perf_counter() - start
    rel, abs_err, ref_max = error(loaded.reference, got)
    casts = sum(isinstance(op, CastOp) for op in converted.walk()) - sum(
        isinstance(op, CastOp) for op in loaded.module.walk()
    )
    applied = sum(r.kind == "applied" and r.pass_name == "mixed-precision" for r in found)
    kept = sum(r.kind == "rejected" and r.pass_name == "mixed-precision" for r in found)
    return Row(loaded.name, mode, rel, abs_err, ref_max, applied, kept, casts, seconds)


def table(rows: list[Row]) -> str:
    head = (
        f"{'model':<13} {'mode':<25} {'rel_err':>9} {'max_abs':>9} {'max|ref|':>9} "
        f"{'conv':>5} {'kept':>5} {'casts':>5} {'s':>5}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(
            f"{r.model:<13} {r.mode:<25} {r.rel_err:>9.2e} {r.max_abs_err:>9.2e} {r.ref_max:>9.3g} "
            f"{r.converted:>5} {r.kept:>5} {r.casts:>+5} {r.seconds:>5.1f}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help=f"models to measure (default: all of {', '.join(MODEL_NAMES)})")
    parser.add_argument("--modes", default=",".join(REDUCING_MODES + EXACT_MODES))
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument(
        "--level",
        type=int,
        choices=range(4),
        help="run ge-optimize{level} in each mode (layouts, fusion and all) instead of mixed-precision alone",
    )
    args = parser.parse_args(argv)
    unknown = [m for m in args.models if m not in MODEL_NAMES]
    if unknown:
        parser.error(f"unknown model '{unknown[0]}' (models: {', '.join(MODEL_NAMES)})")
    modes = args.modes.split(",")
    if bad := [m for m in modes if m not in MODES]:
        parser.error(f"unknown mode '{bad[0]}' (modes: {', '.join(MODES)})")
    rows = []
    for name in args.models or MODEL_NAMES:
        loaded = load(name, args.seed)
        for mode in modes:
            rows.append(measure(loaded, mode, args.level))
    print(
        "rel_err = max|ref - got| / max|ref| over the model's outputs; conv/kept = float ops the pass "
        "converted / kept (remarks); casts = ge.cast ops added"
    )
    print(table(rows))


if __name__ == "__main__":
    main()
