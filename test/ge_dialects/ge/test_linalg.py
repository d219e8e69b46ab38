"""Einsum and Det (ge_dialects/ge/linalg.py): the equation parser and shape function, the
kernels against onnxruntime, Einsum's gradient against finite differences, and its cost facts."""

from __future__ import annotations

import numpy as np
import pytest
from onnx_oracle import compare_with_onnxruntime, node_model
from vjp_check import check_vjp
from xdsl.dialects.builtin import f32
from xdsl.ir import Block
from xdsl.utils.exceptions import VerifyException

from ge.ge_dialects import ge
from ge.ge_dialects.ge.facts import Engine
from ge.ge_dialects.ge.grad import NotDifferentiable
from ge.ge_dialects.ge.linalg import EinsumError, Equation
from ge.ge_dialects.ge.types import shape_of, tensor

RNG = np.random.default_rng(3)


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
