"""One row's values across a measure's year columns (tools/_claim_changes.py, tools/_table_ops.py: execute_across); found as a new
user over a wide coverage table: "What was Nigeria's average coverage over 2019 to 2022?" was answered 62, the mean
of one year's column over Nigeria's one row."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.test_table_program import llm_for, scripted
from tools._cells import TypedTable
from tools._claim_changes import read_across_years
from tools._table_ops import execute
from tools._table_ops_model import Program, ProgramError
from tools._table_program import solve
from tools._table_shape import describe

COVERAGE = Table(name="coverage", title="", columns=["Country", "2019", "2020", "2021", "2022"], rows=[
    ["Brazil", "73%", "67%", "68%", "77%"], ["India", "91%", "85%", "85%", "93%"],
    ["Nigeria", "57%", "57%", "56%", "62%"], ["Philippines", "69%", "71%", "57%", "72%"],
    ["Indonesia", "85%", "77%", "67%", "85%"]])
# what the programs wrote: one year's column over the named row
ONE_YEAR = {"filters": [{"column": "country", "op": "=", "value": "Nigeria"}], "fn": "avg", "column": "c5_2022",
            "answer_column": "country"}


def typed() -> TypedTable:
    return TypedTable.build(COVERAGE)


@pytest.mark.parametrize("question, result, shown, cols", [
    ("What was Nigeria's average coverage over 2019 to 2022?", 58.0, "58%", [2, 3, 4, 5]),
    ("What was Indonesia's average coverage?", 78.5, "78.5%", [2, 3, 4, 5]),  # no years: every year
    ("What was the lowest coverage Brazil had between 2020 and 2022?", 67.0, "67%", [3]),  # the cell that is lowest
    ("What was India's highest coverage from 2019 to 2021?", 91.0, "91%", [2]),
    ("In which year was India's coverage highest?", "2022", "2022 (93%)", [5]),
    ("What was the median coverage of the Philippines?", 70.0, "70%", [2, 3, 4, 5]),
])
def test_one_rows_cells_are_aggregated_across_the_years(question, result, shown, cols):
    program = read_across_years(Program.model_validate(ONE_YEAR), typed(), question)
    ex = execute(program, typed(), union_same_column=True)
    assert ex.result == result and ex.result_text == shown
    row = ex.selected[0]
    assert ex.cells == [(row, 1)] + [(row, c) for c in cols]
    assert "to" in describe(program, typed()) and COVERAGE.rows[row - 1][0] in ex.steps[-1]


@pytest.mark.parametrize("question", [
    "What was Nigeria's coverage in 2021?",  # one cell, no aggregate
    "Which country had the highest coverage in 2022?",  # a row asked for
    "What was the total for Brazil from 2019 to 2030?",  # years the table lacks
    "How many years was India's coverage above 90%?",  # a count with a threshold
    "In which year was coverage at least 85% in India?",  # a threshold, not the least
    "What was the average coverage in 2020?",  # no row named
])
def test_other_questions_are_left_as_written(question):
    written = Program.model_validate(ONE_YEAR)
    assert read_across_years(written, typed(), question) == written


def test_an_aggregate_across_columns_reads_one_row():
    program = read_across_years(Program.model_validate(ONE_YEAR), typed(), "What was Nigeria's average coverage?")
    two_rows = program.model_copy(update={"filters": []})
    with pytest.raises(ProgramError, match="reads one row"):
        execute(two_rows, typed(), union_same_column=True)


async def test_the_programs_vote_for_the_rows_mean(tmp_settings, fake_llm_server):
    question = "What was Nigeria's average coverage over 2019 to 2022?"
    with fake_llm_server(scripted(["country", "c5_2022"], [ONE_YEAR] * 5)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), COVERAGE, "question", question)
    assert outcome.winner == "58", (outcome.votes, [(r.program, r.error) for r in outcome.runs])
    assert {(3, c) for c in (1, 2, 3, 4, 5)} <= set(outcome.cells)


async def test_the_reason_shown_is_a_winner_that_checks_what_the_claim_states(tmp_settings, fake_llm_server):
    """Found as a new user: "India's coverage recovered to above its 2019 level in 2022" was supported by three
    different programs, and the reason shown was the first, "every one has 2022 >= 73%" (Brazil's 2019 value)."""
    unstated = {"filters": [{"column": "country", "op": "=", "value": "India"}], "fn": "value", "column": "c5_2022",
                "answer_column": "country", "check": {"op": ">=", "against": "value", "value": "85%"}}
    stated = {**unstated, "check": {"op": ">", "against": "value", "value": "90%"}}
    also_stated = {**unstated, "check": {"op": ">=", "against": "value", "value": "90%"}}
    with fake_llm_server(scripted(["country", "c5_2022"], [unstated, stated, also_stated])) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), COVERAGE, "claim", "India's coverage in 2022 was above 90%.")
    assert outcome.winner == "SUPPORTS" and outcome.votes == {"SUPPORTS": 3}
    assert "90%" in outcome.program and "85%" not in outcome.program
