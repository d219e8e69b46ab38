"""Gradients of batch norm, layer norm, softmax, LRN, clip and dropout against finite differences
(float64, random shapes and attributes), and the kernels of their backward ops
(ge.batch_norm_grad, ge.layer_norm_grad, ge.softmax_grad) against explicit Jacobians."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vjp_check import check_vjp
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Block, Region

from ge.ge_dialects import ge
from ge.ge_dialects.ge.grad import GradBuilder, NotDifferentiable
from ge.ge_dialects.ge.types import element_type_of, tensor
from ge.interpreter.ge import GeFunctions
from ge.interpreter.kernels import norm_grad as norm_grad_kernels

FAST = settings(max_examples=25, deadline=None)


def run_function(block: Block, results, args) -> list[np.ndarray]:
    """Runs `block` (ending in a return of `results`) as a function on `args`."""
    fn = func.FuncOp("main", ([a.type for a in block.args], [r.type for r in results]), Region(block))
    module = ModuleOp([fn])
    module.verify()
    interpreter = Interpreter(module)
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(GeFunctions())
    return [np.asarray(r) for r in interpreter.call_op(fn, tuple(args))]


def run_op(op_cls, operands: dict, props=None, num_results=None) -> list[np.ndarray]:
    """One op on argument arrays (None for an absent optional operand), through the interpreter."""
    block = Block()
    values = {
        n: None if a is None else block.insert_arg(tensor(element_type_of(a.dtype), a.shape), len(block.args))
        for n, a in operands.items()
    }
    op = op_cls.create(values, props, num_results=num_results, name="/op")
    block.add_ops([op, func.ReturnOp(*op.results)])
    return run_function(block, op.results, [a for a in operands.values() if a is not None])


# -- batch norm --------------------------------------------------------------------------------


@st.composite
def batch_norm_case(draw):
    shape = (draw(st.integers(2, 4)), draw(st.integers(1, 3)), *draw(st.lists(st.integers(1, 3), max_size=2)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    c = shape[1]
    operands = {
        "X": rng.standard_normal(shape) * 2 + 1,
        "scale": rng.standard_normal(c),
        "B": rng.standard_normal(c),
        "input_mean": rng.standard_normal(c),
        "input_var": rng.uniform(0.5, 2, c),
    }
    props = {"training_mode": draw(st.sampled_from([0, 1])), "epsilon": draw(st.sampled_from([1e-5, 0.25]))}
    return operands, props


@FAST
@given(case=batch_norm_case())
def test_batch_norm_vjp_in_both_modes(case):
    operands, props = case
    check_vjp(ge.BatchNormOp, operands, props, num_results=1, no_gradient=("input_mean", "input_var"))


def test_batch_norm_refuses_a_cotangent_on_its_running_statistics():
    rng = np.random.default_rng(0)
    operands = {"X": rng.standard_normal((3, 2, 2)), "scale": np.ones(2), "B": np.zeros(2)}
    operands |= {"input_mean": np.zeros(2), "input_var": np.ones(2)}
    with pytest.raises(NotDifferentiable, match="ge.batch_norm '/op': running_mean and running_var"):
        check_vjp(ge.BatchNormOp, operands, {"training_mode": 1}, num_results=3)


def test_dropping_the_batch_statistics_terms_is_caught(monkeypatch):
    """Mutation: the training-mode dx without the terms through the batch mean and variance."""
    monkeypatch.setattr(norm_grad_kernels, "_through_batch_statistics", lambda dy, *_: dy)
    rng = np.random.default_rng(1)
    operands = {"X": rng.standard_normal((4, 3, 2)), "scale": rng.standard_normal(3), "B": rng.standard_normal(3)}
    operands |= {"input_mean": np.zeros(3), "input_var": np.ones(3)}
    with pytest.raises(AssertionError, match="ge.batch_norm operand 'X'"):
        check_vjp(
            ge.BatchNormOp, operands, {"training_mode": 1}, num_results=1, no_gradient=("input_mean", "input_var")
        )
    check_vjp(ge.BatchNormOp, operands, {"training_mode": 0}, num_results=1, no_gradient=("input_mean", "input_var"))


# -- layer norm --------------------------------------------------------------------------------


@st.composite
def layer_norm_case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))

    def broadcastable():
        """A shape that broadcasts to `shape` unidirectionally: a suffix, some dims set to 1."""
        suffix = shape[draw(st.integers(0, len(shape))) :]
        return tuple(1 if draw(st.booleans()) else d for d in suffix)

    x = rng.standard_normal(shape) * 3
    x[..., 0] += 1  # rows of one element have no spread; the rest should not be near-constant
    operands = {"X": x, "Scale": rng.standard_normal(broadcastable()), "B": None}
    if draw(st.booleans()):
        operands["B"] = rng.standard_normal(broadcastable())
    props = {"axis": axis, "epsilon": draw(st.sampled_from([1e-5, 0.5])), "stash_type": 11}
    return operands, props


@FAST
@given(case=layer_norm_case())
def test_layer_norm_vjp(case):
    operands, props = case
    check_vjp(ge.LayerNormOp, operands, props, num_results=1)


def test_layer_norm_refuses_a_cotangent_on_its_statistics():
    rng = np.random.default_rng(0)
    with pytest.raises(NotDifferentiable, match="ge.layer_norm '/op': Mean and InvStdDev carry no gradient"):
        check_vjp(
            ge.LayerNormOp, {"X": rng.standard_normal((2, 3)), "Scale": np.ones(3)}, {"stash_type": 11}, num_results=3
        )


def test_a_bias_gradient_of_the_wrong_shape_is_caught(monkeypatch):
    """Mutation: B's gradient taken as Scale's although B broadcasts differently."""
    original = ge.LayerNormOp.vjp

    def scale_shaped_bias(self, g, cts):
        dx, dscale, _ = original(self, g, cts)
        return [dx, dscale, g.sum_to(cts[0], (3,))]

    monkeypatch.setattr(ge.LayerNormOp, "vjp", scale_shaped_bias)
    rng = np.random.default_rng(0)
    operands = {"X": rng.standard_normal((2, 3)), "Scale": rng.standard_normal(3), "B": rng.standard_normal((2, 1))}
    with pytest.raises(AssertionError, match="cotangent type"):
        check_vjp(ge.LayerNormOp, operands, {"stash_type": 11}, num_results=1)


# -- softmax and clip --------------------------------------------------------------------------


@FAST
@given(shape=st.lists(st.integers(1, 4), min_size=1, max_size=4), data=st.data())
def test_softmax_vjp(shape, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = np.random.default_rng(data.draw(st.integers(0, 2**16))).standard_normal(shape) * 2
    check_vjp(ge.SoftmaxOp, {"input": x}, {"axis": axis})


@FAST
@given(shape=st.lists(st.integers(1, 5), max_size=3), bounds=st.sampled_from(["both", "min", "max", "none"]))
def test_clip_vjp_masks_the_clipped_elements(shape, bounds):
    x = np.random.default_rng(len(shape)).standard_normal(shape) * 2
    x = np.where(np.abs(np.abs(x) - 0.5) < 0.05, x + 0.2, x)  # no element at a bound (a kink)
    operands = {"input": x, "min": None if bounds in ("max", "none") else np.array(-0.5)}
    operands["max"] = None if bounds in ("min", "none") else np.array(0.5)
    check_vjp(ge.ClipOp, operands, no_gradient=("min", "max"))


@pytest.mark.mutation
def test_an_unmasked_clip_gradient_is_caught(monkeypatch):
    monkeypatch.setattr(ge.ClipOp, "vjp", lambda self, g, cts: [cts[0], None, None])
    operands = {"input": np.linspace(-2, 2, 7), "min": np.array(-0.9), "max": np.array(0.9)}
    with pytest.raises(AssertionError, match="ge.clip operand 'input'"):
        check_vjp(ge.ClipOp, operands, no_gradient=("min", "max"))


# -- dropout -----------------------------------------------------------------------------------


def dropout_and_grad(operands: dict, props: dict) -> list[np.ndarray]:
    """(output, mask, data's cotangent, the cotangent given) of a dropout with both results."""
    block = Block()
    args = []
    values = {}
    for name, array in operands.items():
        if array is None:
            values[name] = None
            continue
        values[name] = block.insert_arg(tensor(element_type_of(array.dtype), array.shape), len(block.args))
        args.append(array)
    op = ge.DropoutOp.create(values, props, num_results=2, name="/drop")
    block.add_op(op)
    dy = block.insert_arg(op.output.type, len(block.args))
    ret = func.ReturnOp()
    block.add_op(ret)
    (dx, *others) = op.vjp(GradBuilder(block, ret), [dy, None])
    assert all(o is None for o in others), "ratio and training_mode get no gradient"
    ret.operands = [op.output, op.mask, dx, dy]
    cotangent = np.random.default_rng(5).standard_normal(operands["data"].shape).astype(operands["data"].dtype)
    return run_function(block, ret.operands, [*args, cotangent])


@pytest.mark.parametrize("ratio", [None, 0.25, 0.7])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_dropout_in_training_scales_the_kept_gradient(ratio, dtype):
    """The forward is random: the gradient is checked against the mask it returned."""
    x = np.random.default_rng(0).standard_normal((4, 50)).astype(dtype)
    operands = {"data": x, "ratio": None if ratio is None else np.array(ratio, dtype), "training_mode": np.array(True)}
    y, mask, dx, dy = dropout_and_grad(operands, {})
    keep = 1 - (0.5 if ratio is None else ratio)
    assert 0 < mask.mean() < 1
    np.testing.assert_allclose(y, x * mask / keep, rtol=1e-6)
    np.testing.assert_allclose(dx, dy * mask / keep, rtol=1e-6)


@pytest.mark.parametrize("training", [True, False])
def test_dropout_with_training_decided_at_run_time(training):
    x = np.random.default_rng(1).standard_normal((3, 40))
    operands = {"data": x, "ratio": np.array(0.4), "training_mode": np.array(training)}
    y, mask, dx, dy = dropout_and_grad(operands, {"seed": 3})
    np.testing.assert_allclose(y, x * mask / 0.6 if training else x, rtol=1e-6)
    np.testing.assert_allclose(dx, dy * mask / 0.6 if training else dy, rtol=1e-12)
    assert mask.all() != training


def test_seeded_dropout_against_finite_differences():
    """With a seed the forward's mask is the same on every run, so finite differences apply."""
    x = np.random.default_rng(2).standard_normal((3, 8))
    operands = {"data": x, "ratio": np.array(0.3), "training_mode": np.array(True)}
    check_vjp(ge.DropoutOp, operands, {"seed": 7}, num_results=2, no_gradient=("ratio",))
    check_vjp(ge.DropoutOp, {"data": x, "ratio": np.array(0.3)}, constants=("ratio",))  # identity: not training


def test_dropout_in_training_without_its_mask_says_to_request_it():
    operands = {"data": np.ones((2, 2)), "ratio": np.array(0.5), "training_mode": np.array(True)}
    with pytest.raises(NotDifferentiable, match="ge.dropout '/op': .* needs its mask; request the mask result"):
        check_vjp(ge.DropoutOp, operands, {"seed": 1}, num_results=1, constants=("ratio",))


@pytest.mark.mutation
def test_a_dropout_gradient_without_the_rescale_is_caught(monkeypatch):
    monkeypatch.setattr(ge.DropoutOp, "_keep_probability", lambda self, g, like: g.scalar(1.0, like))
    operands = {"data": np.ones((2, 30)), "ratio": np.array(0.5), "training_mode": np.array(True)}
    _, mask, dx, dy = dropout_and_grad(operands, {"seed": 1})
    assert not np.allclose(dx, dy * mask / 0.5)


# -- the backward ops' kernels -----------------------------------------------------------------


def normalization_vjp(x, scale, dy, eps, rows_axis_groups):
    """dx of y = x_hat * scale (x_hat normalized over each group of elements) by the explicit
    Jacobian of each group: d x_hat_i / d x_j = inv_std (delta_ij - 1/n - x_hat_i x_hat_j / n)."""
    dx = np.empty_like(x)
    for index in rows_axis_groups:
        row, g = x[index].reshape(-1), (dy * scale)[index].reshape(-1)
        n = row.size
        inv_std = 1 / np.sqrt(row.var() + eps)
        x_hat = (row - row.mean()) * inv_std
        jacobian = inv_std * (np.eye(n) - 1 / n - np.outer(x_hat, x_hat) / n)
        dx[index] = (jacobian.T @ g).reshape(x[index].shape)
    return dx


@pytest.mark.parametrize("training_mode", [0, 1])
def test_batch_norm_grad_kernel_against_the_jacobian(training_mode):
    rng = np.random.default_rng(3)
    x, dy = rng.standard_normal((3, 2, 4)), rng.standard_normal((3, 2, 4))
    scale, mean, var = rng.standard_normal(2), rng.standard_normal(2), rng.uniform(0.5, 2, 2)
    operands = {"dy": dy, "x": x, "scale": scale, "mean": mean, "var": var}
    eps = float(np.float32(0.1))  # the property is an f32
    dx, dscale, dbias = run_op(ge.BatchNormGradOp, operands, {"training_mode": training_mode, "epsilon": eps})
    channels = [(slice(None), c) for c in range(2)]
    if training_mode:
        want = normalization_vjp(x, scale.reshape(1, 2, 1), dy, eps, channels)
        x_hat = (x - x.mean(axis=(0, 2), keepdims=True)) / np.sqrt(x.var(axis=(0, 2), keepdims=True) + eps)
    else:
        want = dy * (scale / np.sqrt(var + eps)).reshape(1, 2, 1)
        x_hat = (x - mean.reshape(1, 2, 1)) / np.sqrt(var.reshape(1, 2, 1) + eps)
    np.testing.assert_allclose(dx, want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(dscale, np.einsum("ncs,ncs->c", dy, x_hat), rtol=1e-10)
    np.testing.assert_allclose(dbias, dy.sum(axis=(0, 2)), rtol=1e-10)


def test_layer_norm_grad_kernel_against_the_jacobian():
    rng = np.random.default_rng(4)
    x, dy, scale = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4)), rng.standard_normal((1, 4))
    eps = float(np.float32(0.01))  # the property is an f32
    dx, dscale, dbias = run_op(ge.LayerNormGradOp, {"dy": dy, "x": x, "scale": scale}, {"axis": 1, "epsilon": eps})
    want = normalization_vjp(x, scale, dy, eps, [(n,) for n in range(2)])
    np.testing.assert_allclose(dx, want, rtol=1e-10, atol=1e-12)
    x_hat = (x - x.mean(axis=(1, 2), keepdims=True)) / np.sqrt(x.var(axis=(1, 2), keepdims=True) + eps)
    np.testing.assert_allclose(dscale, np.einsum("nij,nij->j", dy, x_hat)[None], rtol=1e-10)
    np.testing.assert_allclose(dbias, dy.sum(axis=(0, 1))[None], rtol=1e-10)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_grad_kernel_against_the_jacobian(axis):
    rng = np.random.default_rng(5)
    logits, dy = rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 4, 5))
    y = np.exp(logits) / np.exp(logits).sum(axis=axis, keepdims=True)
    (dx,) = run_op(ge.SoftmaxGradOp, {"y": y, "dy": dy}, {"axis": axis})
    moved_y, moved_dy = np.moveaxis(y, axis, -1), np.moveaxis(dy, axis, -1)
    jacobian = np.einsum("...i,ij->...ij", moved_y, np.eye(y.shape[axis])) - np.einsum(
        "...i,...j->...ij", moved_y, moved_y
    )
    np.testing.assert_allclose(dx, np.moveaxis(np.einsum("...ij,...i->...j", jacobian, moved_dy), -1, axis), rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32])
