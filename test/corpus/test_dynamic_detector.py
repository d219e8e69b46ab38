"""A YOLOv8-style detector exported by torch with the image's height and width as dim_params
(test/corpus/export_dynamic.py; its anchors are computed from the feature maps' own sizes): at
three image sizes it equals onnxruntime as a dynamic module at O0 and O3, as gears, with hybrid
fallback for a size no gear has, and at the stream level bound to each size at run time."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights
from ge.interpreter.differential import relative_error
from ge.interpreter.runner import run
from ge.passes.fusion.census import census
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context

MODEL = Path(__file__).parent / "dynamic" / "yolo_style.onnx.gz"
SIZES = [(64, 96), (96, 64), (128, 128)]
GEARS = ";".join(f"h={h},w={w}" for h, w in SIZES)
RANGES = "h=32:1024,w=32:1024"


@pytest.fixture(scope="module")
def model() -> onnx.ModelProto:
    return onnx.load_from_string(gzip.decompress(MODEL.read_bytes()))


@pytest.fixture(scope="module")
def expected(model) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    found = {}
    for h, w in [*SIZES, (160, 96)]:
        images = np.random.default_rng(h * w).standard_normal((1, 3, h, w)).astype(np.float32)
        found[(h, w)] = images, session.run(None, {"images": images})[0]
    return found


@pytest.fixture(scope="module")
def dynamic_o3(model) -> ModuleOp:
    """The detector at O3 on symbolic shapes (shared: each test runs or clones it, never edits it)."""
    return _optimized(model, level=3, dim_ranges=RANGES)


def _optimized(model, **options) -> ModuleOp:
    module, weights = import_model(model)
    attach_weights(module, weights)
    GeOptimizePass(**options).apply(make_context(), module)
    return module


def _check(module: ModuleOp, expected, sizes) -> None:
    for size in sizes:
        images, want = expected[size]
        got = run(module, {"images": images})["detections"]
        assert got.shape == want.shape and relative_error(want, got) <= 1e-5, size


def test_the_export_keeps_height_and_width_named(model):
    module, _ = import_model(model)
    assert 'ge.dims = ["", "", "h", "w"]' in str(module.ops.first).split("\n")[0]


def test_as_a_dynamic_module(model, expected, dynamic_o3):
    _check(_optimized(model, level=0), expected, SIZES)
    _check(dynamic_o3, expected, SIZES)


def test_as_gears_and_with_hybrid_fallback(model, expected, dynamic_o3):
    module = _optimized(model, level=3, dynamic_dims=GEARS, compile_hybrid_mode=True)
    _check(module, expected, [*SIZES, (160, 96)])  # the last fits no gear: the dynamic graph runs it
    gears = [f for f in module.ops if isinstance(f, func.FuncOp) and ".gear" in f.sym_name.data]
    dynamic = census(dynamic_o3).kernels
    for gear in gears:  # a gear's anchors are constants; the dynamic graph computes them
        assert census(ModuleOp([gear.clone()])).kernels < dynamic


def test_at_the_stream_level_bound_at_run_time(expected, dynamic_o3):
    for h, w in SIZES:
        bound = clone_with_weights(dynamic_o3)
        lowering = f'bind-dims{{sizes="h={h},w={w}"}},lower-to-tasks,plan-memory,lower-to-streams{{mode=dynamic}}'
        apply_all(make_context(), bound, parse_passes(lowering))
        _check(bound, expected, [(h, w)])
