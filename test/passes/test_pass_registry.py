"""The lazy pass registry (passes/__init__.py) and flat pipelines (passes/pipeline.py): the table
names every pass module, importing the package imports no pass, and ge-optimize is its sub-passes
wherever a pipeline is built (ge-opt, parse_passes, apply_all)."""

import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from ge import lowering, passes
from ge.passes.ge_optimize import GeOptimizePass
from ge.passes.pipeline import CompositePass, apply_all, available_passes, expand, parse_passes, spell_exponents
from ge.passes.require_graph_level import RequireGraphLevelPass
from ge.tools import ge_opt
from ge.tools.common import make_context, parse_module, print_module

SMALL = """func.func @main(%x: tensor<4x4xf32>, %b: tensor<4xf32>) -> tensor<4x4xf32> {
  %0 = ge.add %x, %b : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32> loc("/add")
  %1 = ge.relu %0 : (tensor<4x4xf32>) -> tensor<4x4xf32> loc("/relu")
  func.return %1 : tensor<4x4xf32>
}
"""


def defined_passes() -> dict[str, tuple[str, str]]:
    """Every ModulePass with a name defined in a module of passes/ or lowering/, found by importing all."""
    found = {}
    for package, prefix in ((passes, "ge.passes."), (lowering, "ge.lowering.")):
        for info in pkgutil.walk_packages(package.__path__, prefix=prefix):
            module = importlib.import_module(info.name)
            for _, cls in inspect.getmembers(module, inspect.isclass):
                if (
                    issubclass(cls, ModulePass)
                    and cls.__module__ == module.__name__
                    and isinstance(cls.__dict__.get("name"), str)
                ):
                    assert cls.name not in found, f"two passes are named '{cls.name}'"
                    found[cls.name] = (cls.__module__, cls.__name__)
    return found


def test_the_table_names_every_pass_module():
    assert defined_passes() == passes.PROJECT_PASSES


def test_every_factory_returns_the_pass_it_is_named_for():
    for name, factory in available_passes().items():
        cls = factory()
        assert issubclass(cls, ModulePass) and cls.name == name
    assert list(available_passes())[:3] == ["cse", "dce", "canonicalize"]


def test_a_stale_table_entry_is_refused(monkeypatch):
    monkeypatch.setitem(passes.PROJECT_PASSES, "simplify", ("ge.passes.fold_constants", "FoldConstantsPass"))
    with pytest.raises(ValueError, match="registered as 'simplify' .* is named 'fold-constants'"):
        passes.all_passes()["simplify"]()


def imported_after(code: str) -> set[str]:
    """The project's and xDSL's modules a fresh interpreter has imported after running `code`."""
    script = f"import sys\n{code}\nprint(' '.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    return {m for m in out.split() if m.split(".")[0] == "xdsl" or (m.startswith("ge.") and m != "ge")}


def test_importing_the_registry_imports_no_pass():
    assert imported_after("from ge import passes; passes.all_passes(); passes.xdsl_passes()") == {"ge.passes"}


def test_a_factory_imports_its_pass_only():
    loaded = imported_after("from ge.passes.pipeline import available_passes; available_passes()['simplify']()")
    assert "ge.passes.simplify" in loaded
    assert not {m for m in loaded if m.startswith(("ge.lowering", "ge.passes.fuse_ops", "ge.passes.ge_optimize"))}


# -- ge-optimize expands where pipelines are built ------------------------------------------------


@pytest.mark.parametrize("level", range(4))
def test_ge_optimize_parses_to_its_sub_passes(level):
    flat = parse_passes(f"ge-optimize{{level={level}}}")
    assert flat == GeOptimizePass(level=level).sub_passes()
    assert flat[0] == RequireGraphLevelPass(owner="ge-optimize")
    assert not any(isinstance(p, CompositePass) for p in flat)
    assert parse_passes(GeOptimizePass(level=level).pipeline()) == flat  # the shown text is the pipeline


def test_expand_is_recursive_and_keeps_order():
    class Twice(CompositePass):
        name = "twice"

        def sub_passes(self):
            return [GeOptimizePass(level=0), GeOptimizePass(level=0)]

    o0 = GeOptimizePass(level=0).sub_passes()
    assert expand([Twice(), *parse_passes("cse")]) == [*o0, *o0, *parse_passes("cse")]


def test_bad_options_fail_when_the_pipeline_is_built():
    with pytest.raises(DiagnosticException, match="^ge-optimize: level 9 is not one of 0, 1, 2, 3$"):
        parse_passes("ge-optimize{level=9}")


def test_python_apply_equals_the_flat_pipeline():
    by_pass, flat = parse_module(SMALL, "<a>"), parse_module(SMALL, "<b>")
    GeOptimizePass(level=3).apply(make_context(), by_pass)
    apply_all(make_context(), flat, parse_passes("ge-optimize{level=3}"))
    assert print_module(by_pass) == print_module(flat)
    assert "fused.group" in print_module(flat)


def test_python_apply_refuses_a_lowered_module_in_its_own_name():
    module = parse_module(SMALL, "<test>")
    apply_all(make_context(), module, parse_passes("lower-to-tasks"))
    with pytest.raises(DiagnosticException, match="^ge-optimize: the module is already lowered"):
        GeOptimizePass(level=0).apply(make_context(), module)


def test_observers_see_every_sub_pass():
    seen = []
    apply_all(
        make_context(),
        parse_module(SMALL, "<test>"),
        [GeOptimizePass(level=1)],
        observers=[lambda p, _: seen.append(p)],
    )
    assert seen == GeOptimizePass(level=1).sub_passes()


@pytest.fixture
def small_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.mlir").write_text(SMALL)
    return "m.mlir"


@pytest.mark.parametrize("argv", [["-p", "ge-optimize{level=1}"], ["--ge-option", "ge.oo.level=O1"]])
def test_ge_opt_runs_one_flat_pipeline(small_file, argv):
    tool = ge_opt.GeOptMain(args=[small_file, *argv])
    assert list(tool.pipeline.passes) == GeOptimizePass(level=1).sub_passes()


def test_ge_opt_observers_and_dumps_see_every_sub_pass(small_file, capsys):
    ge_opt.main([small_file, "-p", "ge-optimize{level=1}", "--verify-numerics", "--print-between-passes"])
    out, err = capsys.readouterr()
    names = [p.name for p in GeOptimizePass(level=1).sub_passes()]
    checked = [line.split(":")[1].strip() for line in err.splitlines() if line.startswith("numerics: after")]
    assert checked == [f"after {name}" for name in names]
    dumped = [line[len("IR after ") : -1] for line in out.splitlines() if line.startswith("IR after ")]
    assert dumped == names[:-1]  # xDSL prints between passes, not after the last


@pytest.mark.parametrize("text", ["1e-8", "2.5E-3", "1e+2", "1e300", "3e-310"])
def test_exponent_options_read_as_the_same_float(text):
    (opt,) = parse_passes(f"apply-optimizer{{kind=adam eps={text}}}")
    assert opt.eps == float(text)
    assert spell_exponents(f"a{{x=-{text}}}") == f"a{{x=-{spell_exponents(f'a{{x={text}}}')[4:-1]}}}"
    assert spell_exponents(f'a{{s="y={text} "}}') == f'a{{s="y={text} "}}'  # strings are left alone


def test_ge_opt_reads_exponent_options(small_file):
    tool = ge_opt.GeOptMain(args=[small_file, "-p", "apply-optimizer{kind=adam eps=1e-8 lr=2e-3}"])
    (opt,) = tool.pipeline.passes
    assert (opt.eps, opt.lr) == (1e-8, 2e-3)
