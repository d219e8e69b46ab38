"""The tools run no program, read no file but the ones named, and take targets only by name
(docs/security.md). Each test reproduces one finding of the hostile-input reviews."""

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import xdsl.utils.arg_spec as arg_spec
from tool_server import run as run_tool
from xdsl.dialects import func
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

import ge.interpreter.differential as differential
import ge.passes.pipeline as pipeline
import ge.target as targets
from ge.interpreter.differential import DifferentialChecker, NumericsError, Tolerance, compare
from ge.lowering.plan_memory import PlanMemoryPass
from ge.lowering.to_streams import LowerToStreamsPass
from ge.lowering.to_tasks import LowerToTasksPass
from ge.passes.fuse_ops import FuseOpsPass
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import PassVerificationError, apply_all, available_passes, parse_passes
from ge.target import TargetError, load_target, load_target_file, target_names
from ge.tools import ge_opt, ge_run
from ge.tools.common import make_context, parse_module

TARGETS = Path(targets.__file__).parent

SMALL = """func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = ge.relu %x : (tensor<4x4xf32>) -> tensor<4x4xf32> loc("/relu")
  func.return %0 : tensor<4x4xf32>
}
"""

SHELL = 'mlir-opt{executable="/bin/sh" arguments="-c","touch pwned; cat"}'


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    (tmp_path / "m.mlir").write_text(SMALL)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def cli(name, *args, cwd):
    return run_tool(name, *args, cwd=cwd)


