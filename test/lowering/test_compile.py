"""lowering/compile.py: the whole compile as one pipeline text, options checked before any pass runs."""

from __future__ import annotations

import pytest
from xdsl.utils.exceptions import DiagnosticException

from ge.lowering.compile import compile_module, compile_pipeline
from ge.passes.pipeline import parse_passes
from ge.tools.common import parse_module

RELU = """func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = "ge.relu"(%x) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %z = "ge.tanh"(%y) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %z : tensor<2x8xf32>
}
"""


def test_the_pipeline_text_is_what_ge_opt_would_run():
    spec = compile_pipeline(level=3, target="ascend910b", streams=2, mode="op")
    assert spec.startswith("ge-optimize{level=3 precision_mode=must_keep_origin_dtype target=ascend910b}")
    assert "relax-reuse{streams=2}" in spec and spec.endswith("lower-to-streams{mode=op streams=2}")
    assert "relax-reuse" not in compile_pipeline(level=2)  # memory is not traded for time below O3
    assert parse_passes(spec)  # ge-opt -p accepts it


def test_compile_reaches_the_stream_level():
    module = parse_module(RELU, "relu.mlir")
    compile_module(module, level=1, target="ascend910")
    (fn,) = module.ops
    assert fn.attributes["stream.mode"].data == "graph"  # type: ignore[attr-defined]
    assert [op.name for op in fn.body.block.ops] == ["task.kernel", "task.kernel", "func.return"]


@pytest.mark.parametrize(
    "options, message",
    [
        ({"level": 7}, "ge-optimize: level 7 is not one of 0, 1, 2, 3"),
        ({"precision_mode": "fp8"}, "ge-optimize: precision_mode 'fp8' is not one of"),
        ({"mode": "stream"}, "lower-to-streams: mode 'stream' is not one of"),
        ({"target": "ascend999"}, "ascend999"),
    ],
)
def test_bad_options_fail_before_any_pass_runs(options, message):
    module = parse_module(RELU, "relu.mlir")
    before = str(module)
    with pytest.raises(DiagnosticException, match=message):
        compile_module(module, **options)
    assert str(module) == before
