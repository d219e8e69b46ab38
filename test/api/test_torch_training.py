"""Training through `torch.compile(model, backend="ge")`: AOT autograd's forward and backward graphs
each compiled by ge's pipeline and run at the stream level. Twenty optimizer steps of an MLP (SGD),
a small ResNet (SGD with momentum, BatchNorm in training mode) and a small GPT-2 (Adam), from
transformers, give eager PyTorch's losses and parameters; the gradients ge's own `autodiff` builds
from the forward graph (torch.export of the model and its loss) equal AOT autograd's backward."""

from __future__ import annotations

import contextlib
import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from torch import nn  # noqa: E402

from ge.api.torch_backend import ge_backend  # noqa: E402
from ge.frontend.torch_fx import import_exported_program  # noqa: E402
from ge.ge_dialects.context import make_context  # noqa: E402
from ge.interpreter.runner import run, run_each_replica  # noqa: E402
from ge.passes.autodiff import AutodiffPass  # noqa: E402
from ge.passes.pipeline import apply_all, parse_passes  # noqa: E402

STEPS = 20


class WithLoss(nn.Module):
    """The model and a mean squared loss of its output: one scalar to differentiate."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x):
        out = self.model(x)
        out = out if isinstance(out, torch.Tensor) else out.logits
        return out.float().pow(2).mean()


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)), lambda: torch.randn(4, 8)


def _resnet():
    torch.manual_seed(0)
    config = transformers.ResNetConfig(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], num_labels=5)
    return transformers.ResNetForImageClassification(config), lambda: torch.randn(2, 3, 32, 32)


def _gpt(attention: str = "sdpa"):
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=2,
        n_embd=32,
        n_head=2,
        vocab_size=50,
        n_positions=16,
        bos_token_id=0,
        eos_token_id=0,
        attn_implementation=attention,
    )
    config.resid_pdrop = config.embd_pdrop = config.attn_pdrop = 0.0
    return transformers.GPT2LMHeadModel(config), lambda: torch.randint(0, 50, (2, 8))


MODELS = {
    "mlp": (_mlp, lambda p: torch.optim.SGD(p, lr=0.1)),
    "resnet": (_resnet, lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9)),
    "gpt": (_gpt, lambda p: torch.optim.Adam(p, lr=1e-3)),
}


@contextlib.contextmanager
def compiled_by_ge():
    """Every graph compiled inside runs on ge: the backend records no fallback to eager PyTorch
    (which would make a comparison with eager vacuous)."""
    before = len(ge_backend.fallbacks)
    yield
    assert ge_backend.fallbacks[before:] == [], "a graph fell back to eager PyTorch"


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("name", list(MODELS))
def test_twenty_steps_give_eager_losses_and_parameters(name):
    make, optimizer = MODELS[name]
    model, batch = make()
    eager = WithLoss(copy.deepcopy(model)).train()
    ours = WithLoss(model).train()
    compiled = torch.compile(ours, backend="ge", dynamic=False)
    opt_ours, opt_eager = optimizer(ours.parameters()), optimizer(eager.parameters())
    torch.manual_seed(1)
    for step in range(STEPS):
        x = batch()
        with compiled_by_ge():
            loss = compiled(x)
            loss.backward()  # the backward graph is compiled at the first call
        opt_ours.step()
        opt_ours.zero_grad()
        want = eager(x)
        want.backward()
        opt_eager.step()
        opt_eager.zero_grad()
        assert loss.item() == pytest.approx(want.item(), rel=1e-5), f"step {step}"
    memory = ge_backend.training_memory  # the pair's pools as one: less than apart, the saved tensors beside
    assert memory is not None and memory.saved > 0 and memory.shared < memory.apart
    assert "training step: forward pool" in ge_backend.last_report()
    for (key, got), want_p in zip(ours.named_parameters(), eager.parameters()):
        np.testing.assert_allclose(got.detach().numpy(), want_p.detach().numpy(), rtol=1e-4, atol=1e-5, err_msg=key)
    for (key, got), want_b in zip(ours.named_buffers(), eager.buffers()):  # BatchNorm's running statistics
        np.testing.assert_allclose(got.numpy(), want_b.numpy(), rtol=1e-4, atol=1e-5, err_msg=key)


@pytest.mark.parametrize("name", list(MODELS))
def test_autodiff_of_the_forward_graph_equals_aot_autograds_backward(name):
    """AOT autograd's backward (compiled by ge) fills `.grad`; ge's autodiff pass on the exported
    forward graph and loss gives each parameter's gradient under its state_dict name."""
    make, _ = MODELS[name]
    # GPT-2's attention written out: torch.export of the fused one at batch 2 fails in PyTorch itself
    model, batch = _gpt("eager") if name == "gpt" else make()
    torch.manual_seed(2)
    x = batch()
    with_loss = WithLoss(model).eval()  # BatchNorm on running statistics: one graph for both
    compiled = torch.compile(with_loss, backend="ge", dynamic=False)
    with compiled_by_ge():
        compiled(x).backward()
    # every name of a parameter (GPT-2's lm_head.weight is its wte.weight: the export keeps one name)
    aot = {k: p.grad.numpy() for k, p in with_loss.named_parameters(remove_duplicate=False)}

    program = torch.export.export(with_loss, (x,))
    module, weights = import_exported_program(program, input_names=["x"], output_names=["loss"])
    AutodiffPass(loss="loss").apply(make_context(), module)
    got = run(module, {"x": x.numpy()}, weights)
    ours = {k.removesuffix("_grad"): v for k, v in got.items() if k.endswith("_grad")}
    assert set(ours) <= set(aot) and len(ours) == len(list(with_loss.parameters()))
    for key, gradient in ours.items():
        np.testing.assert_allclose(gradient, aot[key], rtol=1e-4, atol=1e-6, err_msg=key)


def test_data_parallel_on_gpt2_gives_the_full_batch_gradients():
    """transformers' GPT-2, exported with its loss: data-parallel over 2 replicas (one row each)
    gives autodiff's full-batch gradients, the same bits on both replicas."""
    model, batch = _gpt("eager")
    torch.manual_seed(3)
    x = batch()
    program = torch.export.export(WithLoss(model).eval(), (x,))
    full, weights = import_exported_program(program, input_names=["x"], output_names=["loss"])
    split, _ = import_exported_program(program, input_names=["x"], output_names=["loss"])
    AutodiffPass(loss="loss").apply(make_context(), full)
    apply_all(make_context(), split, parse_passes("autodiff,data-parallel{devices=2}"))
    want = run(full, {"x": x.numpy()}, weights)
    each = run_each_replica(split, {"x": x.numpy()}, weights)
    grads = [k for k in want if k.endswith("_grad")]
    assert len(grads) == len(list(model.parameters()))
    for key in grads:
        np.testing.assert_allclose(each[0][key], want[key], rtol=1e-4, atol=1e-6, err_msg=key)
        assert np.array_equal(each[0][key], each[1][key]), key
