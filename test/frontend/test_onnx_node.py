"""The ONNX backend node tests of every supported operator (see onnx_node_cases.py)."""

import numpy as np
import pytest
from onnx_node_cases import _load_pb, check, check_unsupported, collect
from onnx_oracle import assert_output_matches

from ge.frontend.onnx_importer import import_model, load_onnx
from ge.interpreter.runner import run

CASES = collect()

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


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_node_case(case):
    if case.unsupported_dtype():
        check_unsupported(case)
    elif case.name in ONNXRUNTIME_READING:
        check_against_onnxruntime(case)
    else:
        check(case)
