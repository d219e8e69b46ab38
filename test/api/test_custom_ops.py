"""Custom operators (docs/custom_ops.md): a plugin's registration becomes `ge.custom`, which imports,
optimizes at O3, lowers to streams and runs equal to a numpy reference; its IR round-trips; a
missing, failing or clashing plugin is refused in one line. The mutation tests break a kernel and a
shape function and show the reference comparison and the verifier catch them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from xdsl.dialects.builtin import f32
from xdsl.ir import Block

import ge
from ge.frontend.onnx_export_rules import custom_domain_versions
from ge.frontend.onnx_exporter import OnnxExportError, export_module
from ge.frontend.onnx_importer import import_model
from ge.frontend.onnx_ops import OnnxImportError
from ge.ge_dialects import task
from ge.ge_dialects.context import make_context
from ge.ge_dialects.ge.custom import CustomOp
from ge.ge_dialects.ge.facts import Engine
from ge.ge_dialects.ge.types import tensor
from ge.ge_dialects.op_library import OpLibrary, OpLibraryError
from ge.interpreter.ge import KernelError
from ge.interpreter.runner import run
from ge.passes.pipeline import apply_all, parse_passes
from ge.tools import ge_compile, ge_opt, ge_run, ge_translate
from ge.tools.common import UserError, parse_module, print_module

PLUGIN = Path(__file__).parent / "custom_ops" / "example_ops.py"
ALPHA = 2.0
X = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
B = np.asarray([[0.5, -1.0, 2.0]], dtype=np.float32)
LOWER = "ge-optimize{level=3},lower-to-tasks,plan-memory,lower-to-streams"


def model(version: int = 1) -> onnx.ModelProto:
    """x -> Mul(B) -> com.example.ScaledSoftplus(alpha) -> Relu -> y."""
    nodes = [
        helper.make_node("Mul", ["x", "b"], ["m"], name="mul"),
        helper.make_node("ScaledSoftplus", ["m"], ["s"], name="ssp", domain="com.example", alpha=ALPHA),
        helper.make_node("Relu", ["s"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [onnx.numpy_helper.from_array(B, "b")],
    )
    imports = [helper.make_opsetid("", 17), helper.make_opsetid("com.example", version)]
    return helper.make_model(graph, opset_imports=imports)


def reference(x: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """log(1 + exp(alpha * x * B)) / alpha, then Relu (a no-op on softplus), in float64."""
    m = x.astype(np.float64) * B
    return np.logaddexp(0.0, alpha * m) / alpha


def stream_level_error(library: OpLibrary) -> float:
    """The largest relative error of the model run at the stream level (imported, O3, lowered)
    against `reference`, with `library` loaded."""
    with ge.op_library(library):
        module, _ = import_model(model())
        apply_all(make_context(), module, parse_passes(LOWER))
        got = run(module, {"x": X})["y"]
    want = reference(X)
    return float(np.max(np.abs(got - want) / np.abs(want)))


def shape_lie(inputs, attrs):
    return [ge.TensorSpec(inputs[0].shape[::-1], inputs[0].dtype)]


def variant(**changes) -> OpLibrary:
    """A library named as the plugin's, registering ScaledSoftplus with `changes`."""
    declaration = dict(
        domain="com.example",
        opsets=(1, 3),
        inputs=["X"],
        outputs=["Y"],
        attributes={"alpha": ("float", 1.0)},
        shape=lambda inputs, attrs: [inputs[0]],
        kernel=lambda inputs, attrs: [
            (np.logaddexp(0, attrs["alpha"] * inputs[0]) / attrs["alpha"]).astype(inputs[0].dtype)
        ],
        engine="vector",
        work=lambda inputs, outputs, attrs: 4 * outputs[0].size,
    )
    library = OpLibrary("example_ops", "variant")
    library.register("ScaledSoftplus", **{**declaration, **changes})
    return library


