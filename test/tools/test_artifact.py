"""Compiled artifacts (tools/artifact.py): round trip, a standard zip, and every way a file is refused."""

import json
import zipfile
import zlib

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import ge
from ge.frontend.onnx_importer import import_model
from ge.ge_dialects.ge.weights import attach_weights, clone_with_weights, referenced_weights
from ge.ge_dialects.limits import tensor_byte_limit
from ge.interpreter.runner import run
from ge.tools import artifact as art
from ge.tools.artifact import MEMBERS, Artifact, content_hash, load_artifact, read_artifact
from ge.tools.common import UserError
from ge.tools.compile_cache import CompileOptions, compile_graph


def small_model(seed: int = 0):
    """conv, BN, relu, pool, a linear layer: weights on both the cube and the vector path."""
    rng = np.random.default_rng(seed)

    def init(name, *shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)

    inits = [
        init("w", 8, 3, 3, 3),
        init("scale", 8),
        init("bias", 8),
        init("mean", 8),
        numpy_helper.from_array(rng.random(8).astype(np.float32) + 0.5, "var"),
        init("fc", 8, 10),
    ]
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="/conv"),
            helper.make_node("BatchNormalization", ["c", "scale", "bias", "mean", "var"], ["b"], name="/bn"),
            helper.make_node("Relu", ["b"], ["r"], name="/relu"),
            helper.make_node("GlobalAveragePool", ["r"], ["p"], name="/pool"),
            helper.make_node("Flatten", ["p"], ["f"], name="/flat"),
            helper.make_node("MatMul", ["f", "fc"], ["y"], name="/fc"),
        ],
        "small",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10])],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def ge_module(seed: int = 0):
    module, weights = import_model(small_model(seed))
    attach_weights(module, weights)
    return module


INPUTS = {"x": np.random.default_rng(1).standard_normal((2, 3, 8, 8)).astype(np.float32)}


@pytest.fixture(scope="module")
def compiled():
    return compile_graph(ge_module(), CompileOptions(), use_cache=False)


@pytest.fixture
def saved(compiled, tmp_path):
    path = tmp_path / "m.ge"
    compiled.artifact.save(path)
    return path


def refused(path) -> str:
    """The one-line reason `load_artifact` gives for `path`."""
    with pytest.raises(UserError) as e:
        load_artifact(path)
    message = str(e.value)
    assert "\n" not in message and message.startswith(str(path)), message
    return message


def rewrite(path, artifact: Artifact, rehash: bool = True) -> None:
    """Writes `artifact` at `path` through the real writer (valid zip structure and CRCs), its
    content hash recomputed unless `rehash` is False: only the check under test can refuse it."""
    manifest = dict(artifact.manifest)
    if rehash:
        manifest["content_hash"] = content_hash(manifest, artifact.ir, artifact.weights)
    Artifact(manifest, artifact.ir, artifact.weights).write_to(path)


def test_round_trip_gives_the_same_outputs(compiled, saved):
    module, artifact = load_artifact(saved)
    assert artifact == compiled.artifact
    want = run(compiled.module, INPUTS)
    got = run(module, INPUTS)
    assert want.keys() == got.keys() == {"y"}
    np.testing.assert_array_equal(got["y"], want["y"])
    fresh = compile_graph(ge_module(), CompileOptions(), use_cache=False)
    np.testing.assert_array_equal(run(fresh.module, INPUTS)["y"], want["y"])
    reference = run(ge_module(), INPUTS)["y"]  # the uncompiled graph
    np.testing.assert_allclose(got["y"], reference, rtol=1e-4, atol=1e-4)


