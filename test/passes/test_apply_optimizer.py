"""apply-optimizer and the training-state ops: several steps of each optimizer on a least-squares
problem (hand-written gradients as `<key>_grad` outputs), state fed back from the outputs marked
`ge.state`, compared step by step with an independent numpy reference of the optimizer; the kernels
against GE's formulas; the step lowered to streams against the ge-level run. Mutations (a kernel
without its momentum term, a variable handed out writable) show the comparisons catch them."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects.builtin import StringAttr
from xdsl.interpreter import impl, register_impls
from xdsl.traits import ConstantLike, Pure, is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException, InterpretationError

from ge.device.engines import stays_outside_tasks
from ge.ge_dialects import ge
from ge.ge_dialects.ge.facts import Engine
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights, referenced_keys, weights_of
from ge.interpreter import runner
from ge.interpreter.arena_executor import run_in_arena
from ge.interpreter.kernels import optimizer as kernels
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.runner import main_function, run
from ge.passes.apply_optimizer import ApplyOptimizerPass
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context, parse_module

N, D = 8, 3

LEAST_SQUARES = f"""
func.func @main(%x: tensor<{N}x{D}xf32> {{ge.name = "x"}}, %y: tensor<{N}x1xf32> {{ge.name = "y"}})
    -> (tensor<f32> {{ge.name = "loss"}}, tensor<{D}x1xf32> {{ge.name = "fc.weight_grad"}},
        tensor<1xf32> {{ge.name = "fc.bias_grad"}}) {{
  %w = ge.constant parameter #ge.weight<"fc.weight"> : tensor<{D}x1xf32>
  %b = ge.constant parameter #ge.weight<"fc.bias"> : tensor<1xf32>
  %p = ge.matmul %x, %w : (tensor<{N}x{D}xf32>, tensor<{D}x1xf32>) -> tensor<{N}x1xf32>
  %q = ge.add %p, %b : (tensor<{N}x1xf32>, tensor<1xf32>) -> tensor<{N}x1xf32>
  %r = ge.sub %q, %y : (tensor<{N}x1xf32>, tensor<{N}x1xf32>) -> tensor<{N}x1xf32>
  %sq = ge.mul %r, %r : (tensor<{N}x1xf32>, tensor<{N}x1xf32>) -> tensor<{N}x1xf32>
  %s = ge.reduce_sum %sq {{keepdims = 0 : i64}} : (tensor<{N}x1xf32>) -> tensor<f32>
  %inv_n = ge.constant dense<{1 / N}> : tensor<f32>
  %loss = ge.mul %s, %inv_n : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %two_n = ge.constant dense<{2 / N}> : tensor<f32>
  %dr = ge.mul %r, %two_n : (tensor<{N}x1xf32>, tensor<f32>) -> tensor<{N}x1xf32>
  %xt = ge.transpose %x {{perm = array<i64: 1, 0>}} : (tensor<{N}x{D}xf32>) -> tensor<{D}x{N}xf32>
  %gw = ge.matmul %xt, %dr : (tensor<{D}x{N}xf32>, tensor<{N}x1xf32>) -> tensor<{D}x1xf32>
  %axes = ge.constant dense<0> : tensor<1xi64>
  %gb = ge.reduce_sum %dr, axes = %axes {{keepdims = 0 : i64}} : (tensor<{N}x1xf32>, tensor<1xi64>) -> tensor<1xf32>
  func.return %loss, %gw, %gb : tensor<f32>, tensor<{D}x1xf32>, tensor<1xf32>
}}
"""


def _problem(seed: int = 0) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((N, D)).astype(np.float32)
    y = (x @ np.array([[1.5], [-2.0], [0.5]]) + 0.3 + 0.1 * rng.standard_normal((N, 1))).astype(np.float32)
    params = {"fc.weight": rng.standard_normal((D, 1)).astype(np.float32), "fc.bias": np.zeros(1, np.float32)}
    return {"x": x, "y": y}, params


def _step_module(spec: str, params: dict[str, np.ndarray]):
    module = parse_module(LEAST_SQUARES, "<test>")
    attach_weights(module, dict(params))
    apply_all(make_context(), module, parse_passes(spec))
    return module


def _state_outputs(module) -> list[str]:
    """The output names marked `ge.state` (checked equal to the key the mark names)."""
    fn = main_function(module)
    marked = []
    for attrs in fn.res_attrs.data:
        state = attrs.data.get("ge.state")
        if isinstance(state, StringAttr):
            assert attrs.data["ge.name"] == state
            marked.append(state.data)
    return marked


def _train(module, inputs, steps: int, runner=run) -> list[dict[str, np.ndarray]]:
    """Runs `steps` steps, writing the marked outputs back into the state; each step's outputs."""
    state = dict(weights_of(module))
    marked = _state_outputs(module)
    history = []
    for _ in range(steps):
        out = runner(module, inputs, weights=state)
        state.update({key: out[key] for key in marked})
        history.append(out)
    return history