@pytest.fixture(scope="module")
def library() -> OpLibrary:
    return ge.load_op_library(PLUGIN)


def test_a_custom_op_imports_optimizes_at_o3_lowers_and_runs_at_the_stream_level_equal_to_numpy(library):
    assert stream_level_error(library) <= 1e-6


def test_the_lowered_task_has_the_registrations_engine_and_work(library):
    with ge.op_library(library):
        module, _ = import_model(model())
        apply_all(make_context(), module, parse_passes("lower-to-tasks"))
    kernels = [op for op in next(iter(module.ops)).body.block.ops if isinstance(op, task.KernelOp)]
    (custom,) = [k for k in kernels if any(isinstance(m, CustomOp) for m in k.body.block.ops)]
    assert custom.engine.data == "vector"
    (op,) = [m for m in custom.body.block.ops if isinstance(m, CustomOp)]
    with ge.op_library(library):
        assert (op.vector_elements(), op.macs(), op.engine_class()) == (4 * X.size, 0, Engine.VECTOR)
    with ge.op_library(variant(engine="cube")):
        assert (op.vector_elements(), op.macs(), op.engine_class()) == (0, 4 * X.size, Engine.CUBE)
    with ge.op_library(variant(engine="aicpu")):
        module, _ = import_model(model())
        apply_all(make_context(), module, parse_passes("lower-to-tasks"))
        engines = {op.engine.data for op in next(iter(module.ops)).body.block.ops if isinstance(op, task.KernelOp)}
    assert "aicpu" in engines


def test_the_textual_ir_round_trips_with_the_library_loaded(library):
    with ge.op_library(library):
        module, _ = import_model(model())
        text = print_module(module)
        assert '= ge.custom %1 {library = "example_ops", domain = "com.example", op_type = "ScaledSoftplus"' in text
        assert print_module(parse_module(text, "<test>")) == text
    with pytest.raises(UserError, match="not loaded \\(give --load-op-library example_ops.py\\)"):
        parse_module(text, "<test>")


def test_a_domain_version_outside_the_registered_range_is_unsupported(library):
    with ge.op_library(library), pytest.raises(OnnxImportError, match="com.example.ScaledSoftplus \\(1 node: 'ssp'\\)"):
        import_model(model(version=4))


def test_the_tools_translate_optimize_and_run_with_the_plugin_and_refuse_without(tmp_path, run_main, library):
    onnx.save(model(), tmp_path / "m.onnx")
    mlir, lowered = tmp_path / "m.mlir", tmp_path / "low.mlir"
    code, out, err = run_main(ge_translate.main, ["--import-onnx", tmp_path / "m.onnx", "-o", mlir])
    assert code == 1 and out == "" and not mlir.exists()
    assert err.count("\n") == 1 and "com.example.ScaledSoftplus (1 node: 'ssp')" in err
    assert err.endswith("; register a custom operator with --load-op-library (docs/custom_ops.md)\n")
    flag = ["--load-op-library", PLUGIN]
    assert run_main(ge_translate.main, ["--import-onnx", tmp_path / "m.onnx", "-o", mlir, *flag])[0] == 0
    assert run_main(ge_opt.main, [mlir, "-p", LOWER, "-o", lowered, *flag])[0] == 0
    np.savez(tmp_path / "in.npz", x=X)
    code, _, err = run_main(ge_run.main, [lowered, "--inputs", tmp_path / "in.npz", "-o", tmp_path / "out.npz", *flag])
    assert code == 0, err
    got = np.load(tmp_path / "out.npz")["y"]
    assert np.max(np.abs(got - reference(X)) / reference(X)) <= 1e-6
    code, _, err = run_main(ge_run.main, [lowered, "--inputs", tmp_path / "in.npz"])
    assert code == 1 and err.count("\n") == 1 and "give --load-op-library example_ops.py" in err


