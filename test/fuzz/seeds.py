"""The seed corpus: small valid inputs the mutators start from.

- ONNX models: the reference models of frontend/models.py at toy sizes (a ResNet bottleneck and a
  MobileNet inverted residual on an 8x8 image, BERT and GPT-2 with one layer of width 8), and
  tiny hand-built graphs for the importer's other paths (initializers above the inline limit,
  Constant nodes, dim_params, external data).
- IR texts: every `// -----` chunk of test/**/*.mlir that parses and verifies on its own (RUN and
  CHECK lines are comments; the chunks that expect an error do not parse, so they drop out), the
  small models imported to IR (with a sidecar), and their lowering to streams (for ge-run's
  modeled device).
- Flag sets: the pass pipelines of the lit RUN lines, the GE options, ge-run's and ge-translate's
  options.

Everything is built once per process (`corpus()`), in a few seconds.
"""

from __future__ import annotations

import functools
import io
import re
import shlex
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class IrSeed:
    name: str
    text: str
    sidecar: bytes | None = None  # the safetensors file the text's ge.weights names, if any
    sidecar_name: str | None = None
    inputs: dict[str, np.ndarray] | None = None  # valid ge-run inputs, when the module has a @main


@dataclass
class Corpus:
    onnx_models: dict[str, onnx.ModelProto]
    ir: list[IrSeed]
    lowered: list[IrSeed]  # modules lowered to streams (ge-run's modeled device)
    pipelines: list[str]
    onnx_inputs: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)


# ----------------------------------------------------------------------------------- ONNX seeds
def _toy_resnet_block() -> onnx.ModelProto:
    from ge.frontend.models import FLOAT, GraphBuilder, _bottleneck

    b = GraphBuilder(17, seed=1)
    x = b.input("input", FLOAT, [1, 8, 8, 8])
    with b.scope("layer1"), b.scope("0", "layer1.0"):
        x = _bottleneck(b, x, 8, 4, 2)
    with b.scope("maxpool"):
        x = b.max_pool(x, 3, 2, 1)
    x = b.op("GlobalAveragePool", [x])
    x = b.op("Flatten", [x], axis=1)
    with b.scope("fc"):
        x = b.gemm(x, 16, 4, std=0.1, bias_std=0.01)
    b.output(x, "output", FLOAT, [1, 4])
    return b.build(doc="toy ResNet bottleneck")


def _toy_mobilenet_block() -> onnx.ModelProto:
    from ge.frontend.models import FLOAT, GraphBuilder, _inverted_residual

    b = GraphBuilder(15, seed=2)
    x = b.input("input", FLOAT, [1, 4, 8, 8])
    with b.scope("features"), b.scope("1", "features.1"):
        x = _inverted_residual(b, x, 4, 4, 1, 2)
    b.output(x, "output", FLOAT, [1, 4, 8, 8])
    return b.build(doc="toy MobileNetV2 block")


def _tiny_models() -> dict[str, onnx.ModelProto]:
    def model(nodes, inputs, outputs, initializers=(), opset=17, value_info=()):
        graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers), value_info=list(value_info))
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)

    f32 = TensorProto.FLOAT
    vi = helper.make_tensor_value_info
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "w")
    bias = numpy_helper.from_array(np.arange(8, dtype=np.float32), "b")
    shape = numpy_helper.from_array(np.array([4, -1], np.int64), "shape")
    return {
        "relu": model(
            [helper.make_node("Relu", ["x"], ["y"], name="/relu")], [vi("x", f32, [2, 4])], [vi("y", f32, [2, 4])]
        ),
        "matmul_add": model(
            [
                helper.make_node("MatMul", ["x", "w"], ["h"], name="/fc/MatMul"),
                helper.make_node("Add", ["h", "b"], ["y"], name="/fc/Add"),
            ],
            [vi("x", f32, ["batch", 16])],
            [vi("y", f32, ["batch", 8])],
            [weight, bias],
            value_info=[vi("h", f32, ["batch", 8])],
        ),
        "reshape_softmax": model(
            [
                helper.make_node("Reshape", ["x", "shape"], ["r"], name="/reshape"),
                helper.make_node("Softmax", ["r"], ["y"], name="/softmax", axis=-1),
            ],
            [vi("x", f32, [2, 2, 4])],
            [vi("y", f32, [4, 4])],
            [shape],
        ),
        "constant_mul": model(
            [
                helper.make_node(
                    "Constant", [], ["c"], name="/c", value=numpy_helper.from_array(np.full((4,), 0.5, np.float32))
                ),
                helper.make_node("Mul", ["x", "c"], ["m"], name="/mul"),
                helper.make_node("Transpose", ["m"], ["y"], name="/t", perm=[1, 0]),
            ],
            [vi("x", f32, [3, 4])],
            [vi("y", f32, [4, 3])],
            opset=13,
        ),
        "conv_pool": model(
            [
                helper.make_node("Conv", ["x", "cw"], ["c"], name="/conv", pads=[1, 1, 1, 1], strides=[1, 1]),
                helper.make_node("MaxPool", ["c"], ["y"], name="/pool", kernel_shape=[2, 2], strides=[2, 2]),
            ],
            [vi("x", f32, [1, 2, 6, 6])],
            [vi("y", f32, [1, 3, 3, 3])],
            [numpy_helper.from_array(rng.standard_normal((3, 2, 3, 3)).astype(np.float32), "cw")],
        ),
    }


