"""The interpreter's fast paths keep its results: conv as im2col + GEMM against onnxruntime on random
geometries, stacked MatMul as one GEMM, the float32 erf, constants kept across runs (and dropped
when they change), the BLAS thread policy, and results written over a dying operand."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx_oracle import compare_with_onnxruntime, node_model
from scipy import special
from xdsl.dialects.builtin import TensorType, f16
from xdsl.rewriter import Rewriter

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.constant import ConstantOp
from ge.ge_dialects.ge.types import WeightRefAttr
from ge.ge_dialects.limits import tensor_byte_limit
from ge.interpreter import kernels, runner
from ge.interpreter.ge import KernelError, TensorTooLarge
from ge.interpreter.kernels import checked, parallel, prepared, vouch_for
from ge.interpreter.kernels.elementwise import erf_f32
from ge.interpreter.runner import InputError, available_cores, blas_threads, run

pytest.importorskip("onnxruntime")


@st.composite
def conv_cases(draw):
    """A 1-D or 2-D conv: batch, groups, channels, kernel, strides, pads, dilations, bias."""
    rank = draw(st.integers(1, 2))
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cg, mg = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, 4)) for _ in range(rank)]
    strides = [draw(st.integers(1, 3)) for _ in range(rank)]
    dilations = [draw(st.integers(1, 2)) for _ in range(rank)]
    pads = [draw(st.integers(0, 2)) for _ in range(2 * rank)]
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    sizes = [draw(st.integers(max(1, e - pads[i] - pads[i + rank]), 9)) for i, e in enumerate(extents)]
    batch = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, groups * cg, *sizes)).astype(np.float32)
    w = rng.standard_normal((groups * mg, cg, *kernel)).astype(np.float32)
    b = rng.standard_normal(groups * mg).astype(np.float32) if draw(st.booleans()) else None
    attrs = {"group": groups, "strides": strides, "dilations": dilations, "pads": pads, "kernel_shape": kernel}
    return x, w, b, attrs, draw(st.booleans())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conv_cases())
def test_conv_matches_onnxruntime_on_random_geometries(case):
    compare_with_onnxruntime(*conv_model(case), rtol=1e-4, atol=1e-5)


def conv_model(case):
    """The one-node Conv model of a `conv_cases` case and its feeds (the inputs not made constants)."""
    x, w, b, attrs, weights_constant = case
    inputs = {"X": x, "W": w, "B": b}
    constants = [n for n in ("W", "B") if weights_constant and inputs[n] is not None]
    model = node_model("Conv", inputs, 1, constants=constants, **attrs)
    return model, {n: v for n, v in inputs.items() if v is not None and n not in constants}


def test_a_conv_run_twice_gives_the_same_result_from_its_prepared_weights():
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((1, 4, 7, 7)).astype(np.float32), rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    module, weights = import_model(node_model("Conv", {"X": x, "W": w}, 1, constants=["W"], pads=[1, 1, 1, 1]))
    store = Store(weights)
    first = run(module, {"X": x}, store)["out0"]
    second = run(module, {"X": x}, store)["out0"]
    np.testing.assert_array_equal(first, second)


def test_stacked_matmul_is_one_gemm_with_the_same_result():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 5, 7)).astype(np.float32)
    b = rng.standard_normal((7, 4)).astype(np.float32)
    compare_with_onnxruntime(node_model("MatMul", {"A": a, "B": b}, 1), {"A": a, "B": b}, 1e-5, 1e-6)
    at = np.ascontiguousarray(a.transpose(1, 0, 2)).transpose(1, 0, 2)  # not C-contiguous: the batched path
    compare_with_onnxruntime(node_model("MatMul", {"A": at, "B": b}, 1), {"A": at, "B": b}, 1e-5, 1e-6)


def test_float32_erf_is_within_8_ulp_everywhere():
    x = np.concatenate(
        [
            np.linspace(-6, 6, 400_001, dtype=np.float32),
            np.logspace(-30, 1, 20_000, dtype=np.float32),
            -np.logspace(-30, 1, 20_000, dtype=np.float32),
            np.array([0.0, -0.0, np.inf, -np.inf], np.float32),
        ]
    )
    want = special.erf(x.astype(np.float64))
    got = erf_f32(x)
    assert got.dtype == np.float32
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    assert np.max(np.abs(got - want) / ulp) <= 8
    assert np.isnan(erf_f32(np.array([np.nan], np.float32)))[0]


# -- constants kept across runs -------------------------------------------------------------------


class Store(Mapping[str, np.ndarray]):
    """A read-only store like a sidecar file's: every read is a fresh array, and counted."""

    def __init__(self, arrays: Mapping[str, np.ndarray]):
        self.arrays, self.reads = dict(arrays), 0

    def __getitem__(self, key: str) -> np.ndarray:
        self.reads += 1
        return self.arrays[key].copy()

    def __iter__(self) -> Iterator[str]:
        return iter(self.arrays)

    def __len__(self) -> int:
        return len(self.arrays)


