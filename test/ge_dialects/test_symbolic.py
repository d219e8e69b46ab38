"""Symbolic dims: expressions over named dims in one canonical form, so that dims computed the same
way compare equal, and every question the form cannot answer is Undecided, never a guess."""

from __future__ import annotations

import pytest

from ge.ge_dialects.ge.symbolic import Dim, Undecided, symbol

batch, seq = symbol("batch"), symbol("seq")


def test_equal_expressions_have_one_form():
    assert (batch * seq).same(seq * batch) and hash(batch * seq) == hash(seq * batch)
    assert (batch * seq * 768) // 768 == batch * seq
    assert (batch * seq) // seq == batch
    assert seq // 2 * 2 + seq % 2 == seq
    assert (seq + 2) - 2 == seq
    assert seq - seq == 0 and isinstance(seq - seq, int)
    assert str((seq - 3) // 2 + 1) == "(seq - 3)//2 + 1" and str(768 * batch * seq) == "768*batch*seq"


def test_a_question_the_form_cannot_answer_is_undecided():
    for question in (
        lambda: batch == 1,  # batch may be 1: broadcasting must not assume it is not
        lambda: batch == seq,
        lambda: seq < 8,
        lambda: int(seq),
        lambda: (batch * seq) // (batch + seq),
        lambda: 8 // seq,
        lambda: bool(seq - batch),
    ):
        with pytest.raises(Undecided):
            question()


def test_ranges_decide_what_they_can():
    short = symbol("seq", 1, 512)
    assert batch != 0 and batch >= 1 and batch * seq > 0 and not (batch < 1)
    assert short <= 512 and min(short, 512) is short and not (short > 512)
    assert short != 513 and short * 2 <= 1024
    with pytest.raises(Undecided):
        _ = short < 512  # it may be 512
    assert (short - 3) // 2 >= -1


def test_a_dim_is_never_mistaken_for_an_int():
    assert isinstance(batch, Dim) and not isinstance(batch, int)
    with pytest.raises(Undecided):
        batch * 1.5  # type: ignore[operator]
