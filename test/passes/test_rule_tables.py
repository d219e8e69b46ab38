"""The rule tables applied by the rewrite engine, and the engine features they need.

Every rule of every table is needed: with one rule dropped, the pass's lit inputs come out
different (a mutation per rule). The engine features the tables rely on (`finds`, `says`/`shows`,
`Check`, `IN_PLACE` with `final=False`, the program-order walks, `any_block`) each have a test that
fails when the feature is broken.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.scf import Scf
from xdsl.parser import Parser

import ge as ge_api
from ge.ge_dialects import ge
from ge.ge_dialects.ge.facts import Carries
from ge.passes import remarks
from ge.passes.layout import cancel_trans_data, fold_trans_data, merge_trans_data
from ge.passes.layout.insert_trans_data import materialize
from ge.passes.layout.planning import Planner
from ge.passes.layout.rules import ANCHORS, BACKWARD_ANCHORS, BROADCASTS, FOLLOWERS, Options, declarations
from ge.passes.layout.rules import RULES as LAYOUT_RULES
from ge.passes.layout.variable_formats import keep_state_stored, plan_variables
from ge.passes.rewrite import IN_PLACE, Check, Op, Reject, Rule, apply_rules
from ge.passes.rules import casts
from ge.target import DEFAULT_TARGET, load_target
from ge.tools.common import make_context, print_module

ROOT = Path(__file__).resolve().parents[2]


PLUGIN = ROOT / "test/api/custom_ops/fusion_ops.py"
"""The plugin the custom-op lit inputs name (`--load-op-library`), loaded while their cases run."""


def _cases(lit_file: str) -> list[str]:
    """The cases of `lit_file`, and of its `_custom.mlir` companion (ge.custom ops of PLUGIN) if any."""
    files = [ROOT / lit_file, (ROOT / lit_file).with_name(Path(lit_file).stem + "_custom.mlir")]
    text = "// -----".join(f.read_text() for f in files if f.exists())
    return [c for c in text.split("// -----") if "func.func" in c]


def parse_module(text: str, source: str):
    """`text` as a module (with scf: the lit inputs have regions)."""
    ctx = make_context()
    ctx.load_dialect(Scf)
    return Parser(ctx, text, source).parse_module()


def _print(module) -> str:
    return print_module(module)


def _layout(module, table):
    planner = Planner(Options(nz=True, nz_min_dim=load_target(DEFAULT_TARGET).cube.m), BROADCASTS)
    groups = plan_variables(module, planner)  # as assign-formats does: the variables first
    apply_rules(module, table, "assign-formats", walk="single-pass", context=planner)
    materialize(module, "assign-formats")
    keep_state_stored(module, groups)


def _program_order(name):
    return lambda module, table: apply_rules(module, table, name, walk="program-order")


TABLES = {
    "cancel-casts": (casts.RULES, _program_order("cancel-casts"), "test/passes/mixed_precision_cancel_casts.mlir"),
    "cancel-trans-data": (
        cancel_trans_data.RULES,
        _program_order("cancel-trans-data"),
        "test/passes/layout/cancel_trans_data.mlir",
    ),
    "merge-trans-data": (
        merge_trans_data.RULES,
        _program_order("merge-trans-data"),
        "test/passes/layout/merge_trans_data.mlir",
    ),
    "fold-trans-data": (
        fold_trans_data.RULES,
        fold_trans_data.fold_constants,
        "test/passes/layout/fold_trans_data.mlir",
    ),
    "assign-formats": (list(LAYOUT_RULES), _layout, "test/passes/layout/assign_formats.mlir"),
}


def _outcome(run, table, cases) -> tuple[list[str], list[str]]:
    texts, said = [], []
    with ge_api.op_library(ge_api.load_op_library(PLUGIN)):
        for case in cases:
            module = parse_module(case, "<test>")
            with remarks.collected() as found:
                run(module, table)
            texts.append(_print(module))
            said += [str(r) for r in found]
    return texts, said


@pytest.mark.parametrize("pass_name, index", [(p, i) for p, (t, _, _) in TABLES.items() for i in range(len(t))])
def test_every_rule_is_needed(pass_name, index):
    """Dropping rule `index` from the table changes what the pass makes of its lit inputs."""
    table, run, lit_file = TABLES[pass_name]
    cases = _cases(lit_file)
    full = _outcome(run, list(table), cases)
    dropped = _outcome(run, [r for i, r in enumerate(table) if i != index], cases)
    name = table[index].name
    assert any(f" applied {name} on" in r for r in full[1]), f"{name} never applies on {lit_file}"
    assert full[0] != dropped[0], f"dropping {name} changes no output of {lit_file}"


def test_layout_op_classes_have_anchors_or_followers_of_distinct_formats():
    """The pass's meaning (an op's anchor rules all apply; a follow rule only where no anchor names
    the op, the rule of the format that arrives) relies on these tables not overlapping."""
    anchors = ANCHORS + BACKWARD_ANCHORS
    anchored = {c for r in anchors for c in r.pattern.classes}
    followed = {c for r in FOLLOWERS for c in r.pattern.classes}
    assert not anchored & followed
    assert all(not r.final for r in anchors) and all(r.final for r in FOLLOWERS)
    carried: dict[type, list[str]] = {}
    for declared, classes in declarations(ge.ALL_OPS):
        if isinstance(declared, Carries) and declared.formats is not None:
            for cls in classes:
                carried.setdefault(cls, []).extend(declared.formats)
    assert all(len(formats) == len(set(formats)) for formats in carried.values())
    assert any(len(formats) > 1 for formats in carried.values())  # ReduceMean: NC1HWC0 and FRACTAL_NZ


# -- the engine features ---------------------------------------------------------------------------

_RELUS = """
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = ge.relu %x : (tensor<4xf32>) -> tensor<4xf32> loc("/a")
  %b = ge.relu %x : (tensor<4xf32>) -> tensor<4xf32> loc("/b")
  func.return %a, %b : tensor<4xf32>, tensor<4xf32>
}
"""


def _earlier_relu(m):
    """Another relu of the same operand, before the root."""
    relus = [
        op for op in m.root.parent_block().ops if isinstance(op, ge.ReluOp) and op.operands[0] is m.root.operands[0]
    ]
    return None if relus[0] is m.root else relus[0].results[0]


def _remarks(text, table, walk="users-first", context=None) -> tuple[list[str], str]:
    module = parse_module(text, "<test>")
    with remarks.collected() as found:
        apply_rules(module, table, "t", walk=walk, context=context)
    module.verify()
    return [str(r) for r in found], _print(module)


def test_finds_binds_a_value_beyond_the_pattern_and_says_shows_word_the_remark():
    rule = Rule(
        "cse",
        Op(ge.ReluOp, "x", name="second"),
        lambda m, b: m["first"],
        finds={"first": _earlier_relu},
        says=lambda m: "one relu is enough",
        shows=("first", "second"),
    )
    said, text = _remarks(_RELUS, [rule], walk="program-order")
    assert said == ["remark: t: applied cse on [/a, /b]: one relu is enough"]
    assert text.count("ge.relu") == 1


def test_a_find_that_finds_nothing_is_silent():
    rule = Rule(
        "cse",
        Op(ge.ReluOp, "x"),
        lambda m, b: m["x"],
        finds={"first": lambda m: None},
        rejects=[Reject("never", lambda m: True)],
    )
    assert _remarks(_RELUS, [rule])[0] == []


def test_check_and_reject_shows_name_the_refusal():
    rule = Rule(
        "r",
        Op(ge.ReluOp, "x", name="y"),
        lambda m, b: m["x"],
        rejects=[
            Check(lambda m: "no" if m.root.location.desc.data == "/a" else None, shows=("y",)),
            Reject("not b", lambda m: True, shows=("y", "y")),
        ],
    )
    said, _ = _remarks(_RELUS, [rule])
    assert sorted(said) == ["remark: t: rejected r on [/a]: no", "remark: t: rejected r on [/b, /b]: not b"]


def test_in_place_rules_that_are_not_final_add_up_in_one_sweep():
    """Two annotation rules on one root both apply (final=False), once each (single-pass)."""

    def tag(key):
        def build(m, b):
            m.root.attributes[key] = m.root.location
            return IN_PLACE

        return build

    table = [Rule("tag1", Op(ge.ReluOp), tag("t1"), final=False), Rule("tag2", Op(ge.ReluOp), tag("t2"))]
    said, text = _remarks(_RELUS, table, walk="single-pass")
    assert said == [
        f"remark: t: applied {rule} on [{node}]: updated in place" for node in ("/a", "/b") for rule in ("tag1", "tag2")
    ]
    assert text.count("t1 = ") == 2 and text.count("t2 = ") == 2
    final = [Rule("tag1", Op(ge.ReluOp), tag("t1")), Rule("tag2", Op(ge.ReluOp), tag("t2"))]
    assert "t2 = " not in _remarks(_RELUS, final, walk="single-pass")[1]


def test_context_reaches_the_rules():
    seen = []
    rule = Rule("r", Op(ge.ReluOp), lambda m, b: (seen.append(m.context), IN_PLACE)[1])
    _remarks(_RELUS, [rule], walk="single-pass", context="ctx")
    assert seen == ["ctx", "ctx"]


_CHAIN = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf16> {
  %0 = ge.cast %x {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/c1")
  %1 = ge.cast %0 {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32> loc("/c2")
  %2 = ge.cast %1 {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/c3")
  func.return %2 : tensor<4xf16>
}
"""


