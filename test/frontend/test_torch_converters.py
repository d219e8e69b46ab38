"""Every ATen converter's declared cases (frontend/torch_converters.py), generated: the case's module
exported by torch.export, imported through the converters and run by the ge interpreter, equals
eager PyTorch; each case's graph holds its converter's overload. Refusals are one line naming every
overload without a converter."""

from __future__ import annotations

import functools

import numpy as np
import pytest

torch = pytest.importorskip("torch")

# one worker runs the module: each case is exported once there (`exported`), for its own test and
# for the check that every overload is held by some case
pytestmark = pytest.mark.xdist_group("torch_converters")

from ge.frontend.torch_fx import (  # noqa: E402
    Case,
    TorchImportError,
    converter_table,
    core_aten,
    import_exported_program,
    overload_name,
)
from ge.interpreter.runner import run  # noqa: E402


def _cases() -> list[tuple[frozenset[str], int, Case]]:
    """Each declared case once, with the overloads whose converter declares it."""
    found: dict[int, tuple[set[str], int, Case]] = {}
    for overload, converter in converter_table().items():
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


@functools.cache
def exported(index: int):
    """Case `index` of UNIQUE: its module, inputs, core-ATen program and the overloads it holds
    (each case exported once per test process)."""
    _, seed, case = UNIQUE[index]
    inputs = _inputs(case, seed)
    module, program = _export(case, inputs)
    core = core_aten(program)
    held = {overload_name(n.target) for n in core.graph.nodes if n.op == "call_function"}
    return module, inputs, core, held


def test_every_overload_is_exercised_by_a_case():
    assert len(UNIQUE) > 40 and len(converter_table()) > 100  # the table is the one the import reads
    held = set().union(*(exported(i)[3] for i in range(len(UNIQUE))))
    unexercised = sorted(set(converter_table()) - held)
    assert not unexercised, f"overloads no case's graph holds: {unexercised}"


@pytest.mark.parametrize("index", range(len(UNIQUE)), ids=[f"{sorted(o)[0]}-{i}" for o, i, _ in UNIQUE])
def test_the_case_equals_eager_pytorch(index):
    overloads = UNIQUE[index][0]
    module, inputs, program, held = exported(index)
    assert overloads & held, f"the case exercises none of {sorted(overloads)}: {sorted(held)}"
    ge_module, weights = import_exported_program(program, decompose=False)
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
            return torch.cummax(x, 0).values + torch.rand(3, 3)

    program = torch.export.export(Odd(), (torch.ones(3, 3),))
    with pytest.raises(TorchImportError) as e:
        import_exported_program(program)
    assert str(e.value) == (
        "2 operators without a ge converter: aten.cummax.default, "
        "aten.rand.default (random numbers: ge's graphs are deterministic)"
    )
