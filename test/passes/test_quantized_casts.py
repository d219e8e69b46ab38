"""cancel-casts' quantization rules keep every value: `dequantize-to` (an f16 cast of a
DequantizeLinear's f32 result is the DequantizeLinear rounding to f16 itself) and
`quantize-from` (a QuantizeLinear of an f16 -> f32 widening reads the f16 value), on every
uint8 and int8 value and scales across f16's range, including results that overflow f16."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ge.ge_dialects import ge
from ge.interpreter.runner import run
from ge.passes import remarks
from ge.passes.cancel_casts import CancelCastsPass
from ge.passes.rules import casts
from ge.tools.common import parse_module

IR = """
func.func @main(%q: tensor<256x{n}x{t}>, %h: tensor<256x{n}xf16>) -> (tensor<256x{n}xf16>, tensor<256x{n}x{t}>) {{
  %s = ge.constant dense<[{scales}]> : tensor<{n}xf32>
  %z = ge.constant dense<{zero}> : tensor<{n}x{t}>
  %0 = ge.dequantize_linear %q, %s, x_zero_point = %z {{axis = 1 : i64}} : (tensor<256x{n}x{t}>, tensor<{n}xf32>, tensor<{n}x{t}>) -> tensor<256x{n}xf32>
  %1 = ge.cast %0 {{to = 10 : i64}} : (tensor<256x{n}xf32>) -> tensor<256x{n}xf16>
  %2 = ge.cast %h {{to = 1 : i64}} : (tensor<256x{n}xf16>) -> tensor<256x{n}xf32>
  %3 = ge.quantize_linear %2, %s, y_zero_point = %z {{axis = 1 : i64}} : (tensor<256x{n}xf32>, tensor<{n}xf32>, tensor<{n}x{t}>) -> tensor<256x{n}x{t}>
  func.return %1, %3 : tensor<256x{n}xf16>, tensor<256x{n}x{t}>
}}
"""
SCALES = [1e-7, 3.1e-5, 0.0123, 0.5, 1.0, 7.77, 300.0, 1e3]


def _outputs(qtype: str, table=None):
    dtype = {"ui8": np.uint8, "i8": np.int8}[qtype]
    info = np.iinfo(dtype)
    text = IR.format(
        n=len(SCALES), t=qtype, scales=", ".join(f"{x:e}" for x in SCALES), zero=3 if qtype == "ui8" else -2
    )
    module = parse_module(text, "<test>")
    q = np.tile(np.arange(info.min, info.max + 1, dtype=np.int64).astype(dtype)[:, None], (1, len(SCALES)))
    h = np.random.default_rng(0).standard_normal((256, len(SCALES))).astype(np.float16) * np.float16(50)
    before = run(module, {"arg0": q, "arg1": h})
    with remarks.collected() as found:
        if table is None:
            CancelCastsPass().apply(None, module)
        else:
            from ge.passes.rewrite import apply_rules

            apply_rules(module, table, "cancel-casts", walk="program-order")
    assert not any(isinstance(op, ge.CastOp) for op in module.walk()) or table is not None
    return before, run(module, {"arg0": q, "arg1": h}), {r.rule for r in found if r.kind == "applied"}


@pytest.mark.parametrize("qtype", ["ui8", "i8"])
def test_the_rules_keep_every_value(qtype):
    before, after, applied = _outputs(qtype)
    assert {"dequantize-to", "quantize-from"} <= applied
    for name, want in before.items():
        np.testing.assert_array_equal(after[name], want)


def test_mutation_a_rewrite_that_loses_the_zero_point_is_caught(monkeypatch):
    """Mutation: `quantize-from` builds its QuantizeLinear without the zero point: the comparison
    with the unrewritten graph fails."""

    def without_zero(m, b):
        q = m.root_as(ge.QuantizeLinearOp)
        return b.op(
            ge.QuantizeLinearOp, {"x": m["x"], "y_scale": q.y_scale}, casts.copy_props(q, output_dtype=3)
        ).results[0]  # int8

    table = [dataclasses.replace(r, build=without_zero) if r.name == "quantize-from" else r for r in casts.RULES]
    before, after, applied = _outputs("i8", table)
    assert "quantize-from" in applied
    assert any(not np.array_equal(after[k], v) for k, v in before.items())
