"""GE's physical layouts (interpreter/layouts.py): the stored arrays match the index formulas of
hicann/ge's format transfers, round trips are exact, padding is zero, and the interpreter holds
relayouted values as stored arrays (a wrong layout gives a wrong number)."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, bf16, f16, f32, f64, i8, i32, i64
from xdsl.parser import Parser

from ge.ge_dialects.ge.layout import LayoutError, TransDataOp, c0_of, storage_shape, with_storage
from ge.ge_dialects.ge.types import element_type_of, f4E2M1FN, i4, tensor
from ge.interpreter.ge import KernelError, folding_interpreter
from ge.interpreter.layouts import c0, from_storage, to_logical, to_physical, to_storage
from ge.interpreter.runner import run
from ge.tools.common import make_context

DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.int8, np.uint8, np.int32, np.int16]
"""numpy dtypes with a C0 (32 bytes: 8 for 32-bit, 16 for 16-bit, 32 for 8-bit types)."""


def _values(shape, dtype, seed=0) -> np.ndarray:
    """Nonzero values, so that a zero in a stored array is padding."""
    rng = np.random.default_rng(seed)
    return (rng.integers(1, 100, size=shape)).astype(dtype)


# -- reference layouts: element-wise index formulas ------------------------------------------------


def _ref_nc1hwc0(x: np.ndarray, c0: int) -> np.ndarray:
    n, c, h, w = x.shape
    out = np.zeros((n, -(-c // c0), h, w, c0), x.dtype)
    for ni, ci, hi, wi in itertools.product(range(n), range(c), range(h), range(w)):
        out[ni, ci // c0, hi, wi, ci % c0] = x[ni, ci, hi, wi]
    return out


def _ref_fractal_z(x: np.ndarray, c0: int) -> np.ndarray:
    """format_transfer_fractal_z: dst[(c1 * H + h) * W + w, n // 16, n % 16, c % C0] = src[n, c, h, w]."""
    n, c, h, w = x.shape
    out = np.zeros((-(-c // c0) * h * w, -(-n // 16), 16, c0), x.dtype)
    for ni, ci, hi, wi in itertools.product(range(n), range(c), range(h), range(w)):
        out[((ci // c0) * h + hi) * w + wi, ni // 16, ni % 16, ci % c0] = x[ni, ci, hi, wi]
    return out


def _ref_fractal_nz(x: np.ndarray, c0: int) -> np.ndarray:
    """format_transfer_fractal_nz: dst[..., w // C0, h // 16, h % 16, w % C0] = src[..., h, w]."""
    *batch, h, w = x.shape
    out = np.zeros((*batch, -(-w // c0), -(-h // 16), 16, c0), x.dtype)
    for b in itertools.product(*(range(d) for d in batch)):
        for hi, wi in itertools.product(range(h), range(w)):
            out[(*b, wi // c0, hi // 16, hi % 16, wi % c0)] = x[(*b, hi, wi)]
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_nc1hwc0_matches_ge(dtype):
    x = _values((2, 19, 3, 2), dtype)
    k = c0(np.dtype(dtype))
    stored = to_storage(x, "NCHW", "NC1HWC0", dtype)
    assert stored.shape == (2, -(-19 // k), 3, 2, k)
    np.testing.assert_array_equal(stored, _ref_nc1hwc0(x, k))
    np.testing.assert_array_equal(from_storage(stored, "NCHW", "NC1HWC0", dtype, x.shape), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fractal_z_matches_ge(dtype):
    x = _values((20, 9, 3, 2), dtype)
    k = c0(np.dtype(dtype))
    stored = to_storage(x, "NCHW", "FRACTAL_Z", dtype)
    assert stored.shape == (-(-9 // k) * 3 * 2, 2, 16, k)
    np.testing.assert_array_equal(stored, _ref_fractal_z(x, k))
    np.testing.assert_array_equal(from_storage(stored, "NCHW", "FRACTAL_Z", dtype, x.shape), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fractal_nz_matches_ge(dtype):
    x = _values((2, 17, 35), dtype)
    k = c0(np.dtype(dtype))
    stored = to_storage(x, "ND", "FRACTAL_NZ", dtype)
    assert stored.shape == (2, -(-35 // k), 2, 16, k)
    np.testing.assert_array_equal(stored, _ref_fractal_nz(x, k))
    np.testing.assert_array_equal(from_storage(stored, "ND", "FRACTAL_NZ", dtype, x.shape), x)


def test_hardware_md_example():
    """docs/hardware.md: [8, 3, 224, 224] fp16 becomes [8, 1, 224, 224, 16]."""
    t = tensor(f16, (8, 3, 224, 224))
    assert storage_shape(with_storage(t, "NC1HWC0")) == (8, 1, 224, 224, 16)


def test_c0_per_element_type():
    assert [c0_of(t) for t in (f32, f16, bf16, i8, i32, i4, f4E2M1FN)] == [8, 16, 16, 32, 8, 64, 64]
    assert c0_of(f64) is None and c0_of(i64) is None


def test_nhwc_and_nhwc_origin():
    x = _values((2, 5, 3, 4), np.float32)  # NCHW
    nhwc = to_storage(x, "NCHW", "NHWC")
    np.testing.assert_array_equal(nhwc, x.transpose(0, 2, 3, 1))
    # an NHWC-origin tensor (logical N, H, W, C) stores to the same NC1HWC0 / FRACTAL_Z arrays
    for storage in ("NC1HWC0", "FRACTAL_Z"):
        np.testing.assert_array_equal(to_storage(nhwc, "NHWC", storage), to_storage(x, "NCHW", storage))
        back = from_storage(to_storage(nhwc, "NHWC", storage), "NHWC", storage, None, nhwc.shape)
        np.testing.assert_array_equal(back, nhwc)
    np.testing.assert_array_equal(to_storage(nhwc, "NHWC", "NCHW"), x)


def test_four_bit_types_use_c0_64():
    x = np.arange(70, dtype=np.int8).astype(ml_dtypes.int4).reshape(1, 70, 1, 1)
    stored = to_storage(x, "NCHW", "NC1HWC0")
    assert stored.shape == (1, 2, 1, 1, 64)
    np.testing.assert_array_equal(from_storage(stored, "NCHW", "NC1HWC0", None, x.shape), x)


def test_padding_is_zero():
    x = np.full((1, 3, 2, 2), 7.0, np.float32)
    stored = to_storage(x, "NCHW", "NC1HWC0")
    assert stored[..., 3:].max() == 0 and (stored[..., :3] == 7).all()
    nz = to_storage(np.full((17, 9), 1.0, np.float32), "ND", "FRACTAL_NZ")
    assert nz.sum() == 17 * 9


def test_unknown_dims_are_read_off_the_stored_array():
    x = _values((3, 20, 4, 5), np.float16)
    stored = to_storage(x, "NCHW", "NC1HWC0")
    np.testing.assert_array_equal(from_storage(stored, "NCHW", "NC1HWC0", None, (None, 20, None, None)), x)
    with pytest.raises(LayoutError, match="static"):
        from_storage(stored, "NCHW", "NC1HWC0", None, (3, None, 4, 5))


def test_unsupported_layouts_are_refused():
    with pytest.raises(LayoutError, match="no C0"):
        to_storage(np.zeros((1, 2, 3, 4)), "NCHW", "NC1HWC0")  # float64
    with pytest.raises(LayoutError, match="4-D"):
        to_storage(np.zeros((2, 3, 4), np.float32), "ND", "FRACTAL_Z")
    with pytest.raises(LayoutError, match="rank >= 2"):
        to_storage(np.zeros(5, np.float32), "ND", "FRACTAL_NZ")
    with pytest.raises(LayoutError, match="got \\[1, 1, 2, 2, 16\\]"):  # an fp16-sized array read as fp32
        from_storage(np.zeros((1, 1, 2, 2, 16), np.float32), "NCHW", "NC1HWC0", None, (1, 3, 2, 2))


# -- hypothesis: random shapes, every format and dtype ---------------------------------------------

_dims = st.integers(1, 40)


@settings(max_examples=60, deadline=None)
@given(
    shape=st.tuples(st.integers(1, 3), _dims, st.integers(1, 5), st.integers(1, 5)),
    dtype=st.sampled_from(DTYPES),
    storage=st.sampled_from(["NC1HWC0", "FRACTAL_Z", "NHWC"]),
    origin=st.sampled_from(["NCHW", "ND", "NHWC"]),
)
def test_image_round_trip(shape, dtype, storage, origin):
    x = _values(shape, dtype)
    stored = to_storage(x, origin, storage, dtype)
    t = with_storage(tensor(element_type_of(np.dtype(dtype)), shape), storage) if origin != "NHWC" else None
    if t is not None:
        assert stored.shape == storage_shape(t)
    assert stored.flags.c_contiguous
    np.testing.assert_array_equal(from_storage(stored, origin, storage, dtype, shape), x)
    assert np.count_nonzero(stored) == x.size  # every element once, the rest is zero padding


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(_dims, min_size=2, max_size=4), dtype=st.sampled_from(DTYPES))
def test_nz_round_trip(shape, dtype):
    x = _values(tuple(shape), dtype)
    stored = to_storage(x, "ND", "FRACTAL_NZ", dtype)
    assert stored.shape == storage_shape(with_storage(tensor(element_type_of(np.dtype(dtype)), shape), "FRACTAL_NZ"))
    np.testing.assert_array_equal(from_storage(stored, "ND", "FRACTAL_NZ", dtype, tuple(shape)), x)
    assert np.count_nonzero(stored) == x.size


# -- the interpreter holds stored arrays ----------------------------------------------------------


def _module(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


CONV_IN_NC1HWC0 = """
func.func @main(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW>> {
  %0 = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"} : (tensor<1x3x6x6xf32>) -> tensor<1x3x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>
  %1 = ge.trans_data %w {src_format = "ND", dst_format = "FRACTAL_Z"} : (tensor<4x3x3x3xf32>) -> tensor<4x3x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>
  %2 = ge.conv %0, %1 : (tensor<1x3x6x6xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<4x3x3x3xf32, #ge.fmt<NCHW, FRACTAL_Z>>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
  %3 = ge.relu %2 : (tensor<1x4x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>
  %4 = ge.trans_data %3 {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x4x4x4xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW>>
  func.return %4 : tensor<1x4x4x4xf32, #ge.fmt<NCHW>>
}
"""

CONV_PLAIN = """
func.func @main(%x: tensor<1x3x6x6xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW>> {
  %2 = ge.conv %x, %w : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW>>
  %3 = ge.relu %2 : (tensor<1x4x4x4xf32, #ge.fmt<NCHW>>) -> tensor<1x4x4x4xf32, #ge.fmt<NCHW>>
  func.return %3 : tensor<1x4x4x4xf32, #ge.fmt<NCHW>>
}
"""


def test_interpreter_runs_stored_layouts():
    rng = np.random.default_rng(1)
    inputs = {
        "arg0": rng.standard_normal((1, 3, 6, 6), np.float32),
        "arg1": rng.standard_normal((4, 3, 3, 3), np.float32),
    }
    want = run(_module(CONV_PLAIN), inputs)["result0"]
    got = run(_module(CONV_IN_NC1HWC0), inputs)["result0"]
    np.testing.assert_array_equal(got, want)


def test_trans_data_kernel_produces_the_stored_array():
    module = _module(CONV_IN_NC1HWC0)
    trans = next(op for op in module.walk() if isinstance(op, TransDataOp))
    x = _values((1, 3, 6, 6), np.float32)
    (stored,) = folding_interpreter(module).run_op(trans, (x,))
    np.testing.assert_array_equal(stored, _ref_nc1hwc0(x, 8))


@pytest.mark.mutation
def test_a_value_held_in_the_wrong_layout_is_an_error():
    """The relu after the conv gets its operand as stored: a logical array there is refused."""
    module = _module(CONV_IN_NC1HWC0)
    relu = next(op for op in module.walk() if op.name == "ge.relu")
    interpreter = folding_interpreter(module)
    with pytest.raises(KernelError, match="ge.relu: .*NC1HWC0"):
        interpreter.run_op(relu, (np.ones((1, 4, 4, 4), np.float32),))
    (out,) = interpreter.run_op(relu, (to_storage(-np.ones((1, 4, 4, 4), np.float32), "NCHW", "NC1HWC0"),))
    assert out.shape == (1, 1, 4, 4, 8) and out.max() == 0


def test_boundary_converts_signature_types():
    """A graph whose signature has a storage format takes and returns logical arrays."""
    text = """
    func.func @main(%x: tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>> {
      %0 = ge.relu %x : (tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>
      func.return %0 : tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>
    }
    """
    x = np.arange(-6, 6, dtype=np.float32).reshape(1, 3, 2, 2)
    np.testing.assert_array_equal(run(_module(text), {"arg0": x})["result0"], np.maximum(x, 0))


def test_to_physical_and_back_by_type():
    t = with_storage(tensor(f16, (2, 40, 3)), "FRACTAL_NZ")
    x = _values((2, 40, 3), np.float16)
    stored = to_physical(x, t)
    assert stored.shape == storage_shape(t) == (2, 1, 3, 16, 16)
    np.testing.assert_array_equal(to_logical(stored, t), x)
    plain = tensor(f32, (2, 3))
    y = np.ones((2, 3), np.float32)
    assert to_physical(y, plain) is y and to_logical(y, plain) is y


ELEMENTWISE_IN_NC1HWC0 = """
func.func @main(%x: tensor<1x3x2x2xf32>, %y: tensor<1x3x2x2xf32>, %b: tensor<1x3x1x1xf32>) -> tensor<1x3x2x2xf32, #ge.fmt<NCHW>> {
  %0 = ge.trans_data %x {src_format = "ND", dst_format = "NC1HWC0"} : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>
  %1 = ge.trans_data %y {src_format = "ND", dst_format = "NC1HWC0"} : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>
  %2 = ge.relu %0 : (tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>
  %3 = ge.add %2, %1 : (tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>
  %4 = ge.mul %3, %1 : (tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>
  %5 = ge.sub %4, %0 : (tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>
  %6 = ge.add %5, %b : (tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>, tensor<1x3x1x1xf32>) -> tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>
  %7 = ge.trans_data %6 {src_format = "NC1HWC0", dst_format = "NCHW"} : (tensor<1x3x2x2xf32, #ge.fmt<NCHW, NC1HWC0>>) -> tensor<1x3x2x2xf32, #ge.fmt<NCHW>>
  func.return %7 : tensor<1x3x2x2xf32, #ge.fmt<NCHW>>
}
"""


def test_elementwise_ops_of_one_stored_type_run_on_the_stored_arrays(monkeypatch):
    """Relu, Add, Mul and Sub whose operands and result share a storage format compute on the stored
    arrays (no conversion); the Add with a plain bias converts. The numbers are the logical ones."""
    from ge.interpreter.kernels import checked

    converted = []
    original = checked.to_logical
    monkeypatch.setattr(checked, "to_logical", lambda v, t: converted.append(str(t)) or original(v, t))
    rng = np.random.default_rng(2)
    x, y, b = (rng.standard_normal(s, np.float32) for s in ((1, 3, 2, 2), (1, 3, 2, 2), (1, 3, 1, 1)))
    got = run(_module(ELEMENTWISE_IN_NC1HWC0), {"arg0": x, "arg1": y, "arg2": b})["result0"]
    np.testing.assert_array_equal(got, ((np.maximum(x, 0) + y) * y - x) + b)
    assert sum("NC1HWC0" in t for t in converted) == 1  # the last Add's stored operand, for its plain bias


def test_an_elementwise_op_on_stored_arrays_keeps_the_padding_zero():
    module = _module(ELEMENTWISE_IN_NC1HWC0)
    interpreter = folding_interpreter(module)
    ops = {op.name: op for op in module.walk()}
    stored = to_storage(np.ones((1, 3, 2, 2), np.float32), "NCHW", "NC1HWC0")
    for name, args in (("ge.relu", (stored,)), ("ge.mul", (stored, stored)), ("ge.sub", (stored, stored))):
        (out,) = interpreter.run_op(ops[name], args)
        assert out.shape == (1, 1, 2, 2, 8) and not out[..., 3:].any(), name
