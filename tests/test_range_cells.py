"""A span whose two dates one cell writes (tools/_settle_rules.py): "The fixture window is over 3 months." Found on
PubHealthTab's tuning split, where the programs split and the judge decided."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.ruled_claims import ruled_without_model
from tools._settle_rules import range_days, range_duration_check

CALENDAR = Table(name="calendar", title="", columns=["Date", "Event"], rows=[
    ["Monday 7 September", "Entries open"], ["Friday 18 September", "Entries close"],
    ["Monday 5 October - Wednesday 16 December", "Fixture window"], ["Monday 11 January - Friday 5 March",
                                                                     "Knockout rounds"]])


@pytest.mark.parametrize("cell, days", [
    ("Monday 5 October - Wednesday 16 December", 72),  # no year: a common one
    ("5 December - 10 January", 36),  # the end falls in the next year
    ("1 March - 30 June 2024", 121),  # the start takes the end's year (2024 is a leap year)
    ("2020-10-05 - 2020-12-16", 72),  # ISO dates keep their own hyphens
    ("3 May 2021 to 3 May 2022", 365),
    ("Entries open", None), ("12 - 14", None), ("10 June 2022 - 1 June 2022", None),
])
def test_range_days(cell, days):
    assert range_days(cell) == days


@pytest.mark.parametrize("claim, verdict", [
    ("The Fixture Window time frame is over 3 months.", "REFUTES"),  # 72 days < 91.3
    ("The fixture window lasts more than 10 weeks.", "SUPPORTS"),  # 72 > 70
    ("The fixture window is less than two months long.", "REFUTES"),  # 72 > 60.9
    ("The knockout rounds last 53 days.", "SUPPORTS"),
    ("The knockout rounds last under 7 weeks.", "REFUTES"),
])
def test_the_span_of_the_row_the_claim_names(claim, verdict):
    check = range_duration_check(claim, CALENDAR)
    assert check is not None and check.verdict == verdict, check
    row = 3 if "fixture" in claim.lower() else 4
    assert check.cells == [(row, 2), (row, 1)]


@pytest.mark.parametrize("claim", [
    "The fixture window opens on 5 October.",  # no span stated
    "Entries were open for 11 days.",  # the row named holds one date, not a range
    "Each round is over 3 months.",  # names no row
])
def test_claims_without_a_span_of_one_named_range_are_left_alone(claim):
    assert range_duration_check(claim, CALENDAR) is None


async def test_the_rule_decides_without_the_model(tmp_settings, fake_llm_server):
    check = await ruled_without_model(tmp_settings, fake_llm_server, CALENDAR,
                                      "The Fixture Window time frame is over 3 months.")
    assert check.label == "REFUTES" and "72 days" in check.reason