def one_line(err: str, *needles: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


# -- 1. a target name never becomes pipeline text -------------------------------------------------


def test_soc_version_cannot_inject_a_pass(workdir):
    """The issue's command: it created `pwned` and exited 0."""
    injected = f"ge.socVersion=ascend910b}},{SHELL},fuse-ops{{target=ascend910b"
    result = cli("ge-opt", "m.mlir", "--ge-option", injected, "-o", "o.mlir", cwd=workdir)
    assert result.returncode == 1
    one_line(result.stderr, "--ge-option ge.socVersion: unknown target", "targets: ascend910, ascend910b")
    assert not (workdir / "pwned").exists() and not (workdir / "o.mlir").exists()


def test_ge_optimize_target_cannot_inject_a_pass(workdir, run_main):
    spec = 'ge-optimize{target="ascend910b},' + SHELL.replace('"', '\\"') + ',fuse-ops{target=ascend910b"}'
    code, out, err = run_main(ge_opt.main, ["m.mlir", "-p", spec])
    assert code == 1 and out == ""
    one_line(err, "ge-optimize: unknown target 'ascend910b},mlir-opt")
    assert not (workdir / "pwned").exists()


def test_unknown_pass_smuggled_through_a_target_is_one_line(workdir, run_main):
    """Before: a 25-line traceback from parsing `nosuchpass` inside ge-optimize."""
    code, _, err = run_main(
        ge_opt.main, ["m.mlir", "--ge-option", "ge.socVersion=ascend910b},nosuchpass,fuse-ops{target=ascend910b"]
    )
    assert code == 1
    one_line(err, "unknown target")


def test_ge_optimize_builds_objects_not_text(monkeypatch):
    """No level goes through a pipeline parser: with both parsers broken, every level still builds."""

    def refuse(*_):
        raise AssertionError("ge-optimize parsed pipeline text")

    monkeypatch.setattr(pipeline, "parse_pipeline", refuse)
    monkeypatch.setattr(arg_spec, "parse_pipeline", refuse)
    for level in range(4):
        assert all(isinstance(p, ModulePass) for p in GeOptimizePass(level=level).sub_passes())
    fuse = [p for p in GeOptimizePass(level=3, target="ascend910").sub_passes() if isinstance(p, FuseOpsPass)]
    assert [p.target for p in fuse] == ["ascend910"]


@pytest.mark.parametrize("target", ["ascend910b}", "../ascend910b", "ASCEND910B", ""])
def test_ge_optimize_refuses_an_unknown_target_before_building(target):
    with pytest.raises(
        DiagnosticException, match=r"^ge-optimize: unknown target .* \(targets: ascend910, ascend910b\)$"
    ):
        GeOptimizePass(target=target).sub_passes()


# -- 3. a target is a name from the target set, or an explicitly named file ----------------------


def evil_target(tmp_path) -> str:
    """A valid target file outside the target folder, and the relative name that would reach it."""
    (tmp_path / "evil.toml").write_text((TARGETS / "ascend910b.toml").read_text())
    return os.path.relpath(tmp_path / "evil", TARGETS)


@pytest.mark.parametrize(
    "name", ["../ascend910b", "./ascend910b", "ascend910b.toml", "/etc/passwd", "ascend910b/", "ascend910b\x00", 3]
)
def test_load_target_takes_only_known_names(name):
    with pytest.raises(TargetError, match="unknown target"):
        load_target(name)


def test_load_target_does_not_follow_a_relative_path(tmp_path):
    name = evil_target(tmp_path)
    assert (TARGETS / f"{name}.toml").is_file()  # the old loader read this file
    with pytest.raises(TargetError, match="unknown target"):
        load_target(name)
    assert load_target("ascend910b").name == "ascend910b"
    assert set(target_names()) == {"ascend910", "ascend910b"}


@pytest.mark.parametrize("pass_class", [FuseOpsPass, PlanMemoryPass, LowerToTasksPass, LowerToStreamsPass])
def test_every_pass_with_a_target_refuses_a_path(pass_class, tmp_path):
    """Validated once in the target package, so the lowering passes get it without their own check."""
    module = parse_module(SMALL, "<test>")
    with pytest.raises(DiagnosticException) as e:
        pass_class(target=evil_target(tmp_path)).apply(make_context(), module)
    assert str(e.value).startswith(f"{pass_class.name}: unknown target '../")
    assert str(e.value).endswith("(targets: ascend910, ascend910b)")


def test_load_target_file_reads_the_named_file_and_checks_its_keys(tmp_path):
    good = tmp_path / "mine.toml"
    good.write_text((TARGETS / "ascend910.toml").read_text().replace('name = "ascend910"', 'name = "mine"'))
    assert load_target_file(good).name == "mine"
    bad = tmp_path / "bad.toml"
    bad.write_text((TARGETS / "ascend910.toml").read_text().replace("ub = ", "ub_bytes = "))
    with pytest.raises(TargetError, match=r"bad.toml: unknown key 'buffers.ub_bytes'"):
        load_target_file(bad)
    typed = tmp_path / "typed.toml"
    typed.write_text((TARGETS / "ascend910.toml").read_text().replace("ub = ", 'ub = "big" #'))
    with pytest.raises(TargetError, match="'buffers.ub' must be an integer, not a string"):
        load_target_file(typed)
    with pytest.raises(TargetError, match="cannot read target file"):
        load_target_file(tmp_path / "missing.toml")
    (tmp_path / "broken.toml").write_text("[cores\n")
    with pytest.raises(TargetError, match="broken.toml: "):
        load_target_file(tmp_path / "broken.toml")


@pytest.fixture
def lowered(workdir, run_main):
    code, _, err = run_main(
        ge_opt.main, ["m.mlir", "-p", "lower-to-tasks,plan-memory,lower-to-streams", "-o", "low.mlir"]
    )
    assert code == 0, err
    return workdir / "low.mlir"


def test_ge_run_target_is_a_known_name(lowered, tmp_path, run_main):
    code, _, err = run_main(ge_run.main, [lowered, "--timing-only", "--target", evil_target(tmp_path)])
    assert code == 1
    one_line(err, "ge-run: error: unknown target '../", "(targets: ascend910, ascend910b)")
    code, out, _ = run_main(ge_run.main, ["--help"])
    assert "one of ascend910, ascend910b" in " ".join(out.split())
    code, out, _ = run_main(ge_run.main, [lowered, "--timing-only", "--target", "ascend910b"])
    assert code == 0 and out.startswith("simulating target ascend910b (from --target)\ntarget ascend910b,")


def test_ge_run_target_file_is_explicit(lowered, tmp_path, run_main):
    mine = tmp_path / "mine.toml"
    mine.write_text((TARGETS / "ascend910b.toml").read_text().replace("ub = 196608", "ub = 1000000"))
    code, out, err = run_main(ge_run.main, [lowered, "--timing-only", "--target-file", mine])
    assert code == 0, err
    assert out.startswith(f"simulating target ascend910b (from --target-file {mine})\ntarget ascend910b,")
    other = tmp_path / "other.toml"
    other.write_text(mine.read_text().replace('name = "ascend910b"', 'name = "other"'))
    code, _, err = run_main(ge_run.main, [lowered, "--timing-only", "--target-file", other])
    assert code == 1  # the module was lowered for the 910B: another chip's description is refused
    one_line(err, "other.toml: target=other contradicts the module's target ascend910b")
    code, _, err = run_main(ge_run.main, [lowered, "--timing-only", "--target-file", mine, "--target", "ascend910"])
    assert code == 1 and "not allowed with argument --target-file" in err
    (tmp_path / "bad.toml").write_text('name = "x"\n')
    code, _, err = run_main(ge_run.main, [lowered, "--timing-only", "--target-file", tmp_path / "bad.toml"])
    assert code == 1
    one_line(err, "bad.toml: missing key 'source'")


# -- 2. only the passes this compiler offers -----------------------------------------------------


def test_mlir_opt_is_not_offered(workdir, run_main):
    code, out, err = run_main(ge_opt.main, ["m.mlir", "-p", SHELL])
    assert code == 1 and out == ""
    one_line(err, "pass pipeline: Unrecognized passes: ['mlir-opt']")
    assert not (workdir / "pwned").exists()
    with pytest.raises(ValueError, match="unknown pass 'mlir-opt'"):
        parse_passes(SHELL)


def test_offered_passes_are_the_projects_and_the_allow_list(workdir, run_main):
    from ge.passes import all_passes

    assert set(available_passes()) == set(all_passes()) | {"cse", "dce", "canonicalize"}
    code, out, err = run_main(ge_opt.main, ["m.mlir", "-p", "cse,canonicalize,dce"])
    assert code == 0 and "ge.relu" in out, err
    code, _, err = run_main(ge_opt.main, ["m.mlir", "-p", "convert-func-to-riscv-func"])
    assert code == 1
    one_line(err, "Unrecognized passes")


# -- 4. Python rule files only from the command line ---------------------------------------------


def test_pipeline_cannot_run_a_rule_file(workdir, run_main):
    (workdir / "rules.py").write_text("open('ran', 'w').close()\nRULES = []\n")
    code, _, err = run_main(ge_opt.main, ["m.mlir", "-p", 'fuse-ops{rule_file="rules.py"}'])
    assert code == 1
    one_line(err, "rule_file")
    assert not (workdir / "ran").exists()
    code, _, err = run_main(ge_opt.main, ["m.mlir", "-p", "fuse-ops", "--load-fusion-rules", "rules.py"])
    assert code == 0, err
    assert (workdir / "ran").exists()  # named on the command line: the user asked for it to run


# -- 5, 6. the numerics check --------------------------------------------------------------------


@pytest.mark.parametrize(
    "flag, value",
    [
        ("--numerics-tolerance", "nan"),
        ("--numerics-tolerance", "-1"),
        ("--numerics-tolerance", "inf"),
        ("--numerics-atol", "nan"),
        ("--numerics-atol", "-1e-3"),
    ],
)
def test_tolerance_must_be_finite_and_not_negative(workdir, run_main, flag, value):
    """Before: nan reported MISMATCH on every pass and exited 0; a negative one checked nothing."""
    code, out, err = run_main(ge_opt.main, ["m.mlir", "-p", "simplify", "--verify-numerics", f"{flag}={value}"])
    assert code == 1 and out == ""
    one_line(err, f"{flag} ", "must be a finite number >= 0")


def test_tolerance_object_refuses_bad_values():
    for bad in (float("nan"), -1.0, float("inf")):
        with pytest.raises(ValueError):
            Tolerance(rtol=bad)
        with pytest.raises(ValueError):
            Tolerance(atol=bad)


def test_element_wise_check_sees_a_small_element_the_max_norm_missed():
    before = np.array([1000.0, 1e-3], np.float32)
    after = np.array([1000.0, 2e-3], np.float32)  # max|d|/max|before| = 1e-6: the old check passed it
    assert differential.relative_error(before, after) < 1e-4
    worst = compare(before, after, Tolerance(rtol=1e-4, atol=1e-5))
    assert not worst.ok and "at [1]" in worst.where
    assert compare(before, before * (1 + 5e-5), Tolerance(rtol=1e-4, atol=0)).ok


def test_element_wise_check_nan_inf_and_integers():
    tol = Tolerance()
    nan_first = np.array([np.nan, 1.0])
    assert compare(nan_first, nan_first.copy(), tol).ok
    assert not compare(nan_first, np.array([1.0, np.nan]), tol).ok  # same count, other place
    assert not compare(np.array([np.inf]), np.array([-np.inf]), tol).ok
    assert not compare(np.array([1.0]), np.array([np.nan]), tol).ok
    assert not compare(np.array([100000], np.int64), np.array([100001], np.int64), tol).ok  # 1e-5 relative
    assert not compare(np.zeros((2, 2)), np.zeros((4,)), tol).ok
    assert compare(np.array([0.0]), np.array([0.0]), Tolerance(0.0, 0.0)).ok
    assert not compare(np.array([0.0]), np.array([1e-30]), Tolerance(0.0, 0.0)).ok


@dataclass(frozen=True)
class _Named(ModulePass):
    name = "step"

    def apply(self, ctx, op):
        pass


def test_end_is_checked_against_the_start(monkeypatch):
    """Three passes each move an output by 0.8 of the bound: each passes, the pile-up does not."""
    tol = Tolerance(rtol=0.0, atol=1.0)
    steps = iter([{"y": np.array([0.8])}, {"y": np.array([1.6])}, {"y": np.array([2.4])}])
    monkeypatch.setattr(differential, "run", lambda module, inputs: next(steps))
    checker = DifferentialChecker({}, {"y": np.array([0.0])}, tol)
    for _ in range(3):
        checker(_Named(), None)
    assert all(r.ok for r in checker.reports)
    with pytest.raises(
        NumericsError, match=r"^numerics: end vs start: output 'y' changed at \[0\]: before 0, after 2.4 "
    ):
        checker.finish()
    assert str(checker.reports[-1]).endswith("MISMATCH")


@pytest.mark.mutation
def test_a_pass_that_changes_numbers_fails_in_ge_opt(workdir, run_main):
    code, _, err = run_main(ge_opt.main, ["m.mlir", "-p", "mixed-precision{mode=force_fp16}", "--verify-numerics"])
    assert code == 1
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(
            "ge-opt: error: numerics: after mixed-precision: output 'result0' changed at [0, 2]: before 0.64042264, "
            "after 0.640625 (allowed |after-before| <= 1e-05 + 0.0001*|before|)"
        )
    )
    code, _, err = run_main(
        ge_opt.main,
        ["m.mlir", "-p", "mixed-precision{mode=force_fp16}", "--verify-numerics", "--numerics-tolerance", "1e-2"],
    )
    assert code == 0, err
    assert "numerics: end vs start: " in err


