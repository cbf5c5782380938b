"""A claim's number written as rough ("roughly 30,000") is checked within 5% of it (tools._values)."""

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._table_program import ProgramOutcome, decide, run_sampled
from tools._values import read_rough_value, rough_numbers

DEATHS = Table(name="deaths", title="", columns=["Cause of death", "Deaths (2022)", "Share of all deaths (%)"], rows=[
    ["Ischaemic heart disease", "61,250", "10.9"], ["Stroke", "29,800", "5.3"], ["COPD", "27,300", "4.8"],
    ["Lung cancer", "28,100", "5.0"]])


def _value_of(row: str, column: str, op: str, value: str) -> dict:
    return {"filters": [{"column": "cause_of_death", "op": "=", "value": row}], "fn": "value", "column": column,
            "answer_column": column, "check": {"op": op, "against": "value", "value": value}}


@pytest.mark.parametrize("claim, expected", [
    ("Stroke caused roughly 30,000 deaths.", {30000.0}),
    ("about 5% of all deaths", {5.0}),
    ("some 1.2 million people", {1.2, 1200000.0}),
    ("Stroke caused 30,000 deaths.", set()),  # not rough
    ("more than 30,000", set()),
])
def test_rough_numbers(claim, expected):
    assert rough_numbers(claim) == expected


@pytest.mark.parametrize("claim, raw, verdict", [
    # found as a new user: refuted by 3 of 4 programs, 29,800 != 30000
    ("Stroke caused roughly 30,000 deaths in 2022.", _value_of("Stroke", "deaths_2022", "=", "30000"), "SUPPORTS"),
    ("Stroke caused roughly 30,000 deaths in 2022.", _value_of("Stroke", "deaths_2022", "!=", "30000"), "REFUTES"),
    ("Stroke caused about 35,000 deaths in 2022.", _value_of("Stroke", "deaths_2022", "=", "35000"), "REFUTES"),
    ("Stroke caused 30,000 deaths in 2022.", _value_of("Stroke", "deaths_2022", "=", "30000"), "REFUTES"),  # exact
    ("COPD accounts for about 5% of all deaths.", _value_of("COPD", "share_of_all_deaths", "=", "5"), "SUPPORTS"),
    ("COPD accounts for about 4% of all deaths.", _value_of("COPD", "share_of_all_deaths", "=", "4"), "REFUTES"),
])
def test_a_rough_number_is_checked_within_five_percent(claim, raw, verdict):
    typed = TypedTable.build(DEATHS)
    sampled = run_sampled(raw, typed, "claim", claim)
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, [sampled], typed, "claim", claim)
    assert outcome.winner == verdict, (outcome.votes, sampled.error)


def test_a_check_that_already_has_a_tolerance_keeps_it():
    from tools._table_ops_model import Program

    program = Program.model_validate({**_value_of("Stroke", "deaths_2022", "=", "30000"),
                                      "check": {"op": "=", "against": "value", "value": "30000",
                                                "relative_tolerance": 0.1}})
    assert read_rough_value(program, TypedTable.build(DEATHS), "roughly 30,000 deaths") == program
