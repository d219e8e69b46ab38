"""bench.compile_ratio (the compile-time ratio benchmark) builds its modules, runs its passes and
prints its verdict; the ratios themselves are read on a quiet machine (`python -m bench.compile_ratio`)."""

from bench import compile_ratio


def test_the_benchmark_prints_a_verdict_per_case(capsys):
    code = compile_ratio.main(["--small", "4", "--repeat", "1"])
    out = capsys.readouterr().out
    assert code in (0, 1)
    for name in compile_ratio.CASES:
        assert f"| {name} | 4 -> 16 |" in out
    assert out.count("linear") + out.count("NOT LINEAR") == len(compile_ratio.CASES)


def test_the_relu_chain_is_what_it_says():
    module = compile_ratio.relu_chain(7)
    assert sum(1 for op in module.walk() if op.name == "ge.relu") == 7
    module.verify()
    twins = compile_ratio.twin_conversions(3)
    assert sum(1 for op in twins.walk() if op.name == "ge.trans_data") == 6
    twins.verify()


def test_the_matmul_chain_gives_fuse_trans_data_its_work():
    """After its first two stages every conversion is a kernel of its own; fuse-trans-data joins them all."""
    from ge.ge_dialects import fused
    from ge.passes.pipeline import apply_all, parse_passes
    from ge.tools.common import make_context

    module = compile_ratio.matmul_transpose_chain(5)
    module.verify()
    apply_all(make_context(), module, parse_passes("assign-formats,fuse-ops"))
    block = next(op for op in module.walk() if op.name == "func.func").body.block
    assert sum(1 for op in block.ops if op.name == "ge.trans_data") == 11
    apply_all(make_context(), module, parse_passes("fuse-trans-data"))
    assert not [op for op in block.ops if op.name == "ge.trans_data"]
    assert sum(1 for op in block.ops if isinstance(op, fused.GroupOp)) == 10


def test_the_gpt_stack_reaches_the_layout_with_its_matmuls_and_residual_adds():
    """The whole-graph choice gets components to solve: FRACTAL_NZ matmuls joined by adds."""
    from ge.ge_dialects import ge

    module = compile_ratio.gpt_blocks(2)
    module.verify()
    assert sum(1 for op in module.walk() if isinstance(op, ge.MatMulOp)) >= 2 * 4
    assert sum(1 for op in module.walk() if isinstance(op, ge.LayerNormOp)) >= 2 * 2


def test_the_matmul_reshape_chain_gives_fuse_views_its_work():
    """Every reshape of the chain is a view that joins a matmul's kernel: one kernel per link."""
    from ge.ge_dialects import fused
    from ge.passes.pipeline import apply_all, parse_passes
    from ge.tools.common import make_context

    module = compile_ratio.matmul_reshape_chain(5)
    module.verify()
    apply_all(make_context(), module, parse_passes("fuse-views"))
    main = next(op for op in module.walk() if op.name == "func.func")
    kernels = [op for op in main.body.block.ops if isinstance(op, fused.GroupOp)]
    assert len(kernels) == 5
    assert not [op for op in main.body.block.ops if op.name == "ge.reshape"]