def test_manifest_records_the_compile(compiled, saved):
    m = compiled.artifact.manifest
    assert m["format"] == "ge-artifact" and m["format_version"] == art.FORMAT_VERSION
    assert m["compiler_version"] == ge.__version__
    assert m["target"] == "ascend910b" and m["options"]["target"] == "ascend910b"
    assert m["options"]["optimization_level"] == 3 and m["pipeline"].startswith("ge-optimize{level=3")
    assert m["inputs"] == [{"name": "x", "shape": [2, 3, 8, 8], "dtype": "float32"}]
    assert m["outputs"] == [{"name": "y", "shape": [2, 10], "dtype": "float32"}]
    kernels = sum(1 for op in compiled.module.walk() if op.name == "task.kernel")
    assert m["num_operators"] == kernels > 0
    assert m["content_hash"] == content_hash(m, compiled.artifact.ir, compiled.artifact.weights)
    assert compiled.artifact.size == saved.stat().st_size


def test_a_standard_deterministic_zip(compiled, saved, tmp_path):
    with zipfile.ZipFile(saved) as z:
        assert z.testzip() is None
        assert tuple(z.namelist()) == MEMBERS
        assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
        assert json.loads(z.read("manifest.json")) == compiled.artifact.manifest
        assert z.read("model.mlir") == compiled.artifact.ir
    again = compile_graph(ge_module(), CompileOptions(), use_cache=False)
    again.artifact.save(tmp_path / "again.ge")
    assert (tmp_path / "again.ge").read_bytes() == saved.read_bytes()


def test_every_structure_byte_and_sampled_data_bytes_are_checked(saved, tmp_path):
    """A flipped byte anywhere is refused: every byte of the zip headers and directory, and every
    31st byte of the members' data (read_artifact alone: the checks before parsing)."""
    data = bytearray(saved.read_bytes())
    members = [(n, len(d), 0) for n, d in Artifact(**_members(saved)).members()]
    headers, tail_offset, tail = art._layout(members)
    structure = [o + i for o, h in headers for i in range(len(h))] + [tail_offset + i for i in range(len(tail))]
    offsets = sorted(set(structure) | set(range(0, len(data), 31)))
    bad = tmp_path / "bad.ge"
    for offset in offsets:
        flipped = bytearray(data)
        flipped[offset] ^= 0x01
        bad.write_bytes(flipped)
        with pytest.raises(UserError) as e:
            read_artifact(bad)
        assert "\n" not in str(e.value) and str(e.value).startswith(str(bad)), (offset, e.value)


def _members(path) -> dict:
    with zipfile.ZipFile(path) as z:
        return {
            "manifest": json.loads(z.read("manifest.json")),
            "ir": z.read("model.mlir"),
            "weights": z.read("weights.safetensors"),
        }


