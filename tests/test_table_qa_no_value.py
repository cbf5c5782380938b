"""A table question whose programs read an empty cell is answered as such, not with an empty answer."""

from __future__ import annotations

from kb.tables import Table
from tests.test_table_choice import programs_only


async def test_an_empty_cell_read_is_answered_as_no_value(tmp_settings, fake_llm_server):
    """Found as a new user: "What was the efficacy of FORNAX?", whose cell is empty, was answered with nothing,
    shown as "****" and "Efficacy (%) is  (rows: FORNAX).", and verified."""
    from tests.test_table_program import llm_for
    from tools.table_qa import NO_VALUE, answer_question

    table = Table(name="trials", title="Trials", columns=["Trial", "Efficacy (%)"],
                  rows=[["ARIES-2", "71.5"], ["FORNAX", ""], ["ERIDANUS", "49.7"]])
    value = {"fn": "value", "column": "efficacy", "answer_column": "efficacy",
             "filters": [{"column": "trial", "op": "=", "value": "FORNAX"}]}
    with fake_llm_server(programs_only(["trial", "efficacy"], value)) as srv:
        res = await answer_question(llm_for(tmp_settings, srv), table, "What was the efficacy of FORNAX?",
                                    samples=3, use_filter=False)
    assert res.answer == NO_VALUE and res.decided_by == "program"
    assert res.reason == "The table gives no value here: Efficacy (%) of FORNAX is empty."
    assert (2, 2) in res.cells  # the empty cell is cited, so the user can see it
    assert res.programs.vote_text() == "3 of 3 programs ran; votes (empty): 3"


FLU = Table(name="flu", title="Flu", columns=["Season", "Hospitalisations", "Deaths", "Deficit"],
            rows=[["2018-19", "34,990", "1,902", "+2"], ["2019-20", "38,612", "", ""],
                  ["2020-21", "1,675", "98", "+1"]])


def _deaths_in(season: str, fn: str, column: str = "deaths") -> dict:
    return {"fn": fn, "column": column, "answer_column": column,
            "filters": [{"column": "season", "op": "=", "value": season}]}


async def test_a_sum_over_one_row_s_empty_cell_is_answered_as_no_value(tmp_settings, fake_llm_server):
    """Found as a new user: "How many deaths were there in 2019-20?" over an empty cell, written as a sum by all 5
    programs, failed in each ("no numbers"), and the model's fallback quoted the row's hospitalisations as deaths."""
    from tests.test_table_program import llm_for
    from tools.table_qa import NO_VALUE, answer_question

    with fake_llm_server(programs_only(["season", "deaths"], _deaths_in("2019-20", "sum"))) as srv:
        res = await answer_question(llm_for(tmp_settings, srv), FLU, "How many deaths were there in 2019-20?",
                                    samples=3, use_filter=False)
    assert res.answer == NO_VALUE and res.decided_by == "program"
    assert (2, 3) in res.cells


def test_an_empty_cell_in_a_column_the_question_does_not_name_still_fails():
    """A sum over a column the question does not name ("how long …" read as the winner's empty Deficit) is a
    misread, not the table's answer; nor is a sum over several rows' empty cells."""
    from tools._cells import TypedTable
    from tools._table_program import run_sampled

    typed = TypedTable.build(FLU)
    ran = run_sampled(_deaths_in("2019-20", "sum", "deficit"), typed, "question", "How bad was 2019-20?")
    assert ran.execution is None and ran.no_numbers
    ran = run_sampled(_deaths_in("2019-20", "sum"), typed, "question", "How many deaths were there in 2019-20?")
    assert ran.execution is not None and ran.execution.result == ""
