""""How many more patients per week does Riverbend see than Elm Park?" is the difference between the two rows it
names (tools/_question_rules.py); found as a new user, it answered 340 (Northgate − Elm Park)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._table_program import run_sampled

CLINICS = Table(name="clinics", title="", columns=["Clinic", "District", "Doctors", "Patients per week"], rows=[
    ["Northgate", "North", "12", "640"], ["Harbourside", "South", "8", "512"], ["Elm Park", "North", "5", "300"],
    ["Riverbend", "East", "10", "700"], ["Southfields", "South", "6", "455"]])
TYPED = TypedTable.build(CLINICS)
QUESTION = "How many more patients per week does Riverbend see than Elm Park?"


def written(filters: list[dict], fn: str = "difference", column: str = "patients_per_week") -> dict:
    return {"filters": filters, "fn": fn, "column": column}


@pytest.mark.parametrize("raw", [
    written([{"column": "district", "op": "=", "value": "North"}]),  # the two North clinics: 340
    written([{"column": "clinic", "op": "=", "value": "Riverbend"}]),  # one row: did not run
    written([{"column": "district", "op": "=", "value": "East"}]),
    written([{"column": "clinic", "op": "=", "value": "Riverbend"}], fn="value"),  # Riverbend's own 700
])
def test_the_two_named_rows_are_differenced(raw):
    ran = run_sampled(raw, TYPED, "question", QUESTION)
    assert ran.error == "" and ran.execution.result_text == "400"
    assert sorted(ran.execution.decisive_rows) == [3, 4]


@pytest.mark.parametrize("question, answer", [
    ("How many fewer doctors does Elm Park have than Riverbend?", "5"),
    ("how much higher is Riverbend's patients per week than Harbourside?", "188"),
    # found as a new user: "Southfields" also states the district South by its first letters, "Northgate" North
    ("How many fewer doctors does Southfields have than Northgate?", "6"),
])
def test_other_phrasings(question, answer):
    column = "doctors" if "doctors" in question else "patients_per_week"
    ran = run_sampled(written([], fn="value", column=column), TYPED, "question", question)
    assert ran.execution is not None and ran.execution.result_text == answer, ran.error


@pytest.mark.parametrize("question, raw", [
    # a count of rows beyond a named row's value is another question (tools._claim_compare)
    ("How many clinics see more patients per week than Elm Park?", written([], fn="count")),
    # the second row is not named
    ("How many more patients per week does Riverbend see than the average clinic?", written([], fn="value")),
    # the question names no column
    ("How many more does Riverbend have than Elm Park?", written([], fn="value", column="doctors")),
])
def test_left_as_written(question, raw):
    ran = run_sampled(raw, TYPED, "question", question)
    assert ran.program.fn == raw["fn"] and ran.program.column == raw["column"]


def test_a_row_named_word_for_word_beats_a_cell_matched_by_its_first_letters():
    from tools._grounding import row_stated

    assert row_stated(TYPED, "Southfields") == 5 and row_stated(TYPED, "Northgate") == 1
    assert row_stated(TYPED, "the south") is None  # two clinics are in the South district


def test_the_column_the_question_names_replaces_the_program_s():
    ran = run_sampled(written([], fn="value", column="doctors"), TYPED, "question", QUESTION)
    assert (ran.program.column, ran.execution.result_text) == ("patients_per_week", "400")


WARDS = TypedTable.build(Table(name="abx", title="", columns=["Ward", "Beds", "DDD Q1", "DDD Q2"], rows=[
    ["Cardiology", "32", "61.2", "58.4"], ["Oncology", "28", "94.7", "101.3"], ["ICU", "16", "142.5", "131.0"],
    ["Surgery", "40", "77.0", "69.8"]]))


@pytest.mark.parametrize("question, answer", [
    # found as a new user: no program ran, and the fallback answered "100 - 80 = 20 beds" (not in the table)
    ("What is the difference in beds between Surgery and the ICU?", "24"),
    # the header naming more of the measure's words: Q2, not Q1
    ("What was the difference between Oncology and Cardiology in DDD Q2?", "42.9"),
])
def test_the_difference_between_two_named_rows(question, answer):
    raw = {"filters": [{"column": "ward", "op": "=", "value": "Surgery"}], "fn": "value", "column": "ddd_q1"}
    ran = run_sampled(raw, WARDS, "question", question)
    assert ran.execution is not None and ran.execution.result_text == answer, ran.error
