"""loss-scale on a small MLP training step under mixed precision (f32 master weights, f16 backward).

- The gradients the updates see, against the f32 step's: without loss scaling the small ones
  round away in f16; static (1024) and dynamic (2^15) scaling bring them back to f16's precision.
- Dynamic scaling from 2^24 overflows: those steps leave every parameter, optimizer slot and the
  step count bit for bit unchanged while the scale halves; then the steps run. The stream level
  gives the same losses and state.
- The kernels against the update rule; adam's step count under force_fp16 passes 2048.
Mutations (no unscale, an overflow check that always passes, ge.keep_dtype ignored) are caught.
"""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from training_models import _model
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, StringAttr
from xdsl.interpreter import impl, register_impls
from xdsl.utils.exceptions import DiagnosticException

from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.weights import attach_weights, weights_of
from ge.interpreter import runner
from ge.interpreter.arena_executor import run_in_arena
from ge.interpreter.kernels import optimizer as kernels
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.runner import main_function, run
from ge.passes import loss_scale, mixed_precision
from ge.passes.loss_scale import LossScalePass
from ge.passes.pipeline import parse_passes
from ge.tools.common import make_context, parse_module
from ge.tools.training_state import state_outputs

# Overflowing steps are the point of several tests: numpy's overflow warnings are expected.
pytestmark = pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid value:RuntimeWarning")

LOSS_WEIGHT = 3e-5
"""The MLP's loss is scaled down by this (an auxiliary-loss weight): its gradients are then mostly
below f16's smallest normal number (6.1e-5), where f16 keeps a few bits or none."""
MODES = ("allow_mix_precision", "force_fp16")
SCALINGS = {"unscaled": "", "static": ",loss-scale{kind=static}", "dynamic": ",loss-scale{kind=dynamic}"}


def _mlp(loss_weight: float):
    """x (64x16) -> Gemm -> Tanh -> Gemm -> y; loss = mean((y - t)^2) * loss_weight, in f32."""
    rng = np.random.default_rng(0)
    w = {
        "fc1.weight": rng.standard_normal((16, 32)) / 4,
        "fc1.bias": rng.standard_normal(32) * 0.1,
        "fc2.weight": rng.standard_normal((32, 8)) / 6,
        "fc2.bias": rng.standard_normal(8) * 0.1,
        "loss_weight": np.array(loss_weight),
    }
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"]),
        helper.make_node("Tanh", ["h"], ["a"]),
        helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["y"]),
        helper.make_node("Sub", ["y", "t"], ["d"]),
        helper.make_node("Mul", ["d", "d"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["m"], keepdims=0),
        helper.make_node("Mul", ["m", "loss_weight"], ["loss"]),
    ]
    inputs = {"x": rng.standard_normal((64, 16)), "t": rng.standard_normal((64, 8))}
    return _model(nodes, inputs, {"loss": []}, w, np.float32)


def _step(pipeline: str, loss_weight: float = LOSS_WEIGHT):
    model, inputs = _mlp(loss_weight)
    module, weights = import_model(model, training=True)
    attach_weights(module, weights)
    for p in parse_passes(pipeline):
        p.apply(Context(), module)
    return module, inputs


def _expose_gradients(module) -> None:
    """Adds the gradient each update op reads (after the unscale) as an output `<key>_grad`."""
    fn = main_function(module)
    ret = fn.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    values, attrs = list(ret.operands), list(fn.res_attrs.data)
    for op in fn.body.block.ops:
        if isinstance(op, loss_scale.UPDATE_OPS):
            values.append(op.grad)
            attrs.append(DictionaryAttr({"ge.name": StringAttr(f"{op.var.owner.state_key}_grad")}))
    fn.body.block.erase_op(ret)
    fn.body.block.add_op(func.ReturnOp(*values))
    fn.function_type = FunctionType.from_lists(list(fn.function_type.inputs.data), [v.type for v in values])
    fn.res_attrs = ArrayAttr(attrs)


