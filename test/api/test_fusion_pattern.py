"""ge.FusionPattern: a pattern becomes a rule of the fusion engine that forms groups the built-in
rules do not (and its constraint can prevent them), numerics unchanged; the same rule loaded from a
file by `ge-opt --load-fusion-rules` forms the same groups.

`apply_operator_fusion` folds an inference BatchNorm into its conv before UB fusion, so the
Conv2D+BatchNorm pattern is shown on the train-mode CNN (batch statistics: nothing folds them),
and on the inference CNN it has nothing left to match."""

from __future__ import annotations

import numpy as np
import pytest
from runtime_models import assert_one_line, graph_of, inputs_of, small_cnn

import ge
from ge.ge_dialects import fused
from ge.interpreter.runner import run
from ge.passes import fuse_trans_data, fuse_views


@pytest.fixture(scope="module")
def cnn():
    model = small_cnn()
    return graph_of(model), inputs_of(model)


@pytest.fixture(scope="module")
def train_cnn():
    model = small_cnn(train=True)
    return graph_of(model), inputs_of(model)


def _groups(graph) -> list[str]:
    """The rules of the fusion groups (not the kernels fuse-trans-data and fuse-views form around a
    lone op)."""
    lone = (fuse_trans_data.LONE_OP_RULE, fuse_views.LONE_OP_RULE)
    return [op.rule.data for op in graph.module.walk() if isinstance(op, fused.GroupOp) and op.rule.data not in lone]


def conv_bn(**kw) -> ge.FusionPattern:
    return ge.FusionPattern(anchor="Conv2D", followers=["BatchNorm"], **kw)


def test_a_pattern_forms_groups_the_built_in_rules_do_not(train_cnn):
    graph, inputs = train_cnn
    plain = ge.GraphOptimizer().apply_operator_fusion(graph)
    # a conv's built-in epilogue is add/mul/activation, never batch_norm: the BNs group with their relus
    assert _groups(plain) == ["batch_norm_activation"] * 2
    pattern = conv_bn(constraint=lambda node: node["data_format"] == "NCHW")
    opt = ge.GraphOptimizer(fusion_patterns=[pattern])
    fusedg = opt.apply_operator_fusion(graph)
    assert _groups(fusedg) == ["user_conv2d_batchnorm"] * 2
    group = next(op for op in fusedg.module.walk() if isinstance(op, fused.GroupOp))
    assert group.pattern.data == "cube+elementwise"
    assert [m.name for m in group.members] == ["ge.conv", "ge.batch_norm"]
    reference, result = run(graph.module, inputs), run(fusedg.module, inputs)
    np.testing.assert_array_equal(result["logits"], reference["logits"])
    assert "--load-fusion-rules" in opt.last_pipeline


def test_a_folded_batch_norm_leaves_the_pattern_nothing(cnn):
    """On the inference CNN the BNs are folded into the convs first: the pattern forms no group,
    the built-in rule makes each conv+BN+ReLU one kernel."""
    graph, _ = cnn
    opt = ge.GraphOptimizer(fusion_patterns=[conv_bn()])
    assert _groups(opt.apply_operator_fusion(graph)) == ["cube_epilogue"] * 2


def test_a_rejecting_constraint_prevents_the_group(train_cnn):
    graph, _ = train_cnn
    seen = []

    def nhwc_only(node) -> bool:
        seen.append((node.type, node.name, node["group"]))
        return node["data_format"] == "NHWC"

    opt = ge.GraphOptimizer()
    opt.add_fusion_pattern(conv_bn(constraint=nhwc_only))
    assert _groups(opt.apply_operator_fusion(graph)) == ["batch_norm_activation"] * 2
    assert seen == [("Conv2D", "/conv1/Conv", 1), ("Conv2D", "/conv2/Conv", 1)]  # asked of each anchor


def test_patterns_join_the_standard_pipeline(cnn):
    """O3's fuse-ops tries the patterns before the built-in rules: conv2's relu goes to the pattern,
    conv1's (which the constraint rejects) to the built-in cube_epilogue."""
    graph, inputs = cnn
    pattern = ge.FusionPattern(
        anchor="Conv2D", followers=["Relu"], constraint=lambda node: node.name == "/conv2/Conv", name="conv2_relu"
    )
    assert _groups(ge.GraphOptimizer().apply_standard_optimizations(graph)) == ["cube_epilogue"] * 2
    result = ge.GraphOptimizer(fusion_patterns=[pattern]).apply_standard_optimizations(graph)
    assert _groups(result) == ["cube_epilogue", "conv2_relu"]
    np.testing.assert_allclose(
        run(result.module, inputs)["logits"], run(graph.module, inputs)["logits"], rtol=1e-5, atol=1e-5
    )


