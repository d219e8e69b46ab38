"""torch.export programs imported: `ge-translate --import-torch model.pt2` and
`ge.GraphParser().parse_torch`; parameters and buffers under their state_dict names, nodes under
their module paths, a dim exported as a `torch.export.Dim` symbolic with its range; the imported
graph equals eager PyTorch at the ge level, at O3 on symbols and bound at the stream level. Bad
files are one line."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import ge  # noqa: E402
from ge.ge_dialects.ge.base import location_name  # noqa: E402
from ge.ge_dialects.ge.dims import ranges_of  # noqa: E402
from ge.ge_dialects.ge.weights import clone_with_weights, weights_of  # noqa: E402
from ge.interpreter.runner import main_function, run  # noqa: E402
from ge.lowering.run_time import run_dynamic  # noqa: E402
from ge.passes.pipeline import apply_all, parse_passes  # noqa: E402
from ge.tools import ge_run, ge_translate  # noqa: E402
from ge.tools.common import make_context  # noqa: E402


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        return self.head(self.features(x).flatten(1))


@pytest.fixture(scope="module")
def program():
    torch.manual_seed(0)
    net = Net().eval()
    batch = torch.export.Dim("batch", min=1, max=32)
    ep = torch.export.export(net, (torch.randn(2, 3, 8, 8),), dynamic_shapes={"x": {0: batch}})
    return net, ep


def _x(batch: int) -> np.ndarray:
    return np.random.default_rng(batch).standard_normal((batch, 3, 8, 8)).astype(np.float32)


def test_parse_torch_keeps_names_symbols_and_numbers(program):
    net, ep = program
    graph = ge.GraphParser().parse_torch(ep, "net")
    module = graph.module
    assert {"features.0.weight", "head.weight"} <= set(weights_of(module))  # the small ones are inline
    assert any((location_name(op) or "").startswith("features.0/") for op in module.walk())
    main = main_function(module)
    (symbol,) = {d for d in main.arg_attrs.data[0].data["ge.dims"].data if d.data} if main.arg_attrs else set()
    assert ranges_of(main) == {symbol.data: (1, 32)}
    lowered = clone_with_weights(module)
    apply_all(
        make_context(),
        lowered,
        parse_passes("ge-optimize{level=3},partition-dynamic,lower-to-tasks,plan-memory,lower-to-streams"),
    )
    for batch in (1, 3, 5):
        x = _x(batch)
        with torch.no_grad():
            want = net(torch.from_numpy(x)).numpy()
        (name,) = graph.inputs
        np.testing.assert_allclose(run(module, {name: x})["output"], want, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(run_dynamic(lowered, {name: x})[0]["output"], want, rtol=1e-4, atol=1e-5)


def test_ge_translate_imports_a_saved_program(program, tmp_path, run_main):
    net, ep = program
    torch.export.save(ep, tmp_path / "net.pt2")
    code, _, err = run_main(ge_translate.main, ["--import-torch", tmp_path / "net.pt2", "-o", tmp_path / "net.mlir"])
    assert code == 0, err
    assert (tmp_path / "net.safetensors").exists()
    np.savez(tmp_path / "in.npz", x=_x(4))
    code, _, err = run_main(
        ge_run.main, [tmp_path / "net.mlir", "--inputs", tmp_path / "in.npz", "-o", tmp_path / "out.npz"]
    )
    assert code == 0, err
    with torch.no_grad():
        want = net(torch.from_numpy(_x(4))).numpy()
    np.testing.assert_allclose(np.load(tmp_path / "out.npz")["output"], want, rtol=1e-4, atol=1e-5)


def test_a_file_that_is_no_program_is_one_line(tmp_path, run_main):
    (tmp_path / "bad.pt2").write_bytes(b"not a zip")
    code, _, err = run_main(ge_translate.main, ["--import-torch", tmp_path / "bad.pt2"])
    assert code == 1 and err.count("\n") == 1 and "not a saved torch.export program" in err, err


def test_a_program_saved_by_a_newer_pytorch_is_one_line(program, tmp_path, run_main):
    """An archive whose export schema is newer than this torch reads: named before torch.export.load
    (which would log a traceback)."""
    import json
    import zipfile

    torch.export.save(program[1], tmp_path / "net.pt2")
    with zipfile.ZipFile(tmp_path / "net.pt2") as src, zipfile.ZipFile(tmp_path / "newer.pt2", "w") as out:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("models/model.json"):
                model = json.loads(data)
                model["schema_version"] = {"major": model["schema_version"]["major"] + 1, "minor": 0}
                data = json.dumps(model).encode()
            out.writestr(name, data)
    code, _, err = run_main(ge_translate.main, ["--import-torch", tmp_path / "newer.pt2"])
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "newer.pt2: saved by a newer PyTorch (export schema" in err


def test_a_program_returning_what_is_not_a_tensor_is_one_line():
    class Odd(nn.Module):
        def forward(self, x):
            return x + 1, 3

    program = torch.export.export(Odd(), (torch.ones(2),))
    with pytest.raises(ge.GEError, match=r"program: the program returns values that are not tensors: output #1 \(3\)"):
        ge.GraphParser().parse_torch(program)


def test_pytorchs_encoder_layer_with_dynamic_batch_and_sequence():
    """nn.TransformerEncoderLayer exported with batch and sequence as Dims (its head split computes
    batch * heads from the sizes): equal to eager PyTorch at the ge level and at O3 on symbols."""
    from ge.passes.ge_optimize import GeOptimizePass

    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True).eval()
    dims = {0: torch.export.Dim("batch", min=1, max=16), 1: torch.export.Dim("seq", min=2, max=64)}
    ep = torch.export.export(layer, (torch.randn(2, 5, 16),), dynamic_shapes={"src": dims})
    graph = ge.GraphParser().parse_torch(ep)
    optimized = clone_with_weights(graph.module)
    GeOptimizePass(level=3).apply(make_context(), optimized)
    (name,) = graph.inputs
    for batch, seq in ((1, 3), (3, 7)):
        x = torch.randn(batch, seq, 16)
        with torch.no_grad():
            want = layer(x).numpy()
        for module in (graph.module, optimized):
            np.testing.assert_allclose(run(module, {name: x.numpy()})["output"], want, rtol=1e-4, atol=1e-5)
