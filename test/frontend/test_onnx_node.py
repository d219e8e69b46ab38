"""The ONNX backend node tests of every operator ge imports, natively or through its function
body (see onnx_node_cases.py). A case in KNOWN_FAILURES must fail (strict xfail), so the list
shrinks as soon as an operator starts to pass."""

import re

import pytest
from onnx_node_cases import check, check_unsupported, collect

CASES = collect()

KNOWN_FAILURES: dict[str, str] = {
    r"test_affine_grid_": "AffineGrid's function body has an If (control flow is not imported)",
    r"test_bernoulli": "Bernoulli's function body draws with RandomUniformLike (random ops are not imported)",
    r"test_linear_attention_": "LinearAttention's function body has a Scan (control flow is not imported)",
    r"test_dynamicquantizelinear": "DynamicQuantizeLinear's body needs QuantizeLinear (int8 is not imported yet)",
    r"test_celu_bfloat16": "the body rounds each step to bf16; the expected values round once (atol 1e-7)",
    r"test_attention_": "Attention's function body needs ReduceMax",
    r"test_logsoftmax_": "LogSoftmax's function body needs ReduceMax",
    r"test_sce_.*_expanded$": "SoftmaxCrossEntropyLoss's body has a LogSoftmax, whose body needs ReduceMax",
    r"test_rms_normalization_": "RMSNormalization's function body needs Size",
}


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
    else:
        check(case)


def test_every_known_failure_names_cases():
    """A pattern that matches no case is a stale entry."""
    names = [c.name for c in CASES]
    assert [p for p in KNOWN_FAILURES if not any(re.match(p, n) for n in names)] == []
