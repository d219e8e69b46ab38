"""The same model and options give the same files, byte for byte, whatever Python's hash seed: ResNet-50
imported (ge-translate) and compiled at O3 down to streams (ge-opt with the compile pipeline), in two
processes with different PYTHONHASHSEED values. Set iteration order, dict order built from sets and
id()-keyed ordering are what would differ; a pass that lets one of them reach its output fails here."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import onnx

from ge.frontend import models
from ge.lowering.compile import compile_pipeline

COMPILE = """
import sys
from ge.tools.ge_opt import main as ge_opt
from ge.tools.ge_translate import translate_onnx

model, out, pipeline = sys.argv[1:]
translate_onnx(model, out + "/imported.mlir", 32)
ge_opt([out + "/imported.mlir", "-p", pipeline, "-o", out + "/compiled.mlir"])
"""


def compile_with_hash_seed(model: Path, out: Path, seed: int) -> dict[str, str]:
    """Imports and compiles `model` in a fresh process; the digest of every file it wrote, by name."""
    out.mkdir()
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    r = subprocess.run(
        [sys.executable, "-c", COMPILE, str(model), str(out), compile_pipeline(3)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())}


def test_resnet50_at_o3_on_streams_is_byte_identical_across_hash_seeds(tmp_path):
    model = tmp_path / "resnet50.onnx"
    onnx.save(models.small("resnet50"), model)  # every layer and op: the order a hash seed could change
    first = compile_with_hash_seed(model, tmp_path / "a", 0)
    second = compile_with_hash_seed(model, tmp_path / "b", 4242)
    assert {"imported.mlir", "imported.safetensors", "compiled.mlir", "compiled.safetensors"} <= set(first)
    assert first == second
    text = (tmp_path / "a" / "compiled.mlir").read_text()
    assert "stream." in text  # lowered to the stream level, not stopped earlier
