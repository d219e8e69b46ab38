"""The kernels of ge.lstm and ge.lstm_grad (ge_dialects/ge/recurrent.py): the ONNX equations step by
step per direction (f16/bf16 computed in f32 and rounded once), and the gradient by walking the
recomputed steps back (backpropagation through time)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import special
from xdsl.interpreter import InterpreterFunctions, impl, register_impls

from ge.ge_dialects import ge
from ge.interpreter.kernels import DataError
from ge.interpreter.kernels.checked import kernel_impl
from ge.interpreter.kernels.nn import _compute


@dataclass
class _Step:
    """What the gradient needs of one forward step: the states it read, its gates, its new cell."""

    t: int
    valid: np.ndarray  # [B, 1]: the step lies within the row's sequence
    h: np.ndarray
    c: np.ndarray
    gates: np.ndarray  # [B, 4H], activated (i, o, f as sigmoids, c as tanh)
    c_new: np.ndarray


class _Layer:
    """The operands of either op in the time-major form, per direction."""

    def __init__(self, op, ins):
        self.layout = op.p("layout")
        x = _compute(ins["X"])
        self.x = np.swapaxes(x, 0, 1) if self.layout else x  # [S, B, I]
        self.w, self.r = _compute(ins["W"]), _compute(ins["R"])
        self.dirs, four_h, _ = self.w.shape
        self.hidden = four_h // 4
        steps, batch, _ = self.x.shape
        bias = ins.get("B")
        self.bias = np.zeros((self.dirs, 8 * self.hidden), self.x.dtype) if bias is None else _compute(bias)
        lengths = ins.get("sequence_lens")
        self.lengths = np.full(batch, steps) if lengths is None else np.asarray(lengths, np.int64)
        if lengths is not None and ((self.lengths < 0) | (self.lengths > steps)).any():
            raise DataError(f"sequence_lens {self.lengths.tolist()} must lie in [0, {steps}], the sequence's length")
        self.reverse = [op.p("direction") == "reverse" or d == 1 for d in range(self.dirs)]
        self.initial = [self.state_major(ins.get(name), batch) for name in ("initial_h", "initial_c")]

    def state_major(self, value: np.ndarray | None, batch: int) -> np.ndarray:
        """A state operand as [D, B, H] (zeros when absent)."""
        if value is None:
            return np.zeros((self.dirs, batch, self.hidden), self.x.dtype)
        value = _compute(value)
        return np.swapaxes(value, 0, 1) if self.layout else value

    def state_out(self, value: np.ndarray) -> np.ndarray:
        return np.swapaxes(value, 0, 1) if self.layout else value

    def sequence_out(self, y: np.ndarray) -> np.ndarray:
        """[S, D, B, H] as the op's Y."""
        return np.transpose(y, (2, 0, 1, 3)) if self.layout else y

    def sequence_in(self, dy: np.ndarray) -> np.ndarray:
        return np.transpose(dy, (1, 2, 0, 3)) if self.layout else dy

    def order(self, d: int) -> range:
        steps = self.x.shape[0]
        return range(steps - 1, -1, -1) if self.reverse[d] else range(steps)

    def run(self, d: int) -> tuple[np.ndarray, list[_Step], np.ndarray, np.ndarray]:
        """Direction d: (Y [S, B, H], the steps in the order taken, the last h, the last c)."""
        hidden = self.hidden
        projected = self.x @ self.w[d].T + self.bias[d, : 4 * hidden] + self.bias[d, 4 * hidden :]
        h, c = self.initial[0][d], self.initial[1][d]
        y = np.zeros((*self.x.shape[:2], hidden), self.x.dtype)
        steps = []
        for t in self.order(d):
            pre = projected[t] + h @ self.r[d].T
            gates = np.concatenate([special.expit(pre[:, : 3 * hidden]), np.tanh(pre[:, 3 * hidden :])], axis=1)
            i, o, f, g = np.split(gates, 4, axis=1)
            c_new = f * c + i * g
            h_new = o * np.tanh(c_new)
            valid = (t < self.lengths)[:, None]
            steps.append(_Step(t, valid, h, c, gates, c_new))
            y[t] = np.where(valid, h_new, 0)
            h, c = np.where(valid, h_new, h), np.where(valid, c_new, c)
        return y, steps, h, c


def lstm(op, ins):
    layer = _Layer(op, ins)
    runs = [layer.run(d) for d in range(layer.dirs)]
    dtype = ins["X"].dtype
    y = layer.sequence_out(np.stack([r[0] for r in runs], axis=1)).astype(dtype)
    h = layer.state_out(np.stack([r[2] for r in runs])).astype(dtype)
    c = layer.state_out(np.stack([r[3] for r in runs])).astype(dtype)
    return (y, h, c)[: len(op.results)]


def lstm_grad(op, ins):
    layer = _Layer(op, ins)
    d_y = layer.sequence_in(_compute(ins["dY"]))  # [S, D, B, H]
    d_last = [layer.state_major(ins[name], layer.x.shape[1]) for name in ("dY_h", "dY_c")]
    dx = np.zeros_like(layer.x)
    dw, dr, db = np.zeros_like(layer.w), np.zeros_like(layer.r), np.zeros_like(layer.bias)
    dh0, dc0 = np.zeros_like(layer.initial[0]), np.zeros_like(layer.initial[1])
    for d in range(layer.dirs):
        _, steps, _, _ = layer.run(d)
        dh, dc = d_last[0][d], d_last[1][d]
        d_pre = np.zeros((*layer.x.shape[:2], 4 * layer.hidden), layer.x.dtype)
        for step in reversed(steps):
            i, o, f, g = np.split(step.gates, 4, axis=1)
            tanh_c = np.tanh(step.c_new)
            dh_new = np.where(step.valid, dh + d_y[step.t, d], 0)
            dc_new = np.where(step.valid, dc, 0) + dh_new * o * (1 - tanh_c**2)
            d_gates = np.concatenate([dc_new * g, dh_new * tanh_c, dc_new * step.c, dc_new * i], axis=1)
            slopes = np.concatenate([i * (1 - i), o * (1 - o), f * (1 - f), 1 - g**2], axis=1)
            d_pre[step.t] = d_gates * slopes
            dr[d] += d_pre[step.t].T @ step.h
            dh = d_pre[step.t] @ layer.r[d] + np.where(step.valid, 0, dh)
            dc = dc_new * f + np.where(step.valid, 0, dc)
        dx += d_pre @ layer.w[d]
        dw[d] = np.einsum("sbg,sbi->gi", d_pre, layer.x)
        db[d] = np.tile(d_pre.sum(axis=(0, 1)), 2)
        dh0[d], dc0[d] = dh, dc
    dtype = ins["X"].dtype
    dx = np.swapaxes(dx, 0, 1) if layer.layout else dx
    return tuple(a.astype(dtype) for a in (dx, dw, dr, db, layer.state_out(dh0), layer.state_out(dc0)))


@register_impls
class RecurrentFunctions(InterpreterFunctions):
    """The interpreter implementations of the recurrent layers."""

    run_lstm = impl(ge.LstmOp)(kernel_impl(lstm))
    run_lstm_grad = impl(ge.LstmGradOp)(kernel_impl(lstm_grad))
