"""Einsum, Det and DFT (ge_dialects/ge/linalg.py): the equation parser and shape function, the
kernels against onnxruntime (DFT's against numpy's FFT too), Einsum's gradient against finite
differences, and its cost facts."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_oracle import compare_with_onnxruntime, node_model
from vjp_check import check_vjp
from xdsl.dialects.builtin import f32
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import ge
from ge.ge_dialects.ge.facts import Engine
from ge.ge_dialects.ge.grad import NotDifferentiable
from ge.ge_dialects.ge.linalg import EinsumError, Equation
from ge.ge_dialects.ge.types import shape_of, tensor
from ge.interpreter.runner import run

RNG = np.random.default_rng(3)
FFT, IFFT, IRFFT = np.fft.fft, np.fft.ifft, np.fft.irfft
"""numpy's transforms as the oracle has them (a mutation below patches the kernel's)."""


@pytest.mark.parametrize(
    "equation, ranks, terms, output",
    [
        ("ij,jk->ik", (2, 2), ("ij", "jk"), "ik"),
        ("ij,jk", (2, 2), ("ij", "jk"), "ik"),  # implicit: the letters seen once, sorted
        ("ba", (2,), ("ba",), "ab"),
        ("...ij,...jk->...ik", (4, 3), ("ABij", "Bjk"), "ABik"),
        ("...ii", (3,), ("Aii",), "A"),  # implicit with an ellipsis: its dims first
        ("i , i", (1, 1), ("i", "i"), ""),
    ],
)
def test_equations_parse_with_their_ellipses_spelled_out(equation, ranks, terms, output):
    assert Equation.parse(equation, ranks) == Equation(terms, output)


@pytest.mark.parametrize(
    "equation, ranks, message",
    [
        ("ij,jk->ik", (2,), "has 2 operand terms, 1 operands given"),
        ("ijk", (2,), "does not fit an operand of rank 2"),
        ("ij->iz", (2,), "repeats or invents an index"),
        ("i1", (2,), "may hold only letters"),
        ("...i...", (3,), "does not fit"),
    ],
)
def test_bad_equations_say_why(equation, ranks, message):
    with pytest.raises(EinsumError, match=message):
        Equation.parse(equation, ranks)


def _einsum(equation: str, *shapes):
    block = Block(arg_types=[tensor(f32, s) for s in shapes])
    return ge.EinsumOp.create({"Inputs": list(block.args)}, {"equation": equation})


def test_shapes_broadcast_size_one_dims_and_refuse_mismatches():
    assert shape_of(_einsum("...ij,...jk->...ik", (5, 1, 2, 3), (4, 3, 6)).Output.type) == (5, 4, 2, 6)
    with pytest.raises(VerifyException, match="index 'j' has sizes 3 and 4"):
        _einsum("ij,jk->ik", (2, 3), (4, 5))


@pytest.mark.parametrize(
    "attrs, parts",
    [
        ({"axis": 1}, 1),  # a real signal
        ({"axis": 2, "inverse": 1}, 2),
        ({"axis": 1, "onesided": 1}, 1),
        ({"axis": 1, "inverse": 1, "onesided": 1}, 2),  # irfft: 2 * (6 - 1) real points
    ],
)
def test_dft_at_opset_17_equals_onnxruntime(attrs, parts):
    """The axis attribute of opsets 17 and 19, adapted to ge's operand."""
    x = RNG.standard_normal((2, 6, 5, parts)).astype(np.float32)
    model = node_model("DFT", {"x": x}, 1, **attrs)
    model.opset_import[0].version = 17
    compare_with_onnxruntime(model, {"x": x}, 1e-4, 1e-4)


