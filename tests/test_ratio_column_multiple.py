"""A claim's multiple checked against a column of ratios (tools/_claim_multiples.read_ratio_multiple); found as a
new user over an adverse-events table: "fever was more than seven times as common with the vaccine as with
placebo" was written as Relative risk > 7 (7.3), kept out of the vote as a check against the claim's multiple,
and the model's fallback refuted it."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_multiples import is_ratio_column, multiple_blocker, read_ratio_multiple
from tools._table_ops_model import Program
from tools._table_program import run_sampled

EVENTS = Table(name="adverse_events", title="adverse_events",
               columns=["Event", "Vaccine (n=1,204)", "Placebo (n=1,198)", "Relative risk"], rows=[
                   ["Injection-site pain", "612 (50.8%)", "98 (8.2%)", "6.2"],
                   ["Fatigue", "301 (25.0%)", "241 (20.1%)", "1.24"],
                   ["Fever", "88 (7.3%)", "12 (1.0%)", "7.3"],
                   ["Serious adverse events", "9 (0.7%)", "8 (0.7%)", "1.12"]])
CLAIM = "Is it true that fever was more than seven times as common with the vaccine as with placebo?"
FEVER = [{"column": "event", "op": "=", "value": "Fever"}]


def written(value: str, op: str = ">", fn: str = "value", column: str = "relative_risk") -> dict:
    return {"filters": FEVER, "fn": fn, "column": column, "check": {"op": op, "against": "value", "value": value}}


@pytest.mark.parametrize("header, ratio", [
    ("Relative risk", True), ("Odds ratio (95% CI)", True), ("aHR", True), ("RR", True), ("Fold change", True),
    ("3-fold", True), ("Risk ratio", True),
    ("Times (s)", False), ("Orders", False), ("Vaccine (n=1,204)", False), ("Hours", False), ("or", False),
])
def test_ratio_headers(header, ratio):
    assert is_ratio_column(header) is ratio


@pytest.mark.parametrize("claim, value, op, truth", [
    (CLAIM, "7", ">", True),
    ("Fever was more than eight times as common with the vaccine as with placebo.", "8", ">", False),
    ("Fever was seven times as common with the vaccine as with placebo.", "7", "=", True),  # 7.3 within 5%
    ("Fever was six times as common with the vaccine as with placebo.", "6", "=", False),
    ("Fever was nearly eight times as common with the vaccine.", "8", "=", True),  # 7.3 within 15% of 8
])
def test_a_ratio_column_checked_against_the_claims_multiple_votes(claim, value, op, truth):
    ran = run_sampled(written(value, op="=" if op == "=" else ">"), TypedTable.build(EVENTS), "claim", claim)
    assert ran.error == "" and ran.execution is not None
    assert ran.program.check.op == op and ran.execution.truth is truth


def test_a_count_or_another_column_against_the_multiple_still_does_not_vote():
    typed = TypedTable.build(EVENTS)
    counted = run_sampled(written("7", fn="count"), typed, "claim", CLAIM)
    assert counted.execution is None and "the claim's multiple" in counted.error
    vaccine = run_sampled(written("7", column="vaccine_n_1_204"), typed, "claim", CLAIM)
    assert vaccine.execution is None and "the claim's multiple" in vaccine.error


def test_left_alone_without_a_multiple_or_a_ratio_column():
    prog = Program.model_validate(written("7.3", op="="))
    assert read_ratio_multiple(prog, "Relative risk", "Fever had a relative risk of 7.3.") == prog
    other = Program.model_validate(written("7"))
    assert read_ratio_multiple(other, "Vaccine (n=1,204)", CLAIM) == other
    assert "the claim's multiple" in multiple_blocker(other, CLAIM, "Vaccine (n=1,204)")
    assert multiple_blocker(other, CLAIM, "Relative risk") == ""
