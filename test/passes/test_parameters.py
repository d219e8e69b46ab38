"""Parameters are what an ONNX initializer is, whatever its size: every float initializer of the
training models, imported as they are (small ones inline), gets a gradient that agrees with
finite differences, including single-element ones; one SGD step of an MLP whose biases are all
inline equals numpy's; folded constants are no parameters; `frozen` / `wrt` leave one out; and
merge-constants keeps parameters apart."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from training_models import cnn, deep_mlp, mlp
from xdsl.utils.exceptions import DiagnosticException

from ge.frontend import models
from ge.frontend.models import GraphBuilder, _bottleneck
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects import ge
from ge.ge_dialects.ge.constant import dense_from_numpy
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights, weights_of
from ge.interpreter.runner import main_function, output_names, run
from ge.passes import remarks
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools.common import make_context
from ge.tools.training_state import run_steps, state_outputs

# -- models ------------------------------------------------------------------------------------


def _float64(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model in float64: initializers, Constant values, value types, Cast targets and
    LayerNormalization's statistics (stash_type, float32 by default)."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph

    def retype(t: onnx.TensorProto) -> None:
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float64), t.name))

    for t in graph.initializer:
        retype(t)
    for node in graph.node:
        if node.op_type == "LayerNormalization":
            node.attribute.append(helper.make_attribute("stash_type", TensorProto.DOUBLE))
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.TENSOR:
                retype(attr.t)
            if node.op_type == "Cast" and attr.name == "to" and attr.i == TensorProto.FLOAT:
                attr.i = TensorProto.DOUBLE
    for vi in [*graph.input, *graph.output, *graph.value_info]:
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.DOUBLE
    return model


def tiny_resnet() -> onnx.ModelProto:
    """ResNet's stem and one Bottleneck with its downsample, in train mode (batch statistics)."""
    b = GraphBuilder(seed=0, train=True)
    x = b.input("input", TensorProto.FLOAT, [2, 3, 8, 8])
    with b.scope("conv1"):
        x = b.conv(x, 3, 8, 3, stride=1, pad=1)
    with b.scope("bn1"):
        x = b.batch_norm(x, 8)
    with b.scope("relu"):
        x = b.relu(x)
    with b.scope("maxpool"):
        x = b.max_pool(x, 3, 2, 1)
    with b.scope("layer1"), b.scope("0", "layer1.0"):
        x = _bottleneck(b, x, 8, 4, 1)
    with b.scope("avgpool"):
        x = b.op("GlobalAveragePool", [x])
    x = b.op("Flatten", [x], axis=1)
    with b.scope("fc"):
        x = b.gemm(x, 16, 5, std=0.3, bias_std=0.1)
    b.output(x, "output", TensorProto.FLOAT, [2, 5])
    return b.build()


def tiny_bert() -> onnx.ModelProto:
    return models.bert_base(batch=2, seq=4, layers=1, hidden=8, heads=2, intermediate=16, vocab=11)


def tiny_gpt2() -> onnx.ModelProto:
    return models.gpt2(batch=2, seq=4, layers=1, hidden=8, heads=2, vocab=11)


def scaled_mlp(rng, dtype=np.float64) -> tuple[onnx.ModelProto, dict]:
    """A Gemm-Tanh-Gemm MLP whose output is multiplied by a learned scalar `temperature` (shape ())
    and shifted by a learned `shift` (shape [1]): two single-element parameters; MSE `loss`."""
    w = {
        "fc1.weight": rng.standard_normal((5, 6)),
        "fc1.bias": rng.standard_normal(6),
        "fc2.weight": rng.standard_normal((6, 3)),
        "fc2.bias": rng.standard_normal(3),
        "temperature": np.array(0.7),
        "shift": np.array([0.2]),
    }
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.weight", "fc1.bias"], ["h"]),
        helper.make_node("Tanh", ["h"], ["a"]),
        helper.make_node("Gemm", ["a", "fc2.weight", "fc2.bias"], ["z"]),
        helper.make_node("Mul", ["z", "temperature"], ["s"]),
        helper.make_node("Add", ["s", "shift"], ["y"]),
        helper.make_node("Sub", ["y", "t"], ["diff"]),
        helper.make_node("Mul", ["diff", "diff"], ["sq"]),
        helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0),
    ]
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(
        nodes,
        "scaled",
        [helper.make_tensor_value_info("x", elem, [4, 5]), helper.make_tensor_value_info("t", elem, [4, 3])],
        [helper.make_tensor_value_info("loss", elem, [])],
        [numpy_helper.from_array(np.asarray(a, dtype), k) for k, a in w.items()],
    )
    inputs = {"x": rng.standard_normal((4, 5)).astype(dtype), "t": rng.standard_normal((4, 3)).astype(dtype)}
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), inputs


