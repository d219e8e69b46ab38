"""ge-bench --int8: a model deployed in int8 against the same model in f16, per target.

The int8 model is what a deployment engineer makes with onnxruntime's quantization tool:
`quant_pre_process` (BatchNorm folded into the convs), then `quantize_static` (QDQ, per-channel
int8 weights, uint8 activations, calibrated on two seeded random inputs). Both models are compiled
at O3 in force_fp16 (ATC's default: what the QDQ graph leaves float runs in f16) with whole-graph
sink and timed on the same modeled chip. Columns: kernels, the Cube time (all Cube work at peak on
every Cube unit, the roofline's Cube term), the end-to-end latency, and the ratios f16 / int8;
`int8_k / k` is the rate ratio the target file gives (int8 fractals are 16 x int8_k x 16). The
sensitivity table re-times the int8 model with `int8_k` at half and double where the target marks
it an ASSUMPTION.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import onnx

from ge.frontend import models
from ge.interpreter.stream_executor import simulate_module
from ge.target import assumed_constants, load_target
from ge.tools.common import UserError
from ge.tools.ge_bench_measure import build

INT8_MODELS: dict[str, tuple[Callable[..., onnx.ModelProto], int]] = {
    "resnet50 b1": (models.resnet50, 1),
    "resnet50 b32": (models.resnet50, 32),
    "bert_base": (models.bert_base, 1),
}
PRECISION = "force_fp16"
CALIBRATION_SEEDS = (1, 2)


def quantized(model: onnx.ModelProto) -> onnx.ModelProto:
    """`model` through quant_pre_process and quantize_static (QDQ, per-channel int8 weights,
    uint8 activations); onnxruntime is needed (the test extra)."""
    try:
        from onnxruntime import quantization
        from onnxruntime.quantization.shape_inference import quant_pre_process
    except ImportError:
        raise UserError("ge-bench --int8 quantizes with onnxruntime.quantization: pip install onnxruntime") from None

    class Calibration(quantization.CalibrationDataReader):
        def __init__(self) -> None:
            self.batches = iter([models.random_inputs(model, seed) for seed in CALIBRATION_SEEDS])

        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(self.batches, None)

    with tempfile.TemporaryDirectory() as folder:
        float_path, pre_path, int8_path = (Path(folder) / n for n in ("float.onnx", "pre.onnx", "int8.onnx"))
        onnx.save(model, float_path)
        quant_pre_process(str(float_path), str(pre_path), skip_symbolic_shape=True)
        quantization.quantize_static(
            str(pre_path),
            str(int8_path),
            Calibration(),
            quant_format=quantization.QuantFormat.QDQ,
            per_channel=True,
            weight_type=quantization.QuantType.QInt8,
            activation_type=quantization.QuantType.QUInt8,
        )
        return onnx.load(str(int8_path))


def _x(before: float, after: float) -> str:
    return f"{before / after:.2f}x" if after > 0 else "-"


def int8_rows(name: str, targets: list[str]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The comparison rows of model `name` on each target, and the sensitivity rows."""
    builder, batch = INT8_MODELS[name]
    f16_model = builder(batch=batch)
    int8_model = quantized(f16_model)
    rows, sensitivity = [], []
    for target in targets:
        spec = load_target(target)
        assumed = "int8_k" in assumed_constants(target)
        f16 = simulate_module(build(f16_model, 3, PRECISION, target, "graph").module, spec)
        int8_module = build(int8_model, 3, PRECISION, target, "graph").module
        int8 = simulate_module(int8_module, spec)
        rows.append(
            {
                "model": name,
                "target": target,
                "kernels f16 / int8": f"{len(f16.tasks)} / {len(int8.tasks)}",
                "Cube us f16 / int8": f"{f16.bound.cube_s * 1e6:.1f} / {int8.bound.cube_s * 1e6:.1f}",
                "Cube f16/int8": _x(f16.bound.cube_s, int8.bound.cube_s),
                "latency us f16 / int8": f"{f16.latency * 1e6:.0f} / {int8.latency * 1e6:.0f}",
                "latency f16/int8": _x(f16.latency, int8.latency),
                "int8_k / k": f"{spec.cube.int8_k / spec.cube.k:.1f}" + (" (ASSUMPTION)" if assumed else ""),
            }
        )
        for factor in (0.5, 1.0, 2.0) if assumed else ():
            timed = replace(spec, cube=replace(spec.cube, int8_k=int(spec.cube.int8_k * factor)))
            at = simulate_module(int8_module, timed)
            sensitivity.append(
                {
                    "model": name,
                    "target": target,
                    "int8_k": f"{timed.cube.int8_k} (x{factor:g})",
                    "int8 Cube us": f"{at.bound.cube_s * 1e6:.1f}",
                    "int8 latency us": f"{at.latency * 1e6:.0f}",
                    "latency f16/int8": _x(f16.latency, at.latency),
                }
            )
    return rows, sensitivity
