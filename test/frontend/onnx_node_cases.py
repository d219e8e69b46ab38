"""The ONNX backend node tests for the operators ge supports.

onnx no longer ships the test data files, so they are generated from the installed onnx's own
case definitions (`onnx.backend.test.case.node`, as `backend-test-tools generate-data` does) into
a cache folder under the temp dir, once per onnx version. Each case is then run the way a user
would: the model file is imported, executed by the reference interpreter, and compared with the
expected outputs.

Run as a script for the per-operator table: `python test/frontend/onnx_node_cases.py`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
import warnings
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper
from onnx_oracle import assert_output_matches

from ge.frontend.onnx_decompositions import DECOMPOSITIONS
from ge.frontend.onnx_importer import import_model, load_onnx
from ge.frontend.onnx_ops import MIN_OPSET, OLDEST_OPSET, ONNX_DTYPES, SUPPORTED_TYPES, OnnxImportError
from ge.interpreter.runner import run

#: The operators ge imports: natively, or through function bodies (their ONNX schema's,
#: frontend/onnx_functions.py, or ge's own, frontend/onnx_decompositions.py). A case counts for the op
#: its single node runs, or for "(expanded)" when it is a function body made only of listed operators.
FUNCTION_OPS = {
    s.name
    for s in onnx.defs.get_all_schemas()
    if s.domain == "" and (s.has_function or s.has_context_dependent_function)  # type: ignore[attr-defined]
} - set(SUPPORTED_TYPES) | set(DECOMPOSITIONS)
LISTED_OPS = set(SUPPORTED_TYPES) | FUNCTION_OPS

#: Keyed by the listed operators too: a cache written before an operator was added lacks its cases.
_LISTED_KEY = hashlib.sha256(",".join(sorted(LISTED_OPS)).encode()).hexdigest()[:12]
CACHE = Path(tempfile.gettempdir()) / f"ge-onnx-node-cases-{onnx.__version__}-{_LISTED_KEY}"


@dataclass(frozen=True)
class NodeCase:
    name: str
    op: str
    folder: Path
    rtol: float
    atol: float

    def unsupported_dtype(self) -> str | None:
        """Why the case is outside ge's scope, if it is: a data type ge does not have, or an
        opset older than OLDEST_OPSET (ge reads 13 and newer, and upgrades older ones at import)."""
        model = onnx.load(self.folder / "model.onnx")
        opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), MIN_OPSET)
        if opset < OLDEST_OPSET:
            return f"opset {opset}"
        for vi in [*model.graph.input, *model.graph.output, *model.graph.value_info]:
            if not vi.type.HasField("tensor_type"):
                return vi.type.WhichOneof("value")
            t = vi.type.tensor_type.elem_type
            if vi.type.HasField("tensor_type") and t not in ONNX_DTYPES:
                return onnx.TensorProto.DataType.Name(t)
        for node in model.graph.node:
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.TENSOR and attr.t.data_type not in ONNX_DTYPES:
                    return onnx.TensorProto.DataType.Name(attr.t.data_type)
                if node.op_type == "Cast" and attr.name == "to" and attr.i not in ONNX_DTYPES:
                    return onnx.TensorProto.DataType.Name(attr.i)
        return None


def _write_case(case, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model.onnx").write_bytes(case.model.SerializeToString())
    graph = case.model.graph
    if not all(vi.type.HasField("tensor_type") for vi in [*graph.input, *graph.output]):
        return  # sequences and optionals: outside ge's scope, the model alone shows the refusal
    for i, (inputs, outputs) in enumerate(case.data_sets):
        data = folder / f"test_data_set_{i}"
        data.mkdir(exist_ok=True)
        for kind, values, infos in (
            ("input", inputs, case.model.graph.input),
            ("output", outputs, case.model.graph.output),
        ):
            for j, value in enumerate(values):
                proto = (
                    value
                    if isinstance(value, onnx.TensorProto)
                    else numpy_helper.from_array(np.asarray(value), infos[j].name)
                )
                (data / f"{kind}_{j}.pb").write_bytes(proto.SerializeToString())


def _case_op(model: onnx.ModelProto) -> str | None:
    types = {n.op_type for n in model.graph.node}
    if not types <= LISTED_OPS or any(n.domain not in ("", "ai.onnx") for n in model.graph.node):
        return None
    if len(model.graph.node) == 1:
        return model.graph.node[0].op_type
    return "(expanded)"


def collect() -> list[NodeCase]:
    """Every node case of a listed operator, generated into the cache on first use."""
    index = CACHE / "index.txt"
    if not index.exists():
        from onnx.backend.test.case import node

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cases = node.collect_testcases(None)
        tmp = Path(tempfile.mkdtemp(prefix="ge-onnx-node-", dir=tempfile.gettempdir()))
        lines = []
        for case in cases:
            op = _case_op(case.model) if case.model is not None else None
            if op is None or not case.data_sets:
                continue
            _write_case(case, tmp / case.name)
            lines.append(f"{case.name}\t{op}\t{case.rtol}\t{case.atol}")
        (tmp / "index.txt").write_text("\n".join(lines) + "\n")
        with contextlib.suppress(OSError):  # another process may have filled the cache first
            os.replace(tmp, CACHE)
    out = []
    for line in index.read_text().splitlines():
        name, op, rtol, atol = line.split("\t")
        out.append(NodeCase(name, op, CACHE / name, float(rtol), float(atol)))
    return out


def _load_pb(path: Path) -> np.ndarray:
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return numpy_helper.to_array(t)


def check(case: NodeCase) -> None:
    """Imports the case's model file, runs every data set, compares with the expected outputs."""
    model = load_onnx(case.folder / "model.onnx")
    module, weights = import_model(model)
    inputs_names = [vi.name for vi in model.graph.input if vi.name not in {t.name for t in model.graph.initializer}]
    for data in sorted(case.folder.glob("test_data_set_*")):
        inputs = {n: _load_pb(data / f"input_{j}.pb") for j, n in enumerate(inputs_names)}
        outputs = run(module, inputs, weights)
        for j, vi in enumerate(model.graph.output):
            want = _load_pb(data / f"output_{j}.pb")
            assert_output_matches(vi.name, outputs[vi.name], want, case.rtol, case.atol)


