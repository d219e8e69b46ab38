"""Custom operators in fused groups (docs/custom_ops.md): a plugin's op declared
`fusion="elementwise"` follows a conv as its epilogue and chains with built-in elementwise ops,
and with `formats` it computes in the conv's NC1HWC0 (no TransData between them); the fused
module runs equal to numpy at the ge level, at O3, as tasks and as streams, compiles to an
artifact and exports to ONNX with the op in its own domain inside the group's function. An
undeclared op is never fused; a malformed declaration is refused in one line. The mutation tests
make each predicate and check say yes always (or drop what it adds) and show a test catch it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.inliner import inline_local_functions

import ge
from ge.frontend import onnx_exporter
from ge.frontend.onnx_exporter import export_module
from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import fused, op_library, task
from ge.ge_dialects.context import make_context
from ge.ge_dialects.ge import custom
from ge.ge_dialects.ge.custom import CustomOp
from ge.ge_dialects.ge.layout import storage_of
from ge.ge_dialects.ge.weights import attach_weights
from ge.ge_dialects.op_library import OpLibrary, OpLibraryError
from ge.interpreter.runner import run
from ge.passes.fusion import rules
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools import ge_compile, ge_run
from ge.tools.common import UserError, parse_module, print_module

PLUGIN = Path(__file__).with_name("custom_ops") / "fusion_ops.py"
"""Softsign(X) = X / (1 + |X|), three times: fusable and in both storage formats, fusable in ND
only, and undeclared (the plugin the lit tests load too)."""

RNG = np.random.default_rng(0)
W = (RNG.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32)
X = RNG.standard_normal((1, 8, 16, 16)).astype(np.float32)
LOWER = "lower-to-tasks,plan-memory,lower-to-streams"


@pytest.fixture(scope="module")
def plugin() -> Path:
    return PLUGIN


@pytest.fixture(scope="module")
def library(plugin) -> OpLibrary:
    return ge.load_op_library(plugin)


def model(op: str = "Softsign") -> onnx.ModelProto:
    """x -> Conv(W) -> com.test.<op> -> Relu -> com.test.<op> -> y."""
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node(op, ["c"], ["s"], name="ss", domain="com.test"),
        helper.make_node("Relu", ["s"], ["r"], name="relu"),
        helper.make_node(op, ["r"], ["y"], name="ss2", domain="com.test"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(X.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 16, 16])],
        [onnx.numpy_helper.from_array(W, "w")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.test", 1)])


def reference(x: np.ndarray) -> np.ndarray:
    """softsign(relu(softsign(conv(x, W)))), in float64."""
    x64, w64 = x.astype(np.float64), W.astype(np.float64)
    padded = np.pad(x64, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # n, c, h, w, kh, kw
    c = np.einsum("nchwij,ocij->nohw", windows, w64)
    s = c / (1 + np.abs(c))
    return np.maximum(s, 0) / (1 + np.maximum(s, 0))


def imported(op: str = "Softsign"):
    module, weights = import_model(model(op))
    attach_weights(module, weights)
    return module


def optimized(op: str = "Softsign"):
    module = imported(op)
    apply_all(make_context(), module, parse_passes("ge-optimize{level=3}"))
    return module


def groups(module) -> list[tuple[str, list[str]]]:
    """Each fused group's rule and its members (a custom op by its type)."""
    return [
        (g.rule.data, [m.op_type.data if isinstance(m, CustomOp) else m.name for m in g.members])
        for g in module.walk()
        if isinstance(g, fused.GroupOp)
    ]


def error(got: np.ndarray) -> float:
    want = reference(X)
    return float(np.max(np.abs(got - want)))


def test_a_declared_op_is_a_member_of_the_conv_epilogue_and_of_an_elementwise_chain(library):
    with ge.op_library(library):
        module = optimized()
        assert groups(module) == [
            ("cube_epilogue", ["ge.conv", "Softsign"]),
            ("elementwise_chain", ["ge.relu", "Softsign"]),
        ]
        # it carries the conv's NC1HWC0: the only TransData are at the graph's edges
        trans = [op for op in module.walk() if op.name == "ge.trans_data"]
        assert [op.parent_op().name for op in trans] == ["func.func", "func.func"]
        (first, _) = [m for m in module.walk() if isinstance(m, CustomOp)]
        assert storage_of(first.results[0].type) == "NC1HWC0"