def test_an_artifact_records_its_library_and_refuses_another_plugin_in_one_line(tmp_path, run_main):
    """The manifest names the library with its plugin's sha256; the cache key holds it, so the same
    plugin is a cache hit and an edited one (same name, another byte) a miss; loading without the
    library, or with the edited plugin, is one line each."""
    import hashlib

    from ge.tools.artifact import read_artifact

    onnx.save(model(), tmp_path / "m.onnx")
    edited = tmp_path / "edited" / PLUGIN.name
    edited.parent.mkdir()
    edited.write_text(PLUGIN.read_text() + "\n# edited\n")
    artifact = tmp_path / "m.ge"

    def compile_with(plugin: Path) -> str:
        code, out, err = run_main(ge_compile.main, [tmp_path / "m.onnx", "-o", artifact, "--load-op-library", plugin])
        assert code == 0, err
        return out

    assert "compiled in" in compile_with(PLUGIN)
    recorded = read_artifact(artifact).manifest["op_libraries"]
    assert recorded == [{"name": "example_ops", "sha256": hashlib.sha256(PLUGIN.read_bytes()).hexdigest()}]
    assert "from the cache" in compile_with(PLUGIN)
    np.savez(tmp_path / "in.npz", x=X)
    run = [artifact, "--inputs", tmp_path / "in.npz"]
    code, _, err = run_main(ge_run.main, run)
    assert code == 1 and err.count("\n") == 1
    assert err.endswith("it needs the custom operator library 'example_ops' (give --load-op-library example_ops.py)\n")
    code, _, err = run_main(ge_run.main, [*run, "--load-op-library", edited])
    assert code == 1 and err.count("\n") == 1 and "is not the plugin it was compiled with" in err
    assert "compiled in" in compile_with(edited)  # another plugin: another key
    assert run_main(ge_run.main, [*run, "--load-op-library", edited])[0] == 0


