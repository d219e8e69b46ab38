"""The converter of `aten.lstm.input` (torch.nn.LSTM), kept whole by the core decompositions
(`converts(whole=True)`): each layer becomes one ONNX LSTM node, which imports as `ge.lstm` (GE's
DynamicRNN) instead of the steps torch.export would unroll it into.

PyTorch stacks each layer's gates as (i, f, g, o) and ONNX as (i, o, f, c): the weights and biases
are reordered (Slice and Concat of the parameters, which ge-optimize folds). A batch-first LSTM is the
batch-major ONNX LSTM (layout 1): no transposes around its layers. A layer's output Y, [S, B, D, H]
(batch-major [B, S, D, H]), is reshaped to D * H features, the next layer's input; the final
states of the layers are concatenated as PyTorch's h_n and c_n.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from ge.frontend.torch_converters import _args, _val, call
from ge.frontend.torch_fx import Graph, TorchImportError, converts

ONNX_GATE_ORDER = (0, 3, 1, 2)
"""PyTorch's gate blocks (i, f, g, o) in ONNX's order (i, o, f, c)."""


def _gates_reordered(g: Graph, value: str, hidden: int) -> str:
    """A parameter whose first dim stacks the four gates, its blocks in ONNX's order."""
    blocks = [
        g.op("Slice", [value, g.ints([k * hidden]), g.ints([(k + 1) * hidden]), g.ints([0])]) for k in ONNX_GATE_ORDER
    ]
    return g.op("Concat", blocks, axis=0)


def _stacked(g: Graph, values: list[str]) -> str:
    """The directions' tensors stacked along a new first dim."""
    return g.op("Concat", [g.op("Unsqueeze", [v, g.ints([0])]) for v in values], axis=0)


def _lstm_case(batch_first: bool, bidirectional: bool, layers: int):
    def make() -> nn.Module:
        return nn.LSTM(4, 6, num_layers=layers, batch_first=batch_first, bidirectional=bidirectional)

    def fn(m, x):
        out, (h, c) = m.parts[0](x)
        return out.sum() + h.sum() * 2 + c.sum() * 3 + out  # every result, and the sequence as it is

    return call(fn, (3, 5, 4), modules=(make,))


@converts(
    "aten.lstm.input",
    whole=True,
    cases=[_lstm_case(True, True, 2), _lstm_case(False, False, 1)],
)
def lstm(g: Graph, node: Any) -> tuple[str, str, str]:
    """One ONNX LSTM node per layer; a training-mode dropout between layers is refused."""
    x, hx, params, has_biases, layers, dropout, train, bidirectional, batch_first = _args(g, node, 9)
    if train and dropout and layers > 1:
        raise TorchImportError("an LSTM with dropout between its layers in training mode is not supported")
    dirs = 2 if bidirectional else 1
    per = 4 if has_biases else 2
    hidden = int(_val(node.args[2][1]).shape[1])  # w_hh: [4H, H]
    layout = 1 if batch_first else 0  # ONNX's batch-major LSTM: no transposes around the layers
    seq = x
    finals: tuple[list[str], list[str]] = ([], [])
    for layer in range(layers):
        first = layer * dirs
        weights = [params[(first + d) * per : (first + d + 1) * per] for d in range(dirs)]
        w = _stacked(g, [_gates_reordered(g, p[0], hidden) for p in weights])
        r = _stacked(g, [_gates_reordered(g, p[1], hidden) for p in weights])
        bias = ""
        if has_biases:
            pairs = [[_gates_reordered(g, p[2], hidden), _gates_reordered(g, p[3], hidden)] for p in weights]
            bias = _stacked(g, [g.op("Concat", pair, axis=0) for pair in pairs])
        initial = [
            _batch_major(g, g.op("Slice", [s, g.ints([first]), g.ints([first + dirs]), g.ints([0])]), layout)
            for s in hx
        ]
        direction = "bidirectional" if bidirectional else "forward"
        y, y_h, y_c = g.op(
            "LSTM", [seq, w, r, bias, "", *initial], outputs=3, hidden_size=hidden, direction=direction, layout=layout
        )
        if not layout:  # Y [S, D, B, H] -> [S, B, D, H]; batch-major it is [B, S, D, H] already
            y = g.op("Transpose", [y], perm=[0, 2, 1, 3])
        seq = g.op("Reshape", [y, g.ints([0, 0, -1])])  # D * H features per step
        finals[0].append(_batch_major(g, y_h, layout))
        finals[1].append(_batch_major(g, y_c, layout))
    h_n, c_n = (g.op("Concat", states, axis=0) if len(states) > 1 else states[0] for states in finals)
    return seq, h_n, c_n


def _batch_major(g: Graph, state: str, layout: int) -> str:
    """A state between PyTorch's [D, B, H] and the batch-major LSTM's [B, D, H] (either way)."""
    return g.op("Transpose", [state], perm=[1, 0, 2]) if layout else state
