"""Every ATen converter's declared cases (frontend/torch_converters.py), generated: the case's module
exported by torch.export, imported through the converters and run by the ge interpreter, equals
eager PyTorch; each case's graph holds its converter's overload. Refusals are one line naming every
overload without a converter."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ge.frontend.torch_fx import CONVERTERS, Case, TorchImportError, import_exported_program, overload_name  # noqa: E402
from ge.interpreter.runner import run  # noqa: E402


def _cases() -> list[tuple[frozenset[str], int, Case]]:
    """Each declared case once, with the overloads whose converter declares it."""
    found: dict[int, tuple[set[str], int, Case]] = {}
    for overload, converter in CONVERTERS.items():
        for i, case in enumerate(converter.cases):
            found.setdefault(id(case), (set(), i, case))[0].add(overload)
    return [(frozenset(o), i, c) for o, i, c in found.values()]


UNIQUE = _cases()


def _inputs(case: Case, seed: int) -> list:
    rng = np.random.default_rng(seed)
    if case.dtype == "int64":
        return [torch.from_numpy(rng.integers(0, 10, shape)) for shape in case.shapes]
    return [torch.from_numpy(rng.standard_normal(shape).astype(case.dtype)) for shape in case.shapes]


def _export(case: Case, inputs: list):
    module = case.make().eval()
    dynamic = None
    if case.dynamic:
        dims = [dict() for _ in inputs]
        for k, (i, d) in enumerate(case.dynamic):
            dims[i][d] = torch.export.Dim(f"d{k}", min=2, max=64)
        dynamic = (tuple(d or None for d in dims),)  # forward(*xs): one argument, a tuple
    return module, torch.export.export(module, tuple(inputs), dynamic_shapes=dynamic)


@pytest.fixture(scope="module")
def exported():
    """Each case's module, inputs, program and the overloads its decomposed graph holds."""
    found = {}
    for _, index, case in UNIQUE:
        inputs = _inputs(case, index)
        module, program = _export(case, inputs)
        held = {overload_name(n.target) for n in program.run_decompositions().graph.nodes if n.op == "call_function"}
        found[id(case)] = (module, inputs, program, held)
    return found


def test_every_overload_is_exercised_by_a_case(exported):
    held = set().union(*(h for *_, h in exported.values()))
    unexercised = sorted(set(CONVERTERS) - held)
    assert not unexercised, f"overloads no case's graph holds: {unexercised}"


@pytest.mark.parametrize("overloads, index, case", UNIQUE, ids=[f"{sorted(o)[0]}-{i}" for o, i, _ in UNIQUE])
def test_the_case_equals_eager_pytorch(exported, overloads, index, case):
    module, inputs, program, held = exported[id(case)]
    assert overloads & held, f"the case exercises none of {sorted(overloads)}: {sorted(held)}"
    ge_module, weights = import_exported_program(program)
    with torch.no_grad():
        want = module(*inputs).numpy()
    names = [
        n.name for n in program.graph.nodes if n.op == "placeholder" and n.name in program.graph_signature.user_inputs
    ]
    got = run(ge_module, {n: x.numpy() for n, x in zip(names, inputs)}, weights)["output"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_operators_without_a_converter_are_named_in_one_line():
    class Odd(torch.nn.Module):
        def forward(self, x):
            return torch.cumsum(x, 0) + torch.flip(x, [0])

    program = torch.export.export(Odd(), (torch.ones(3),))
    with pytest.raises(TorchImportError) as e:
        import_exported_program(program)
    assert str(e.value) == "2 operators without a ge converter: aten.cumsum.default, aten.flip.default"
