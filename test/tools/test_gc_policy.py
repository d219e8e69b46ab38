"""The tools let the cyclic garbage collector run less often (tools.common.collect_garbage_less_often);
the library leaves the host's settings alone."""

import gc

import pytest

from ge.tools import common, ge_opt

RELU = """
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = ge.relu %x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""


@pytest.fixture
def default_thresholds():
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*saved)


def test_a_tool_run_sets_the_tools_thresholds(default_thresholds, run_main, tmp_path):
    (tmp_path / "in.mlir").write_text(RELU)
    code, _, err = run_main(ge_opt.main, [tmp_path / "in.mlir", "-p", "dce"])
    assert code == 0, err
    assert gc.get_threshold() == common.GC_THRESHOLDS


def test_the_library_leaves_the_thresholds_alone(default_thresholds):
    from ge.passes.pipeline import apply_all, parse_passes

    module = common.parse_module(RELU, "<test>")
    apply_all(common.make_context(), module, parse_passes("ge-optimize{level=3}"))
    assert gc.get_threshold() == (700, 10, 10)