# -- an independent reference ---------------------------------------------------------------------


def _gradients(inputs, w, b):
    r = inputs["x"].astype(np.float64) @ w + b - inputs["y"]
    return np.mean(r**2), {"fc.weight": 2 / N * inputs["x"].T @ r, "fc.bias": 2 / N * r.sum(axis=0)}


class Reference:
    """The optimizers as PyTorch documents them (torch.optim.SGD with momentum and nesterov,
    Adam, AdamW), in float64: an independent formulation of the same updates."""

    def __init__(self, kind: str, params, lr=0.01, momentum=0.9, nesterov=False, b1=0.9, b2=0.999, eps=1e-8, wd=0.0):
        self.kind, self.lr, self.mu, self.nesterov = kind, lr, momentum, nesterov
        self.b1, self.b2, self.eps, self.wd = b1, b2, eps, wd
        self.params = {k: v.astype(np.float64) for k, v in params.items()}
        self.slots = {k: [np.zeros_like(v), np.zeros_like(v)] for k, v in self.params.items()}
        self.t = 0

    def step(self, inputs) -> float:
        loss, grads = _gradients(inputs, self.params["fc.weight"], self.params["fc.bias"])
        self.t += 1
        for key, g in grads.items():
            self.params[key] = self._update(key, self.params[key], g)
        return loss

    def _update(self, key, p, g):
        if self.kind == "sgd":
            return p - self.lr * g
        slot = self.slots[key]
        if self.kind == "momentum":
            slot[0] = self.mu * slot[0] + g
            return p - self.lr * (g + self.mu * slot[0] if self.nesterov else slot[0])
        if self.kind == "adamw":
            p = p * (1 - self.lr * self.wd)
        else:
            g = g + self.wd * p
        slot[0] = self.b1 * slot[0] + (1 - self.b1) * g
        slot[1] = self.b2 * slot[1] + (1 - self.b2) * g * g
        m_hat, v_hat = slot[0] / (1 - self.b1**self.t), slot[1] / (1 - self.b2**self.t)
        # PyTorch adds eps to sqrt(v_hat), GE's ApplyAdam to sqrt(v): the same update with eps
        # divided by sqrt(1 - b2^t)
        return p - self.lr * m_hat / (np.sqrt(v_hat) + self.eps / np.sqrt(1 - self.b2**self.t))


CASES = [
    ("sgd", "apply-optimizer{kind=sgd lr=0.05}", dict(lr=0.05)),
    ("momentum", "apply-optimizer{kind=momentum lr=0.02 momentum=0.8}", dict(lr=0.02, momentum=0.8)),
    (
        "momentum",
        "apply-optimizer{kind=momentum lr=0.02 momentum=0.8 nesterov=true}",
        dict(lr=0.02, momentum=0.8, nesterov=True),
    ),
    ("adam", "apply-optimizer{kind=adam lr=0.05 beta1=0.8 beta2=0.99}", dict(lr=0.05, b1=0.8, b2=0.99)),
    ("adam", "apply-optimizer{kind=adam lr=0.05 weight_decay=0.1}", dict(lr=0.05, wd=0.1)),
    ("adamw", "apply-optimizer{kind=adamw lr=0.05 weight_decay=0.1 eps=0.000001}", dict(lr=0.05, wd=0.1, eps=1e-6)),
]


def _compare_with_reference(kind, spec, hyper, steps=6):
    inputs, params = _problem()
    module = _step_module(spec, params)
    reference = Reference(kind, params, **hyper)
    for i, out in enumerate(_train(module, inputs, steps)):
        loss = reference.step(inputs)
        np.testing.assert_allclose(out["loss"], loss, rtol=1e-5, err_msg=f"step {i + 1}")
        for key in params:
            np.testing.assert_allclose(out[key], reference.params[key], rtol=1e-5, atol=1e-6, err_msg=f"step {i + 1}")
        if kind.startswith("adam"):
            assert out["optimizer.step"] == np.float32(i + 1)