def test_the_fused_module_runs_equal_to_numpy_at_every_level(library):
    with ge.op_library(library):
        assert error(run(imported(), {"x": X})["y"]) <= 1e-5  # ge level
        module = optimized()
        assert error(run(module, {"x": X})["y"]) <= 1e-5  # O3: fused groups, NC1HWC0
        apply_all(make_context(), module, parse_passes("lower-to-tasks"))
        kernels = [op for op in module.walk() if isinstance(op, task.KernelOp)]
        fused_tasks = [k for k in kernels if any(isinstance(m, CustomOp) for m in k.members)]
        assert sorted(k.pattern.data for k in fused_tasks) == ["cube_epilogue", "elementwise_chain"]
        assert all(k.engine.data in ("cube+vector", "vector") for k in fused_tasks)
        assert error(run(module, {"x": X})["y"]) <= 1e-5  # tasks
        apply_all(make_context(), module, parse_passes("plan-memory,lower-to-streams"))
        assert error(run(module, {"x": X})["y"]) <= 1e-5  # streams


def test_the_group_costs_the_registrations_work(library):
    """The fused task's vector work holds the custom op's registered work (3 per element)."""
    from ge.device.ir_work import kernel_work

    with ge.op_library(library):
        module = optimized()
        apply_all(make_context(), module, parse_passes("lower-to-tasks"))
        (chain,) = [k for k in module.walk() if isinstance(k, task.KernelOp) and k.pattern.data == "elementwise_chain"]
        relu = next(m for m in chain.members if m.name == "ge.relu")
        assert kernel_work(chain).vector_elems == relu.vector_elements() + 3 * 16 * 16 * 16


def test_an_undeclared_op_is_not_fused(library):
    with ge.op_library(library):
        module = optimized("Opaque")
        assert all("Opaque" not in members for _, members in groups(module))
        assert error(run(module, {"x": X})["y"]) <= 1e-5


def test_mutation_the_fusion_predicate_saying_yes_fuses_an_undeclared_op(library, monkeypatch):
    monkeypatch.setattr(rules, "fuses_as_elementwise", lambda op: True)
    with ge.op_library(library):
        assert any("Opaque" in members for _, members in groups(optimized("Opaque")))


def test_an_op_fusable_in_nd_only_does_not_take_the_convs_format_nor_join_its_epilogue(library):
    """SoftsignND declares fusion but no formats: a TransData back to NCHW stands between the conv
    and it; the Relu anchors a chain it follows in ND (a custom op never anchors a group)."""
    with ge.op_library(library):
        module = optimized("SoftsignND")
        assert groups(module) == [("elementwise_chain", ["ge.relu", "SoftsignND"])]
        assert {storage_of(m.results[0].type) for m in module.walk() if isinstance(m, CustomOp)} == {"ND"}


def test_mutation_the_declared_formats_widened_carry_the_convs_format(library, monkeypatch):
    monkeypatch.setattr(CustomOp, "formats", lambda self: ("NC1HWC0", "FRACTAL_NZ"))
    with ge.op_library(library):
        module = optimized("SoftsignND")
        assert ("cube_epilogue", ["ge.conv", "SoftsignND"]) in groups(module)


def test_the_compiled_artifact_runs_equal_to_numpy(tmp_path, run_main, plugin):
    onnx.save(model(), tmp_path / "m.onnx")
    artifact = tmp_path / "m.ge"
    flag = ["--load-op-library", plugin]
    code, _, err = run_main(ge_compile.main, [tmp_path / "m.onnx", "-o", artifact, "--no-cache", "--quiet", *flag])
    assert code == 0, err
    np.savez(tmp_path / "in.npz", x=X)
    code, _, err = run_main(ge_run.main, [artifact, "--inputs", tmp_path / "in.npz", "-o", tmp_path / "out.npz", *flag])
    assert code == 0, err
    assert error(np.load(tmp_path / "out.npz")["y"]) <= 1e-5


def test_the_onnx_export_writes_the_op_in_its_domain_inside_the_groups_function(library):
    """onnxruntime has no kernel for com.test: the export is checked (onnx.checker, in the
    exporter), read for the node's domain and the function's imports, and re-imported with the
    plugin, inlined, to the same numbers."""
    with ge.op_library(library):
        exported = export_module(optimized())
        nodes = [(n.domain, n.op_type) for n in exported.graph.node if n.op_type != "Identity"]  # trans_data
        assert nodes == [("ai.ge.fused", "cube_epilogue_0"), ("ai.ge.fused", "elementwise_chain_1")]
        for fn in exported.functions:
            assert [(n.domain, n.op_type) for n in fn.node if n.domain] == [("com.test", "Softsign")]
            assert ("com.test", 1) in {(o.domain, o.version) for o in fn.opset_import}
        assert ("com.test", 1) in {(o.domain, o.version) for o in exported.opset_import}
        back, weights = import_model(inline_local_functions(exported))
        attach_weights(back, weights)
        assert error(run(back, {"x": X})["y"]) <= 1e-5