# -- 7. invalid IR after a pass is the pass's bug -------------------------------------------------


@dataclass(frozen=True)
class BreakIrPass(ModulePass):
    """Moves the first op of @main behind its return: the terminator is no longer last."""

    name = "break-ir"

    def apply(self, ctx, op):
        fn = next(o for o in op.ops if isinstance(o, func.FuncOp))
        first = fn.body.block.first_op
        first.detach()
        fn.body.block.add_op(first)


def test_invalid_ir_after_a_pass_names_the_pass():
    module = parse_module(SMALL, "<test>")
    with pytest.raises(PassVerificationError) as e:
        apply_all(make_context(), module, [BreakIrPass()])
    assert not isinstance(e.value, DiagnosticException)  # not reported as the user's mistake
    assert str(e.value).startswith("pass 'break-ir' produced invalid IR: ")
    assert len(str(e.value).splitlines()) == 1


def test_invalid_ir_after_a_top_level_pass_in_ge_opt(workdir):
    class BrokenOpt(ge_opt.GeOptMain):
        def register_all_passes(self):
            super().register_all_passes()
            self.register_pass(BreakIrPass.name, lambda: BreakIrPass)

    tool = BrokenOpt(args=["m.mlir", "-p", "simplify,break-ir"])
    with pytest.raises(PassVerificationError, match="^pass 'break-ir' produced invalid IR: "):
        tool.run()
    # An invalid input is still the user's: it fails before any pass, as a DiagnosticException.
    (workdir / "bad.mlir").write_text(
        SMALL.replace("  %0 = ge.relu", "  func.return %x : tensor<4x4xf32>\n  %0 = ge.relu")
    )
    with pytest.raises(DiagnosticException):
        ge_opt.GeOptMain(args=["bad.mlir", "-p", "simplify"]).run()
