"""fuse-ops beyond the lit cases: user rule files, errors, training graphs, numerics on real models."""

import numpy as np
import pytest
from tool_server import run as run_tool
from xdsl.dialects.builtin import UnitAttr

from ge.interpreter.runner import run
from ge.passes import remarks
from ge.passes.fuse_ops import FuseOpsPass, load_rule_file, user_fusion_rules
from ge.passes.fusion.census import census
from ge.passes.fusion.engine import TRAINING_ATTR
from ge.tools.common import parse_module

POOL_RELU = """
func.func @main(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> {
  %0 = ge.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x4x4xf32> loc("/pool")
  %1 = ge.relu %0 : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32> loc("/relu")
  func.return %1 : tensor<1x4x4x4xf32>
}
"""

USER_RULES = """
from ge.ge_dialects import ge
from ge.passes.fusion.engine import FusionRule, Step, ops
RULES = [FusionRule(name="pool_relu", pattern="reduce+elementwise", anchor=ops(ge.MaxPoolOp),
                    followers=(Step(ops(ge.ReluOp)),), inference_only={inference_only})]
"""


def ge_opt(*args, stdin=None):
    return run_tool("ge-opt", *args, input=stdin)


def one_line_error(result, needle):
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert needle in lines[0], lines[0]


def test_user_rule_file_adds_a_rule_without_editing_the_engine(tmp_path):
    rules = tmp_path / "my_rules.py"
    rules.write_text(USER_RULES.format(inference_only=False))
    result = ge_opt("-p", "fuse-ops", "--load-fusion-rules", rules, "--remarks", stdin=POOL_RELU)
    assert result.returncode == 0, result.stderr
    assert 'fused.group "reduce+elementwise" "pool_relu"' in result.stdout
    assert "applied pool_relu on [/pool, /relu]" in result.stderr


def test_inference_only_rule_skips_training_graphs(tmp_path):
    rules = tmp_path / "my_rules.py"
    rules.write_text(USER_RULES.format(inference_only=True))
    module = parse_module(POOL_RELU, "<test>")
    module.attributes[TRAINING_ATTR] = UnitAttr()
    with user_fusion_rules(load_rule_file(str(rules))):
        with remarks.collected() as found:
            FuseOpsPass(rules=("pool_relu",)).apply(None, module)
        assert census(module).groups["pool_relu"] == 0
        assert any("inference-only" in r.reason for r in found)
        del module.attributes[TRAINING_ATTR]
        FuseOpsPass(rules=("pool_relu",)).apply(None, module)
        assert census(module).groups["pool_relu"] == 1


@pytest.mark.parametrize(
    "spec, needle",
    [
        ("fuse-ops{rules=nonexistent}", "unknown rule 'nonexistent'"),
        ("fuse-ops{target=ascend999}", "unknown target 'ascend999'"),
        ('fuse-ops{rule_file="/nonexistent/rules.py"}', "rule_file"),  # no longer a pipeline option
    ],
)
def test_bad_options_are_one_line_errors(spec, needle):
    one_line_error(ge_opt("-p", spec, stdin=POOL_RELU), needle)


def test_malformed_pipeline_is_one_line():
    one_line_error(ge_opt("-p", "fuse-ops{rules=/x.py}", stdin=POOL_RELU), "pass-pipeline:1:16: Unknown token")


def test_missing_rule_file_is_one_line():
    one_line_error(
        ge_opt("-p", "fuse-ops", "--load-fusion-rules", "/nonexistent/rules.py", stdin=POOL_RELU),
        "--load-fusion-rules: rule file /nonexistent/rules.py: No such file",
    )


@pytest.mark.parametrize(
    "text, needle",
    [
        ("RULES = 3\n", "must define RULES"),
        ("import no_such_module_here\n", "ModuleNotFoundError: No module named 'no_such_module_here'"),
        ("RULES = [\n", "SyntaxError"),
        (
            "from ge.passes.fusion.engine import ops\nCUBE = ops('ge.conv')\n",
            "TypeError: ops() takes op classes (e.g. ge.ConvOp), not 'ge.conv'",
        ),
    ],
)
def test_bad_rule_file_contents(tmp_path, text, needle):
    rules = tmp_path / "bad.py"
    rules.write_text(text)
    one_line_error(ge_opt("-p", "fuse-ops", "--load-fusion-rules", rules, stdin=POOL_RELU), needle)


def test_rule_file_may_not_redefine_a_rule(tmp_path):
    """A user rule named like a built-in one would silently lose to it (or replace it): refused."""
    rules = tmp_path / "dup.py"
    rules.write_text(USER_RULES.format(inference_only=False).replace('"pool_relu"', '"cube_epilogue"'))
    one_line_error(
        ge_opt("-p", "fuse-ops", "--load-fusion-rules", rules, stdin=POOL_RELU),
        "fusion rule 'cube_epilogue' is defined twice",
    )


def test_rule_files_are_repeatable(tmp_path):
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text(USER_RULES.format(inference_only=False))
    second.write_text(USER_RULES.format(inference_only=False).replace('"pool_relu"', '"pool_relu_2"'))
    result = ge_opt(
        "-p",
        "fuse-ops{rules=pool_relu_2}",
        "--load-fusion-rules",
        first,
        "--load-fusion-rules",
        second,
        stdin=POOL_RELU,
    )
    assert result.returncode == 0, result.stderr
    assert 'fused.group "reduce+elementwise" "pool_relu_2"' in result.stdout


@pytest.mark.parametrize("name", ["resnet50", "bert_base"])
def test_fusion_alone_keeps_outputs_bit_equal(name, references):
    """Fusion only outlines: the body computes what the ops computed, so outputs are identical
    (on the small models: every fusion pattern of the full ones)."""
    module, inputs = references.module(name), references.model(name)[1]
    before = run(module, inputs)
    FuseOpsPass().apply(None, module)
    module.verify()
    assert sum(census(module).groups.values()) > 0
    after = run(module, inputs)
    for key in before:
        np.testing.assert_array_equal(before[key], after[key])
