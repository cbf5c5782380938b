"""Claims of a risk lowered or raised by a percentage, settled by the row's ratio (tools/_claim_multiples.py); found as
a new user over a trial's subgroup table."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.ruled_claims import ruled_without_model
from tools._claim_multiples import ratio_change_check

SUBGROUPS = Table(name="subgroups", title="", columns=[
    "Subgroup", "Patients", "Events (treatment)", "Events (control)", "Hazard ratio (95% CI)", "P value"], rows=[
    ["Overall", "4744", "386", "502", "0.74 (0.65–0.85)", "<0.001"],
    ["Age < 65", "2595", "178", "256", "0.68 (0.56–0.82)", "<0.001"],
    ["Women", "1109", "79", "101", "0.77 (0.57–1.03)", "0.08"],
    ["Men", "3635", "307", "401", "0.73 (0.63–0.85)", "<0.001"],
    ["Diabetes", "2139", "184", "229", "0.78 (0.64–0.95)", "0.01"],
    ["No diabetes", "2605", "202", "273", "0.71 (0.59–0.85)", "<0.001"]])


@pytest.mark.parametrize("claim, verdict, row", [
    ("The treatment reduced the risk of events by 26% overall.", "SUPPORTS", 1),
    ("The treatment reduced the risk of events by 26%.", "SUPPORTS", 1),  # no row named: the overall row
    ("The treatment reduced the risk of events by 30%.", "REFUTES", 1),
    ("The treatment increased the risk by 26% overall.", "REFUTES", 1),  # 0.74 is lower
    ("In women, the treatment lowered the hazard by 23%.", "SUPPORTS", 3),
    ("Men had a 27% lower risk of events with treatment.", "SUPPORTS", 4),
    ("The risk was about 30% lower in patients with diabetes.", "REFUTES", 5),  # 22%: beyond 15% of 30
    ("Treatment cut the hazard of events by about 25%.", "SUPPORTS", 1),  # 26 is within 15% of 25
    ("Overall, treatment reduced the risk by more than 20%.", "SUPPORTS", 1),
    ("In men, treatment reduced the risk by at least 30%.", "REFUTES", 4),
    ("A 29% reduction in risk was seen in patients without diabetes", "SUPPORTS", 6),  # not the row "Diabetes"
    ("The treatment reduced the risk by more than 30% in patients under 65.", "SUPPORTS", 2),  # "Age < 65": 32%
])
def test_a_stated_change_is_checked_against_the_rows_ratio(claim, verdict, row):
    """Found as a new user: "The treatment reduced the risk of events by 26% overall." was supported by programs
    that checked "Events (treatment) >= 20" and an average of event counts."""
    check = ratio_change_check(claim, SUBGROUPS)
    assert check is not None and check.verdict == verdict, check
    assert check.cells == [(row, 1), (row, 5)]
    ratio = SUBGROUPS.rows[row - 1][4].split()[0]
    assert f"a ratio of {ratio}" in check.reason


@pytest.mark.parametrize("claim", [
    "In patients aged 65 or older the hazard was 19% lower.",  # a subgroup no label writes so
    "The treatment did not reduce the risk by 26%.",  # negated
    "The treatment reduced events by 26%.",  # a count of events, not a risk
    "The treatment reduced the risk of events.",  # no percentage
])
def test_claims_the_ratio_does_not_settle_are_left_to_the_programs(claim):
    assert ratio_change_check(claim, SUBGROUPS) is None


def test_the_ratio_column_is_found_by_its_abbreviation_and_must_be_one():
    odds = Table(name="t", title="", columns=["Exposure", "Cases", "OR (95% CI)"], rows=[
        ["Smoking", "120", "1.30 (1.10–1.52)"], ["Alcohol", "80", "0.95 (0.80–1.12)"]])
    check = ratio_change_check("Smoking increased the odds by 30%.", odds)
    assert check is not None and check.verdict == "SUPPORTS" and "30% higher odds" in check.reason
    two = Table(name="t", title="", columns=["Exposure", "HR", "OR"], rows=[["Smoking", "1.3", "1.4"]])
    assert ratio_change_check("Smoking increased the risk by 30%.", two) is None


async def test_the_rule_decides_without_the_model(tmp_settings, fake_llm_server):
    check = await ruled_without_model(tmp_settings, fake_llm_server, SUBGROUPS,
                                      "The treatment reduced the risk of events by 26% overall.")
    assert check.label == "SUPPORTS" and check.cells == [(1, 1), (1, 5)]