def test_program_order_walks_the_chain_from_its_start():
    """cancel-casts cancels the first pair of f32 -> f16 -> f32 -> f16 (program order, its own
    loop before the engine served it); users-first would cancel the last pair instead."""
    said, text = _remarks(_CHAIN, casts.RULES, walk="program-order")
    assert said == ["remark: t: applied symmetric-pair on [/c1, /c2]: f32 -> f16 -> f32 is the original value"]
    assert 'loc("/c3")' in text and 'loc("/c1")' not in text
    said, text = _remarks(_CHAIN, casts.RULES, walk="users-first")
    assert said == ["remark: t: applied symmetric-pair on [/c2, /c3]: f16 -> f32 -> f16 is the original value"]


def test_an_unknown_walk_is_refused():
    with pytest.raises(ValueError, match="unknown walk 'backwards'"):
        _remarks(_RELUS, [], walk="backwards")


_ACROSS = """
func.func @main(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %0 = ge.cast %x {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/down")
  %1 = scf.if %c -> (tensor<4xf32>) {
    %2 = ge.cast %0 {to = 1 : i64} : (tensor<4xf16>) -> tensor<4xf32> loc("/up")
    scf.yield %2 : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  func.return %1 : tensor<4xf32>
}
"""


def test_any_block_matches_a_value_from_an_enclosing_block():
    said, text = _remarks(_ACROSS, casts.RULES, walk="program-order")
    assert said == ["remark: t: applied symmetric-pair on [/down, /up]: f32 -> f16 -> f32 is the original value"]
    assert "ge.cast" not in text
    same_block = [
        Rule(
            r.name,
            Op(ge.CastOp, Op(ge.CastOp, "x", name="inner"), name="cast", where=r.pattern.where),
            r.build,
            r.rejects,
            private=False,
            shows=r.shows,
        )
        for r in casts.RULES[1:2]
    ]
    assert _remarks(_ACROSS, same_block, walk="program-order")[0] == []