def big_add_model():
    """y = x + W with W a sidecar weight (too large to be inline)."""
    w = np.arange(64, dtype=np.float32).reshape(8, 8)
    x = np.ones((8, 8), np.float32)
    module, weights = import_model(node_model("Add", {"X": x, "W": w}, 1, constants=["W"]), inline_limit=4)
    assert list(weights) == ["W"]
    return module, dict(weights), x, w


def test_a_store_is_read_once_per_weight_across_runs():
    module, weights, x, w = big_add_model()
    store = Store(weights)
    for _ in range(3):
        np.testing.assert_array_equal(run(module, {"X": x}, store)["out0"], x + w)
    assert store.reads == 1


def test_a_new_array_in_an_in_memory_table_is_seen_by_the_next_run():
    module, weights, x, w = big_add_model()
    np.testing.assert_array_equal(run(module, {"X": x}, weights)["out0"], x + w)
    weights["W"] = w * 3  # as a training loop stores a step's new state
    np.testing.assert_array_equal(run(module, {"X": x}, weights)["out0"], x + w * 3)


def test_an_array_written_in_place_in_an_in_memory_table_is_seen_through_a_prepared_form():
    """A conv's prepared GEMM layout (f16 weights widened to f32: a copy) is kept only for arrays
    the interpreter read itself."""
    rng = np.random.default_rng(3)
    x, w = rng.standard_normal((1, 2, 5, 5)).astype(np.float16), rng.standard_normal((3, 2, 3, 3)).astype(np.float16)
    module, weights = import_model(node_model("Conv", {"X": x, "W": w}, 1, constants=["W"]), inline_limit=4)
    weights = {k: v.copy() for k, v in weights.items()}  # writable, as a caller's own arrays are
    first = run(module, {"X": x}, weights)["out0"]
    weights["W"] *= 2
    np.testing.assert_array_equal(run(module, {"X": x}, weights)["out0"], 2 * first)  # scaling by 2 is exact


def test_a_replaced_constant_value_is_seen_by_the_next_run():
    """A pass that changes a constant replaces its value attribute: the cached array is dropped."""
    module, weights, x, w = big_add_model()
    store = Store(dict(weights, W2=w + 100))
    np.testing.assert_array_equal(run(module, {"X": x}, store)["out0"], x + w)
    (const,) = [op for op in module.walk() if isinstance(op, ConstantOp)]
    const.properties["value"] = WeightRefAttr("W2")
    np.testing.assert_array_equal(run(module, {"X": x}, store)["out0"], x + w + 100)


def test_prepared_forms_are_kept_for_vouched_arrays_only():
    calls = []

    def make(a):
        calls.append(1)
        return a * 2

    mine, theirs = np.ones(3), np.ones(3)
    vouch_for(mine)
    prepared(mine, "k", make), prepared(mine, "k", make)
    assert len(calls) == 1
    prepared(theirs, "k", make), prepared(theirs, "k", make)
    assert len(calls) == 3


# -- threads --------------------------------------------------------------------------------------


def test_threads_given_win_over_the_environment(monkeypatch):
    monkeypatch.setenv(runner.THREADS_ENV, "3")
    assert blas_threads(2) == 2
    assert blas_threads() == 3


@pytest.mark.parametrize("value", ["two", "0", "-1"])
def test_a_bad_thread_count_is_one_line(monkeypatch, value):
    monkeypatch.setenv(runner.THREADS_ENV, value)
    with pytest.raises(InputError) as e:
        blas_threads()
    assert "\n" not in str(e.value) and ("thread" in str(e.value))


def test_busy_cores_are_left_alone(monkeypatch):
    monkeypatch.delenv(runner.THREADS_ENV, raising=False)
    monkeypatch.setattr(runner, "available_cores", lambda: 4)
    monkeypatch.setattr(runner, "_others_running", lambda: 0)
    assert blas_threads() == 4
    monkeypatch.setattr(runner, "_others_running", lambda: 3)
    assert blas_threads() == 1
    monkeypatch.setattr(runner, "_others_running", lambda: 9)
    assert blas_threads() == 1


