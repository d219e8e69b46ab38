"""The strict target loader: every file becomes a typed Target, or one line naming the file and the key."""

import dataclasses
from pathlib import Path

import pytest

import ge.target.loader as loader
from ge.target import Target, TargetError, load_target, load_target_file, target_names
from ge.target.spec import Cores

FOLDER = Path(loader.__file__).parent
REFERENCE = (FOLDER / "ascend910b.toml").read_text()


def variant(tmp_path: Path, old: str, new: str) -> Path:
    """The 910B's file with one piece of text replaced (exactly once), written as mine.toml."""
    assert REFERENCE.count(old) == 1, old
    path = tmp_path / "mine.toml"
    path.write_text(REFERENCE.replace(old, new))
    return path


def refused(path: Path) -> str:
    with pytest.raises(TargetError) as e:
        load_target_file(path)
    message = str(e.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message


@pytest.mark.parametrize("name", target_names())
def test_builtin_targets_load_typed(name):
    t = load_target(name)
    assert isinstance(t, Target) and t.name == name
    assert type(t.buffers.ub) is int and type(t.hbm.bytes) is int and type(t.cores.separated_cube_vector) is bool
    assert type(t.mte.ddr) is float and type(t.vector.transcendental_cost) is float  # an integer in the file
    assert load_target(name) is t  # cached
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.buffers.ub = 1  # type: ignore[misc]


def check_unknown_key_is_refused(tmp_path):
    path = variant(tmp_path, "[hbm]\n", "[hbm]\nbandwith = 1.5e12\n")
    assert refused(path) == f"{path}: unknown key 'hbm.bandwith' (a key of target/spec.py is expected)"


def test_unknown_key(tmp_path):
    check_unknown_key_is_refused(tmp_path)
    top = variant(tmp_path, 'name = "ascend910b"\n', 'name = "ascend910b"\nvendor = "x"\n')
    assert "unknown key 'vendor'" in refused(top)
    table = variant(tmp_path, "[dma]\n", "[l3]\nsize = 1\n[dma]\n")
    assert "unknown key 'l3'" in refused(table)


def test_missing_key(tmp_path):
    path = variant(tmp_path, "ub = 196608", "# ub removed")
    assert refused(path) == f"{path}: missing key 'buffers.ub'"
    no_table = variant(tmp_path, "[events]\nrecord_s = 1.0e-6", "[events_gone]\nrecord_s = 1.0e-6")
    assert "unknown key 'events_gone'" in refused(no_table)  # a renamed table is first an unknown key
    path.write_text(REFERENCE.replace('name = "ascend910b"\n', ""))
    assert refused(path) == f"{path}: missing key 'name'"


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("ub = 196608", "ub = 196608.5", "'buffers.ub' must be an integer, not a number"),
        ("ub = 196608", 'ub = "192 KiB"', "'buffers.ub' must be an integer, not a string"),
        ("ub = 196608", "ub = true", "'buffers.ub' must be an integer, not true or false"),
        (
            "separated_cube_vector = true",
            "separated_cube_vector = 1",
            "'cores.separated_cube_vector' must be true or false, not an integer",
        ),
        ("bandwidth = 1.5e12", 'bandwidth = "fast"', "'hbm.bandwidth' must be a number, not a string"),
        ("bandwidth = 1.5e12", "bandwidth = false", "'hbm.bandwidth' must be a number, not true or false"),
        ('name = "ascend910b"', "name = 910", "'name' must be a string, not an integer"),
    ],
)
def test_wrong_type(tmp_path, old, new, message):
    path = variant(tmp_path, old, new)
    assert refused(path) == f"{path}: {message}"


def test_a_table_given_as_a_value(tmp_path):
    lines = REFERENCE.splitlines()
    at = lines.index("[host]")
    end = next(i for i in range(at + 1, len(lines)) if not lines[i].strip() or lines[i].startswith("["))
    del lines[at:end]  # the [host] table and its keys
    lines.insert(lines.index('name = "ascend910b"') + 1, "host = 2.0e-5")
    path = tmp_path / "mine.toml"
    path.write_text("\n".join(lines))
    assert refused(path) == f"{path}: 'host' must be a table, not a number"


def test_an_integer_is_a_number(tmp_path):
    t = load_target_file(variant(tmp_path, "bandwidth = 1.5e12", "bandwidth = 1500000000000"))
    assert t.hbm.bandwidth == 1.5e12 and type(t.hbm.bandwidth) is float


def test_unreadable_and_malformed_files(tmp_path):
    assert "cannot read target file" in refused(tmp_path / "missing.toml")
    broken = tmp_path / "broken.toml"
    broken.write_text("[cores\n")
    refused(broken)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe")
    assert refused(binary).endswith("not a text file")


def test_schema_names_every_key_of_the_files():
    """The dataclass fields are the TOML keys: the 910B's [cores] table, key for key."""
    assert [f.name for f in dataclasses.fields(Cores)] == [
        "ai_core",
        "cube_core",
        "vector_core",
        "ai_cpu",
        "separated_cube_vector",
        "clock_hz",
    ]


# -- mutations: each check, removed, lets a bad file through --------------------------------------


def test_mutation_without_the_unknown_key_check_a_typo_loads(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "_unknown_key", lambda types, table: None)
    with pytest.raises(pytest.fail.Exception):
        check_unknown_key_is_refused(tmp_path)


def test_mutation_without_the_type_check_a_string_loads(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "_has_type", lambda want, value: True)
    assert load_target_file(variant(tmp_path, "ub = 196608", 'ub = "big"')).buffers.ub == "big"


def test_assumed_constants_are_the_lines_marked_assumption():
    """The 910's int8 rate is sourced (Ascend910A.ini), the 910B's assumed: the bench shows only
    the assumed one at half and double."""
    from ge.target import assumed_constants

    assert "int8_k" in assumed_constants("ascend910b") and "int8_k" not in assumed_constants("ascend910")
    assert "fp32_ratio" in assumed_constants("ascend910")