def test_mutation_a_function_without_the_custom_domain_is_refused_by_the_checker(library, monkeypatch):
    make_function = onnx_exporter.helper.make_function

    def default_domain_only(*args, opset_imports, **kwargs):
        return make_function(*args, opset_imports=opset_imports[:1], **kwargs)

    monkeypatch.setattr(onnx_exporter.helper, "make_function", default_domain_only)
    with ge.op_library(library), pytest.raises(onnx.checker.ValidationError, match="domain com.test"):
        export_module(optimized())


# -- declarations refused ------------------------------------------------------------------------


def register(**changes) -> OpLibrary:
    definition = dict(
        domain="com.test",
        inputs=["X"],
        outputs=["Y"],
        shape=lambda inputs, attrs: [inputs[0]],
        kernel=lambda inputs, attrs: [inputs[0]],
        engine="vector",
        work=lambda inputs, outputs, attrs: 1,
    )
    library = OpLibrary("fuse_ops", "variant")
    library.register("Softsign", **{**definition, **changes})
    return library


REFUSED = [
    ({"fusion": "chain"}, "fusion 'chain' is not one of elementwise (or None: never fused)"),
    ({"formats": ("FRACTAL_Z",)}, "format 'FRACTAL_Z' is not one of NC1HWC0, FRACTAL_NZ"),
    ({"formats": "NC1HWC0"}, "formats must be a tuple of format names, e.g. ('NC1HWC0',)"),
    (
        {"fusion": "elementwise", "engine": "aicpu"},
        "fusion is declared for an op on the aicpu engine; only a vector op fuses or computes in a storage format",
    ),
    ({"formats": ("NC1HWC0",), "inputs": []}, "formats is declared for an op without inputs"),
]


@pytest.mark.parametrize(("changes", "reason"), REFUSED, ids=[r for _, r in REFUSED])
def test_a_malformed_declaration_is_refused_in_one_line(changes, reason):
    with pytest.raises(OpLibraryError) as e:
        register(**changes)
    assert str(e.value) == f"plugin variant: com.test.Softsign: {reason}"


def test_mutation_the_declaration_checks_skipped_register_an_unknown_fusion_and_format(monkeypatch):
    monkeypatch.setattr(op_library, "_checked_layout", lambda plugin, where, engine, n, fusion, formats: formats)
    for changes, _ in REFUSED[:2]:
        register(**changes)  # accepted: only the checks refuse them


def wider(inputs, attrs):
    return [ge.TensorSpec((2, *inputs[0].shape), inputs[0].dtype)]


def test_an_elementwise_declaration_whose_shape_changes_is_refused_when_built_and_verified(library):
    lying = register(fusion="elementwise", shape=wider, kernel=lambda inputs, attrs: [np.stack([inputs[0]] * 2)])
    reason = (
        "com.test.Softsign (plugin variant) declares fusion='elementwise', but its shape function gives "
        "output #0 shape [2, 1, 16, 16, 16] for input X of shape [1, 16, 16, 16]"
    )
    with ge.op_library(lying), pytest.raises(OnnxImportError) as built:
        imported()
    assert str(built.value) == f"node 'ss' (com.test.Softsign): {reason}"
    # the IR of a registration without the declaration, read with the declaring one
    with ge.op_library(register(shape=wider, kernel=lambda inputs, attrs: [np.stack([inputs[0]] * 2)])):
        text = print_module(imported())
    with ge.op_library(lying), pytest.raises(UserError) as verified:
        parse_module(text, "<test>")
    assert str(verified.value).count("\n") == 0 and f"ge.custom 'ss': {reason}" in str(verified.value)


def test_mutation_without_the_shape_check_the_lying_declaration_builds(monkeypatch):
    monkeypatch.setattr(custom, "_check_elementwise", lambda *args: None)
    lying = register(fusion="elementwise", shape=wider, kernel=lambda inputs, attrs: [np.stack([inputs[0]] * 2)])
    with ge.op_library(lying):
        imported()


def test_a_plugin_declaring_an_unknown_fusion_is_refused_by_the_tools_in_one_line(tmp_path, run_main, plugin):
    bad = tmp_path / "bad_fusion.py"
    bad.write_text(plugin.read_text().replace('fusion="elementwise", formats', 'fusion="chain", formats'))
    onnx.save(model(), tmp_path / "m.onnx")
    code, out, err = run_main(ge_compile.main, [tmp_path / "m.onnx", "-o", tmp_path / "m.ge", "--load-op-library", bad])
    assert code == 1 and out == "" and err.count("\n") == 1
    assert err.endswith(
        f"plugin {bad}: com.test.Softsign: fusion 'chain' is not one of elementwise (or None: never fused)\n"
    )