def _with_mse_loss(model: onnx.ModelProto) -> onnx.ModelProto:
    """The model with a float64 mean-squared-error `loss` of its output against an input `labels`
    (add-loss would make an f32 loss, too coarse for finite differences)."""
    output = model.graph.output[0]
    dims = [d.dim_value for d in output.type.tensor_type.shape.dim]
    model.graph.input.append(helper.make_tensor_value_info("labels", TensorProto.DOUBLE, dims))
    model.graph.node.extend(
        [
            helper.make_node("Sub", [output.name, "labels"], ["/loss/diff"]),
            helper.make_node("Mul", ["/loss/diff", "/loss/diff"], ["/loss/sq"]),
            helper.make_node("ReduceMean", ["/loss/sq"], ["loss"], keepdims=0),
        ]
    )
    model.graph.output.append(helper.make_tensor_value_info("loss", TensorProto.DOUBLE, []))
    return model


def _training_model(name: str) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """A float64 model with a scalar `loss` output, and its inputs."""
    rng = np.random.default_rng(0)
    if name in ("mlp", "cnn", "scaled_mlp"):
        return {"mlp": mlp, "cnn": cnn, "scaled_mlp": scaled_mlp}[name](rng)
    if name == "deep_mlp":
        return deep_mlp(rng, depth=3, width=6, batch=4, dtype=np.float64)
    model = _with_mse_loss(
        _float64({"tiny_resnet": tiny_resnet, "tiny_bert": tiny_bert, "tiny_gpt2": tiny_gpt2}[name]())
    )
    return model, models.random_inputs(model, seed=1)


TRAINING_MODELS = ["mlp", "cnn", "deep_mlp", "scaled_mlp", "tiny_resnet", "tiny_bert", "tiny_gpt2"]
NOT_DIFFERENTIABLE = ("running_mean", "running_var")
"""BatchNorm's running statistics: initializers (parameters) no gradient flows into."""


def _import(model: onnx.ModelProto, **options):
    module, weights = import_model(model, **options)
    attach_weights(module, weights)
    return module


def _apply(module, pipeline: str) -> None:
    apply_all(make_context(), module, parse_passes(pipeline))
    module.verify()


def _float_initializers(model: onnx.ModelProto) -> list[str]:
    floats = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16)
    return sorted(t.name for t in model.graph.initializer if t.data_type in floats)


def _constants_of(module, key: str) -> list[ge.ConstantOp]:
    return [op for op in main_function(module).walk() if isinstance(op, ge.ConstantOp) and op.parameter_key == key]


def _shifted(module, key: str, value: np.ndarray):
    """A copy of `module` whose parameter `key` holds `value` (inline or in the sidecar)."""
    copy = clone_with_weights(module)
    for op in _constants_of(copy, key):
        if op.weight_key is None:
            op.properties["value"] = dense_from_numpy(value)
        else:
            weights_of(copy).added[key] = value
    return copy


def _value(module, key: str) -> np.ndarray:
    op = _constants_of(module, key)[0]
    inline = op.inline_value()
    return np.array(inline if inline is not None else weights_of(module)[key])


# -- (a) every initializer is trained ------------------------------------------------------------


@pytest.mark.parametrize("name", TRAINING_MODELS)
def test_every_initializer_gets_a_gradient_that_matches_finite_differences(name):
    """Imported as they are (no --training: small initializers inline), every float initializer is
    a parameter and gets `<key>_grad`, equal to a central difference of the loss along a random
    direction (float64); only BatchNorm's running statistics get none, and a note says so."""
    model, inputs = _training_model(name)
    forward = _import(model)
    initializers = _float_initializers(model)
    consts = [op for op in main_function(forward).walk() if isinstance(op, ge.ConstantOp)]
    assert sorted({op.parameter_key for op in consts} - {None}) == initializers
    assert any(op.parameter_key and op.weight_key is None for op in consts)  # some are inline
    module = clone_with_weights(forward)
    with remarks.collected() as notes:
        _apply(module, "autodiff")
    trained = [k for k in initializers if not k.endswith(NOT_DIFFERENTIABLE)]
    grads = sorted(n.removesuffix("_grad") for n in output_names(main_function(module)) if n.endswith("_grad"))
    assert grads == trained
    left = [r for r in notes if r.rule == "no-gradient"]
    assert bool(left) == (len(trained) < len(initializers))
    out = run(module, inputs)
    rng = np.random.default_rng(5)
    eps = 1e-6
    for key in trained:
        base = _value(forward, key)
        direction = rng.standard_normal(base.shape)
        up = float(run(_shifted(forward, key, base + eps * direction), inputs)["loss"])
        down = float(run(_shifted(forward, key, base - eps * direction), inputs)["loss"])
        want = (up - down) / (2 * eps)
        got = float(np.sum(out[f"{key}_grad"] * direction))
        assert math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-8), (key, got, want)


