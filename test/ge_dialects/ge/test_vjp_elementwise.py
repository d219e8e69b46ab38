"""The elementwise ops' gradients against finite differences (float64, random shapes that broadcast)."""

from __future__ import annotations

import numpy as np
import pytest
import vjp_check
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from vjp_check import check_vjp
from xdsl.dialects import func
from xdsl.dialects.builtin import f16, f32, i1, i32, i64
from xdsl.interpreter import impl, register_impls
from xdsl.ir import Block

from ge.ge_dialects import ge
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable
from ge.ge_dialects.ge.types import tensor
from ge.interpreter.ge import GeFunctions
from ge.interpreter.kernels.checked import kernel_impl


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast: a random result shape, each operand dropping leading dims or
    setting some dims to 1."""
    out = draw(st.lists(st.integers(1, 4), min_size=0, max_size=4))

    def operand():
        lead = draw(st.integers(0, len(out)))
        return tuple(1 if draw(st.booleans()) else d for d in out[lead:])

    return operand(), operand()


@pytest.mark.parametrize("op_cls", [ge.AddOp, ge.SubOp, ge.MulOp])
@settings(max_examples=15, deadline=None)
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_binary_vjp_with_broadcasting(op_cls, shapes, seed):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(s) for s in shapes)
    check_vjp(op_cls, {"a": np.asarray(a), "b": np.asarray(b)}, seed=seed)


def test_a_wrong_gradient_is_caught(monkeypatch):
    """Mutation: swap Mul's operand cotangents; the check names the operand that is wrong."""
    original = ge.MulOp.vjp
    monkeypatch.setattr(ge.MulOp, "vjp", lambda self, g, cts: list(reversed(original(self, g, cts))))
    rng = np.random.default_rng(0)
    with pytest.raises(AssertionError, match="ge.mul operand 'a'"):
        check_vjp(ge.MulOp, {"a": rng.standard_normal((3, 4)), "b": rng.standard_normal((3, 4)) + 2})


def test_a_missing_broadcast_sum_is_caught(monkeypatch):
    """Mutation: Add forgets to sum its cotangent back to a broadcast operand's shape."""
    monkeypatch.setattr(ge.AddOp, "vjp", lambda self, g, cts: [cts[0], cts[0]])
    rng = np.random.default_rng(0)
    with pytest.raises(AssertionError, match="cotangent type"):
        check_vjp(ge.AddOp, {"a": rng.standard_normal((3, 4)), "b": rng.standard_normal((4,))})


def test_an_op_without_a_gradient_says_so():
    """The fused backward ops have no gradient of their own (no second derivatives yet)."""
    with pytest.raises(NotDifferentiable, match="ge.relu_grad '/op' has no gradient"):
        check_vjp(ge.ReluGradOp, {"dy": np.ones((2, 2)), "y": np.ones((2, 2))})


# -- unary ops ------------------------------------------------------------------------------------
def away_from(x: np.ndarray, points: tuple[float, ...], margin: float) -> np.ndarray:
    """`x` with every element closer than `margin` to one of `points` (kinks) moved 2*margin away."""
    for p in points:
        near = np.abs(x - p) < margin
        x = np.where(near, x + np.where(x >= p, 2 * margin, -2 * margin), x)
    return x


def positive(x: np.ndarray) -> np.ndarray:
    """Inside the domain of sqrt and log, away from 0 where their derivatives blow up."""
    return np.abs(x) + 0.5