@pytest.mark.parametrize("kind,spec,hyper", CASES, ids=[c[1] for c in CASES])
def test_steps_follow_the_reference(kind, spec, hyper):
    _compare_with_reference(kind, spec, hyper)


def _with_kernel(monkeypatch, op_cls, kernel) -> None:
    """Runs use `kernel` for `op_cls` (the interpreter functions of `run` replaced by a subclass)."""

    @register_impls
    class Mutant(runner.GeFunctions):
        run_mutant = impl(op_cls)(kernel_impl(kernel))

    monkeypatch.setattr(runner, "GeFunctions", Mutant)


def test_mutation_momentum_without_its_momentum_term_is_caught(monkeypatch):
    """Mutation: apply_momentum's kernel forgets the old accumulator (plain sgd). The first step
    agrees (the accumulator starts at zero); the reference catches it from the second on."""

    def forgetful(op, ins):
        return ins["var"] - np.float32(op.p("lr")) * ins["grad"], ins["grad"]

    _with_kernel(monkeypatch, ge.ApplyMomentumOp, forgetful)
    _, spec, hyper = CASES[1]
    with pytest.raises(AssertionError, match="step 2"):
        _compare_with_reference("momentum", spec, hyper)


def test_mutation_adam_without_bias_correction_is_caught(monkeypatch):
    def uncorrected(op, ins):
        var, m, v, g = ins["var"], ins["m"], ins["v"], ins["grad"]
        b1, b2, lr = (np.float32(op.p(n)) for n in ("beta1", "beta2", "lr"))
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        return var - lr * m / (np.sqrt(v) + np.float32(op.p("epsilon"))), m, v

    _with_kernel(monkeypatch, ge.ApplyAdamOp, uncorrected)
    _, spec, hyper = CASES[3]
    with pytest.raises(AssertionError, match="step 1"):
        _compare_with_reference("adam", spec, hyper)


def test_sgd_loss_falls_over_20_steps():
    inputs, params = _problem(seed=3)
    module = _step_module("apply-optimizer{kind=sgd lr=0.05}", params)
    losses = [float(out["loss"]) for out in _train(module, inputs, 20)]
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.25 * losses[0], losses


# -- the step lowered to streams -------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["sgd", "momentum", "adam"])
@pytest.mark.parametrize("streams", [1, 2])
def test_stream_level_step_matches_the_ge_level(kind, streams):
    inputs, params = _problem(seed=1)
    module = _step_module(f"apply-optimizer{{kind={kind} lr=0.05}}", params)
    lowered = clone_with_weights(module)
    lowering = f"lower-to-tasks,plan-memory,lower-to-streams{{streams={streams}}}"
    apply_all(make_context(), lowered, parse_passes(lowering))
    assert any(op.name == "task.kernel" for op in main_function(lowered).walk())
    ge_level = _train(module, inputs, 4)
    stream_level = _train(lowered, inputs, 4, runner=lambda m, i, weights: run_in_arena(m, i, weights=weights, seed=7))
    # Within 1e-6, not bit for bit: the ge level's ge.transpose hands the matmul a strided view, the
    # arena a contiguous copy, and BLAS sums x^T r in another order for each (the last bit differs).
    for i, (a, b) in enumerate(zip(ge_level, stream_level)):
        assert a.keys() == b.keys()
        for name in a:
            np.testing.assert_allclose(a[name], b[name], rtol=1e-6, atol=1e-6, err_msg=f"step {i + 1}, output {name}")


def test_plan_memory_counts_variables_as_state_apart_from_the_weights():
    _, params = _problem()
    module = _step_module("apply-optimizer{kind=momentum},lower-to-tasks,plan-memory", params)
    state_bytes = 2 * (D * 4 + 4)  # fc.weight, fc.bias and their momentum
    inline = 2 * 4 + 8  # 1/N, 2/N, the axes
    memory = module.attributes["task.memory"].data
    assert memory["weights"].value.data == inline
    assert memory["state"].value.data == memory["state_copies_avoided"].value.data == state_bytes


# -- the rewritten graph -----------------------------------------------------------------------------