def check_unsupported(case: NodeCase) -> None:
    """A model outside ge's scope must be refused at import with a clear message."""
    try:
        import_model(load_onnx(case.folder / "model.onnx"))
    except OnnxImportError as e:
        assert any(w in str(e) for w in ("data type", "not supported", "not a tensor")), str(e)
        return
    raise AssertionError("a model with an unsupported data type was imported")


def table() -> int:
    passed, total, unsupported = Counter(), Counter(), Counter()
    failures = []
    for case in collect():
        if case.unsupported_dtype():
            unsupported[case.op] += 1
            continue
        total[case.op] += 1
        try:
            check(case)
            passed[case.op] += 1
        except Exception as e:
            failures.append(f"{case.name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    print("| op | passed | total | outside scope: dtype ge lacks or opset < 13 (refused at import) |")
    print("|---|---|---|---|")
    for op in sorted(set(total) | set(unsupported)):
        print(f"| {op} | {passed[op]} | {total[op]} | {unsupported[op]} |")
    p, t, u = sum(passed.values()), sum(total.values()), sum(unsupported.values())
    print(f"| **all** | **{p}** | **{t}** | {u} |")
    print(
        f"\npassed {p}/{t} = {100 * p / max(t, 1):.1f}% of cases in ge's types; "
        f"{p}/{t + u} = {100 * p / max(t + u, 1):.1f}% of all cases of the listed ops"
    )
    for f in failures:
        print("FAIL", f)
    return 0


if __name__ == "__main__":
    sys.exit(table())