def _plugin(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text("import ge\n" + body)
    return path


REGISTRATION = """
ge.register_op("{op}", domain="{domain}", inputs=["X"], outputs=["Y"], attributes={{"alpha": "float"}}, shape={shape},
               kernel=lambda ins, attrs: [ins[0]], engine="vector", work=lambda i, o, a: 1)
"""


def test_a_shape_function_that_raises_is_refused_in_one_line_naming_the_op_and_the_plugin(tmp_path, run_main):
    onnx.save(model(), tmp_path / "m.onnx")
    plugin = _plugin(
        tmp_path,
        "bad_shape",
        REGISTRATION.format(op="ScaledSoftplus", domain="com.example", shape="lambda i, a: 1 / 0"),
    )
    code, out, err = run_main(ge_translate.main, ["--import-onnx", tmp_path / "m.onnx", "--load-op-library", plugin])
    assert code == 1 and out == "" and err.count("\n") == 1
    assert f"node 'ssp' (com.example.ScaledSoftplus): com.example.ScaledSoftplus (plugin {plugin})" in err
    assert "the shape function raised ZeroDivisionError: division by zero" in err


def test_a_plugin_mapping_a_mapped_type_is_refused_in_one_line(tmp_path, run_main):
    onnx.save(model(), tmp_path / "m.onnx")
    builtin = _plugin(tmp_path, "relu", REGISTRATION.format(op="Relu", domain="", shape="lambda i, a: i"))
    code, _, err = run_main(ge_translate.main, ["--import-onnx", tmp_path / "m.onnx", "--load-op-library", builtin])
    assert code == 1 and err == (
        f"ge-translate: error: --load-op-library: plugin {builtin}: Relu is a built-in ONNX operator; "
        "register an operator ge does not import, or one of your own domain\n"
    )
    twice = _plugin(
        tmp_path, "again", REGISTRATION.format(op="ScaledSoftplus", domain="com.example", shape="lambda i, a: i")
    )
    argv = ["--import-onnx", tmp_path / "m.onnx", "--load-op-library", PLUGIN, "--load-op-library", twice]
    code, _, err = run_main(ge_translate.main, argv)
    assert code == 1 and err == (
        f"ge-translate: error: --load-op-library: plugin {twice}: com.example.ScaledSoftplus is already "
        f"registered by plugin {PLUGIN}\n"
    )


def test_register_op_outside_a_plugin_and_a_malformed_registration_are_refused():
    with pytest.raises(OpLibraryError, match="outside a plugin"):
        ge.register_op("X", domain="d")
    with pytest.raises(OpLibraryError, match="engine 'gpu' is not one of cube, vector, aicpu"):
        variant(engine="gpu")
    with pytest.raises(OpLibraryError, match="attribute 'alpha' has kind 'double'"):
        variant(attributes={"alpha": "double"})


def test_mutation_a_kernel_that_ignores_the_attribute_is_caught_by_the_reference_comparison():
    assert stream_level_error(variant()) <= 1e-6
    ignores_alpha = variant(kernel=lambda ins, attrs: [np.logaddexp(0, ins[0]).astype(ins[0].dtype)])
    assert stream_level_error(ignores_alpha) > 1e-2


def test_mutation_a_shape_function_returning_a_wrong_shape_is_caught_by_the_verifier(library):
    with ge.op_library(library):
        text = print_module(import_model(model())[0])
        parse_module(text, "<test>")  # verifies with the plugin's shape function
    with ge.op_library(variant(shape=shape_lie)):
        with pytest.raises(
            UserError, match="ge.custom 'ssp': result #0 has type tensor<2x3xf32> but its operands imply tensor<3x2"
        ):
            parse_module(text, "<test>")
        module, _ = import_model(model())  # typed by the lie: the kernel's result contradicts it
        with pytest.raises(KernelError, match="result #0 has shape \\(2, 3\\), type says tensor<3x2xf32>"):
            run(module, {"x": X})


def test_the_onnx_export_writes_the_op_in_its_domain_and_reimports_to_the_same_numbers(library):
    with ge.op_library(library):
        module, weights = import_model(model())
        exported = export_module(module, weights)
        (node,) = [n for n in exported.graph.node if n.domain == "com.example"]
        assert node.op_type == "ScaledSoftplus" and helper.get_attribute_value(node.attribute[0]) == ALPHA
        assert {(o.domain, o.version) for o in exported.opset_import} >= {("com.example", 1)}
        got = run(import_model(exported)[0], {"x": X})["y"]
    assert np.max(np.abs(got - reference(X)) / reference(X)) <= 1e-6


def test_registrations_of_one_domain_with_disjoint_opset_ranges_are_refused_at_export():
    early = variant(opsets=(1, 1))
    late = OpLibrary("late_ops", "late")
    definition = early.ops[("com.example", "ScaledSoftplus")]
    late.register(
        "Twin",
        domain="com.example",
        opsets=(2, None),
        inputs=["X"],
        outputs=["Y"],
        shape=definition.shape,
        kernel=definition.kernel,
        engine="vector",
        work=definition.work,
    )
    x = Block(arg_types=[tensor(f32, (2, 3))]).args[0]
    with ge.op_library(early, late):
        ops = [
            CustomOp.build_for(d, [x], {}, name)
            for d, name in ((definition, "a"), (late.ops[("com.example", "Twin")], "b"))
        ]
        assert custom_domain_versions(ops[1:]) == {"com.example": 2}
        with pytest.raises(
            OnnxExportError,
            match="ge.custom 'a': com.example is exported at version 2, which com.example.ScaledSoftplus \\(plugin variant\\) does not map \\(it maps 1 to 1\\)",
        ):
            custom_domain_versions(ops)


def test_mutation_an_export_at_a_version_the_registration_does_not_map_does_not_reimport(library, monkeypatch):
    from ge.frontend import onnx_exporter

    monkeypatch.setattr(onnx_exporter, "custom_domain_versions", lambda ops: {"com.example": 4})
    with ge.op_library(library):
        exported = export_module(*import_model(model()))
        with pytest.raises(OnnxImportError, match="com.example.ScaledSoftplus \\(1 node: 'ssp'\\)"):
            import_model(exported)


def loss_model(dtype=TensorProto.DOUBLE) -> onnx.ModelProto:
    """loss = ReduceSum(ScaledSoftplus(x * b)): b a parameter, f64 for finite differences."""
    nodes = [
        helper.make_node("Mul", ["x", "b"], ["m"], name="mul"),
        helper.make_node("ScaledSoftplus", ["m"], ["s"], name="ssp", domain="com.example", alpha=ALPHA),
        helper.make_node("ReduceSum", ["s"], ["loss"], name="sum", keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", dtype, [2, 3])],
        [helper.make_tensor_value_info("loss", dtype, [])],
        [onnx.numpy_helper.from_array(B.astype(np.float64), "b")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])


def _grad_of_b(library: OpLibrary) -> np.ndarray:
    with ge.op_library(library):
        backward = ge.grad(ge.GraphParser().parse_onnx_model(loss_model()), wrt=["b"])
        return ge.GraphExecutor().load_graph(backward).run({"x": X.astype(np.float64)})["b_grad"]


def test_the_registered_vjp_gives_the_gradient_finite_differences_give(library):
    x = X.astype(np.float64)

    def loss(b):
        return float(np.sum(np.logaddexp(0.0, ALPHA * x * b) / ALPHA))

    eps, base = 1e-6, B.astype(np.float64)
    want = np.zeros_like(base)
    for i in np.ndindex(base.shape):
        up, down = base.copy(), base.copy()
        up[i] += eps
        down[i] -= eps
        want[i] = (loss(up) - loss(down)) / (2 * eps)
    np.testing.assert_allclose(_grad_of_b(library), want, rtol=1e-6)


def test_mutation_a_vjp_that_ignores_the_attribute_is_caught_by_finite_differences(library):
    wrong = variant(vjp=lambda ins, dys, attrs: [dys[0] / (1 + np.exp(-ins[0]))])
    right = _grad_of_b(library)
    assert np.max(np.abs(_grad_of_b(wrong) - right)) > 1e-2


def test_without_a_vjp_the_gradient_is_refused_in_one_line():
    with pytest.raises(ge.GEError, match="com.example.ScaledSoftplus \\(plugin variant\\) registers no vjp"):
        _grad_of_b(variant())


def test_the_gradient_op_is_refused_by_the_onnx_export_as_a_training_op(library):
    with ge.op_library(library):
        backward = ge.grad(ge.GraphParser().parse_onnx_model(loss_model()), wrt=["b"])
        with pytest.raises(
            OnnxExportError, match="ge.custom 'ssp/grad': the gradient of ScaledSoftplus is a training op"
        ):
            export_module(backward.module)


def test_mutation_a_gradient_op_exported_anyway_is_a_model_no_importer_reads():
    """What the refusal guards: written out, `ScaledSoftplusGrad` is an operator nothing maps."""
    lib = variant(vjp=lambda ins, dys, attrs: [dys[0]])
    key = ("com.example", "ScaledSoftplusGrad")
    lib.gradients[key] = dataclasses.replace(lib.gradients[key], gradient_of=None)
    with ge.op_library(lib):
        backward = ge.grad(ge.GraphParser().parse_onnx_model(loss_model()), wrt=["b"])
        exported = export_module(backward.module)
        with pytest.raises(OnnxImportError, match="com.example.ScaledSoftplusGrad \\(1 node"):
            import_model(exported)


def test_a_graph_node_of_a_custom_op_has_the_registered_type(library):
    with ge.op_library(library):
        module, _ = import_model(model())
        nodes = ge.Graph.from_module(module).nodes
        assert [(n.type, n.ge_op) for n in nodes if n.ge_op == "ge.custom"] == [("ScaledSoftplus", "ge.custom")]
