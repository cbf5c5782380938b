"""Columns of numbers written with a unit word ("4000 mg", "3 strokes") are numbers (tools._cells.unit_numbers).

Found as a new user over an HTML table of analgesic doses: "Max daily dose" ("4000 mg", "1200 mg", …) was typed
as text, so "What is the maximum daily dose of ibuprofen?" was answered 20, the maximum of the one number column
(Onset, in minutes), by 5 of 5 programs."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.test_table_program import llm_for, scripted
from tools._cells import TypedTable, unit_numbers, written_unit
from tools._table_ops import execute
from tools._table_ops_model import Program
from tools._table_program import solve

DOSES = Table(name="doses", title="Adult oral doses of common analgesics",
              columns=["Drug", "Usual dose", "Max daily dose", "Onset (min)"], rows=[
                  ["Paracetamol", "500–1000 mg", "4000 mg", "30"],
                  ["Ibuprofen", "200–400 mg", "1200 mg", "20"],
                  ["Naproxen", "250–500 mg", "1000 mg", "60"],
                  ["Aspirin", "300–900 mg", "4000 mg", "30"],
                  ["Diclofenac", "50 mg", "150 mg", "30"],
              ])


def typed() -> TypedTable:
    return TypedTable.build(DOSES)


def test_a_column_of_numbers_in_one_unit_is_numeric():
    col = typed().column("max_daily_dose")
    assert col.numeric and col.numbers == [4000, 1200, 1000, 4000, 150]
    assert not typed().column("usual_dose").numeric  # ranges stay text
    assert unit_numbers(["1 stroke", "3 strokes", "–", "6 strokes"]) == [1, 3, None, 6]  # plural, gaps
    assert unit_numbers(["3,880 days", "9,698 days"]) == [3880, 9698]
    assert unit_numbers(["464 pages"]) is None  # one cell: a one-record table's phrase, matched as text


@pytest.mark.parametrize("cells", [
    ["4000 mg", "1200 ml", "1000 mg"],  # two units: no one quantity
    ["13 jul", "14 jul", "6 jul"],  # days of a month
    ["9 pm", "9.45 pm", "10 pm"],  # clock times
    ["837 bc", "835 bc"],  # years of an era
    ["1st", "2nd", "3rd"],  # ordinals: no space before the "unit"
    ["Headache", "Nausea", "12 mg"],  # mostly text
])
def test_cells_that_are_no_quantity_in_one_unit_stay_text(cells):
    assert unit_numbers(cells) is None


def test_a_value_keeps_its_unit_and_a_sum_says_it():
    value = Program.model_validate({"filters": [{"column": "drug", "op": "=", "value": "Ibuprofen"}], "fn": "value",
                                    "column": "max_daily_dose", "answer_column": "drug"})
    ex = execute(value, typed())
    assert ex.result == "1200 mg" and (2, 3) in ex.cells
    shown = {fn: execute(Program.model_validate({"filters": [], "fn": fn, "column": "max_daily_dose",
                                                 "answer_column": "drug"}), typed()).result_text
             for fn in ("sum", "avg", "max", "argmax")}
    assert shown == {"sum": "10,350 mg", "avg": "2070 mg", "max": "4000 mg", "argmax": "Paracetamol, Aspirin (4000 mg)"}
    assert written_unit(["4000 mg", "150 ml"]) is None and written_unit(["9 pm"]) is None
    assert written_unit(["1 stroke", "3 strokes"]) == "strokes"  # the plural, for a sum


async def test_the_maximum_daily_dose_question_reads_that_column(tmp_settings, fake_llm_server):
    asked = {"filters": [{"column": "drug", "op": "=", "value": "Ibuprofen"}], "fn": "value",
             "column": "max_daily_dose", "answer_column": "drug"}
    with fake_llm_server(scripted(["drug", "max_daily_dose"], [asked] * 5)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), DOSES, "question",
                              "What is the maximum daily dose of ibuprofen?")
    assert outcome.winner == "1200 mg", (outcome.votes, [(r.program, r.error) for r in outcome.runs])
    assert (2, 3) in outcome.cells


async def test_a_computed_answer_is_shown_with_the_unit_its_cells_write(tmp_settings, fake_llm_server):
    """Found as a new user: "What is the maximum daily dose of ibuprofen?" was answered "1200" (5 of 5 programs took
    the max of Ibuprofen's row) while the reason read "1200 mg". The vote and the benchmarks keep the plain number."""
    from tools.table_qa import answer_from_program

    question = "What is the maximum daily dose of ibuprofen?"
    maximum = {"filters": [{"column": "drug", "op": "=", "value": "Ibuprofen"}], "fn": "max",
               "column": "max_daily_dose", "answer_column": "drug"}
    counted = {"filters": [{"column": "max_daily_dose", "op": ">", "value": "1000"}], "fn": "count",
               "column": "drug", "answer_column": "drug"}
    with fake_llm_server(scripted(["drug", "max_daily_dose"], [maximum] * 3 + [counted] * 2)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), DOSES, "question", question)
    assert outcome.winner == "1200"
    result = answer_from_program(DOSES, question, [], outcome, 1.0)
    assert result.answer == "1200" and result.answer_shown == "1200 mg"
    # a count of rows is no dose: no unit
    with fake_llm_server(scripted(["drug", "max_daily_dose"], [counted] * 5)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), DOSES, "question", "How many drugs go above 1000 mg a day?")
    assert answer_from_program(DOSES, question, [], outcome, 1.0).answer_shown == ""