def test_the_rule_loads_from_a_file_as_ge_opt_does(tmp_path, run_main):
    """`rule()` is what a --load-fusion-rules file holds: ge-opt forms the same groups from it."""
    import onnx

    from ge.tools import ge_opt, ge_translate

    model = tmp_path / "cnn.onnx"
    onnx.save(small_cnn(), model)
    ir = tmp_path / "cnn.mlir"
    code, _, err = run_main(ge_translate.main, ["--import-onnx", model, "-o", ir])
    assert code == 0, err
    rules = tmp_path / "my_rules.py"
    rules.write_text(
        "import ge\n"
        "RULES = [ge.FusionPattern(anchor='Conv2D', followers=['BatchNorm'],"
        " constraint=lambda node: node['data_format'] == 'NCHW').rule()]\n"
    )
    out = tmp_path / "out.mlir"
    code, _, err = run_main(
        ge_opt.main, [ir, "-p", "infer-shapes,fuse-ops,dce", "--load-fusion-rules", rules, "-o", out]
    )
    assert code == 0, err
    assert out.read_text().count('"user_conv2d_batchnorm"') == 2


def test_the_constraint_sees_the_graph_api_node():
    """A constraint reads the same `ge.Node` view `Graph.nodes` gives (api/node.py)."""
    from ge.api.fusion_pattern import node_of
    from ge.api.node import Node

    graph = graph_of(small_cnn())
    conv = next(op for op in graph.module.walk() if op.name == "ge.conv")
    node = node_of(conv)
    assert isinstance(node, Node) and node.op is conv
    assert node.type == "Conv2D" and node.name == "/conv1/Conv" and node["strides"] == [1, 1]
    assert node["data_format"] == "NCHW"
    with pytest.raises(KeyError):
        node["kernel_size"]


def test_a_failing_constraint_is_one_line(train_cnn):
    graph, _ = train_cnn
    opt = ge.GraphOptimizer(fusion_patterns=[conv_bn(constraint=lambda node: node["kernel_size"] == 3)])
    with pytest.raises(ge.GEError, match="constraint raised KeyError") as e:
        opt.apply_operator_fusion(graph)
    assert_one_line(e.value)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: ge.FusionPattern(anchor="Conv3D", followers=["Relu"]), "unknown operator type 'Conv3D'"),
        (lambda: ge.FusionPattern(anchor="Conv2D", followers=["Nope"]), "unknown operator type 'Nope'"),
        (lambda: ge.FusionPattern(anchor="Conv2D", followers="Relu"), "followers must be a list"),
        (lambda: ge.FusionPattern(anchor="Conv2D", followers=[]), "at least one follower"),
        (lambda: ge.FusionPattern(anchor="Conv2D", followers=["Relu"], constraint="NCHW"), "constraint must be"),
        (lambda: ge.FusionPattern(anchor="Conv2D", followers=["Relu"], name=""), "name must be"),
        (
            lambda: ge.GraphOptimizer(fusion_patterns=[conv_bn(), conv_bn()]),
            "'user_conv2d_batchnorm' is defined twice",
        ),
        (
            lambda: ge.GraphOptimizer(fusion_patterns=[conv_bn(name="cube_epilogue")]),
            "'cube_epilogue' is defined twice",
        ),
    ],
)
def test_pattern_errors_are_one_line(make, message):
    with pytest.raises(ge.GEError, match=message) as e:
        make()
    assert_one_line(e.value)


def test_pattern_class_and_repr():
    assert ge.FusionPattern(anchor="MatMul", followers=["Add", "Gelu"]).pattern_class() == "cube+elementwise"
    assert ge.FusionPattern(anchor="Softmax", followers=["Mul"]).pattern_class() == "reduce+elementwise"
    assert ge.FusionPattern(anchor="Relu", followers=["Mul"]).pattern_class() == "elementwise"
    assert repr(conv_bn()) == "FusionPattern(user_conv2d_batchnorm: Conv2D -> BatchNorm [cube+elementwise])"


def test_mutation_an_ignored_constraint_is_caught(cnn, monkeypatch):
    """Break the wiring (the rule allows every candidate): the constraint test fails."""
    from ge.api.fusion_pattern import FusionPattern

    monkeypatch.setattr(FusionPattern, "_check", lambda self, candidate: None)
    with pytest.raises(AssertionError):
        test_a_rejecting_constraint_prevents_the_group(cnn)
