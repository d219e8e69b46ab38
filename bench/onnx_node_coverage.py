"""How many of the ONNX backend node tests ge passes, against onnxruntime on the same cases.

    python -m bench.onnx_node_coverage [--failures] [--ops Abs,Mod]

The cases come from the installed onnx (`onnx.backend.test.case.node`, what `backend-test-tools
generate-data` writes), every default-domain operator, without the `_expanded` variants (those test
an operator's function body, not the operator). A case passes when every output equals the expected
one: integers and bools exactly, floats within the case's rtol/atol (NaN where NaN is expected).
ge: the importer (with its opset upgrade) and the reference interpreter; onnxruntime: its CPU
provider. The table is per operator, then the totals; `--failures` adds ge's failures, one line each.
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter, defaultdict

import numpy as np
import onnx
from onnx import numpy_helper


def _array(value):
    """A tensor as an array (the cases give TensorProtos, arrays and numpy scalars); anything
    else (a sequence, an optional) as it is."""
    if isinstance(value, onnx.TensorProto):
        return numpy_helper.to_array(value)
    return np.asarray(value) if isinstance(value, (np.ndarray, np.generic)) else value


def _matches(got, want, rtol: float, atol: float) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if want.dtype.kind == "V" and want.dtype.itemsize == 1:  # ml_dtypes' float8, float4, int4: bit for bit
        return bool(np.array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8)))
    if want.dtype.kind not in "fcV":
        return bool(np.array_equal(got, want))
    return bool(np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True))


def _check(outputs: list, expected: list, rtol: float, atol: float) -> str | None:
    if len(outputs) != len(expected):
        return f"{len(outputs)} outputs, {len(expected)} expected"
    for i, (got, want) in enumerate(zip(outputs, expected)):
        if not _matches(got, _array(want), rtol, atol):
            return f"output {i} differs"
    return None


def run_ge(case) -> str | None:
    """None when ge passes the case, else why not (one line)."""
    from ge.frontend.onnx_importer import import_model
    from ge.interpreter.runner import run

    try:
        module, weights = import_model(case.model)
        names = [vi.name for vi in case.model.graph.input]
        for inputs, expected in case.data_sets:
            feeds = {n: _array(v) for n, v in zip(names, inputs)}
            if any(not isinstance(v, np.ndarray) for v in feeds.values()):
                return "a sequence or optional input"
            got = run(module, feeds, weights)
            failure = _check([got[vi.name] for vi in case.model.graph.output], expected, case.rtol, case.atol)
            if failure:
                return failure
    except Exception as e:  # the table counts every kind of failure, import refusals included
        text = str(e).strip().splitlines()
        return f"{type(e).__name__}: {text[0] if text else ''}"[:160]
    return None


def run_onnxruntime(case) -> str | None:
    import onnxruntime as ort

    try:
        session = ort.InferenceSession(case.model.SerializeToString(), providers=["CPUExecutionProvider"])
        names = [i.name for i in session.get_inputs()]
        for inputs, expected in case.data_sets:
            got = session.run(None, {n: _array(v) for n, v in zip(names, inputs)})
            failure = _check(got, expected, case.rtol, case.atol)
            if failure:
                return failure
    except Exception as e:
        return type(e).__name__
    return None


def tally(cases) -> tuple[Counter, Counter, Counter, dict[str, list[str]]]:
    """(cases, ge passes, onnxruntime passes) per operator, and ge's failures per operator."""
    total, ge_passed, ort_passed = Counter(), Counter(), Counter()
    failures: dict[str, list[str]] = defaultdict(list)
    for case in cases:
        op = case.model.graph.node[0].op_type if len(case.model.graph.node) == 1 else "(several nodes)"
        total[op] += 1
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            ge_failure, ort_failure = run_ge(case), run_onnxruntime(case)
        ge_passed[op] += ge_failure is None
        ort_passed[op] += ort_failure is None
        if ge_failure:
            failures[op].append(f"{case.name}: {ge_failure}")
    return total, ge_passed, ort_passed, failures


def print_table(total: Counter, ge_passed: Counter, ort_passed: Counter, failures: dict[str, list[str]] | None) -> None:
    print("| operator | cases | ge passes | onnxruntime passes |")
    print("|---|---|---|---|")
    for op in sorted(total):
        print(f"| {op} | {total[op]} | {ge_passed[op]} | {ort_passed[op]} |")
    print(f"| **all** | **{sum(total.values())}** | **{sum(ge_passed.values())}** | **{sum(ort_passed.values())}** |")
    complete = sum(ge_passed[op] == total[op] for op in total)
    some = sum(1 for op in total if ge_passed[op])
    print(f"\n{len(total)} operators: ge passes every case of {complete}, some case of {some}")
    for op in sorted(failures or {}):
        for line in (failures or {})[op]:
            print("FAIL", line)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--failures", action="store_true", help="list ge's failures, one line each")
    parser.add_argument("--ops", help="only the cases of these operators (comma-separated)")
    args = parser.parse_args(argv)
    wanted = set(args.ops.split(",")) if args.ops else None
    from onnx.backend.test.case import node

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [
            c
            for c in node.collect_testcases(None)
            if c.model is not None and c.data_sets and not c.name.endswith("_expanded")
            if all(n.domain in ("", "ai.onnx") for n in c.model.graph.node)
            if wanted is None or {n.op_type for n in c.model.graph.node} & wanted
        ]
    total, ge_passed, ort_passed, failures = tally(cases)
    print_table(total, ge_passed, ort_passed, failures if args.failures else None)


if __name__ == "__main__":
    main()
