"""Kernels that split their work over the run's threads (interpreter/kernels/parallel.py): conv in
bands of output rows, GELU and erf over blocks of elements, layer norm and softmax over blocks of
rows, attention over blocks of its matrices, Relu, the binary ops and batch norm over blocks of their first
axis longer than one.

The splits are forced on small random cases (the thresholds patched down) and checked against
onnxruntime; each kernel gives the same bits at 1, 2 and 5 threads, since the blocks depend on the
shape only."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx_oracle import compare_with_onnxruntime, node_model
from test_fast_paths import conv_cases, conv_model

from ge.frontend.onnx_importer import import_model
from ge.interpreter.kernels import nn, parallel
from ge.interpreter.runner import run

pytest.importorskip("onnxruntime")


@contextlib.contextmanager
def small_splits() -> Iterator[list[int]]:
    """Bands of one output row, row blocks from two rows; yields the block counts `run_blocks` saw."""
    seen: list[int] = []
    original = parallel.run_blocks

    def counting(count, work):
        seen.append(count)
        return original(count, work)

    with (
        mock.patch.object(nn, "_BAND_BYTES", 1),
        mock.patch.object(parallel, "SPLIT_WORK", 1),
        mock.patch.object(parallel, "run_blocks", counting),
    ):
        yield seen


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_cases())
def test_conv_in_bands_matches_onnxruntime(case):
    with small_splits():
        compare_with_onnxruntime(*conv_model(case), rtol=1e-4, atol=1e-5)


def test_a_conv_with_rows_to_spare_runs_in_bands():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((1, 3, 9, 9)).astype(np.float32), rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    with small_splits() as seen:
        compare_with_onnxruntime(
            node_model("Conv", {"X": x, "W": w, "B": b}, 1, pads=[1, 1, 1, 1]), {"X": x, "W": w, "B": b}, 1e-4, 1e-5
        )
    assert 9 in seen  # one band per output row


ROW_CASES = {
    "Gelu": ({"approximate": "none"}, lambda rng: {"X": 3 * rng.standard_normal((5, 13)).astype(np.float32)}),
    "Gelu tanh": ({"approximate": "tanh"}, lambda rng: {"X": 3 * rng.standard_normal((5, 13)).astype(np.float32)}),
    "Erf": ({}, lambda rng: {"X": 2 * rng.standard_normal((6, 7)).astype(np.float32)}),
    "LayerNormalization": (
        {"axis": -1, "epsilon": 1e-5},
        lambda rng: {
            "X": rng.standard_normal((2, 5, 11)).astype(np.float32),
            "Scale": rng.standard_normal(11).astype(np.float32),
            "B": rng.standard_normal(11).astype(np.float32),
        },
    ),
    "LayerNormalization axis 1": (
        {"axis": 1},
        lambda rng: {
            "X": rng.standard_normal((6, 3, 4)).astype(np.float32),
            "Scale": rng.standard_normal((3, 4)).astype(np.float32),
        },
    ),
    "Softmax": ({"axis": -1}, lambda rng: {"input": 5 * rng.standard_normal((3, 4, 9)).astype(np.float32)}),
    "Add": (
        {},
        lambda rng: {
            "A": rng.standard_normal((1, 6, 5)).astype(np.float32),
            "B": rng.standard_normal((6, 1)).astype(np.float32),
        },
    ),
    "Mul": (
        {},
        lambda rng: {
            "A": rng.standard_normal((4, 3)).astype(np.float32),
            "B": rng.standard_normal(()).astype(np.float32),
        },
    ),
    "Relu": ({}, lambda rng: {"X": rng.standard_normal((1, 1, 7, 3)).astype(np.float32)}),
    "BatchNormalization": (
        {"epsilon": 1e-3},
        lambda rng: {
            "X": rng.standard_normal((1, 3, 4, 5)).astype(np.float32),
            "scale": rng.standard_normal(3).astype(np.float32),
            "B": rng.standard_normal(3).astype(np.float32),
            "input_mean": rng.standard_normal(3).astype(np.float32),
            "input_var": (rng.random(3) + 0.5).astype(np.float32),
        },
    ),
    "Softmax axis 0": ({"axis": 0}, lambda rng: {"input": rng.standard_normal((3, 4)).astype(np.float32)}),
}


def row_model(case: str, seed: int):
    attrs, make = ROW_CASES[case]
    inputs = make(np.random.default_rng(seed))
    outputs = 3 if case.startswith("LayerNormalization") else 1
    return node_model(case.split()[0], inputs, outputs, **attrs), inputs


@pytest.mark.parametrize("case", ROW_CASES)
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**16))
def test_row_kernels_in_blocks_match_onnxruntime(case, seed):
    model, inputs = row_model(case, seed)
    with small_splits() as seen:
        compare_with_onnxruntime(model, inputs, rtol=1e-5, atol=1e-6)
    if not case.endswith("axis 0"):
        assert any(count > 1 for count in seen), "the kernel did not split its rows"


@pytest.mark.parametrize("case", [*ROW_CASES, "Conv"])
def test_split_kernels_give_the_same_bits_at_every_thread_count(case):
    if case == "Conv":
        rng = np.random.default_rng(3)
        inputs = {
            "X": rng.standard_normal((2, 5, 12, 10)).astype(np.float32),
            "W": rng.standard_normal((7, 5, 3, 3)).astype(np.float32),
        }
        model = node_model("Conv", inputs, 1, constants=["W"], pads=[1, 1, 1, 1])
        inputs.pop("W")
    else:
        model, inputs = row_model(case, 3)
    module, weights = import_model(model)
    with small_splits():
        results = [run(module, inputs, weights, threads=t) for t in (1, 2, 5)]
    for other in results[1:]:
        for name, value in results[0].items():
            np.testing.assert_array_equal(other[name], value, err_msg=name)


def test_an_error_in_a_block_reaches_the_caller():
    def work(i):
        if i == 2:
            raise ValueError("block 2")

    with parallel.kernel_threads(3), pytest.raises(ValueError, match="block 2"):
        parallel.run_blocks(5, work)


@pytest.mark.parametrize("size, blocks, align", [(10, 4, 1), (100, 4, 16), (3, 8, 1), (1, 4, 16), (64, 4, 16)])
def test_spans_cover_the_range_once_in_aligned_steps(size, blocks, align):
    spans = parallel.spans(size, blocks, align)
    assert len(spans) <= blocks
    assert [i for lo, hi in spans for i in range(lo, hi)] == list(range(size))
    assert all(lo % align == 0 for lo, _ in spans)


def test_a_graph_fused_bert_splits_its_kernels_and_keeps_its_numbers():
    """Attention (blocks of heads), GELU, layer norm and the GEMMs split on a tiny BERT whose graph
    fusion made ge.attention, ge.gelu and ge.layer_norm: the same bits at 1, 2 and 5 threads, and the
    imported graph's numbers."""
    from ge.frontend import models
    from ge.ge_dialects.context import make_context
    from ge.ge_dialects.ge.weights import attach_weights
    from ge.passes.ge_optimize import LevelOptions, cleanup, graph_fusion, shapes
    from ge.passes.pipeline import apply_all

    model = models.bert_base(layers=1, seq=8, hidden=64, heads=4, intermediate=128, vocab=100)
    inputs = models.random_inputs(model, 0)
    module, weights = import_model(model)
    attach_weights(module, weights)
    want = run(module, inputs)
    options = LevelOptions(precision_mode="must_keep_origin_dtype", target=None)
    apply_all(make_context(), module, [p for stage in (shapes, cleanup, graph_fusion) for p in stage(options)])
    names = {op.name for op in module.walk()}
    assert {"ge.attention", "ge.gelu", "ge.layer_norm"} <= names
    with small_splits() as seen:
        results = [run(module, inputs, threads=t) for t in (1, 2, 5)]
    assert max(seen) > 1
    for other in results[1:]:
        for name, value in results[0].items():
            np.testing.assert_array_equal(other[name], value, err_msg=name)
    for name, value in want.items():
        np.testing.assert_allclose(results[0][name], value, rtol=1e-4, atol=1e-5, err_msg=name)


