"""The module's ge.target: who writes it, who reads it, and what a contradiction looks like (ge-opt, ge-run)."""

from pathlib import Path

import pytest
from xdsl.dialects.builtin import StringAttr
from xdsl.utils.exceptions import DiagnosticException, VerifyException

import ge.target.loader as loader
from ge.ge_dialects.ge.target_attr import TARGET_KEY, TargetAttr, module_pass_target, module_target, resolve_target_name
from ge.target import DEFAULT_TARGET, TargetError
from ge.tools import ge_opt, ge_run
from ge.tools.common import parse_module

SMALL = """func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {
  %0 = ge.relu %x : (tensor<64xf32>) -> tensor<64xf32> loc("/relu")
  func.return %0 : tensor<64xf32>
}
"""


def module(chip: str | None = None):
    m = parse_module(SMALL, "<test>")
    if chip is not None:
        m.attributes[TARGET_KEY] = TargetAttr(chip)
    return m


@pytest.mark.parametrize(
    "given, declared, expected",
    [
        (None, None, (DEFAULT_TARGET, "default")),
        ("ascend910", None, ("ascend910", "option")),
        (None, "ascend910", ("ascend910", "module")),
        ("ascend910", "ascend910", ("ascend910", "option")),
    ],
)
def test_the_rule(given, declared, expected):
    assert resolve_target_name(module(declared), given) == expected


def test_a_contradiction_is_refused():
    with pytest.raises(TargetError, match="^target=ascend910 contradicts the module's target ascend910b$"):
        resolve_target_name(module("ascend910b"), "ascend910")


def test_the_pass_helper_writes_what_it_used():
    m = module()
    assert module_pass_target("fuse-ops", m, None).name == DEFAULT_TARGET
    assert module_target(m) == DEFAULT_TARGET
    m = module()
    assert module_pass_target("fuse-ops", m, "ascend910").name == "ascend910"
    assert module_pass_target("plan-memory", m, None).name == "ascend910"  # a later pass follows it
    with pytest.raises(DiagnosticException, match="^lower-to-tasks: target=ascend910b contradicts the module's"):
        module_pass_target("lower-to-tasks", m, "ascend910b")
    with pytest.raises(DiagnosticException, match="^plan-memory: unknown target 'x' "):
        module_pass_target("plan-memory", m, "x")  # an unknown name says so, not "contradicts"


def test_the_attribute_names_a_known_target():
    TargetAttr("ascend910").verify()
    with pytest.raises(VerifyException, match="unknown target 'ascend9'"):
        TargetAttr("ascend9").verify()
    m = module()
    m.attributes[TARGET_KEY] = StringAttr("ascend910")
    with pytest.raises(DiagnosticException, match="must be a #ge.target"):
        module_target(m)


BAD_NAME = 'builtin.module attributes {ge.target = #ge.target<"ascend999">} {\n}\n'


def test_parsing_checks_the_name(monkeypatch):
    with pytest.raises(VerifyException, match="unknown target 'ascend999'"):
        parse_module(BAD_NAME, "<test>")
    monkeypatch.setattr(TargetAttr, "verify", lambda self: None)  # mutation: no verifier
    assert module_target(parse_module(BAD_NAME, "<test>")) == "ascend999"  # ... and the bad name gets in


def test_ge_opt_exits_1_on_a_contradiction(tmp_path, run_main, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("m.mlir").write_text(SMALL)
    assert run_main(ge_opt.main, ["m.mlir", "-p", "fuse-ops{target=ascend910}", "-o", "f.mlir"])[0] == 0
    code, _, err = run_main(ge_opt.main, ["f.mlir", "-p", "lower-to-tasks{target=ascend910b}"])
    assert code == 1
    assert err.strip() == "ge-opt: error: lower-to-tasks: target=ascend910b contradicts the module's target ascend910"


@pytest.fixture
def lowered(tmp_path, run_main, monkeypatch):
    """A module lowered for the 910 (its ge.target), and a copy without the attribute."""
    monkeypatch.chdir(tmp_path)
    Path("m.mlir").write_text(SMALL)
    code, _, err = run_main(
        ge_opt.main, ["m.mlir", "-p", "lower-to-tasks{target=ascend910},plan-memory,lower-to-streams", "-o", "low.mlir"]
    )
    assert code == 0, err
    text = Path("low.mlir").read_text()
    assert '{ge.target = #ge.target<"ascend910">, ' in text
    Path("bare.mlir").write_text(text.replace('ge.target = #ge.target<"ascend910">, ', ""))
    return tmp_path


def user_target(name: str) -> Path:
    path = Path(f"{name}.toml")
    text = (Path(loader.__file__).parent / "ascend910.toml").read_text()
    path.write_text(text.replace('name = "ascend910"', f'name = "{name}"'))
    return path


@pytest.mark.parametrize(
    "program, args, said",
    [
        ("low.mlir", [], "simulating target ascend910 (from the module)"),
        ("low.mlir", ["--target", "ascend910"], "simulating target ascend910 (from --target)"),
        ("bare.mlir", [], "simulating target ascend910b (the default: the module names no target)"),
        ("bare.mlir", ["--target", "ascend910"], "simulating target ascend910 (from --target)"),
    ],
)
def test_ge_run_says_what_it_simulates(lowered, run_main, program, args, said):
    code, out, err = run_main(ge_run.main, [program, "--timing-only", *args])
    assert code == 0 and not err, err
    assert out.splitlines()[0] == said  # the first line of the report


def test_ge_run_refuses_a_contradicting_target(lowered, run_main):
    code, _, err = run_main(ge_run.main, ["low.mlir", "--timing-only", "--target", "ascend910b"])
    assert code == 1
    assert err.strip() == "ge-run: error: target=ascend910b contradicts the module's target ascend910"


def test_ge_run_target_file_must_carry_the_modules_name(lowered, run_main):
    same, mine = user_target("ascend910"), user_target("mine")
    code, out, err = run_main(ge_run.main, ["low.mlir", "--timing-only", "--target-file", same])
    assert code == 0 and "(from --target-file ascend910.toml)" in out
    code, _, err = run_main(ge_run.main, ["low.mlir", "--timing-only", "--target-file", mine])
    assert code == 1
    assert err.strip() == "ge-run: error: mine.toml: target=mine contradicts the module's target ascend910"
    code, out, err = run_main(ge_run.main, ["bare.mlir", "--timing-only", "--target-file", mine])
    assert code == 0 and "target mine, mode graph" in out


def test_ge_run_target_file_is_read_strictly(lowered, run_main):
    path = user_target("mine")
    path.write_text(path.read_text().replace("[hbm]\n", "[hbm]\nbandwith = 1.0\n"))
    code, _, err = run_main(ge_run.main, ["bare.mlir", "--timing-only", "--target-file", path])
    assert code == 1
    assert err.strip() == "ge-run: error: mine.toml: unknown key 'hbm.bandwith' (a key of target/spec.py is expected)"