def test_a_flipped_byte_in_each_member(saved, tmp_path):
    data = saved.read_bytes()
    members = Artifact(**_members(saved)).members()
    headers, _, _ = art._layout([(n, len(d), 0) for n, d in members])
    for (offset, header), (name, member) in zip(headers, members):
        flipped = bytearray(data)
        flipped[offset + len(header) + len(member) // 2] ^= 0x20
        bad = tmp_path / "bad.ge"
        bad.write_bytes(flipped)
        assert f"member {name} fails its CRC" in refused(bad)


@pytest.mark.parametrize("keep", [0, 3, 100, -1000, -60, -1])
def test_truncated(saved, tmp_path, keep):
    bad = tmp_path / "cut.ge"
    bad.write_bytes(saved.read_bytes()[:keep])
    refused(bad)


def test_truncated_member_data(saved, tmp_path):
    """Cut out of the middle (the directory intact at the end): the sizes no longer add up."""
    data = saved.read_bytes()
    bad = tmp_path / "cut.ge"
    bad.write_bytes(data[:200] + data[1200:])
    refused(bad)


def test_future_format_version(saved, tmp_path):
    parts = _members(saved)
    parts["manifest"]["format_version"] = art.FORMAT_VERSION + 1
    bad = tmp_path / "future.ge"
    rewrite(bad, Artifact(**parts))
    assert f"format version {art.FORMAT_VERSION + 1} is newer" in refused(bad)


def test_another_compiler_version(saved, tmp_path):
    parts = _members(saved)
    parts["manifest"]["compiler_version"] = "99.0.0"
    bad = tmp_path / "other.ge"
    rewrite(bad, Artifact(**parts))
    assert 'compiled by ge-compiler "99.0.0"' in refused(bad)


def test_an_extra_member(saved, tmp_path):
    bad = tmp_path / "extra.ge"
    bad.write_bytes(saved.read_bytes())
    with zipfile.ZipFile(bad, "a") as z:
        z.writestr("run_me.py", "import os")
    assert 'unexpected member "run_me.py"' in refused(bad)


def test_a_missing_member(saved, tmp_path):
    bad = tmp_path / "missing.ge"
    parts = _members(saved)
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("manifest.json", art.canonical_json(parts["manifest"]))
        z.writestr("model.mlir", parts["ir"])
    assert "member weights.safetensors is missing" in refused(bad)


def test_members_compressed_or_reordered(saved, tmp_path):
    parts = _members(saved)
    members = [("manifest.json", art.canonical_json(parts["manifest"])), ("model.mlir", parts["ir"])]
    members.append(("weights.safetensors", parts["weights"]))
    bad = tmp_path / "deflated.ge"
    with zipfile.ZipFile(bad, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            z.writestr(name, data)
    assert "is compressed" in refused(bad)
    with zipfile.ZipFile(bad, "w") as z:
        for name, data in reversed(members):
            z.writestr(name, data)
    assert "in this order" in refused(bad)
    with zipfile.ZipFile(bad, "w") as z:  # what zipfile writes (timestamps, no zip64) is not canonical
        for name, data in members:
            z.writestr(name, data)
    assert "not the one ge-compile writes" in refused(bad)


def test_a_manifest_that_lies_about_the_signature(saved, tmp_path):
    bad = tmp_path / "lie.ge"
    for side, entry, change in (
        ("inputs", 0, {"shape": [4, 3, 8, 8]}),
        ("inputs", 0, {"dtype": "float16"}),
        ("outputs", 0, {"name": "z"}),
    ):
        parts = _members(saved)
        parts["manifest"][side][entry].update(change)
        rewrite(bad, Artifact(**parts))
        read_artifact(bad)  # the hash is consistent: only the comparison with the IR can tell
        assert f"the manifest's {side} disagree with the IR's @main at position 0" in refused(bad)
    parts = _members(saved)
    parts["manifest"]["inputs"].append({"name": "extra", "shape": [1], "dtype": "float32"})
    rewrite(bad, Artifact(**parts))
    assert 'position 1: manifest "extra": float32[1], IR (none)' in refused(bad)
    parts = _members(saved)
    parts["manifest"]["target"] = "ascend910"
    rewrite(bad, Artifact(**parts))
    assert "target ascend910 is not the IR's ascend910b" in refused(bad)
    parts = _members(saved)
    parts["manifest"]["num_operators"] += 1
    rewrite(bad, Artifact(**parts))
    assert "kernels, the IR has" in refused(bad)


@pytest.mark.parametrize("member", ["ir", "weights", "manifest"])
def test_the_hash_catches_a_change_in_each_member(saved, tmp_path, member, monkeypatch):
    """Mutation test: a member changed behind a valid zip (CRCs recomputed) is refused by the
    content hash alone; with the hash check disabled the same file gets past read_artifact."""
    parts = _members(saved)
    if member == "manifest":
        parts["manifest"]["pipeline"] = parts["manifest"]["pipeline"].replace("level=3", "level=2")
    else:
        data = bytearray(parts[member])
        data[len(data) // 2] ^= 0x01
        parts[member] = bytes(data)
    bad = tmp_path / "tampered.ge"
    rewrite(bad, Artifact(**parts), rehash=False)
    assert "content hash mismatch" in refused(bad)
    monkeypatch.setattr(art, "content_hash", lambda manifest, ir, weights: manifest["content_hash"])
    read_artifact(bad)


def test_an_edited_manifest_is_refused_even_with_the_same_values(saved, tmp_path):
    parts = _members(saved)
    manifest = json.dumps(parts["manifest"]).encode()  # the same fields, other whitespace
    members = [(art.MANIFEST, manifest), (art.IR, parts["ir"]), (art.WEIGHTS, parts["weights"])]
    headers, _, tail = art._layout([(n, len(d), zlib.crc32(d)) for n, d in members])
    bad = tmp_path / "edited.ge"
    bad.write_bytes(b"".join(h + d for (_, h), (_, d) in zip(headers, members)) + tail)
    assert "not in the form ge-compile writes" in refused(bad)


def test_manifest_fields(saved, tmp_path):
    bad = tmp_path / "fields.ge"
    for edit, reason in (
        (lambda m: m.update(run="rm -rf /"), 'unknown field "run"'),
        (lambda m: m.pop("pipeline"), "has no field pipeline"),
        (lambda m: m.update(num_operators="59"), "num_operators is not a JSON int"),
        (lambda m: m.update(format="zip"), "does not name the format ge-artifact"),
        (lambda m: m.update(format_version=0), "format version 0 is not one"),
        (lambda m: m.update(op_libraries={}), "op_libraries is not a JSON list"),
        (lambda m: m.update(op_libraries=[{"name": "x", "sha256": 1}]), "op_libraries holds {"),
        (lambda m: m.update(op_libraries=[{"name": "x", "sha256": "0" * 64}]), "custom operator library 'x'"),
    ):
        parts = _members(saved)
        edit(parts["manifest"])
        rewrite(bad, Artifact(**parts))
        assert reason in refused(bad)


def test_sizes_are_checked_before_reading(saved, tmp_path, monkeypatch):
    """A weight over --max-tensor-bytes is refused from the safetensors header: no member's data is read."""
    reads = []
    original = art.read_exactly
    monkeypatch.setattr(art, "read_exactly", lambda fd, o, n: reads.append(n) or original(fd, o, n))
    with tensor_byte_limit(100):
        message = refused(saved)
    assert "more than the limit of 100 bytes (--max-tensor-bytes)" in message
    assert max(reads) < 4096  # headers only: the IR and the weights were never read
    with tensor_byte_limit(1 << 20):
        load_artifact(saved)
    monkeypatch.setattr(art, "MAX_MANIFEST_BYTES", 10)
    assert "member manifest.json has" in refused(saved)


def test_not_an_artifact(tmp_path):
    text = tmp_path / "m.ge"
    text.write_text("module {}\n")
    assert "not a ge artifact" in refused(text)
    assert "cannot open" in refused(tmp_path / "absent.ge")
    assert "not a regular file" in refused(tmp_path)


def test_narrow_weights_round_trip(tmp_path):
    """bfloat16 and float8 weights keep their types through the weights member."""
    module = ge_module()
    weights = {"a": np.arange(6, dtype=np.float32).astype(ml_dtypes.bfloat16).reshape(2, 3)}
    weights["b"] = np.linspace(-2, 2, 8).astype(ml_dtypes.float8_e4m3fn)
    data = art.safetensors_bytes(weights)
    compiled = compile_graph(module, CompileOptions(precision_mode="allow_mix_precision_bf16"), use_cache=False)
    path = tmp_path / "bf16.ge"
    compiled.artifact.save(path)
    loaded, _ = load_artifact(path)
    want = referenced_weights(compiled.module)
    got = referenced_weights(loaded)
    assert want.keys() == got.keys()
    for key in want:
        assert got[key].dtype == want[key].dtype and np.array_equal(got[key].view(np.uint8), want[key].view(np.uint8))
    assert any(a.dtype == ml_dtypes.bfloat16 for a in got.values())
    np.testing.assert_array_equal(run(loaded, INPUTS)["y"], run(compiled.module, INPUTS)["y"])
    store_path = tmp_path / "w.safetensors"
    store_path.write_bytes(data)
    from ge.frontend.sidecar import WeightStore

    store = WeightStore(store_path)
    assert store["a"].dtype == ml_dtypes.bfloat16 and store["b"].dtype == ml_dtypes.float8_e4m3fn
    assert np.array_equal(store["b"].view(np.uint8), weights["b"].view(np.uint8))


def test_only_stream_level_modules_are_artifacts():
    with pytest.raises(UserError, match="only a module lowered to streams"):
        art.build_artifact(clone_with_weights(ge_module()), {}, "", "")
