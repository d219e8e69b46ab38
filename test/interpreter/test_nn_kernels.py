"""The nn kernels against onnxruntime on configurations the ONNX node tests leave out: groups and
depthwise conv, dilations, 1-D/3-D windows, SAME_LOWER, ceil mode, pooling indices in 3-D and
column-major order, low-precision floats, stash types, broadcasting Gemm bias, integer MatMul/Clip.

Each case is one ONNX node, imported with the ONNX importer and run by the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_oracle import compare_with_onnxruntime, node_model

from ge.frontend.onnx_importer import import_model
from ge.interpreter.runner import run

ort = pytest.importorskip("onnxruntime")

RNG = np.random.default_rng(0)


def rand(*shape: int, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def compare(
    op_type: str,
    inputs: dict[str, np.ndarray | None],
    outputs: int = 1,
    rtol: float = 1e-4,
    atol: float = 1e-5,
    **attrs,
) -> None:
    feeds = {n: v for n, v in inputs.items() if v is not None}
    compare_with_onnxruntime(node_model(op_type, inputs, outputs, **attrs), feeds, rtol, atol)


CONVS = {
    "group2_dilated_strided": (
        (2, 4, 9, 11),
        (6, 2, 3, 2),
        dict(group=2, dilations=[2, 1], strides=[2, 3], pads=[1, 0, 2, 1]),
    ),
    "depthwise_multiplier": ((1, 6, 8, 8), (12, 1, 3, 3), dict(group=6, pads=[1, 1, 1, 1])),
    "same_lower": ((1, 3, 7, 8), (4, 3, 4, 3), dict(auto_pad="SAME_LOWER", strides=[2, 2])),
    "same_upper": ((1, 3, 7, 8), (4, 3, 4, 3), dict(auto_pad="SAME_UPPER", strides=[3, 2])),
    "valid": ((1, 3, 7, 8), (4, 3, 3, 3), dict(auto_pad="VALID", strides=[2, 1])),
    "conv1d": ((2, 3, 17), (5, 3, 4), dict(strides=[3], pads=[2, 1], dilations=[2])),
    "conv3d": ((1, 2, 5, 6, 7), (3, 2, 2, 3, 2), dict(pads=[1, 0, 1, 0, 1, 1], strides=[1, 2, 2])),
    "pointwise_strided": ((1, 8, 9, 9), (4, 8, 1, 1), dict(strides=[2, 2])),
}


@pytest.mark.parametrize("name", sorted(CONVS))
@pytest.mark.parametrize("bias", [False, True])
def test_conv(name, bias):
    x, w, attrs = CONVS[name]
    compare("Conv", {"X": rand(*x), "W": rand(*w), "B": rand(w[0]) if bias else None}, **attrs)


def test_conv_f16():
    compare(
        "Conv",
        {"X": rand(1, 4, 6, 6, dtype=np.float16), "W": rand(2, 4, 3, 3, dtype=np.float16)},
        rtol=2e-3,
        atol=2e-3,
        pads=[1, 1, 1, 1],
    )


POOLS = {
    "ceil_pads_strides": ((1, 2, 7, 8), dict(kernel_shape=[3, 2], strides=[2, 3], pads=[1, 0, 1, 1], ceil_mode=1)),
    "dilated": ((1, 2, 9, 9), dict(kernel_shape=[2, 3], dilations=[2, 2], strides=[1, 2])),
    "same_lower": ((1, 2, 7, 6), dict(kernel_shape=[3, 2], strides=[2, 2], auto_pad="SAME_LOWER")),
    "pool1d": ((2, 3, 11), dict(kernel_shape=[3], strides=[2], pads=[1, 1])),
    "pool3d": ((1, 2, 5, 6, 7), dict(kernel_shape=[2, 3, 2], strides=[2, 2, 3], pads=[0, 1, 1, 1, 1, 0], ceil_mode=1)),
}


@pytest.mark.parametrize("name", sorted(POOLS))
@pytest.mark.parametrize("storage_order", [0, 1])
def test_max_pool_with_indices(name, storage_order):
    shape, attrs = POOLS[name]
    compare("MaxPool", {"X": rand(*shape)}, outputs=2, storage_order=storage_order, **attrs)


@pytest.mark.parametrize("name", sorted(POOLS))
@pytest.mark.parametrize("count_include_pad", [0, 1])
def test_avg_pool(name, count_include_pad):
    shape, attrs = POOLS[name]
    compare("AveragePool", {"X": rand(*shape)}, count_include_pad=count_include_pad, **attrs)


def test_max_pool_int8():
    x = RNG.integers(-128, 127, (1, 2, 6, 6)).astype(np.int8)
    compare("MaxPool", {"X": x}, kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])


def test_global_avg_pool_3d_f16():
    compare("GlobalAveragePool", {"X": rand(2, 3, 4, 5, 6, dtype=np.float16)}, rtol=1e-3, atol=1e-3)


def test_batch_norm_3d_inference():
    c = 3
    var = np.abs(rand(c)) + 0.1
    compare(
        "BatchNormalization",
        {"X": rand(2, c, 4, 5, 2), "scale": rand(c), "B": rand(c), "mean": rand(c), "var": var},
        epsilon=1e-3,
    )


def test_batch_norm_training():
    c = 4
    var = np.abs(rand(c)) + 0.1
    compare(
        "BatchNormalization",
        {"X": rand(3, c, 5), "scale": rand(c), "B": rand(c), "mean": rand(c), "var": var},
        outputs=3,
        training_mode=1,
        momentum=0.7,
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("with_bias", [False, True])
def test_layer_norm(dtype, with_bias):
    x = rand(2, 3, 8, dtype=dtype)
    compare(
        "LayerNormalization",
        {"X": x, "Scale": rand(3, 8, dtype=dtype), "B": rand(8, dtype=dtype) if with_bias else None},
        outputs=3,
        axis=1,
        rtol=2e-3 if dtype == np.float16 else 1e-4,
        atol=2e-3 if dtype == np.float16 else 1e-5,
    )


@pytest.mark.parametrize("c_shape", [None, (), (1,), (5,), (3, 1), (3, 5)])
def test_gemm_bias_broadcast(c_shape):
    c = None if c_shape is None else rand(*c_shape)
    compare("Gemm", {"A": rand(4, 3), "B": rand(5, 4), "C": c}, transA=1, transB=1, alpha=0.5, beta=2.0)


@pytest.mark.parametrize("shapes", [((2, 1, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((3,), (3,))])
def test_matmul_broadcast(shapes):
    compare("MatMul", {"A": rand(*shapes[0]), "B": rand(*shapes[1])})


def test_matmul_int32():
    a, b = (RNG.integers(-9, 9, s).astype(np.int32) for s in ((2, 3, 4), (4, 5)))
    compare("MatMul", {"A": a, "B": b})


def test_clip_int64_and_f16():
    compare(
        "Clip",
        {
            "x": RNG.integers(-9, 9, (3, 4)).astype(np.int64),
            "min": np.array(-3, np.int64),
            "max": np.array(5, np.int64),
        },
    )
    compare("Clip", {"x": rand(3, 4, dtype=np.float16), "min": None, "max": np.array(0.5, np.float16)})


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_f16(axis):
    compare("Softmax", {"x": rand(3, 4, 5, dtype=np.float16)}, axis=axis, rtol=2e-3, atol=1e-3)


def test_dropout_inference_mask():
    compare(
        "Dropout", {"data": rand(3, 4), "ratio": np.array(0.3, np.float32), "training_mode": np.array(False)}, outputs=2
    )


def test_dropout_training_scales_kept_values():
    model = node_model(
        "Dropout",
        {"data": rand(50, 40), "ratio": np.array(0.25, np.float32), "training_mode": np.array(True)},
        2,
        seed=7,
    )
    module, weights = import_model(model)
    x = rand(50, 40)
    feeds = {"data": x, "ratio": np.array(0.25, np.float32), "training_mode": np.array(True)}
    first, again = run(module, feeds, weights), run(module, feeds, weights)
    y, mask = first["out0"], first["out1"]
    np.testing.assert_array_equal(mask, again["out1"])
    np.testing.assert_allclose(y, np.where(mask, x / 0.75, 0), rtol=1e-6)
    assert 0.15 < 1 - mask.mean() < 0.35


@pytest.mark.parametrize("size", [1, 3, 5])
def test_lrn_against_onnxruntime_where_alpha_matters(size):
    """Large alpha and bias: the node tests' alpha 2e-4 leaves the result within their tolerance of
    x / bias^beta, so a wrong alpha / size passed them."""
    x = np.random.default_rng(size).standard_normal((2, 7, 3, 3)).astype(np.float32)
    compare("LRN", {"X": x}, size=size, alpha=0.9, beta=0.75, bias=1.5)


def test_lrn_even_window_follows_the_spec():
    """An even size (onnxruntime refuses it) sums [c - floor((size-1)/2), c + ceil((size-1)/2)]."""
    x = np.random.default_rng(4).standard_normal((2, 7, 3, 3)).astype(np.float32)
    square_sum = np.stack([(x[:, max(0, c - 1) : c + 3] ** 2).sum(1) for c in range(7)], axis=1)
    want = x / (1.5 + 0.9 / 4 * square_sum) ** 0.75
    module, weights = import_model(node_model("LRN", {"X": x}, 1, size=4, alpha=0.9, beta=0.75, bias=1.5))
    np.testing.assert_allclose(run(module, {"X": x}, weights)["out0"], want, rtol=1e-5, atol=1e-6)