def test_graph_after_the_pass():
    _, params = _problem()
    module = _step_module("apply-optimizer{kind=adamw weight_decay=0.01}", params)
    fn = main_function(module)
    assert not [op for op in fn.walk() if isinstance(op, ge.ConstantOp) and op.weight_key is not None]
    keys = [op.state_key for op in fn.walk() if isinstance(op, ge.VariableOp)]
    assert sorted(keys) == sorted(
        ["fc.weight", "fc.bias", "optimizer.step", *(f"fc.{p}.adam_{s}" for p in ("weight", "bias") for s in "mv")]
    )
    assert _state_outputs(module) == [
        "fc.weight",
        "fc.weight.adam_m",
        "fc.weight.adam_v",
        "fc.bias",
        "fc.bias.adam_m",
        "fc.bias.adam_v",
        "optimizer.step",
    ]
    adam = [op for op in fn.walk() if isinstance(op, ge.ApplyAdamOp)]
    assert len(adam) == 2 and all(op.p("decoupled") == 1 for op in adam)
    weights = weights_of(module)
    assert weights["optimizer.step"].shape == () and not weights["fc.weight.adam_v"].any()
    assert set(referenced_keys(module)) == set(keys)  # ge-opt -o writes every variable's initial state


def test_variables_are_not_folded_merged_or_cse_d():
    _, params = _problem()
    module = _step_module("apply-optimizer{kind=sgd},fold-constants,merge-constants,cse", params)
    fn = main_function(module)
    assert sorted(op.state_key for op in fn.walk() if isinstance(op, ge.VariableOp)) == ["fc.bias", "fc.weight"]
    assert len([op for op in fn.walk() if isinstance(op, ge.ApplyGradientDescentOp)]) == 2


def test_the_pass_changes_nothing_when_it_refuses():
    module = parse_module(LEAST_SQUARES.replace('"fc.bias"', '"fc.b"'), "<test>")
    before = str(module)
    with pytest.raises(DiagnosticException, match="output 'fc.bias_grad' has no parameter 'fc.bias'"):
        ApplyOptimizerPass(kind="adam").apply(make_context(), module)
    assert str(module) == before and not weights_of(module).added


# -- kernels --------------------------------------------------------------------------------------


def _run_op(text: str, args: dict[str, np.ndarray], weights=None) -> dict[str, np.ndarray]:
    module = parse_module(text, "<test>")
    return run(module, args, weights=weights or {})


def _update_graph(op: str, operands: list[tuple[str, str]], props: str, results: list[str]) -> str:
    args = ", ".join(f'%{n}: {t} {{ge.name = "{n}"}}' for n, t in operands)
    types = ", ".join(t for _, t in operands)
    outs = ", ".join(f'{t} {{ge.name = "{n}"}}' for n, t in results)
    names = ", ".join(f"%r#{i}" for i in range(len(results))) if len(results) > 1 else "%r"
    result_types = ", ".join(t for _, t in results)
    arrow = f"({result_types})" if len(results) > 1 else result_types
    return f"""
func.func @main({args}) -> ({outs}) {{
  %r{":" + str(len(results)) if len(results) > 1 else ""} = {op} {", ".join("%" + n for n, _ in operands)} {props} : ({types}) -> {arrow}
  func.return {names} : {result_types}
}}"""


@pytest.mark.parametrize("dtype,mlir", [(np.float32, "f32"), (np.float64, "f64"), (np.float16, "f16")])
def test_apply_gradient_descent_kernel(dtype, mlir):
    rng = np.random.default_rng(0)
    var, grad = (rng.standard_normal((2, 3)).astype(dtype) for _ in range(2))
    t = f"tensor<2x3x{mlir}>"
    text = _update_graph("ge.apply_gradient_descent", [("var", t), ("grad", t)], "{alpha = 0.25 : f32}", [("out", t)])
    out = _run_op(text, {"var": var, "grad": grad})["out"]
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, var - dtype(0.25) * grad)


@pytest.mark.parametrize("nesterov", [0, 1])
def test_apply_momentum_kernel(nesterov):
    rng = np.random.default_rng(1)
    var, accum, grad = (rng.standard_normal(5) for _ in range(3))
    t = "tensor<5xf64>"
    props = f"{{lr = 0.125 : f32, momentum = 0.5 : f32, use_nesterov = {nesterov} : i64}}"
    text = _update_graph(
        "ge.apply_momentum", [("var", t), ("accum", t), ("grad", t)], props, [("var_out", t), ("accum_out", t)]
    )
    out = _run_op(text, {"var": var, "accum": accum, "grad": grad})
    accum_ref = 0.5 * accum + grad  # GE ApplyMomentum: accum = accum * momentum + grad
    var_ref = var - 0.125 * grad - 0.125 * 0.5 * accum_ref if nesterov else var - 0.125 * accum_ref
    np.testing.assert_allclose(out["accum_out"], accum_ref, rtol=1e-15)
    np.testing.assert_allclose(out["var_out"], var_ref, rtol=1e-15)