def test_single_element_parameters_inline_match_finite_differences_elementwise():
    """The scalar `temperature` (shape ()) and `shift` (shape [1]) are inline parameters with gradients."""
    model, inputs = scaled_mlp(np.random.default_rng(0))
    forward = _import(model)
    for key in ("temperature", "shift", "fc2.bias"):
        (op,) = _constants_of(forward, key)
        assert op.weight_key is None  # inline: under the limit
    module = clone_with_weights(forward)
    _apply(module, "autodiff")
    out = run(module, inputs)
    eps = 1e-6
    for key in ("temperature", "shift"):
        base = _value(forward, key)
        assert base.size == 1
        up = float(run(_shifted(forward, key, base + eps), inputs)["loss"])
        down = float(run(_shifted(forward, key, base - eps), inputs)["loss"])
        np.testing.assert_allclose(out[f"{key}_grad"], np.full(base.shape, (up - down) / (2 * eps)), rtol=1e-6)


# -- (b) one SGD step with inline biases --------------------------------------------------------

SIZES = [8, 16, 12, 10]
BATCH = 6
LR = 0.1


def small_bias_mlp() -> tuple[onnx.ModelProto, dict[str, np.ndarray], dict[str, np.ndarray]]:
    """8-16-12-10 MLP, ReLU, cross-entropy in the graph: every bias (16, 12, 10 floats) is under the
    inline limit (32), every weight above it; float32."""
    rng = np.random.default_rng(0)
    params: dict[str, np.ndarray] = {}
    nodes = []
    x = "x"
    for i, (a, b) in enumerate(zip(SIZES, SIZES[1:]), 1):
        bound = 1 / math.sqrt(a)
        params[f"fc{i}.weight"] = rng.uniform(-bound, bound, (b, a)).astype(np.float32)
        params[f"fc{i}.bias"] = rng.uniform(-bound, bound, b).astype(np.float32)
        out = f"h{i}" if i < len(SIZES) - 1 else "logits"
        nodes.append(
            helper.make_node("Gemm", [x, f"fc{i}.weight", f"fc{i}.bias"], [out], transB=1, name=f"/fc{i}/Gemm")
        )
        if i < len(SIZES) - 1:
            nodes.append(helper.make_node("Relu", [out], [f"a{i}"], name=f"/relu{i}/Relu"))
            x = f"a{i}"
    nodes.append(helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"], ["loss"], reduction="mean"))
    graph = helper.make_graph(
        nodes,
        "mlp",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, SIZES[0]]),
            helper.make_tensor_value_info("labels", TensorProto.INT64, [BATCH]),
        ],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(a, k) for k, a in params.items()],
    )
    inputs = {
        "x": rng.standard_normal((BATCH, SIZES[0])).astype(np.float32),
        "labels": rng.integers(0, SIZES[-1], BATCH).astype(np.int64),
    }
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), params, inputs


def numpy_loss_and_grads(p: dict[str, np.ndarray], inputs) -> tuple[float, dict[str, np.ndarray]]:
    """The MLP's mean cross-entropy and its gradients, in float64."""
    p = {k: v.astype(np.float64) for k, v in p.items()}
    layers = len(SIZES) - 1
    acts, pre = [inputs["x"].astype(np.float64)], []
    for i in range(1, layers + 1):
        z = acts[-1] @ p[f"fc{i}.weight"].T + p[f"fc{i}.bias"]
        pre.append(z)
        acts.append(np.maximum(z, 0) if i < layers else z)
    z = acts[-1] - acts[-1].max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    rows, labels = np.arange(BATCH), inputs["labels"]
    loss = float(-logp[rows, labels].mean())
    dz = np.exp(logp)
    dz[rows, labels] -= 1
    dz /= BATCH
    grads: dict[str, np.ndarray] = {}
    for i in range(layers, 0, -1):
        grads[f"fc{i}.weight"] = dz.T @ acts[i - 1]
        grads[f"fc{i}.bias"] = dz.sum(axis=0)
        if i > 1:
            dz = (dz @ p[f"fc{i}.weight"]) * (pre[i - 2] > 0)
    return loss, grads


