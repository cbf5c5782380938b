"""Values held by more than N rows (tools._question_counts): found as a new user over a trials XLSX, "Which drugs were
tested in more than one trial?" was answered with every drug, from programs reading "Participants > 1"."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.test_table_choice import programs_only
from tools._cells import TypedTable
from tools._question_counts import rows_bound
from tools._table_program import run_sampled

TRIALS = Table(name="trials", title="", columns=["Trial", "Drug", "Phase", "Participants"], rows=[
    ["ALPHA-1", "Rivaroxaban", "III", "14264"], ["BETA-2", "Apixaban", "III", "18201"],
    ["GAMMA-3", "Edoxaban", "III", "21105"], ["DELTA-4", "Apixaban", "II", "502"],
    ["EPSILON-5", "Edoxaban", "III", "7513"], ["ZETA-6", "Apixaban", "II", "1220"]])
AS_WRITTEN = {"filters": [{"column": "participants", "op": ">", "value": "1"}], "fn": "value", "column": "drug",
              "answer_column": "drug"}


@pytest.mark.parametrize("question, raw, answer", [
    ("Which drugs were tested in more than one trial?", AS_WRITTEN, ["Apixaban", "Edoxaban"]),
    ("What drugs appear in multiple trials?", AS_WRITTEN, ["Apixaban", "Edoxaban"]),
    ("Which drugs were tested in more than two trials?", AS_WRITTEN, "Apixaban"),
    ("Which drugs were tested in at least 2 phase III trials?",
     {**AS_WRITTEN, "filters": [{"column": "phase", "op": "=", "value": "III"}]}, "Edoxaban"),
    ("Which drug was tested in more than 3 trials?", AS_WRITTEN, "none of them"),
])
def test_the_values_held_by_more_rows_than_the_bound(question, raw, answer):
    ran = run_sampled(raw, TypedTable.build(TRIALS), "question", question)
    assert ran.execution is not None, ran.error
    assert ran.execution.result == answer
    assert ran.program.fn == "most_common" and ran.program.column == "drug"
    assert not any(f.column == "participants" for f in ran.program.filters)


@pytest.mark.parametrize("question", [
    "Which drugs were tested in more than 1,000 participants?",  # a bound on a cell, not on a count of trials
    "Which trials had more than one drug?",  # asks for the rows themselves
    "Which drugs were not tested in more than one trial?",  # the others: left to the programs
    "How many drugs were tested in more than one trial?",  # a count: left to the programs
])
def test_other_questions_are_left_to_the_programs(question):
    assert rows_bound(TypedTable.build(TRIALS), question) is None


async def test_the_answer_lists_each_value_with_its_rows(tmp_settings, fake_llm_server):
    from tests.test_table_program import llm_for
    from tools.table_qa import answer_question

    with fake_llm_server(programs_only(["drug", "participants"], AS_WRITTEN)) as srv:
        res = await answer_question(llm_for(tmp_settings, srv), TRIALS,
                                    "Which drugs were tested in more than one trial?", samples=3, use_filter=False)
    assert res.answer == "Apixaban, Edoxaban", res.reason
    assert "3 rows" in res.reason and "2 rows" in res.reason
    assert {r for r, _ in res.cells} == {2, 3, 4, 5, 6}  # the rows that hold them, not ALPHA-1


def test_the_program_reads_as_what_it_computes():
    from tools._table_shape import describe

    question = "Which drugs were tested in more than one trial?"
    ran = run_sampled(AS_WRITTEN, TypedTable.build(TRIALS), "question", question)
    assert describe(ran.program, TypedTable.build(TRIALS)) == "all rows → each Drug found in more than 1 row"


async def test_no_value_held_that_often_is_answered_none(tmp_settings, fake_llm_server):
    from tests.test_table_program import llm_for
    from tools.table_qa import answer_question

    with fake_llm_server(programs_only(["drug", "participants"], AS_WRITTEN)) as srv:  # no free answer asked
        res = await answer_question(llm_for(tmp_settings, srv), TRIALS,
                                    "Which drugs were tested in more than three trials?", samples=3, use_filter=False)
    assert res.answer == "none of them" and res.decided_by == "program", res.reason
    assert "no value is in more than 3 rows" in res.reason
