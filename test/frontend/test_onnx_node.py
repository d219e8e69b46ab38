"""The ONNX backend node tests of every operator ge imports, natively or through its function
body (see onnx_node_cases.py). A case in KNOWN_FAILURES must fail (strict xfail), so the list
shrinks as soon as an operator starts to pass; a case in ONNXRUNTIME_READING is held to
onnxruntime's outputs where they differ from the expected ones, for the reason given."""

import re

import numpy as np
import pytest
from onnx_node_cases import _load_pb, check, check_unsupported, collect
from onnx_oracle import assert_output_matches

from ge.frontend.onnx_importer import import_model, load_onnx
from ge.interpreter.runner import run

CASES = collect()

KNOWN_FAILURES: dict[str, str] = {
    r"test_affine_grid_": (
        "the grid's shape is the values of `size`, a graph input here: the body's Squeeze, its If on D == 1 "
        "and its Range need them at import; with a constant size its Ifs fold, but the body gives Range "
        "one-element tensors and Unsqueeze scalar axes, which ge's ops refuse as the ONNX spec does"
    ),
    r"test_scan_sum$": (
        "opset 8's batch form of Scan is refused: onnx's version converter drops its batch axis from the graph's "
        "inputs instead of adapting the Scan"
    ),
    r"test_(nonzero|unique|compress|nonmaxsuppression)_": (
        "the result's shape depends on the values of a graph input here; ge evaluates these operators at "
        "import when those inputs are constants (Compress: its condition), see test_onnx_value_dependent.py"
    ),
    r"test_col2im": "image_shape and block_shape are graph inputs here; ge needs them constant (they give the dims)",
    r"test_bernoulli": "Bernoulli's function body draws with RandomUniformLike (random ops are not imported)",
    r"test_celu_bfloat16": "the body rounds each step to bf16; the expected values round once (atol 1e-7)",
    r"test_attention_[34]d_(causal|padded_kv|causal_padded_kv|attn_mask_causal)_(bf16|fp16)": (
        "the body rounds each step to bf16 / f16; the expected values round once (2 ulps off at rtol 1e-3; "
        "onnxruntime misses the f16 one too and has no bf16 Attention)"
    ),
}
ONNXRUNTIME_READING = {
    "test_maxunpool_export_with_output_shape": (
        "the expected output reads the indices as offsets into the default unpooled shape; onnxruntime "
        "(and PyTorch's max_unpool) reads them as offsets into output_shape, as a max pool of an input of "
        "that shape gives them"
    ),
}
"""Cases whose expected outputs onnxruntime does not reproduce; ge follows onnxruntime there (the
reason says why), so they compare with onnxruntime's outputs, and must still differ from the
expected ones (else the entry is stale)."""


def check_against_onnxruntime(case) -> None:
    import onnxruntime as ort

    model = load_onnx(case.folder / "model.onnx")
    module, weights = import_model(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [vi.name for vi in model.graph.input if vi.name not in {t.name for t in model.graph.initializer}]
    for data in sorted(case.folder.glob("test_data_set_*")):
        inputs = {n: _load_pb(data / f"input_{j}.pb") for j, n in enumerate(names)}
        got = run(module, inputs, weights)
        oracle = session.run(None, inputs)
        expected = [_load_pb(data / f"output_{j}.pb") for j in range(len(model.graph.output))]
        assert any(not np.array_equal(o, e) for o, e in zip(oracle, expected)), "onnxruntime now agrees"
        for vi, want in zip(model.graph.output, oracle):
            assert_output_matches(vi.name, got[vi.name], want, case.rtol, case.atol)


def _known_failure(name: str) -> str | None:
    return next((why for pattern, why in KNOWN_FAILURES.items() if re.match(pattern, name)), None)


def _param(case):
    reason = _known_failure(case.name)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(case, id=case.name, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_node_case(case):
    if case.unsupported_dtype():
        check_unsupported(case)
    elif case.name in ONNXRUNTIME_READING:
        check_against_onnxruntime(case)
    else:
        check(case)


def test_every_known_failure_names_cases():
    """A pattern that matches no case is a stale entry."""
    names = [c.name for c in CASES]
    assert [p for p in KNOWN_FAILURES if not any(re.match(p, n) for n in names)] == []
