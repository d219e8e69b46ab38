"""The ONNX backend node tests of every supported operator (see onnx_node_cases.py)."""

import pytest
from onnx_node_cases import check, check_unsupported, collect

CASES = collect()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case(case):
    if case.unsupported_dtype():
        check_unsupported(case)
    else:
        check(case)