def _gradients(pipeline: str) -> dict[str, np.ndarray]:
    module, inputs = _step(pipeline)
    _expose_gradients(module)
    out = run(module, inputs, weights=dict(weights_of(module)))
    return {k: v for k, v in out.items() if k.endswith("_grad")}


def _worst_error(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> float:
    assert got.keys() == want.keys()
    return max(float(np.linalg.norm(got[k] - want[k]) / np.linalg.norm(want[k])) for k in want)


BASE = "autodiff,apply-optimizer{kind=sgd lr=0.1}"


def _errors(mode: str) -> dict[str, float]:
    want = _gradients(BASE)
    return {
        name: _worst_error(_gradients(f"{BASE}{spec},ge-optimize{{level=1 precision_mode={mode}}}"), want)
        for name, spec in SCALINGS.items()
    }


def _check_errors(errors: dict[str, float]) -> None:
    assert errors["unscaled"] > 0.2, errors  # f16 loses the small gradients
    assert errors["static"] < 5e-3, errors
    assert errors["dynamic"] < 5e-3, errors


@pytest.mark.parametrize("mode", MODES)
def test_loss_scaling_recovers_the_gradients_f16_loses(mode):
    errors = _errors(mode)
    print(f"{mode}: worst gradient relative error vs f32 " + ", ".join(f"{k} {v:.2g}" for k, v in errors.items()))
    _check_errors(errors)


def test_mutation_forgetting_to_unscale_is_caught(monkeypatch):
    """Mutation: the gradients reach the updates still multiplied by the scale."""
    monkeypatch.setattr(LossScalePass, "_unscale", lambda self, update, scale: update.grad)
    with pytest.raises(AssertionError):
        _check_errors(_errors("allow_mix_precision"))


# -- dynamic scaling through overflow ------------------------------------------------------------

OVERFLOW = (
    "autodiff,apply-optimizer{kind=adam lr=0.01},loss-scale{kind=dynamic scale=16777216 growth_interval=3},"
    "ge-optimize{level=1 precision_mode=allow_mix_precision}"
)
STEPS = 14


def _train(module, inputs, steps: int, runner_fn=run) -> list[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]:
    """(state before, outputs) of each step, the marked outputs written back into the state."""
    marked = state_outputs(module)
    state = {k: np.array(v) for k, v in weights_of(module).items()}
    history = []
    for _ in range(steps):
        out = runner_fn(module, inputs, state)
        history.append((dict(state), out))
        state = {**state, **{key: np.array(out[name]) for name, (key, _) in marked.items()}}
    return history


def _check_overflow_run(history) -> list[bool]:
    """Skipped steps change no state bit and halve the scale; the others update and count: each
    step's new scale and count follow the rule from the step's outcome. Returns which steps ran."""
    keys = [k for k in history[0][1] if k != "loss" and not k.startswith("loss_scale.")]
    ran = []
    for i, (before, out) in enumerate(history):
        finite = bool(np.isfinite(out["loss"])) and all(
            not np.array_equal(out[k], before[k]) for k in keys if k.endswith(".weight")
        )
        scale, good = float(before["loss_scale.scale"]), float(before["loss_scale.good_steps"])
        if not finite:
            for k in keys:  # parameters, adam's moments and its step count
                assert out[k].tobytes() == before[k].tobytes(), f"step {i + 1}: {k} changed on an overflow"
            want = (scale / 2, 0.0)
        else:
            want = (scale * 2, 0.0) if good + 1 == 3 else (scale, good + 1)
        got = (float(out["loss_scale.scale"]), float(out["loss_scale.good_steps"]))
        assert got == want, f"step {i + 1}: scale and count {got}, expected {want}"
        ran.append(finite)
    return ran


def test_dynamic_scale_skips_overflowing_steps_then_shrinks_and_runs():
    module, inputs = _step(OVERFLOW, loss_weight=1.0)
    history = _train(module, inputs, STEPS)
    ran = _check_overflow_run(history)
    first = ran.index(True)
    assert first >= 3 and not any(ran[:first]), ran  # 2^24 overflows f16's backward for several steps
    assert float(history[first][0]["optimizer.step"]) == 0  # the skipped steps did not count
    assert float(history[first][1]["optimizer.step"]) == 1
    assert sum(ran) >= 6, ran  # it keeps running (with growth and backoffs)
    scales = [float(before["loss_scale.scale"]) for before, _ in history]
    print("dynamic from 2^24: scales", [f"2^{np.log2(s):g}" for s in scales], "ran", ran)
    losses = [float(out["loss"]) for (_, out), r in zip(history, ran) if r]
    assert losses[-1] < losses[0], losses


def _with_kernel(monkeypatch, op_cls, kernel) -> None:
    @register_impls
    class Mutant(runner.GeFunctions):
        run_mutant = impl(op_cls)(kernel_impl(kernel))

    monkeypatch.setattr(runner, "GeFunctions", Mutant)


def test_mutation_updating_despite_overflow_is_caught(monkeypatch):
    """Mutation: the overflow check always passes, so an overflowing step updates the state."""
    _with_kernel(monkeypatch, ge.AllFiniteOp, lambda op, ins: np.asarray(True))
    module, inputs = _step(OVERFLOW, loss_weight=1.0)
    with pytest.raises(AssertionError):
        _check_overflow_run(_train(module, inputs, 4))


@pytest.mark.parametrize("streams", [1, 2])
@pytest.mark.parametrize("level", [1, 3])
def test_stream_level_matches_the_ge_level(level, streams):
    """The dynamic step after ge-optimize at `level`, lowered to streams and run with every
    intermediate at its planned offset: the same losses and state, skipped steps included."""
    pipeline = OVERFLOW.replace("level=1", f"level={level}")
    module, inputs = _step(pipeline, loss_weight=1.0)
    want = _train(module, inputs, 8)
    lowered, _ = _step(f"{pipeline},lower-to-tasks,plan-memory,lower-to-streams{{streams={streams}}}", loss_weight=1.0)
    assert any(op.name == "task.kernel" for op in main_function(lowered).walk())
    got = _train(lowered, inputs, 8, lambda m, i, w: run_in_arena(m, i, w, 7))
    assert not _check_overflow_run(got)[0]  # 2^24 overflows here too
    for i, ((_, a), (_, b)) in enumerate(zip(want, got)):
        assert a.keys() == b.keys()
        for name in a:
            np.testing.assert_allclose(b[name], a[name], rtol=1e-5, atol=1e-6, err_msg=f"step {i + 1}, {name}")


# -- the kernels -----------------------------------------------------------------------------------

UPDATE = """
func.func @main(%s: tensor<f32> {ge.name = "s"}, %n: tensor<f32> {ge.name = "n"}, %ok: tensor<i1> {ge.name = "ok"})
    -> (tensor<f32> {ge.name = "s1"}, tensor<f32> {ge.name = "n1"}) {
  %s1, %n1 = ge.loss_scale_update %s, %n, %ok {growth_interval = 2 : i64, growth_factor = 4.0 : f32, backoff_factor = 0.25 : f32} : (tensor<f32>, tensor<f32>, tensor<i1>) -> (tensor<f32>, tensor<f32>)
  func.return %s1, %n1 : tensor<f32>, tensor<f32>
}
"""


def test_loss_scale_update_follows_the_rule():
    module = parse_module(UPDATE, "<test>")
    scale, good = np.float32(64), np.float32(0)
    seen = []
    for ok in [True, True, True, False, True, True]:
        out = run(module, {"s": scale, "n": good, "ok": np.asarray(ok)})
        scale, good = out["s1"], out["n1"]
        assert scale.dtype == good.dtype == np.float32
        seen.append((float(scale), float(good)))
    assert seen == [(64, 1), (256, 0), (256, 1), (64, 0), (64, 1), (256, 0)]
    huge = run(module, {"s": np.float32(3e38), "n": np.float32(1), "ok": np.asarray(True)})
    assert (float(huge["s1"]), float(huge["n1"])) == (float(np.float32(3e38)), 0)  # growth to inf is not taken


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_all_finite_sees_any_non_finite_element(bad):
    a, b = np.ones((2, 3), np.float16), np.zeros(4, np.float32)
    assert bool(kernels.all_finite(None, {"inputs": [a, b]}))
    b[2] = bad
    assert not bool(kernels.all_finite(None, {"inputs": [a, b]}))


# -- adam's step count under force_fp16 -----------------------------------------------------------


def _count_after(start: float) -> float:
    module, inputs = _step("autodiff,apply-optimizer{kind=adam},ge-optimize{level=1 precision_mode=force_fp16}")
    state = dict(weights_of(module))
    state["optimizer.step"] = np.array(start, np.float32)
    return float(run(module, inputs, weights=state)["optimizer.step"])


def test_adam_step_count_passes_2048_under_force_fp16():
    assert _count_after(2048) == 2049


def test_mutation_ignoring_keep_dtype_stops_the_count_at_2048(monkeypatch):
    monkeypatch.setattr(mixed_precision, "keeps_dtype", lambda op: False)
    assert _count_after(2048) == 2048  # f16 has no 2049: the count stops (the known bug)


def test_keep_dtype_option_keeps_the_named_op():
    text = """
    func.func @main(%x: tensor<4xf32> {ge.name = "x"}) -> (tensor<4xf32> {ge.name = "y"}) {
      %a = ge.tanh %x : (tensor<4xf32>) -> tensor<4xf32> loc("/a")
      %b = ge.tanh %a : (tensor<4xf32>) -> tensor<4xf32> loc("/b")
      func.return %b : tensor<4xf32>
    }
    """
    module = parse_module(text, "<test>")
    (p,) = parse_passes('mixed-precision{mode=force_fp16 keep_dtype="/b"}')
    p.apply(make_context(), module)
    ops = {op.location.desc.data: op for op in main_function(module).walk() if isinstance(op, ge.TanhOp)}
    assert str(ops["/a"].results[0].type) == "tensor<4xf16>"
    assert str(ops["/b"].results[0].type) == "tensor<4xf32>" and mixed_precision.keeps_dtype(ops["/b"])


def test_a_refused_pass_changes_nothing():
    module, _ = _step("autodiff")
    before = str(module)
    with pytest.raises(DiagnosticException, match="run apply-optimizer first"):
        LossScalePass(kind="dynamic").apply(make_context(), module)
    assert str(module) == before and "loss_scale.scale" not in weights_of(module)


@pytest.mark.parametrize("backward", ["autodiff", "accumulate-gradients{micro_batches=4}"])
@pytest.mark.parametrize("scaling", ["static", "dynamic"])
def test_scaling_by_a_power_of_two_is_exact_in_f32(backward, scaling):
    """In f32 (far from overflow and subnormals) a power-of-two scale and its unscale are exact: the
    gradients are bit-equal to the unscaled step's, every micro-batch's seed scaled."""
    base = f"{backward},apply-optimizer{{kind=sgd lr=0.1}}"
    want = _gradients(base)
    got = _gradients(f"{base}{SCALINGS[scaling]}")
    for key in want:
        assert got[key].tobytes() == want[key].tobytes(), key


def test_mutation_scaling_only_the_first_micro_batch_is_caught(monkeypatch):
    monkeypatch.setattr(loss_scale, "_seeds", lambda block, seeds=loss_scale._seeds: seeds(block)[:1])
    with pytest.raises(AssertionError):
        test_scaling_by_a_power_of_two_is_exact_in_f32("accumulate-gradients{micro_batches=4}", "static")
