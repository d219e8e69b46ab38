"""`torch.compile(model, backend="ge")`: the backend found by its name (the package's entry point),
each graph compiled by ge's pipeline and run at the stream level equal to eager PyTorch, its
options reaching the compile, the modeled report of the last graph, and an operator ge lacks
running in eager PyTorch between compiled parts, after one warning naming it."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

from ge.api.torch_backend import ge_backend  # noqa: E402

RNG = np.random.default_rng(0)


def _tensor(*shape: int):
    return torch.from_numpy(RNG.standard_normal(shape).astype(np.float32))


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return torch.softmax(self.fc(y.mean((2, 3))), -1)


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """A fresh Dynamo, and PyTorch's attention fast path off: whether its fused encoder-layer kernel
    (which ge has no converter for) is taken depends on state other tests leave behind."""
    torch._dynamo.reset()
    fast = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    yield
    torch.backends.mha.set_fastpath_enabled(fast)
    torch._dynamo.reset()


@pytest.mark.parametrize(
    "make, shape",
    [
        (lambda: Small(), (2, 3, 8, 8)),
        (lambda: nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True), (2, 5, 16)),
    ],
    ids=["cnn", "encoder_layer"],
)
def test_the_compiled_model_equals_eager_pytorch(make, shape):
    model = make().eval()
    x = _tensor(*shape)
    compiled = torch.compile(model, backend="ge", dynamic=False)
    with torch.no_grad():
        want, got = model(x), compiled(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    assert "latency" in ge_backend.last_report()


def test_options_reach_the_compile():
    model = Small().eval()
    compiled = torch.compile(model, backend="ge", dynamic=False, options={"level": 1, "mode": "op"})
    with torch.no_grad():
        compiled(_tensor(1, 3, 8, 8))
    assert "mode op" in ge_backend.last_report()


def test_an_unknown_option_is_one_line():
    compiled = torch.compile(Small().eval(), backend="ge", options={"speed": "max"})
    with torch.no_grad(), pytest.raises(Exception, match=r"ge backend: unknown options \['speed'\]"):
        compiled(_tensor(1, 3, 8, 8))


def test_an_operator_ge_lacks_runs_in_eager_pytorch_between_compiled_parts():
    """cummax has no converter: the parts before and after it are compiled, cummax runs eagerly, one
    warning names it; the outputs equal eager PyTorch."""

    class Odd(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            y = torch.cummax(torch.relu(self.fc(x)), 0).values / (x + 2)
            return torch.tanh(y * 2 + 1)

    model = Odd().eval()
    x = _tensor(4, 3)
    compiled = torch.compile(model, backend="ge", dynamic=False)
    with (
        torch.no_grad(),
        pytest.warns(
            UserWarning, match=r"aten.cummax.default run in eager PyTorch.*; 2 of the graph's 2 other parts compiled"
        ),
    ):
        got = compiled(x)
    with torch.no_grad():
        np.testing.assert_allclose(got.numpy(), model(x).numpy(), rtol=1e-5, atol=1e-6)