def test_one_sgd_step_with_inline_biases_equals_numpy():
    model, params, inputs = small_bias_mlp()
    module = _import(model)
    assert sorted(weights_of(module)) == ["fc1.weight", "fc2.weight", "fc3.weight"]  # the biases are inline
    _apply(module, f"autodiff,apply-optimizer{{kind=sgd lr={LR}}}")
    assert sorted(key for key, _ in state_outputs(module).values()) == sorted(params)
    losses: list[float] = []
    _, state = run_steps(
        lambda w: run(module, inputs, w),
        weights_of(module),
        state_outputs(module),
        2,
        lambda _, out: losses.append(float(out["loss"])),
    )
    loss0, grads = numpy_loss_and_grads(params, inputs)
    after = {k: v - LR * grads[k] for k, v in params.items()}
    loss1, _ = numpy_loss_and_grads(after, inputs)
    assert losses[0] == pytest.approx(loss0, rel=1e-5)
    assert losses[1] == pytest.approx(loss1, rel=1e-5)
    # after the second step the state is two updates on; the first update is the reference step
    one_step = clone_with_weights(module)
    _, first = run_steps(
        lambda w: run(one_step, inputs, w), weights_of(one_step), state_outputs(one_step), 1, lambda *_: None
    )
    for key, want in after.items():
        np.testing.assert_allclose(first[key], want, rtol=1e-5, atol=1e-7, err_msg=key)
    assert set(state) == set(params)


# -- (c) folded constants are no parameters ------------------------------------------------------