def test_simplify_and_cancel_casts_share_one_no_op_cast_rule():
    from ge.passes.rules.simplify import RULES as SIMPLIFY

    shared = [r for r in SIMPLIFY if r.name == "noop-cast"]
    assert len(shared) == 1
    assert shared[0].pattern is casts.NOOP_CAST.pattern and shared[0].build is casts.NOOP_CAST.build


_TWO_SWEEPS = """
func.func @main(%y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ge.cast %y {to = 10 : i64} : (tensor<4xf32>) -> tensor<4xf16> loc("/p")
  %1 = ge.cast %0 {to = 11 : i64} : (tensor<4xf16>) -> tensor<4xf64> loc("/c0")
  %2 = ge.cast %1 {to = 1 : i64} : (tensor<4xf64>) -> tensor<4xf32> loc("/c1")
  func.return %2 : tensor<4xf32>
}
"""


def test_program_order_sweeps_again_until_nothing_changes():
    """The cast `compose` makes (f16 -> f32, at /c1) pairs with /p only in a second sweep."""
    said, text = _remarks(_TWO_SWEEPS, casts.RULES, walk="program-order")
    assert said == [
        "remark: t: applied compose on [/c0, /c1]: f16 -> f64 -> f32 is one cast",
        "remark: t: applied symmetric-pair on [/p, /c1]: f32 -> f16 -> f32 is the original value",
    ]
    assert "ge.cast" not in text
    said, text = _remarks(_TWO_SWEEPS, casts.RULES, walk="single-pass")
    assert len(said) == 1 and text.count("ge.cast") == 2


def test_a_replacement_that_does_not_verify_is_rejected_and_the_graph_kept():
    """A rule whose build makes an op its verifier refuses (here a softmax over an axis the tensor
    lacks) is a `rejected` remark saying why; nothing of the replacement stays behind."""

    def bad_softmax(m, b):
        return b.op(ge.SoftmaxOp, {"input": m["x"]}, {"axis": 5}).results[0]

    rule = Rule("bad", Op(ge.ReluOp, "x"), bad_softmax)
    said, text = _remarks(_RELUS, [rule])
    assert said and all("rejected bad" in r and "the replacement does not verify" in r for r in said), said
    assert text.count("ge.relu") == 2 and "ge.softmax" not in text