UNARY_INPUTS = {
    ge.ReluOp: lambda x: away_from(x, (0.0,), 0.05),
    ge.SqrtOp: positive,
    ge.LogOp: positive,
    ge.ExpOp: lambda x: x,
    ge.ErfOp: lambda x: x,
    ge.TanhOp: lambda x: x,
    ge.SigmoidOp: lambda x: 2 * x,
    ge.IdentityOp: lambda x: x,
    ge.HardSwishOp: lambda x: away_from(3 * x, (-3.0, 3.0), 0.05),  # both sides of the band, not its edges
    ge.AbsOp: lambda x: away_from(x, (0.0,), 0.05),
    ge.NegOp: lambda x: x,
    ge.ReciprocalOp: lambda x: away_from(x, (0.0,), 0.4),
    ge.HardSigmoidOp: lambda x: away_from(4 * x, (-2.5, 2.5), 0.05),  # alpha x + beta leaves [0, 1] at +-2.5
    ge.LeakyReluOp: lambda x: away_from(x, (0.0,), 0.05),
    ge.ThresholdedReluOp: lambda x: away_from(2 * x, (1.0,), 0.05),  # alpha 1: the step
    ge.SinOp: lambda x: 2 * x,
    ge.CosOp: lambda x: 2 * x,
    ge.TanOp: lambda x: np.clip(x, -1.2, 1.2),  # inside (-pi/2, pi/2)
    ge.AsinOp: lambda x: 0.9 * np.tanh(x),  # inside (-1, 1), away from the ends
    ge.AcosOp: lambda x: 0.9 * np.tanh(x),
    ge.AtanOp: lambda x: 2 * x,
    ge.SinhOp: lambda x: x,
    ge.CoshOp: lambda x: x,
    ge.AsinhOp: lambda x: 2 * x,
    ge.AcoshOp: lambda x: positive(x) + 1,  # above 1
    ge.AtanhOp: lambda x: 0.9 * np.tanh(x),
}

shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)


@pytest.mark.parametrize("op_cls", list(UNARY_INPUTS), ids=lambda c: c.name)
@settings(max_examples=12, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16))
def test_unary_vjp(op_cls, shape, seed):
    x = UNARY_INPUTS[op_cls](np.random.default_rng(seed).standard_normal(shape))
    check_vjp(op_cls, {"x": np.asarray(x, dtype=np.float64)}, seed=seed)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@settings(max_examples=12, deadline=None)
@given(shape=shapes, seed=st.integers(0, 2**16))
def test_gelu_vjp_both_forms(approximate, shape, seed):
    x = 2 * np.random.default_rng(seed).standard_normal(shape)
    check_vjp(ge.GeluOp, {"x": np.asarray(x)}, {"approximate": approximate}, seed=seed)


# -- binary ops -----------------------------------------------------------------------------------
@settings(max_examples=15, deadline=None)
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_div_vjp_with_broadcasting(shapes, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shapes[0])
    b = away_from(rng.standard_normal(shapes[1]), (0.0,), 0.4)
    check_vjp(ge.DivOp, {"a": np.asarray(a), "b": np.asarray(b)}, seed=seed)


@settings(max_examples=15, deadline=None)
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_pow_vjp_float_exponent(shapes, seed):
    """Both operands get a gradient; the base stays positive (log a in the exponent's gradient)."""
    rng = np.random.default_rng(seed)
    a = positive(rng.standard_normal(shapes[0]))
    b = 1.5 * rng.standard_normal(shapes[1])
    check_vjp(ge.PowOp, {"a": np.asarray(a), "b": np.asarray(b)}, seed=seed)


@settings(max_examples=15, deadline=None)
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_pow_vjp_integer_exponent(shapes, seed):
    """An integer exponent (an inline constant) gets no gradient; a negative base is fine then."""
    rng = np.random.default_rng(seed)
    a = away_from(rng.standard_normal(shapes[0]), (0.0,), 0.3)
    b = rng.integers(-2, 4, size=shapes[1])
    check_vjp(ge.PowOp, {"a": np.asarray(a), "b": np.asarray(b, dtype=np.int64)}, seed=seed)


@pytest.mark.parametrize("op_cls", [ge.MaximumOp, ge.MinimumOp])
@settings(max_examples=15, deadline=None)
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_max_min_vjp_send_the_gradient_to_the_selected_operand(op_cls, shapes, seed):
    """Away from ties (where the choice of operand is a convention: `a`)."""
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    assume(np.abs(np.subtract(a, b)).min(initial=1.0) > 0.05)
    check_vjp(op_cls, {"a": np.asarray(a), "b": np.asarray(b)}, seed=seed)