def test_backward_kernels_keep_narrow_types_and_compute_wide(dtype):
    """Each result has its operands' type and is the f64 result rounded (f32 inside for narrow floats)."""
    rng = np.random.default_rng(6)
    x, dy = rng.standard_normal((4, 3, 5)), rng.standard_normal((4, 3, 5))
    scale, var = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    cases = [
        (ge.BatchNormGradOp, {"dy": dy, "x": x, "scale": scale, "mean": scale, "var": var}, {"training_mode": 1}),
        (ge.LayerNormGradOp, {"dy": dy, "x": x, "scale": rng.standard_normal(5)}, {}),
        (ge.SoftmaxGradOp, {"y": np.abs(x) / np.abs(x).sum(-1, keepdims=True), "dy": dy}, {}),
        (ge.LrnGradOp, {"dy": dy, "X": x}, {"size": 2, "alpha": 0.5}),
    ]
    tolerance = {np.float32: 1e-5, np.float16: 4e-3}.get(dtype, 3e-2)
    for op_cls, operands, props in cases:
        narrow_operands = {n: a.astype(dtype) for n, a in operands.items()}
        narrow = run_op(op_cls, narrow_operands, props)
        # the exact result on the rounded inputs: what one rounding of the result may differ from
        exact = run_op(op_cls, {n: a.astype(np.float64) for n, a in narrow_operands.items()}, props)
        for got, want in zip(narrow, exact):
            assert got.dtype == np.dtype(dtype), op_cls.name
            np.testing.assert_allclose(
                got.astype(np.float64), want, rtol=tolerance, atol=tolerance * np.abs(want).max()
            )


# -- LRN ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_lrn_vjp(size):
    """Odd and even windows (an even one reaches one channel further after c than before it)."""
    x = np.random.default_rng(size).standard_normal((2, 6, 3))
    check_vjp(ge.LrnOp, {"X": x}, {"size": size, "alpha": 0.3, "beta": 0.75, "bias": 1.5})


@pytest.mark.mutation
def test_an_lrn_gradient_with_the_forward_window_is_caught(monkeypatch):
    """Mutation: the backward sums over the forward window instead of its transpose (the same for
    odd sizes, one channel off for even ones); the finite-difference check fails."""
    from ge.interpreter.kernels import nn as nn_kernels

    window = nn_kernels.channel_window_sum
    monkeypatch.setattr(norm_grad_kernels, "channel_window_sum", lambda a, before, after: window(a, after, before))
    with pytest.raises(AssertionError):
        test_lrn_vjp(2)
