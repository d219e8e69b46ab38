"""The four real models through the files a user has: import the ONNX file, print the IR with its
sidecar, parse it back, execute it with the reference interpreter, and compare with onnxruntime
(fp32, rtol 1e-4, atol 1e-5). The small configurations (every op and weight kind of the full ones);
the full sizes are compared with onnxruntime in test/passes/test_optimize.py, in memory."""

import numpy as np
import onnx
import pytest

from ge.frontend import models
from ge.interpreter.runner import run
from ge.tools.ge_run import load_program
from ge.tools.ge_translate import translate_onnx

pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("name", list(models.MODELS))
def test_model_matches_onnxruntime(name, tmp_path, references):
    model = references.model(name)[0]
    onnx.save(model, tmp_path / "model.onnx")
    translate_onnx(str(tmp_path / "model.onnx"), str(tmp_path / "model.mlir"), inline_limit=32)
    assert (tmp_path / "model.safetensors").exists()
    module, weights = load_program(str(tmp_path / "model.mlir"))  # re-parsed from text
    inputs = models.random_inputs(model, seed=1)
    got = run(module, inputs, weights)
    session = references.onnxruntime(name)
    names = [o.name for o in session.get_outputs()]
    want = dict(zip(names, session.run(names, inputs)))
    assert set(got) == set(want)
    for key in want:
        assert got[key].shape == want[key].shape
        np.testing.assert_allclose(got[key], want[key], rtol=1e-4, atol=1e-5, err_msg=f"{name}:{key}")