@pytest.mark.parametrize("fmod", [0, 1])
@settings(max_examples=15, deadline=None)
@given(shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_mod_vjp_between_its_jumps(fmod, shapes, seed):
    """da = dz, db = -dz q (q the quotient, constant between the jumps where a / b is an integer)."""
    rng = np.random.default_rng(seed)
    b = away_from(rng.standard_normal(shapes[1]), (0.0,), 0.5)
    a = 3 * rng.standard_normal(shapes[0])
    quotient = np.broadcast_to(a, np.broadcast_shapes(a.shape, b.shape)) / b
    assume(np.all(np.abs(quotient - np.round(quotient)) > 0.05))
    check_vjp(ge.ModOp, {"a": np.asarray(a), "b": np.asarray(b)}, {"fmod": fmod}, seed=seed)


@pytest.mark.parametrize("op_cls", [ge.GreaterOp, ge.LessOp, ge.GreaterEqualOp, ge.LessEqualOp], ids=lambda c: c.name)
def test_comparisons_pass_no_gradient(op_cls):
    t = tensor(f32, (4,))
    assert list(vjp_of(op_cls, {"a": t, "b": t}, cotangent=False)) == [None, None]
    assert {"a", "b"} == op_cls.NOT_DIFFERENTIABLE


@pytest.mark.parametrize(
    "op_cls", [ge.SignOp, ge.FloorOp, ge.CeilOp, ge.RoundOp, ge.IsNaNOp, ge.IsInfOp], ids=lambda c: c.name
)
def test_piecewise_constant_ops_pass_no_gradient(op_cls):
    assert list(vjp_of(op_cls, {"x": tensor(f32, (4,))})) == [None]


@pytest.mark.parametrize("op_cls", [ge.BitwiseAndOp, ge.BitwiseOrOp, ge.BitwiseXorOp], ids=lambda c: c.name)
def test_bitwise_ops_pass_no_gradient(op_cls):
    t = tensor(i32, (4,))
    assert list(vjp_of(op_cls, {"a": t, "b": t}, cotangent=False)) == [None, None]


def vjp_of(op_cls, operand_types: dict, props=None, cotangent: bool = True):
    """The VJP's cotangents of the op built on block arguments of these types."""
    block = Block(arg_types=list(operand_types.values()))
    op = op_cls.create(dict(zip(operand_types, block.args)), props, name="/op")
    block.add_op(op)
    dy = block.insert_arg(op.results[0].type, len(block.args)) if cotangent else None
    ret = func.ReturnOp()
    block.add_op(ret)
    return list(op.vjp(GradBuilder(block, ret), [dy]))


def test_pow_vjp_types_with_an_exponent_of_another_float_type():
    """An f16 exponent of an f32 base: the base's gradient is f32, the exponent's f16 (cast back)."""
    a, b = tensor(f32, (2, 3)), tensor(f16, (3,))
    da, db = vjp_of(ge.PowOp, {"a": a, "b": b})
    assert da.type == a and db.type == b


def test_pow_vjp_leaves_an_integer_exponent_without_gradient():
    a, b = tensor(f32, (2, 3)), tensor(i64, (3,))
    da, db = vjp_of(ge.PowOp, {"a": a, "b": b})
    assert da.type == a and db is None


def test_equal_passes_no_gradient():
    t = tensor(f32, (4,))
    grads = vjp_of(ge.EqualOp, {"a": t, "b": t}, cotangent=False)
    assert list(grads) == [None, None]
    assert {"a", "b"} == ge.EqualOp.NOT_DIFFERENTIABLE


@pytest.mark.parametrize(
    ("op_cls", "names", "dtype"),
    [(ge.ReluOp, ("x",), i32), (ge.DivOp, ("a", "b"), i64), (ge.IdentityOp, ("x",), i1)],
)
def test_integer_instances_have_no_gradient(op_cls, names, dtype):
    with pytest.raises(
        NotDifferentiable, match=f"{op_cls.name} '/op' computes on .*gradients are for float values only"
    ):
        vjp_of(op_cls, {name: tensor(dtype, (3,)) for name in names})


def test_a_result_the_loss_ignores_sends_nothing_back():
    t = tensor(f32, (4,))
    assert list(vjp_of(ge.TanhOp, {"x": t}, cotangent=False)) == [None]
    assert list(vjp_of(ge.DivOp, {"a": t, "b": t}, cotangent=False)) == [None, None]


# -- mutations: a wrong gradient of each kind is caught ---------------------------------------------
X = np.random.default_rng(1).standard_normal((3, 4))


def test_a_dropped_factor_is_caught(monkeypatch):
    """Mutation: sigmoid's VJP forgets the (1 - y) factor."""
    monkeypatch.setattr(ge.SigmoidOp, "grad_x", lambda self, g, dy: g.mul(dy, self.y))
    with pytest.raises(AssertionError, match="ge.sigmoid operand 'x'"):
        check_vjp(ge.SigmoidOp, {"x": X})


def _inverted_relu_mask(op, ins):
    return np.where(ins["y"] > 0, ins["dy"].dtype.type(0), ins["dy"])


@register_impls
class WithInvertedReluMask(GeFunctions):
    """The ge functions with a relu_grad kernel that passes the gradient where the ReLU was off."""

    run_relu_grad = impl(ge.ReluGradOp)(kernel_impl(_inverted_relu_mask))


def test_an_inverted_relu_mask_is_caught(monkeypatch):
    """Mutation: relu_grad's kernel inverts the mask; the forward's finite differences disagree."""
    monkeypatch.setattr(vjp_check, "GeFunctions", WithInvertedReluMask)  # what check_vjp interprets with
    with pytest.raises(AssertionError, match="ge.relu operand 'x'"):
        check_vjp(ge.ReluOp, {"x": away_from(X, (0.0,), 0.05)})


def test_gelu_grad_ignoring_the_tanh_form_is_caught(monkeypatch):
    """Mutation: gelu's VJP always asks for the erf form's derivative."""
    monkeypatch.setattr(ge.GeluOp, "grad_x", lambda self, g, dy: g.value(ge.GeluGradOp, {"dy": dy, "x": self.x}))
    check_vjp(ge.GeluOp, {"x": X})  # right for the default form
    with pytest.raises(AssertionError, match="ge.gelu operand 'x'"):
        check_vjp(ge.GeluOp, {"x": X}, {"approximate": "tanh"})


def test_a_wrong_sign_in_the_divisor_gradient_is_caught(monkeypatch):
    """Mutation: div's VJP drops the minus of -dz z / b."""
    original = ge.DivOp.grad_ab

    def flipped(self, g, dz):
        da, db = original(self, g, dz)
        return da, g.neg(db)

    monkeypatch.setattr(ge.DivOp, "grad_ab", flipped)
    with pytest.raises(AssertionError, match="ge.div operand 'b'"):
        check_vjp(ge.DivOp, {"a": X, "b": X[:1] + 3})


def test_a_gradient_sent_to_the_unselected_operand_is_caught(monkeypatch):
    """Mutation: Maximum's gradient goes to `a` where `a` is the smaller one."""
    from ge.ge_dialects.ge import elementwise

    monkeypatch.setattr(
        ge.MaximumOp, "grad_ab", lambda self, g, dz: elementwise._selected_gradients(g, self, dz, ge.LessEqualOp)
    )
    b = np.random.default_rng(2).standard_normal((3, 4))
    with pytest.raises(AssertionError, match="ge.maximum operand 'a'"):
        check_vjp(ge.MaximumOp, {"a": X, "b": b + np.where(np.abs(X - b) < 0.05, 0.2, 0.0)})