def _folding_model() -> onnx.ModelProto:
    """y = x * (two + three) * w + Transpose(v): the sum of two Constant nodes folds at import into a
    literal; the Transpose of initializer v does not (it reads a parameter)."""
    const = lambda name, value: helper.make_node(  # noqa: E731
        "Constant", [], [name], name=f"/{name}", value=numpy_helper.from_array(np.array(value, np.float64), name)
    )
    nodes = [
        const("two", [2.0, 2.0]),
        const("three", [3.0, 3.0]),
        helper.make_node("Add", ["two", "three"], ["five"], name="/five"),
        helper.make_node("Mul", ["x", "five"], ["x5"], name="/x5"),
        helper.make_node("Mul", ["x5", "w"], ["xw"], name="/xw"),
        helper.make_node("Transpose", ["v"], ["vt"], perm=[1, 0], name="/vt"),
        helper.make_node("Add", ["xw", "vt"], ["y"], name="/y"),
        helper.make_node("ReduceSum", ["y"], ["loss"], keepdims=0, name="/loss"),
    ]
    graph = helper.make_graph(
        nodes,
        "fold",
        [helper.make_tensor_value_info("x", TensorProto.DOUBLE, [3, 2])],
        [helper.make_tensor_value_info("loss", TensorProto.DOUBLE, [])],
        [
            numpy_helper.from_array(np.array([0.5, -1.0]), "w"),
            numpy_helper.from_array(np.arange(6.0).reshape(2, 3), "v"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_a_constant_folded_from_constants_is_no_parameter():
    module = _import(_folding_model())
    _apply(module, "dce")  # the Constant nodes the sum was folded from
    consts = [op for op in main_function(module).walk() if isinstance(op, ge.ConstantOp)]
    folded = [op for op in consts if op.parameter_key is None]
    assert [op.inline_value().tolist() for op in folded] == [[5.0, 5.0]]
    assert "ge.transpose" in str(module)  # import-time folding leaves an op reading a parameter
    _apply(module, "autodiff")
    assert output_names(main_function(module)) == ["loss", "v_grad", "w_grad"]
    with pytest.raises(DiagnosticException, match="wrt names '/five', which is not a parameter"):
        _apply(_import(_folding_model()), 'autodiff{wrt="/five"}')


def test_fold_constants_makes_literals_of_what_reads_a_parameter():
    """fold-constants evaluates the Transpose of parameter v: its result is a literal, so v is no
    longer trained (training folds after apply-optimizer)."""
    module = _import(_folding_model())
    _apply(module, "fold-constants,dce")
    assert "ge.transpose" not in str(module)
    assert not _constants_of(module, "v")
    _apply(module, "autodiff")
    assert output_names(main_function(module)) == ["loss", "w_grad"]


# -- (d) frozen and wrt --------------------------------------------------------------------------


@pytest.mark.parametrize("option", ['frozen="fc3.bias"', 'wrt="fc1.weight,fc1.bias,fc2.weight,fc2.bias,fc3.weight"'])
def test_frozen_and_wrt_leave_a_parameter_untrained(option):
    model, params, inputs = small_bias_mlp()
    full = _import(model)
    _apply(full, "autodiff")
    module = _import(model)
    _apply(module, f"autodiff{{{option}}}")
    names = output_names(main_function(module))
    assert "fc3.bias_grad" not in names and len([n for n in names if n.endswith("_grad")]) == 5
    want, got = run(full, inputs), run(module, inputs)
    for name in names:
        np.testing.assert_array_equal(got[name], want[name])
    _apply(module, f"apply-optimizer{{kind=sgd lr={LR}}}")
    (bias,) = _constants_of(module, "fc3.bias")  # still a constant: the step does not change it
    assert bias.inline_value().tolist() == params["fc3.bias"].tolist()
    assert "fc3.bias" not in {key for key, _ in state_outputs(module).values()}


# -- merge-constants keeps parameters apart -------------------------------------------------------

MERGE = """
func.func @main(%x: tensor<3xf32> {ge.name = "x"}) -> (tensor<3xf32> {ge.name = "y"}) {
  %a = ge.constant parameter<"a"> dense<0.0> : tensor<3xf32>
  %b = ge.constant parameter<"b"> dense<0.0> : tensor<3xf32>
  %z = ge.constant dense<0.0> : tensor<3xf32>
  %a2 = ge.constant parameter<"a"> dense<0.0> : tensor<3xf32>
  %0 = ge.add %x, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = ge.add %0, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = ge.add %1, %z : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %3 = ge.add %2, %a2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %3 : tensor<3xf32>
}
"""


@pytest.mark.parametrize(
    ("pipeline", "keys"), [("merge-constants", ["a", "b", None]), ("merge-constants{parameters=true}", [None])]
)
def test_merge_constants_keeps_each_parameter_its_constant(pipeline, keys):
    from ge.tools.common import parse_module

    module = parse_module(MERGE, "<test>")
    _apply(module, pipeline)
    consts = [op for op in main_function(module).walk() if isinstance(op, ge.ConstantOp)]
    assert [op.parameter_key for op in consts] == keys


def test_the_tools_carry_inline_parameters_between_steps(tmp_path, capsys):
    """ge-translate (no --training: the biases inline), ge-opt autodiff,apply-optimizer -o (the
    inline biases' values join the sidecar as the variables' initial state), ge-run --steps: the
    losses and the state after one step are numpy's."""
    from ge.frontend.sidecar import WeightStore
    from ge.tools import ge_opt, ge_run, ge_translate

    model, params, inputs = small_bias_mlp()
    onnx.save(model, tmp_path / "mlp.onnx")
    np.savez(tmp_path / "batch.npz", **inputs)
    ge_translate.main(["--import-onnx", str(tmp_path / "mlp.onnx"), "-o", str(tmp_path / "mlp.mlir")])
    assert 'ge.constant parameter<"fc3.bias"> dense<' in (tmp_path / "mlp.mlir").read_text()
    step = tmp_path / "step.mlir"
    ge_opt.main([str(tmp_path / "mlp.mlir"), "-p", f"autodiff,apply-optimizer{{kind=sgd lr={LR}}}", "-o", str(step)])
    assert sorted(WeightStore(tmp_path / "step.safetensors")) == sorted(params)
    capsys.readouterr()
    state = tmp_path / "state.safetensors"
    ge_run.main([str(step), "--inputs", str(tmp_path / "batch.npz"), "--steps", "2", "--print"])
    ge_run.main([str(step), "--inputs", str(tmp_path / "batch.npz"), "--steps", "1", "--save-state", str(state)])
    loss0, grads = numpy_loss_and_grads(params, inputs)
    after = {k: v - LR * grads[k] for k, v in params.items()}
    loss1, _ = numpy_loss_and_grads(after, inputs)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("step ")]
    assert [line.split(": loss ")[0] for line in lines] == ["step 1", "step 2"]
    printed = [float(line.split(": loss ")[1]) for line in lines]
    assert printed == pytest.approx([loss0, loss1], rel=1e-5)  # six digits printed
    saved = WeightStore(state)
    for key, want in after.items():
        np.testing.assert_allclose(np.asarray(saved[key]), want, rtol=1e-5, atol=1e-7, err_msg=key)
