"""A share the table writes beside a count, "265 (22.0%)", answers "what share of vaccine recipients had
headache?" (tools/_table_shape.py). Found as a new user: the answer was 18.3%, the count's share of the
column's total over every adverse event."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._table_program import run_sampled
from tools._table_shape import writes_shares, written_share

EVENTS = Table(name="adverse_events", title="adverse_events",
               columns=["Event", "Vaccine (n=1,204)", "Placebo (n=1,198)", "Relative risk"], rows=[
                   ["Injection-site pain", "612 (50.8%)", "98 (8.2%)", "6.2"],
                   ["Fatigue", "301 (25.0%)", "241 (20.1%)", "1.24"],
                   ["Headache", "265 (22.0%)", "230 (19.2%)", "1.15"],
                   ["Serious adverse events", "9 (0.7%)", "8 (0.7%)", "1.12"]])
BEDS = Table(name="beds", title="beds", columns=["Hospital", "Beds"], rows=[
    ["St Mary", "310"], ["Riverside", "250"], ["Moorland", "440"]])


def headache(column: str, fn: str = "value") -> dict:
    return {"filters": [{"column": "event", "op": "=", "value": "Headache"}], "fn": fn, "column": column}


@pytest.mark.parametrize("cell, share", [
    ("265 (22.0%)", "22.0%"), ("1,204 (100 %)", "100%"), ("9 ( 0.7% )", "0.7%"),
    ("265", None), ("22.0%", None), ("265 (22.0)", None), ("Headache (22%)", None), ("", None),
])
def test_the_share_beside_a_count(cell, share):
    assert written_share(cell) == share


def test_a_column_writes_shares_when_most_of_its_cells_do():
    typed = TypedTable.build(EVENTS)
    assert writes_shares(typed, "vaccine_n_1_204") and writes_shares(typed, "placebo_n_1_198")
    assert not writes_shares(typed, "relative_risk") and not writes_shares(typed, "no_such_column")


@pytest.mark.parametrize("question, column, fn, answer", [
    ("And what share of vaccine recipients had headache?", "vaccine_n_1_204", "value", "22.0%"),
    ("What percentage of placebo recipients reported headache?", "placebo_n_1_198", "sum", "19.2%"),
    ("What proportion of the vaccine group had headache?", "vaccine_n_1_204", "max", "22.0%"),
])
def test_a_share_asked_of_one_row_is_the_share_its_cell_writes(question, column, fn, answer):
    ran = run_sampled(headache(column, fn), TypedTable.build(EVENTS), "question", question)
    assert ran.error == "" and ran.execution.result_text == answer
    assert ran.execution.cells[0] == (3, 2 if column.startswith("vaccine") else 3)
    assert ran.execution.steps[-1].endswith("(22.0%)" if answer == "22.0%" else "(19.2%)")


def test_other_questions_and_tables_are_left_as_they_were():
    typed = TypedTable.build(EVENTS)
    count = run_sampled(headache("placebo_n_1_198", "sum"), typed, "question",
                        "How many placebo recipients reported headache?")
    assert count.execution.result_text == "230"
    every = run_sampled({"filters": [], "fn": "sum", "column": "vaccine_n_1_204"}, typed, "question",
                        "What share of vaccine recipients had an adverse event?")
    assert "%" not in every.execution.result_text  # several rows: no one cell writes the share
    beds = run_sampled({"filters": [{"column": "hospital", "op": "=", "value": "St Mary"}], "fn": "value",
                        "column": "beds"}, TypedTable.build(BEDS), "question",
                       "What share of all beds does St Mary have?")
    assert beds.execution.result_text.startswith("31%")  # 310 of 1,000: a share of the column's total, as before


SPLIT = Table(name="adverse_events", title="adverse_events", columns=EVENTS.columns, rows=EVENTS.rows + [
    ["Fever", "88 (7.3%)", "12 (1.0%)", "7.3"], ["Myalgia", "170 (14.1%)", "95 (7.9%)", "1.78"]])
UNDER_TEN = "Which events were reported by fewer than 10% of placebo recipients?"


@pytest.mark.parametrize("value", ["10", "0.1", "10%"])
def test_a_filter_stated_as_a_percentage_compares_the_shares_the_cells_write(value):
    """Found as a new user: "Placebo < 10" compared the counts and named one event of the four under 10%."""
    ran = run_sampled({"filters": [{"column": "placebo_n_1_198", "op": "<", "value": value}], "fn": "value",
                       "column": "event"}, TypedTable.build(SPLIT), "question", UNDER_TEN)
    assert ran.error == "" and ran.program.filters[0].value == "10%"
    assert sorted(ran.execution.result) == ["Fever", "Injection-site pain", "Myalgia", "Serious adverse events"]


def test_a_filter_the_text_does_not_state_as_a_percentage_compares_the_counts():
    typed = TypedTable.build(SPLIT)
    counts = run_sampled({"filters": [{"column": "placebo_n_1_198", "op": "<", "value": "100"}], "fn": "value",
                          "column": "event"}, typed, "question", "Which events were reported by fewer than 100 "
                                                                 "placebo recipients?")
    assert counts.program.filters[0].value == "100"
    assert sorted(counts.execution.result) == ["Fever", "Injection-site pain", "Myalgia", "Serious adverse events"]
    risk = run_sampled({"filters": [{"column": "relative_risk", "op": ">", "value": "5"}], "fn": "value",
                        "column": "event"}, typed, "question", "Which events had a relative risk above 5 and over "
                                                               "5% of vaccine recipients?")
    assert risk.program.filters[0].value == "5"  # a column of plain numbers keeps the value as written


@pytest.mark.parametrize("claim, written, truth", [
    ("Is it true that 22% of vaccine recipients reported headache?", "22", True),
    ("22% of vaccine recipients reported headache.", "0.22", True),
    ("22% of vaccine recipients reported headache.", "22%", True),
    ("25 percent of vaccine recipients reported headache.", "25", False),
])
def test_a_claims_percentage_is_checked_against_the_share_the_cell_writes(claim, written, truth):
    """Found as a new user: "22% of vaccine recipients reported headache" was checked as 265 = 22."""
    for fn in ("value", "sum"):
        ran = run_sampled({**headache("vaccine_n_1_204", fn), "check": {"op": "=", "value": written}},
                          TypedTable.build(EVENTS), "claim", claim)
        assert ran.error == "" and ran.program.check.value.endswith("%") and ran.execution.truth is truth


def test_a_claims_count_is_still_checked_against_the_count():
    ran = run_sampled({**headache("vaccine_n_1_204"), "check": {"op": "=", "value": "265"}},
                      TypedTable.build(EVENTS), "claim", "265 vaccine recipients reported headache.")
    assert ran.program.check.value == "265" and ran.execution.truth is True
