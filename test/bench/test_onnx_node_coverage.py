"""bench.onnx_node_coverage counts ge and onnxruntime on the same node cases (here two made by hand;
the benchmark itself generates onnx's whole set, which takes seconds)."""

from types import SimpleNamespace

import numpy as np
import onnx
from onnx import helper

from bench import onnx_node_coverage
from ge.frontend import onnx_functions


def case(op_type: str, fn) -> SimpleNamespace:
    x = np.linspace(-2, 2, 6, dtype=np.float32).reshape(2, 3)
    graph = helper.make_graph(
        [helper.make_node(op_type, ["x"], ["y"])],
        "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return SimpleNamespace(
        name=f"test_{op_type.lower()}", model=model, data_sets=[([x], [fn(x)])], rtol=1e-3, atol=1e-7
    )


def test_the_table_counts_both_runtimes(capsys, monkeypatch):
    # Softsign imports through its function body: take the body away to have an unsupported operator
    real_schema = onnx_functions._schema
    monkeypatch.setattr(onnx_functions, "_schema", lambda n, o: None if n.op_type == "Softsign" else real_schema(n, o))
    cases = [case("Abs", np.abs), case("Softsign", lambda x: x / (1 + np.abs(x))), case("Neg", np.abs)]
    total, ge_passed, ort_passed, failures = onnx_node_coverage.tally(cases)
    assert (total["Abs"], ge_passed["Abs"], ort_passed["Abs"]) == (1, 1, 1)
    assert (ge_passed["Softsign"], ort_passed["Softsign"]) == (0, 1)
    assert "not supported" in failures["Softsign"][0]
    assert (ge_passed["Neg"], ort_passed["Neg"]) == (0, 0)  # a wrong expectation fails both
    assert failures["Neg"] == ["test_neg: output 0 differs"]
    onnx_node_coverage.print_table(total, ge_passed, ort_passed, failures)
    out = capsys.readouterr().out
    assert "| **all** | **3** | **1** | **2** |" in out
    assert "FAIL test_softsign" in out