def onnx_seeds() -> dict[str, onnx.ModelProto]:
    from ge.frontend.models import bert_base, gpt2

    models = _tiny_models()
    models["resnet_block"] = _toy_resnet_block()
    models["mobilenet_block"] = _toy_mobilenet_block()
    models["bert_toy"] = bert_base(batch=1, seq=4, layers=1, hidden=8, heads=2, intermediate=16, vocab=20)
    models["gpt2_toy"] = gpt2(batch=1, seq=4, layers=1, hidden=8, heads=2, vocab=20)
    return models


# ------------------------------------------------------------------------------------- IR seeds
def lit_sources() -> list[Path]:
    """The lit test files themselves, not what lit left in `Output/` folders (which changes with
    every lit run, and would make the same case index mean another input)."""
    return [p for p in sorted((ROOT / "test").rglob("*.mlir")) if "Output" not in p.relative_to(ROOT).parts]


_PIPELINE = re.compile(r"-p\s+('[^']*'|\"[^\"]*\"|\S+)")


def lit_pipelines() -> list[str]:
    """The -p arguments of the lit RUN lines (without those that read files the RUN made)."""
    found = set()
    for path in lit_sources():
        for line in path.read_text().splitlines():
            if "RUN:" not in line:
                continue
            for match in _PIPELINE.finditer(line):
                try:
                    pipeline = shlex.split(match.group(1))[0]
                except ValueError:
                    continue
                if "%" not in pipeline:
                    found.add(pipeline)
    return sorted(found)


def lit_chunks() -> list[IrSeed]:
    """The chunks of the lit tests that parse and verify on their own, weights-free."""
    from ge.tools.common import UserError, parse_module

    seeds = []
    for path in lit_sources():
        for index, chunk in enumerate(path.read_text().split("// -----")):
            text = "\n".join(line for line in chunk.splitlines() if not line.lstrip().startswith("//"))
            if "ge.weight<" in text or not text.strip():
                continue
            try:
                module = parse_module(text, "seed")
            except (UserError, Exception):
                continue
            seeds.append(
                IrSeed(f"{path.relative_to(ROOT)}#{index}", text.strip() + "\n", inputs=_signature_inputs(module))
            )
    return seeds


def _signature_inputs(module) -> dict[str, np.ndarray] | None:
    """Valid ge-run inputs for the module's @main, or None when it has none."""
    from ge.tools.ge_run import random_inputs

    try:
        return random_inputs(module, 0)
    except Exception:
        return None


def _imported(name: str, model: onnx.ModelProto, inline_limit: int) -> IrSeed:
    """The model as ge-translate writes it: the text and (when weights are large) its sidecar."""
    from xdsl.dialects.builtin import StringAttr

    from ge.frontend.models import random_inputs
    from ge.frontend.onnx_importer import import_model
    from ge.frontend.sidecar import SIDECAR_ATTR, save
    from ge.tools.common import print_module

    module, weights = import_model(model, inline_limit)
    sidecar = None
    if weights:
        module.attributes[SIDECAR_ATTR] = StringAttr("model.safetensors")
        with tempfile.TemporaryDirectory() as tmp:
            save(Path(tmp) / "w.safetensors", weights)
            sidecar = (Path(tmp) / "w.safetensors").read_bytes()
    return IrSeed(
        f"onnx:{name}", print_module(module), sidecar, "model.safetensors" if sidecar else None, random_inputs(model, 0)
    )


def _lowered(seed: IrSeed) -> IrSeed | None:
    """The seed lowered to streams by ge-opt itself (in this process, into a temp folder)."""
    import contextlib

    from ge.tools import ge_opt

    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "model.mlir").write_text(seed.text)
        if seed.sidecar:
            (Path(tmp) / seed.sidecar_name).write_bytes(seed.sidecar)
        out = Path(tmp) / "lowered.mlir"
        argv = [
            str(Path(tmp) / "model.mlir"),
            "-p",
            "ge-optimize,lower-to-tasks,plan-memory,lower-to-streams",
            "-o",
            str(out),
        ]
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            try:
                ge_opt.main(argv)
            except SystemExit as e:
                if e.code not in (0, None):
                    return None
        sidecar = out.with_suffix(".safetensors")
        return IrSeed(
            f"lowered:{seed.name}",
            out.read_text(),
            sidecar.read_bytes() if sidecar.exists() else None,
            sidecar.name if sidecar.exists() else None,
            seed.inputs,
        )


@functools.cache
def corpus() -> Corpus:
    models = onnx_seeds()
    imported = [_imported(name, m, 16) for name, m in models.items()]
    ir = lit_chunks() + imported
    lowered = [s for s in (_lowered(seed) for seed in imported[:5]) if s is not None]
    from ge.frontend.models import random_inputs

    return Corpus(models, ir, lowered, lit_pipelines(), {name: random_inputs(m, 0) for name, m in models.items()})
