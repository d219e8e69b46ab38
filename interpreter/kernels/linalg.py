"""Kernels of Einsum, Det and DFT (ge_dialects/ge/linalg.py). f16 and bf16 operands are computed
in f32 and rounded once, as the Cube accumulates in f32."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels.checked import kernel_impl


def _wide(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if (x.dtype.kind == "f" and x.dtype.itemsize < 4) or x.dtype.kind == "V" else x


def einsum(op, ins):
    operands = ins["Inputs"]
    dtype = operands[0].dtype
    return np.asarray(np.einsum(op.parsed().text(), *(_wide(x) for x in operands)), dtype=dtype, order="C")


def det(op, ins):
    x = ins["X"]
    return np.asarray(np.linalg.det(_wide(x)), dtype=x.dtype)


def dft(op, ins):
    """numpy's FFT on the complex signal the last dim holds, back to (real, imaginary) pairs, or to
    one real part for the inverse of one-sided frequencies."""
    x = ins["input"]
    wide = _wide(x)
    signal = wide[..., 0] if x.shape[-1] == 1 else wide[..., 0] + 1j * wide[..., 1]
    axis = int(ins["axis"].reshape(())) if ins.get("axis") is not None else -2
    axis %= x.ndim
    inverse, onesided = bool(op.p("inverse")), bool(op.p("onesided"))
    given = ins.get("dft_length") is not None
    n = ge.dft_points(x.shape[axis], int(ins["dft_length"].reshape(())) if given else None, inverse, onesided, given)
    assert n is not None  # the axis's length is known at run time
    if inverse and onesided:
        return np.fft.irfft(signal, n=n, axis=axis)[..., None].astype(x.dtype)
    transformed = np.fft.ifft(signal, n=n, axis=axis) if inverse else np.fft.fft(signal, n=n, axis=axis)
    if onesided and not inverse:
        transformed = np.take(transformed, np.arange(n // 2 + 1), axis=axis)
    return np.stack([transformed.real, transformed.imag], axis=-1).astype(x.dtype)


@register_impls
class LinalgFunctions(InterpreterFunctions):
    run_einsum = impl(ge.EinsumOp)(kernel_impl(einsum))
    run_det = impl(ge.DetOp)(kernel_impl(det))
    run_dft = impl(ge.DftOp)(kernel_impl(dft))
