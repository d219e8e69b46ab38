"""Kernels of Einsum and Det (ge_dialects/ge/linalg.py). f16 and bf16 operands are computed in
f32 and rounded once, as the Cube accumulates in f32."""

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


@register_impls
class LinalgFunctions(InterpreterFunctions):
    run_einsum = impl(ge.EinsumOp)(kernel_impl(einsum))
    run_det = impl(ge.DetOp)(kernel_impl(det))
