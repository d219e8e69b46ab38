"""Hostile cases from the seeds: protobuf-field and byte mutations of ONNX models, token and byte
mutations of IR text, hostile sidecars and ge-run input files, and the tools' flag sets.

Every case is a pure function of (tool, index, seed): `make_case` draws from its own
`random.Random`, so case 4711 of a run can be rebuilt alone for reproduction. Mutations are
plain functions of (object, rng) chosen by weight; each returns a short name for the report.
"""

from __future__ import annotations

import random

from .contract import Case
from .ir_mutations import hostile_ir_reference, mutated_ir, mutated_sidecar
from .npz_inputs import hostile_inputs
from .onnx_mutations import mutated_onnx
from .seeds import Corpus


def _output_flags(rng: random.Random, tool: str) -> tuple[list[str], list[str]]:
    """(argv part, outputs it names incl. the sidecar) for an IR-writing tool."""
    choice = rng.random()
    if choice < 0.6:
        return ["-o", "out.mlir"], ["out.mlir", "out.safetensors"]
    if choice < 0.65:
        return ["-o", "nodir/out.mlir"], ["nodir/out.mlir", "nodir/out.safetensors"]
    if choice < 0.68:
        return ["-o", "."], []
    return [], []


def translate_case(corpus: Corpus, rng: random.Random) -> Case:
    files, origin = mutated_onnx(corpus, rng)
    argv = ["--import-onnx", "model.onnx"]
    if rng.random() < 0.03:
        argv[1] = rng.choice(["missing.onnx", ".", "weights.bin"])
    flags, outputs = _output_flags(rng, "ge-translate")
    argv += flags
    if rng.random() < 0.3:
        argv += ["--inline-limit", str(rng.choice([0, 1, 16, 10**9, -1]))]
    return Case("ge-translate", files, argv, outputs, rng.random() < 0.5, origin)


_GE_OPTIONS = [
    "ge.oo.level=O1",
    "ge.oo.level=O3",
    "precision_mode=force_fp16",
    "ge.exec.precision_mode=allow_mix_precision",
    "ge.socVersion=Ascend910",
    "ge.socVersion=Ascend910B",
    "ge.exec.disableReuseMemory=1",
    "ge.enableSingleStream=true",
    "ge.streamNum=3",
    "ge.streamNum=-1",
    "ge.streamNum=99999999999999",
    "is_input_adjust_hw_layout=true",
    "ge.dynamicDims=1,2;3,4",
    "dynamic_dims=batch=1",
    "is_output_adjust_hw_layout=maybe",
    "=",
    "ge.oo.level=",
    "nonsense",
    "ge.socVersion=../../x",
    "precision_mode=名",
]
_EXTRA_PIPELINES = [
    "ge-optimize",
    "ge-optimize{level=1}",
    "ge-optimize{level=2}",
    "ge-optimize{level=99}",
    "ge-optimize{level=-1}",
    "ge-optimize{adjust_input_hw_layout=true adjust_output_hw_layout=true}",
    "assign-formats,adjust-hw-layout{outputs=false}",
    "lower-to-tasks,plan-memory,lower-to-streams{streams=4}",
    "lower-to-tasks,plan-memory,lower-to-streams{streams=0}",
    "fuse-ops{",
    "{}",
    ",",
    "nope",
    "fold-constants{max-elements=-1}",
    "ge-optimize,ge-optimize",
    "cse,dce,canonicalize",
]