def test_only_kernels_with_work_to_spare_split_at_bert_base_size():
    """The split thresholds as shipped (no patching), on one BERT-base layer at two threads: the work
    estimate (elements times passes) splits attention's 12 heads and the GELU over 128 x 3072, and
    keeps the layer norms and Adds over 128 x 768 whole (split, they ran slower: see SPLIT_WORK)."""
    import sys

    from ge.frontend import models
    from ge.ge_dialects.context import make_context
    from ge.passes.ge_optimize import LevelOptions, cleanup, graph_fusion, shapes
    from ge.passes.pipeline import apply_all

    model = models.bert_base(layers=1, vocab=100)
    inputs = models.random_inputs(model, 0)
    module, weights = import_model(model)
    options = LevelOptions(precision_mode="must_keep_origin_dtype", target=None)
    apply_all(make_context(), module, [p for stage in (shapes, cleanup, graph_fusion) for p in stage(options)])
    kernels = {"attention", "gelu", "layer_norm", "softmax", "relu", "run", "matmul_into"}  # run: _binary's
    split: set[str] = set()
    original = parallel.run_blocks

    def recording(count, work):
        frame = sys._getframe(1)
        while frame.f_code.co_name not in kernels:
            frame = frame.f_back
        split.add(frame.f_code.co_name)
        return original(count, work)

    names = {op.name for op in module.walk()}
    assert {"ge.attention", "ge.gelu", "ge.layer_norm", "ge.add", "ge.matmul"} <= names
    with mock.patch.object(parallel, "run_blocks", recording):
        run(module, inputs, weights, threads=2)
    assert split == {"attention", "gelu", "matmul_into"}  # not the layer norms, not the Adds
