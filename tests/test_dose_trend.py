"""A row's value rising or falling with the dose, across one column per dose arm (tools._settle_rules).

Found as a new user over an adverse-event table: "Insomnia increased with dose." was refuted for a wrong reason
(two programs compared Insomnia's 20 mg cell with Dizziness's)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.test_frequency_rules import EVENTS
from tests.test_table_program import llm_for
from tools._settle_rules import dose_trend_check
from tools.verify_claim import check_claim


@pytest.mark.parametrize("claim, verdict, cells", [
    # 1.5% -> 2.7% -> 2.2%: the run breaks from 10 mg to 20 mg, the pair cited with the row's label
    ("Insomnia increased with dose.", "REFUTES", [(5, 1), (5, 3), (5, 4)]),
    ("Headache rose with increasing dose", "SUPPORTS", [(1, 1), (1, 2), (1, 3), (1, 4)]),
    ("Nausea increased dose-dependently.", "SUPPORTS", [(2, 1), (2, 2), (2, 3), (2, 4)]),
    # percentages, not counts: Fatigue's 19 of 409 (4.6%) is below placebo's 20 of 412 (4.9%)
    ("Fatigue increased with dose.", "REFUTES", [(4, 1), (4, 2), (4, 3)]),
    ("Dizziness decreased with dose.", "REFUTES", [(3, 1), (3, 2), (3, 3)]),
])
def test_a_dose_trend_is_checked_arm_by_arm(claim, verdict, cells):
    check = dose_trend_check(claim, EVENTS)
    assert check is not None and check.verdict == verdict and check.cells == cells, check
    assert "by dose:" in check.reason and "Placebo (n=412)" in check.reason


def test_the_reason_names_the_pair_that_breaks_the_run():
    check = dose_trend_check("Insomnia increased with dose.", EVENTS)
    assert "From Drug 10 mg (n=409) to Drug 20 mg (n=415) it falls to 2.2%" in check.reason


@pytest.mark.parametrize("claim", [
    "Headache did not increase with dose.",  # negated: left to the programs
    "Headache increased.",  # no dose named
    "Side effects increased with dose.",  # no one row
    "Headache was the most common event.",
])
def test_other_claims_are_left_to_the_programs(claim):
    assert dose_trend_check(claim, EVENTS) is None


def test_two_arms_or_a_repeated_dose_are_no_trend():
    two = Table(name="t", title="", columns=["Event", "Placebo", "Drug 10 mg"], rows=[["Headache", "3", "5"]])
    assert dose_trend_check("Headache increased with dose.", two) is None
    repeated = Table(name="t", title="", columns=["Event", "Placebo", "A 10 mg", "B 10 mg"],
                     rows=[["Headache", "3", "5", "7"]])
    assert dose_trend_check("Headache increased with dose.", repeated) is None
    # counts where no cell writes a share; doses read from headers like "0.5 mg/kg", ordered by dose
    by_weight = Table(name="t", title="", columns=["Outcome", "2 mg/kg", "Control", "0.5 mg/kg"],
                      rows=[["Response", "9", "1", "4"]])
    check = dose_trend_check("Response increased with dose.", by_weight)
    assert check.verdict == "SUPPORTS" and check.cells == [(1, 1), (1, 3), (1, 4), (1, 2)]


async def test_the_claim_check_decides_by_the_rule_without_the_model(tmp_settings, fake_llm_server):
    def no_model(req):
        raise AssertionError("the model was asked")

    with fake_llm_server(no_model) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), EVENTS, "Insomnia increased with dose.")
    assert check.label == "REFUTES" and check.decided_by == "rule:dose-trend" and check.cells == [(5, 1), (5, 3), (5, 4)]
    assert not srv.requests
