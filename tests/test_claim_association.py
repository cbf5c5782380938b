"""Claims that two measures go together across the rows, settled by their rank correlation
(tools/_settle_rules.py); found as a new user over a JSON table of hospitals."""

from __future__ import annotations

import pytest
from scipy.stats import spearmanr

from kb.tables import Table
from tests.ruled_claims import ruled_without_model
from tools._settle_rules import association_check

HOSPITALS = Table(name="infections", title="", columns=[
    "Hospital", "Beds", "CLABSI Q1", "CLABSI Q2", "Hand hygiene compliance"], rows=[
    ["St Anne's", "420", "3", "1", "87%"], ["Riverside", "610", "5", "6", "79%"],
    ["Northfield", "260", "0", "2", "92%"], ["Lakeview", "340", "4", "2", "84%"]])


@pytest.mark.parametrize("claim, verdict", [
    ("Is it true that hospitals with more beds had lower compliance?", "SUPPORTS"),
    ("The more beds a hospital has, the lower its hand hygiene compliance.", "SUPPORTS"),
    ("Hospitals with fewer beds had higher compliance", "SUPPORTS"),  # the same tendency, said the other way
    ("Hospitals with more beds had higher hand hygiene compliance.", "REFUTES"),
])
def test_a_tendency_is_settled_by_the_rank_correlation(claim, verdict):
    """Found as a new user: "Is it true that hospitals with more beds had lower compliance?" came back NOT ENOUGH INFO
    from the judge, whose reason said the table gives no compliance."""
    check = association_check(claim, HOSPITALS)
    assert check is not None and check.verdict == verdict
    rho = spearmanr([420, 610, 260, 340], [87, 79, 92, 84]).statistic  # the reference: -0.8
    assert f"{rho:+.2f}" in check.reason and "4 rows" in check.reason
    # one pair goes against the tendency (St Anne's has more beds and higher compliance than Lakeview): named
    assert "not every pair" in check.reason and "St Anne's" in check.reason
    assert {(1, 2), (1, 5), (2, 2), (2, 5)} <= set(check.cells)


def test_a_weak_correlation_does_not_support_the_claim():
    weak = Table(name="t", title="", columns=["Site", "Nurses", "Falls"], rows=[
        ["A", "10", "5"], ["B", "20", "3"], ["C", "30", "6"], ["D", "40", "4"], ["E", "50", "5"]])
    check = association_check("Sites with more nurses had fewer falls", weak)
    rho = spearmanr([10, 20, 30, 40, 50], [5, 3, 6, 4, 5]).statistic  # +0.10: no tendency either way
    assert check is not None and check.verdict == "REFUTES" and f"{rho:+.2f}" in check.reason and abs(rho) < 0.5
    monotone = Table(name="t", title="", columns=["Site", "Nurses", "Falls"], rows=[
        ["A", "10", "9"], ["B", "20", "7"], ["C", "30", "4"]])
    check = association_check("Sites with more nurses had fewer falls", monotone)
    assert check.verdict == "SUPPORTS" and "every pair of rows is ordered so" in check.reason


@pytest.mark.parametrize("claim", [
    "Hospitals with more beds had more CLABSI.",  # two columns named CLABSI: which one is not said
    "Hospitals with more beds did not have lower compliance.",  # negated
    "Riverside has more beds than Lakeview.",  # two rows, not a tendency
])
def test_claims_without_one_pair_of_columns_are_left_to_the_programs(claim):
    assert association_check(claim, HOSPITALS) is None


async def test_the_rule_decides_without_the_model(tmp_settings, fake_llm_server):
    check = await ruled_without_model(tmp_settings, fake_llm_server, HOSPITALS,
                                      "Hospitals with more beds had lower compliance.")
    assert check.label == "SUPPORTS"


def test_a_reason_cut_off_at_the_token_limit_is_marked_as_cut():
    """Found as a new user: "… we cannot determine if hospitals with more beds had No cell of the table was cited"."""
    from tools.verify_claim import Output

    cut = Output(verdict="NOT ENOUGH INFO", claim="Hospitals with more beds had lower compliance.", table="t",
                 table_id="T1", cells=[], reason="Therefore, we cannot determine if hospitals with more beds had",
                 explanations={}, decided_by="ccoe").reply()
    assert "had … No cell of the table" in cut
    whole = Output(verdict="REFUTES", claim="Glucose is high.", table="t", table_id="T1", cells=["T1:R1C1"],
                   reason="Glucose is 92 (70–99).", explanations={}, decided_by="program").reply()
    assert "…" not in whole
