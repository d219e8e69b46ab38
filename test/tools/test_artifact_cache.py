"""The compile cache (tools/compile_cache.py): keys, hits, damaged entries, concurrent writers."""

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import onnx
import pytest
from test_artifact import INPUTS, ge_module, small_model
from tool_server import run as run_tool

from ge.ge_dialects.ge.weights import clone_with_weights, weights_of
from ge.interpreter.runner import run
from ge.tools import compile_cache
from ge.tools.artifact import load_artifact
from ge.tools.common import UserError
from ge.tools.compile_cache import CompileOptions, cache_key, compile_graph


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("GE_CACHE_DIR", str(folder))
    return folder


def entries(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_recompile_is_a_hit_with_the_same_result(cache):
    first = compile_graph(ge_module(), CompileOptions())
    assert not first.cache_hit and first.cache_note is None
    assert entries(cache) == [f"{first.artifact.manifest['cache_key']}.ge"]
    second = compile_graph(ge_module(), CompileOptions())
    assert second.cache_hit and second.artifact == first.artifact
    np.testing.assert_array_equal(run(second.module, INPUTS)["y"], run(first.module, INPUTS)["y"])
    off = compile_graph(ge_module(), CompileOptions(), use_cache=False)
    assert not off.cache_hit and off.artifact == first.artifact


def test_the_key_follows_the_model_the_options_and_the_compiler(monkeypatch):
    module = ge_module()
    base = CompileOptions().resolved(module)
    key = cache_key(module, base)
    assert cache_key(ge_module(), base) == key  # the same model imported again
    assert CompileOptions(target="ascend910b").resolved(module) == base  # "npu" is the default chip
    for change in ({"optimization_level": 1}, {"target": "ascend910"}, {"streams": 2}, {"mode": "op"}):
        assert cache_key(module, {**base, **change}) != key, change
    assert cache_key(ge_module(seed=1), base) != key  # other weights, same IR text
    changed = clone_with_weights(module)
    table = weights_of(changed)
    name = next(iter(table))
    table.added[name] = table[name].copy()
    table.added[name].flat[0] += 1  # one weight element
    assert cache_key(changed, base) != key
    monkeypatch.setattr(compile_cache, "compiler_build", lambda: "another build")
    assert cache_key(module, base) != key
    monkeypatch.setattr(compile_cache.ge, "__version__", "9.9.9")
    assert cache_key(module, base) != key


def test_a_damaged_entry_is_a_miss_and_is_replaced(cache):
    first = compile_graph(ge_module(), CompileOptions())
    (entry,) = cache.iterdir()
    good = entry.read_bytes()
    for damage in (good[: len(good) // 2], good[:100] + bytes([good[100] ^ 1]) + good[101:], b"", b"junk"):
        entry.write_bytes(damage)
        again = compile_graph(ge_module(), CompileOptions())
        assert not again.cache_hit and again.artifact == first.artifact
        assert entry.read_bytes() == good
    assert compile_graph(ge_module(), CompileOptions()).cache_hit


def test_an_entry_holding_another_model_is_a_miss(cache):
    other = compile_graph(ge_module(seed=1), CompileOptions())
    mine = compile_graph(ge_module(), CompileOptions(), use_cache=False)
    entry = cache / f"{mine.artifact.manifest['cache_key']}.ge"
    (cache / f"{other.artifact.manifest['cache_key']}.ge").rename(entry)  # a valid artifact under my key
    again = compile_graph(ge_module(), CompileOptions())
    assert not again.cache_hit and again.artifact == mine.artifact
    assert load_artifact(entry)[1] == mine.artifact


def test_an_unwritable_cache_costs_the_hit_not_the_compile(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("GE_CACHE_DIR", str(blocker / "cache"))
    result = compile_graph(ge_module(), CompileOptions())
    assert not result.cache_hit and result.cache_note and "cannot write" in result.cache_note
    assert run(result.module, INPUTS)["y"].shape == (2, 10)


def test_bad_options_are_one_line_before_any_work():
    for options, reason in (
        (CompileOptions(level=4), "optimization level 4"),
        (CompileOptions(target="ascend310"), "unknown target 'ascend310'"),
        (CompileOptions(precision_mode="fp8"), "precision mode 'fp8'"),
        (CompileOptions(streams=-1), "streams -1"),
        (CompileOptions(mode="batch"), "mode 'batch'"),
    ):
        with pytest.raises(UserError, match=reason):
            compile_graph(ge_module(), options)


def test_concurrent_compiles_of_one_model_leave_one_whole_entry(cache, tmp_path):
    """Four processes compile the same model into one empty cache at once: each succeeds, the entry
    is a valid artifact, and no temporary is left behind (each writer renames its own file)."""
    model = tmp_path / "small.onnx"
    onnx.save(small_model(), model)
    env = dict(os.environ, GE_CACHE_DIR=str(cache))

    def compile_to(i: int):
        return run_tool("ge-compile", model, "-o", tmp_path / f"out{i}.ge", "--quiet", env=env, timeout=300)

    with ThreadPoolExecutor(4) as pool:  # four processes (forks of the tool server) at once
        for done in pool.map(compile_to, range(4)):
            assert done.returncode == 0, done.stderr
    (entry,) = cache.iterdir()  # no temporaries
    _, artifact = load_artifact(entry)
    for i in range(4):
        assert load_artifact(tmp_path / f"out{i}.ge")[1] == artifact


def test_two_writers_at_once_each_write_their_own_temporary(cache, monkeypatch):
    """Deterministic overlap: both threads have written their whole temporary before either renames
    (a barrier in the writer), and a reader meanwhile finds no half-written entry."""
    import threading

    from ge.tools.artifact import Artifact

    written, listed = threading.Barrier(2, timeout=120), threading.Barrier(2, timeout=120)
    seen_during_writes: list[list[str]] = []
    write_to = Artifact.write_to

    def paused_write(self, path):
        write_to(self, path)
        written.wait()  # both temporaries complete, neither renamed yet
        seen_during_writes.append(entries(cache))
        listed.wait()

    monkeypatch.setattr(Artifact, "write_to", paused_write)
    modules = [ge_module(), ge_module()]
    results: list = [None, None]

    def compile_one(i):
        results[i] = compile_graph(modules[i], CompileOptions())

    threads = [threading.Thread(target=compile_one, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert all(r is not None and not r.cache_hit for r in results)
    assert len(seen_during_writes) == 2
    for seen in seen_during_writes:  # two temporaries side by side, no entry yet
        assert len(seen) == 2 and all(n.startswith(".") and n.endswith(".tmp") for n in seen), seen
    (entry,) = cache.iterdir()
    assert load_artifact(entry)[1] == results[0].artifact == results[1].artifact


def test_progress_is_told_of_each_pass_of_a_miss_and_of_none_on_a_hit(cache):
    seen: list[str] = []

    class Recording:
        def starting(self, pass_, index, total):
            seen.append(pass_.name)

    assert not compile_graph(ge_module(), CompileOptions(), progress=Recording()).cache_hit
    assert seen[-4:] == ["lower-to-tasks", "plan-memory", "relax-reuse", "lower-to-streams"]  # after ge-optimize's
    seen.clear()
    assert compile_graph(ge_module(), CompileOptions(), progress=Recording()).cache_hit and seen == []