def opt_case(corpus: Corpus, rng: random.Random) -> Case:
    seed = rng.choice(corpus.ir + corpus.lowered)
    data, origin = mutated_ir(seed, rng, corpus)
    origin = f"ir:{seed.name} {origin}"
    files, sidecar_origin = mutated_sidecar(seed, rng)
    if rng.random() < 0.04:
        text, what = hostile_ir_reference(data.decode("utf-8", errors="replace"), rng)
        data, sidecar_origin = text.encode(), f"{sidecar_origin} {what}"
    split = rng.random() < 0.1
    if split:
        other = rng.choice(corpus.ir)
        data = data + b"\n// -----\n" + other.text.encode()
    files["model.mlir"] = data
    argv = [rng.choice(["model.mlir"] * 40 + ["missing.mlir", ".", "model.onnx"])]
    if argv[0] == "model.onnx":
        files["model.onnx"] = data
    if rng.random() < 0.8:
        argv += ["-p", rng.choice(corpus.pipelines + _EXTRA_PIPELINES)]
    if rng.random() < 0.1:
        for _ in range(rng.choice([1, 2])):
            argv += ["--ge-option", rng.choice(_GE_OPTIONS)]
    for flag, p in (("--strip-debuginfo", 0.1), ("--remarks", 0.1), ("--split-input-file", 0.05 + 0.9 * split)):
        if rng.random() < p:
            argv.append(flag)
    if rng.random() < 0.04:
        argv += ["--verify-numerics", str(rng.choice([0, 1, 7]))]
    flags, outputs = _output_flags(rng, "ge-opt")
    argv += flags
    return Case("ge-opt", files, argv, outputs, rng.random() < 0.5, f"{origin} {sidecar_origin}".strip())


def run_case_for(corpus: Corpus, rng: random.Random) -> Case:
    """ge-run on a mutated IR module (plain or lowered to streams) or ONNX model, with hostile inputs."""
    choice = rng.random()
    lowered = False
    if choice < 0.35:
        files, origin = mutated_onnx(corpus, rng)
        program = "model.onnx"
        valid = corpus.onnx_inputs.get(origin.split()[0].split(":", 1)[1])
    else:
        lowered = choice > 0.7 and bool(corpus.lowered)
        pool = corpus.lowered if lowered else [s for s in corpus.ir if s.inputs is not None] or corpus.ir
        seed = rng.choice(pool)
        data, origin = mutated_ir(seed, rng, corpus, max_mutations=2)
        origin = f"ir:{seed.name} {origin}"
        files, sidecar_origin = mutated_sidecar(seed, rng)
        origin = f"{origin} {sidecar_origin}".strip()
        files["model.mlir"] = data
        program = "model.mlir"
        valid = seed.inputs
    argv, outputs = [program], []
    source = rng.random()
    if source < 0.5:
        data, what = hostile_inputs(valid, rng)
        files["in.npz"] = data
        argv += ["--inputs", "in.npz"]
        origin += f" {what}"
    elif source < 0.9 or not lowered:
        argv += ["--random-inputs", str(rng.choice([0, 0, 0, 1, 7, -1, 2**64]))]
    else:
        argv.append("--timing-only")
    if rng.random() < 0.5:
        argv += ["-o", "out.npz"]
        outputs.append("out.npz")
    if rng.random() < 0.3:
        argv.append("--print")
    if lowered or rng.random() < 0.05:
        if rng.random() < 0.4:
            argv += ["--trace", "trace.json"]
            outputs.append("trace.json")
        if rng.random() < 0.4:
            argv += ["--op-summary", "ops.csv"]
            outputs.append("ops.csv")
        if rng.random() < 0.2:
            argv += ["--target", rng.choice(["ascend910", "ascend910b", "ascend1", "../../x", "", "名"])]
        if rng.random() < 0.15 and "--timing-only" not in argv:
            argv.append("--timing-only")
    return Case("ge-run", files, argv, outputs, rng.random() < 0.5, origin)


MAKERS = {"ge-translate": translate_case, "ge-opt": opt_case, "ge-run": run_case_for}
TOOLS = tuple(MAKERS)


def make_case(corpus: Corpus, tool: str, index: int, seed: int) -> Case:
    rng = random.Random(f"{seed}:{tool}:{index}")
    return MAKERS[tool](corpus, rng)