@pytest.mark.parametrize("decoupled,decay", [(0, 0.0), (0, 0.5), (1, 0.5)])
def test_apply_adam_kernel(decoupled, decay):
    rng = np.random.default_rng(2)
    var, m, grad = (rng.standard_normal((3, 2)) for _ in range(3))
    v = rng.random((3, 2))
    t = "tensor<3x2xf64>"
    props = (
        f"{{lr = 0.5 : f32, beta1 = 0.75 : f32, beta2 = 0.875 : f32, epsilon = 0.125 : f32, "
        f"weight_decay = {decay} : f32, decoupled = {decoupled} : i64}}"
    )
    operands = [("var", t), ("m", t), ("v", t), ("step", "tensor<f32>"), ("grad", t)]
    text = _update_graph("ge.apply_adam", operands, props, [("var_out", t), ("m_out", t), ("v_out", t)])
    out = _run_op(text, {"var": var, "m": m, "v": v, "step": np.float32(3), "grad": grad})
    # GE ApplyAdam: lr_t = lr sqrt(1 - beta2^t) / (1 - beta1^t); var -= lr_t m / (sqrt(v) + epsilon)
    g = grad + decay * var if not decoupled else grad
    base = var * (1 - 0.5 * decay) if decoupled else var
    m_ref = 0.75 * m + 0.25 * g
    v_ref = 0.875 * v + 0.125 * g * g
    lr_t = 0.5 * np.sqrt(1 - 0.875**3) / (1 - 0.75**3)
    np.testing.assert_allclose(out["m_out"], m_ref, rtol=1e-14)
    np.testing.assert_allclose(out["v_out"], v_ref, rtol=1e-14)
    np.testing.assert_allclose(out["var_out"], base - lr_t * m_ref / (np.sqrt(v_ref) + 0.125), rtol=1e-14)


VARIABLE = """
func.func @main() -> (tensor<2xf32> {ge.name = "out"}) {
  %v = ge.variable "state" : tensor<2xf32>
  %one = ge.constant dense<1.0> : tensor<f32>
  %r = ge.add %v, %one : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
"""


def test_variable_reads_the_current_state_on_every_call():
    module = parse_module(VARIABLE, "<test>")
    interpreter_state = {"state": np.array([1, 2], np.float32)}
    first = run(module, {}, weights=interpreter_state)["out"]
    interpreter_state["state"] = np.array([5, 6], np.float32)
    second = run(module, {}, weights=interpreter_state)["out"]
    np.testing.assert_array_equal(first, [2, 3])
    np.testing.assert_array_equal(second, [6, 7])


def test_variable_value_is_not_written_by_a_donating_kernel(monkeypatch):
    """ge.add may write its result into an operand array it alone uses; the state array handed out
    by ge.variable must not be one. Mutation: hand the state out writable; the add overwrites it."""
    module = parse_module(VARIABLE, "<test>")
    state = {"state": np.array([1, 2], np.float32)}
    run(module, {}, weights=state)
    np.testing.assert_array_equal(state["state"], [1, 2])

    def writable(op, mapping):
        return np.asarray(mapping[op.state_key])

    monkeypatch.setattr(kernels, "read_state", writable)
    run(module, {}, weights=state)
    assert not np.array_equal(state["state"], [1, 2])


@pytest.mark.parametrize(
    "state,message",
    [
        ({}, "ge.variable: state 'state' is not in the weights sidecar"),
        (
            {"state": np.zeros(3, np.float32)},
            r"ge.variable: state 'state' holds float32 \[3\], the variable is tensor<2xf32>",
        ),
        (
            {"state": np.zeros(2, np.float64)},
            r"ge.variable: state 'state' holds float64 \[2\], the variable is tensor<2xf32>",
        ),
    ],
)
def test_variable_errors(state, message):
    module = parse_module(VARIABLE, "<test>")
    with pytest.raises(InterpretationError, match=message) as e:
        run(module, {}, weights=state)
    assert re.search(message, str(e.value).splitlines()[0])  # the tools print the first line


def test_variable_is_no_constant():
    """Folding, cse and merge-constants see a memory read, not a constant (see the pass test above)."""
    op = ge.VariableOp.of("k", ge.ConstantOp.inline(np.zeros(2, np.float32)).output.type)
    assert not op.has_trait(ConstantLike) and not op.has_trait(Pure) and not is_side_effect_free(op)
    assert stays_outside_tasks(op) and op.engine_class() is Engine.NONE
