"""torch.nn.LSTM through torch.export stays whole: `aten.lstm.input` is kept by the core
decompositions and becomes one `ge.lstm` per layer (GE's DynamicRNN), equal to eager PyTorch at the
stream level; a training-mode dropout between layers is refused in one line; PyTorch's gate order
read as ONNX's is caught."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ge.frontend import torch_recurrent_converters  # noqa: E402
from ge.frontend.torch_fx import TorchImportError, import_exported_program  # noqa: E402
from ge.ge_dialects.ge.weights import attach_weights  # noqa: E402
from ge.interpreter.runner import run  # noqa: E402
from ge.passes.fusion.census import census  # noqa: E402
from ge.passes.pipeline import apply_all, parse_passes  # noqa: E402
from ge.tools.common import make_context  # noqa: E402


class Tagger(torch.nn.Module):
    def __init__(self, batch_first: bool = True, dropout: float = 0.0):
        super().__init__()
        self.lstm = torch.nn.LSTM(8, 16, num_layers=2, batch_first=batch_first, bidirectional=True, dropout=dropout)
        self.head = torch.nn.Linear(32, 5)

    def forward(self, x):
        return self.head(self.lstm(x)[0])


def _imported(model, x):
    module, weights = import_exported_program(torch.export.export(model, (x,)))
    attach_weights(module, weights)
    return module


@pytest.mark.parametrize("batch_first", [True, False])
def test_each_layer_is_one_ge_lstm_and_the_stream_level_equals_eager(batch_first):
    torch.manual_seed(0)
    model, x = Tagger(batch_first).eval(), torch.randn(2, 6, 8)
    module = _imported(model, x)
    assert sum(op.name == "ge.lstm" for op in module.walk()) == 2
    apply_all(make_context(), module, parse_passes("ge-optimize{level=3}"))
    assert census(module).kernels <= 8  # two layers, the head, and what joins them (not ~100 steps)
    apply_all(make_context(), module, parse_passes("lower-to-tasks,plan-memory,lower-to-streams{streams=2}"))
    (got,) = run(module, {"x": x.numpy()}).values()
    with torch.no_grad():
        np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-5, atol=1e-5)


def test_dropout_between_layers_in_training_is_refused_in_one_line():
    model = Tagger(dropout=0.5).train()
    with pytest.raises(TorchImportError, match="dropout between its layers in training mode") as caught:
        _imported(model, torch.randn(2, 6, 8))
    assert "\n" not in str(caught.value)


def test_mutation_pytorch_gate_order_read_as_onnx_is_caught(monkeypatch):
    monkeypatch.setattr(torch_recurrent_converters, "ONNX_GATE_ORDER", (0, 1, 2, 3))
    with pytest.raises(AssertionError):
        test_each_layer_is_one_ge_lstm_and_the_stream_level_equals_eager(True)