@pytest.mark.parametrize(
    "axis, length, inverse, onesided", [(-2, None, 0, 0), (1, 8, 0, 1), (2, 3, 1, 0), (1, 6, 1, 1)]
)
def test_dft_equals_numpy(axis, length, inverse, onesided):
    """Opset 20: axis and dft_length as operands; a length beyond the axis zero-pads, one short cuts."""
    x = RNG.standard_normal((2, 5, 4, 2)).astype(np.float32)
    inputs = {"x": x, "dft_length": None if length is None else np.int64(length), "axis": np.int64(axis)}
    constants = [n for n in ("dft_length", "axis") if inputs[n] is not None]
    model = node_model("DFT", inputs, 1, constants=constants, inverse=inverse, onesided=onesided)
    model.opset_import[0].version = 20
    module, weights = import_model(model)
    (got,) = run(module, {"x": x}, weights).values()
    signal, a = x[..., 0] + 1j * x[..., 1], axis % 4
    if inverse and onesided:
        want = IRFFT(signal, n=length, axis=a)[..., None]
    else:
        want = (IFFT if inverse else FFT)(signal, n=length, axis=a)
        if onesided:
            want = np.take(want, np.arange((length or x.shape[a]) // 2 + 1), axis=a)
        want = np.stack([want.real, want.imag], -1)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.mutation
def test_mutation_an_inverse_without_its_scale_is_caught(monkeypatch):
    """The inverse as the forward transform of the conjugate, unscaled: off by the length."""
    from ge.interpreter.kernels import linalg as linalg_kernels

    monkeypatch.setattr(
        linalg_kernels.np.fft, "ifft", lambda s, n=None, axis=-1: np.conj(np.fft.fft(np.conj(s), n, axis))
    )
    with pytest.raises(AssertionError):
        test_dft_equals_numpy(2, 3, 1, 0)


def test_dft_needs_a_real_or_complex_last_dim():
    x = RNG.standard_normal((2, 6, 3)).astype(np.float32)
    with pytest.raises(OnnxImportError, match=r"the input must be \[\.\.\., 1\] \(real\) or \[\.\.\., 2\] \(complex\)"):
        import_model(node_model("DFT", {"x": x}, 1))


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(3, 4), (4, 5)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("...ij,...jk", [(2, 3, 4), (2, 4, 2)]),
        ("ii->i", [(4, 4)]),
        ("ij->", [(3, 4)]),
        ("i,j->ij", [(3,), (4,)]),
        ("bhqd,bhkd->bhqk", [(1, 2, 3, 8), (1, 2, 5, 8)]),
    ],
)
def test_einsum_equals_onnxruntime(equation, shapes):
    inputs = {f"x{i}": RNG.standard_normal(s).astype(np.float32) for i, s in enumerate(shapes)}
    model = node_model("Einsum", inputs, 1, equation=equation)
    compare_with_onnxruntime(model, inputs, 1e-5, 1e-5)


def test_det_equals_onnxruntime():
    x = RNG.standard_normal((2, 3, 4, 4)).astype(np.float32)
    compare_with_onnxruntime(node_model("Det", {"x": x}, 1), {"x": x}, 1e-4, 1e-4)


@pytest.mark.parametrize(
    "equation, shapes",
    [
        ("ij,jk->ik", [(3, 4), (4, 5)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("ij->j", [(3, 4)]),  # i only in the operand: its cotangent is expanded over it
        ("ij,j->i", [(3, 4), (4,)]),
        ("...i,...i->...", [(2, 3), (2, 3)]),
        ("abc,cd,de->abe", [(2, 2, 3), (3, 4), (4, 2)]),
    ],
)
def test_einsum_vjp(equation, shapes):
    inputs = [RNG.standard_normal(s) for s in shapes]
    check_vjp(ge.EinsumOp, {"Inputs": inputs}, {"equation": equation})


def test_einsum_of_a_diagonal_has_no_gradient():
    with pytest.raises(NotDifferentiable, match="repeated index"):
        check_vjp(ge.EinsumOp, {"Inputs": [RNG.standard_normal((3, 3))]}, {"equation": "ii->i"})


def test_a_contraction_runs_on_the_cube_and_counts_its_macs():
    matmul = _einsum("bij,bjk->bik", (2, 3, 4), (2, 4, 5))
    assert matmul.engine() is Engine.CUBE and matmul.macs() == 2 * 3 * 4 * 5 and matmul.vector_elements() == 0
    transpose = _einsum("ij->ji", (3, 4))
    assert transpose.engine() is Engine.VECTOR and transpose.macs() == 0 and transpose.vector_elements() == 12


# -- mutations -----------------------------------------------------------------------------------


def test_mutation_a_cotangent_onto_the_wrong_term_is_caught(monkeypatch):
    """Einsum's VJP with its operands' cotangents swapped (both [n, n]): finite differences notice."""
    original = ge.EinsumOp.vjp
    monkeypatch.setattr(ge.EinsumOp, "vjp", lambda self, g, cts: list(reversed(original(self, g, cts))))
    with pytest.raises(AssertionError, match="operand 'Inputs'"):
        check_vjp(
            ge.EinsumOp,
            {"Inputs": [RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))]},
            {"equation": "ij,jk->ik"},
        )
