"""Claims that compare two named rows (tools/_claim_compare.py)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_compare import comparison_blocker, read_compared_row, states_comparison, unnamed_row_blocker
from tools._table_ops_model import Program
from tools._table_program import ProgramOutcome, decide, run_sampled

RAIN = Table(name="rainfall", title="", columns=["city", "country", "annual_rainfall_mm", "rainy_days"], rows=[
    ["Bergen", "Norway", "2250", "231"], ["Cardiff", "UK", "1152", "146"], ["Mumbai", "India", "2167", "86"],
    ["Cairo", "Egypt", "18", "4"]])
CLAIM = "Bergen gets more rain than Cardiff."
# What the model wrote for CLAIM, seen as a new user
BOTH_ROWS = {"filters": [{"column": "city", "op": "=", "value": "Bergen"},
                         {"column": "city", "op": "=", "value": "Cardiff"}],
             "fn": "value", "column": "annual_rainfall_mm", "answer_column": "city",
             "check": {"op": ">", "against": "row", "value": "Cardiff"}}
EQUAL = {**BOTH_ROWS, "filters": BOTH_ROWS["filters"][:1], "check": {"op": "=", "against": "row", "value": "Cardiff"}}


@pytest.mark.parametrize("claim, compares", [
    (CLAIM, True),
    ("Cairo is drier than Lima.", True),
    ("Mumbai has fewer rainy days than Bergen.", True),
    ("Bergen has 85 more rainy days than Cardiff.", False),  # by how much: a difference an equality may check
    ("Bergen gets twice as much rain as Cardiff.", False),
    ("Bergen gets 2250 mm of rain.", False),
])
def test_states_comparison(claim, compares):
    assert states_comparison(claim) is compares


def test_the_filter_naming_the_compared_row_is_dropped():
    typed = TypedTable.build(RAIN)
    read = read_compared_row(Program.model_validate(BOTH_ROWS), typed)
    assert [f.value for f in read.filters] == ["Bergen"]
    one = Program.model_validate({**BOTH_ROWS, "filters": BOTH_ROWS["filters"][:1]})
    assert read_compared_row(one, typed) == one  # nothing to drop
    other = Program.model_validate({**BOTH_ROWS, "check": {"op": ">", "against": "row", "value": "Mumbai"}})
    assert read_compared_row(other, typed) == other  # the check's row is neither filter: left to fail as written


def test_an_equality_with_another_row_does_not_vote_on_a_than_claim():
    assert "than" in comparison_blocker(Program.model_validate(EQUAL), CLAIM)
    assert comparison_blocker(Program.model_validate(EQUAL), "Bergen gets as much rain as Cardiff.") == ""
    assert comparison_blocker(Program.model_validate(BOTH_ROWS), CLAIM) == ""  # '>' is the claim's comparison


@pytest.mark.parametrize("claim, op, value, blocked", [
    ("Can the adult dose of cephalexin be higher than 900 mg?", "=", "900", True),  # found as a new user
    ("Bergen gets more than 2,000 mm of rain.", "!=", "2000", True),
    ("Cairo gets under 20 mm of rain.", "=", "20", True),
    ("Bergen gets more than 2,000 mm of rain.", ">", "2000", False),  # the claim's own comparison
    ("Bergen gets 2,250 mm of rain, more than Cardiff.", "=", "2250", False),  # a value stated, not a bound
    ("Bergen has more rainy days than 3 other cities.", "=", "231", False),  # another number
])
def test_an_equality_with_a_number_the_claim_states_as_a_bound_does_not_vote(claim, op, value, blocked):
    program = Program.model_validate({"filters": [{"column": "city", "op": "=", "value": "Bergen"}], "fn": "value",
                                      "column": "annual_rainfall_mm", "answer_column": "city",
                                      "check": {"op": op, "against": "value", "value": value}})
    assert bool(comparison_blocker(program, claim)) is blocked


def test_the_claim_is_decided_end_to_end():
    typed = TypedTable.build(RAIN)
    sampled = [run_sampled(raw, typed, "claim", CLAIM) for raw in (BOTH_ROWS, BOTH_ROWS, EQUAL, EQUAL)]
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, sampled, typed, "claim", CLAIM)
    assert outcome.votes == {"SUPPORTS": 2} and outcome.winner == "SUPPORTS", outcome.votes


VACCINES = Table(name="vaccines", title="vaccines", columns=["Vaccine", "Manufacturer", "Efficacy (%)", "Storage (°C)"],
                 rows=[["Comirnaty", "Pfizer-BioNTech", "95", "-70"], ["Spikevax", "Moderna", "94.1", "-20"],
                       ["Nuvaxovid", "Novavax", "89.7", "2"], ["Acmevax", "Acme", "80", "8"]])
COLDER = "Novavax's vaccine is stored at a colder temperature than Moderna's."


def _against(row: str, *, manufacturer: str = "Novavax") -> dict:
    return {"filters": [{"column": "manufacturer", "op": "=", "value": manufacturer}], "fn": "value",
            "column": "storage_c", "answer_column": "vaccine", "check": {"op": "<", "against": "row", "value": row}}


def test_a_comparison_with_a_row_the_claim_does_not_name_does_not_vote():
    """Found as a new user: COLDER was decided by Moderna's storage temperature against Comirnaty's, a row the claim
    never names."""
    typed = TypedTable.build(VACCINES)
    assert "Comirnaty" in unnamed_row_blocker(Program.model_validate(_against("Comirnaty", manufacturer="Moderna")),
                                             typed, COLDER)
    # a row is named by any of its text cells: Spikevax's row by its manufacturer, Moderna
    assert unnamed_row_blocker(Program.model_validate(_against("Spikevax")), typed, COLDER) == ""
    assert unnamed_row_blocker(Program.model_validate(_against("Spikevax")), typed,
                               "Nuvaxovid is stored colder than Spikevax.") == ""
    # a check against a stated value is not its business, nor a row no cell names (that run fails on its own)
    value = {**_against("x"), "check": {"op": "<", "against": "value", "value": "-20"}}
    assert unnamed_row_blocker(Program.model_validate(value), typed, COLDER) == ""
    assert unnamed_row_blocker(Program.model_validate(_against("Sputnik")), typed, COLDER) == ""


def test_the_comparison_with_the_named_row_decides():
    typed = TypedTable.build(VACCINES)
    wrong_row = _against("Acmevax")  # Novavax's 2 below Acme's 8: it would support the claim
    sampled = [run_sampled(raw, typed, "claim", COLDER) for raw in (wrong_row, wrong_row, _against("Spikevax"))]
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, sampled, typed, "claim", COLDER)
    assert outcome.votes == {"REFUTES": 1} and outcome.winner == "REFUTES", outcome.votes