def test_the_run_holds_blas_to_one_thread_and_splits_gemms_over_its_threads(monkeypatch):
    from threadpoolctl import threadpool_info

    seen = []
    original = checked.run_checked

    def spy(fn, op, values):
        blas = {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}
        seen.append((blas, parallel.thread_count()))
        return original(fn, op, values)

    monkeypatch.setattr(checked, "run_checked", spy)
    module, weights, x, _ = big_add_model()
    run(module, {"X": x}, weights, threads=2)
    assert seen and all(blas <= {1} and count == 2 for blas, count in seen)
    assert available_cores() >= 1


@pytest.mark.parametrize("shape", [(300, 200, 100), (40, 96, 700), (5, 3, 4)])
def test_a_split_gemm_is_the_gemm(shape):
    m, k, n = shape
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    with parallel.kernel_threads(3):
        got = kernels.matmul_into(a, b)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


def test_the_caller_takes_every_block_a_helper_does_not_start(monkeypatch):
    """A helper that never gets a core (a busy machine) takes no block: the GEMM still finishes."""

    class Stalled:
        def submit(self, fn, *args):
            return None  # never runs

    monkeypatch.setattr(parallel, "_pool", lambda workers: Stalled())
    monkeypatch.setattr(kernels, "_SPLIT_MACS", 0)
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((64, 32)).astype(np.float32), rng.standard_normal((32, 48)).astype(np.float32)
    with parallel.kernel_threads(4):
        np.testing.assert_allclose(kernels.matmul_into(a, b), a @ b, rtol=1e-5, atol=1e-5)


# -- per-op checks kept across runs ---------------------------------------------------------------


def test_a_result_type_changed_between_runs_is_checked_again():
    module, weights, x, _w = big_add_model()
    run(module, {"X": x}, weights)
    (add,) = [op for op in module.walk() if op.name == "ge.add"]
    Rewriter.replace_value_with_new_type(add.results[0], TensorType(f16, [8, 8]))
    with pytest.raises(KernelError, match="type says"):
        run(module, {"X": x}, weights)


def test_a_lower_tensor_limit_applies_to_an_op_that_ran_before():
    module, weights, x, _w = big_add_model()
    run(module, {"X": x}, weights)
    with tensor_byte_limit(100), pytest.raises(TensorTooLarge):
        run(module, {"X": x}, weights)


@pytest.mark.parametrize("shape", [(300, 200, 100), (40, 96, 700), (1024, 64, 512)])
def test_a_split_gemm_gives_the_same_bits_at_every_thread_count(shape):
    """The reference interpreter's numbers may not depend on how many threads it got (the machine's
    load): the split is the shape's, so 1, 2 and 5 threads give the same bits."""
    m, k, n = shape
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    results = []
    for threads in (1, 2, 5):
        with parallel.kernel_threads(threads):
            results.append(kernels.matmul_into(a, b))
    for other in results[1:]:
        np.testing.assert_array_equal(other, results[0])


def test_an_add_takes_over_the_array_of_the_op_before_it():
    """MatMul, LayerNorm and Softmax results own their memory, so the Add after each (their only
    user) writes its result over it instead of allocating: BERT-base's bias and residual Adds. The
    outputs still match onnxruntime."""
    from onnx import TensorProto, helper

    rng = np.random.default_rng(0)
    values = {
        "x": rng.standard_normal((2, 4, 8)).astype(np.float32),
        "w": rng.standard_normal((8, 8)).astype(np.float32),
        "b": rng.standard_normal(8).astype(np.float32),
        "s": rng.standard_normal(8).astype(np.float32),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["mm"]),
        helper.make_node("Add", ["b", "mm"], ["biased"]),
        helper.make_node("LayerNormalization", ["biased", "s", "b"], ["ln"], axis=-1),
        helper.make_node("Add", ["ln", "b"], ["shifted"]),
        helper.make_node("Softmax", ["shifted"], ["sm"], axis=-1),
        helper.make_node("Add", ["sm", "x"], ["out0"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in values.items()],
        [helper.make_tensor_value_info("out0", TensorProto.FLOAT, (2, 4, 8))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    taken: list[bool] = []
    original = kernels.elementwise.donated

    def recording(op, ins, name):
        array = original(op, ins, name)
        if name == "b" or array is not None:
            taken.append(array is not None)
        return array

    with mock.patch.object(kernels.elementwise, "donated", recording):
        compare_with_onnxruntime(model, values, rtol=1e-5, atol=1e-6)
    assert taken == [True, True, True]
