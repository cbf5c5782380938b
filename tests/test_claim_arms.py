"""A claim comparing two groups of columns in one row (tools/_claim_changes.py); found as a new user on a trial's
outcome table with a two-row header."""

from __future__ import annotations

import pytest

from kb.tables import Table, load_table
from tools._cells import TypedTable
from tools._claim_changes import arm_columns
from tools._table_program import run_sampled
from tools._table_shape import describe

OUTCOMES = Table(name="trial", title="", columns=[
    "Outcome", "Drug A (n=412) Events", "Drug A (n=412) %", "Placebo (n=405) Events", "Placebo (n=405) %"], rows=[
    ["Stroke", "12", "2.9", "25", "6.2"], ["Myocardial infarction", "18", "4.4", "21", "5.2"],
    ["Cardiovascular death", "9", "2.2", "8", "2.0"], ["Major bleeding", "15", "3.6", "6", "1.5"]])
TYPED = TypedTable.build(OUTCOMES)
A_EVENTS, A_PCT, P_EVENTS, P_PCT = TYPED.idents[1:]
# what the one program that ran wrote: stroke against another outcome (refuted)
WRITTEN = {"filters": [{"column": "outcome", "op": "=", "value": "Stroke"}], "fn": "value", "column": A_EVENTS,
           "check": {"op": "<", "against": "row", "value": "Cardiovascular death"}}


@pytest.mark.parametrize("claim, arms", [
    ("Drug A more than halved the rate of stroke compared with placebo", (A_PCT, P_PCT)),
    ("Placebo had twice the risk of stroke of drug A", (P_PCT, A_PCT)),
    ("Drug A reduced the number of stroke events compared with placebo", (A_EVENTS, P_EVENTS)),
    ("Drug A beat drug B on stroke", None),  # one group written: "drug b" is no group of this table
    ("Stroke was rarer than myocardial infarction", None),  # rows, not groups
])
def test_the_two_groups_and_the_measure_the_claim_asks_for(claim, arms):
    assert arm_columns(TYPED, claim, A_EVENTS) == arms


@pytest.mark.parametrize("claim, truth, row", [
    ("Drug A more than halved the rate of stroke compared with placebo", True, 1),  # 2.9 < 0.5 x 6.2
    ("Drug A halved the rate of myocardial infarction compared with placebo", False, 2),  # 4.4 vs 2.6
    ("Major bleeding was more common with drug A than with placebo", True, 4),  # 15 > 6
    ("Cardiovascular deaths were lower with drug A than placebo", False, 3),  # 9 vs 8
    ("Drug A cut the risk of stroke by more than 20% compared with placebo", None, 1),  # "cut" and "more": unread
])
def test_the_claim_is_checked_across_the_groups_in_the_row_it_names(claim, truth, row):
    ran = run_sampled(WRITTEN, TYPED, "claim", claim)
    if truth is None:
        assert ran.program.check.against != "column"
        return
    assert ran.execution is not None and ran.execution.truth is truth, ran.error
    assert ran.execution.decisive_rows == [row]
    assert ran.program.check.against == "column"


def test_a_claim_without_a_direction_is_left_to_the_programs():
    ran = run_sampled(WRITTEN, TYPED, "claim", "Drug A and placebo were compared for stroke")
    assert ran.program.check.against == "row"


def test_the_html_upload_with_a_two_row_header(tmp_path, tmp_settings):
    page = tmp_path / "trial.html"
    page.write_text(
        "<table><thead><tr><th rowspan='2'>Outcome</th><th colspan='2'>Drug A (n=412)</th>"
        "<th colspan='2'>Placebo (n=405)</th></tr><tr><th>Events</th><th>%</th><th>Events</th><th>%</th></tr>"
        "</thead><tbody><tr><td>Stroke</td><td>12</td><td>2.9</td><td>25</td><td>6.2</td></tr>"
        "<tr><td>Major bleeding</td><td>15</td><td>3.6</td><td>6</td><td>1.5</td></tr></tbody></table>")
    typed = TypedTable.build(load_table(page, settings=tmp_settings))
    ran = run_sampled({"filters": [], "fn": "count", "column": typed.idents[0]}, typed, "claim",
                      "Drug A more than halved the rate of stroke compared with placebo")
    assert ran.execution is not None and ran.execution.truth is True
    assert [typed.columns[c - 1].name for _, c in ran.execution.cells] == [
        "Outcome", "Drug A (n=412) %", "Placebo (n=405) %"]


@pytest.mark.real_model
async def test_real_model_checks_a_claim_across_two_arms(real_settings):
    """End to end with the served model: whatever the sampled programs read, the claim's form settles the check."""
    from assistant.llm import LLMClient
    from tools.verify_claim import check_claim

    llm = LLMClient(real_settings)
    try:
        check = await check_claim(llm, OUTCOMES, "Drug A more than halved the rate of stroke compared with placebo.",
                                  variant="program")
    finally:
        await llm.aclose()
    assert check.label == "SUPPORTS" and check.decided_by == "program"
    assert {(1, 3), (1, 5)} <= set(check.cells)  # Drug A's 2.9% and placebo's 6.2% in the stroke row


# -- arms that are whole columns: "Drug 20 mg (n=415)", "Drug 10 mg (n=409)" ---------------------------------------
def events() -> TypedTable:
    from tests.test_frequency_rules import EVENTS

    return TypedTable.build(EVENTS)


@pytest.mark.parametrize("claim, arms", [
    ("Dizziness was more common on 20 mg than on 10 mg.", ("drug_20_mg_n_415", "drug_10_mg_n_409")),
    ("Nausea was less frequent on placebo than on 10 mg", ("placebo_n_412", "drug_10_mg_n_409")),
    ("Fatigue on 10 mg was lower compared with placebo", ("drug_10_mg_n_409", "placebo_n_412")),
    ("Headache was more common on 20 mg.", None),  # one arm
    ("Headache was not more common on 20 mg than on 10 mg.", None),  # negated: left to the programs
    ("More than 40 patients on 20 mg than 10 mg had nausea", None),  # a bound after "than"
    ("Headache on 20 mg was higher than Nausea on 10 mg", None),  # "than" then a row's name, not the arm
])
def test_whole_columns_are_arms_when_the_claim_names_each_by_its_own_words(claim, arms):
    """Found as a new user: "Dizziness was more common on 20 mg than on 10 mg." was supported by three programs that
    counted the Dizziness row (a check of nothing the claim says)."""
    assert arm_columns(events(), claim) == arms


@pytest.mark.parametrize("claim, truth", [
    ("Dizziness was more common on 20 mg than on 10 mg.", True),  # 22 > 14
    ("Insomnia was more common on 20 mg than on 10 mg.", False),  # 9 < 11
    ("Fatigue on 10 mg was lower compared with placebo", True),  # 19 < 20
])
def test_a_claim_across_whole_column_arms_is_checked_in_its_row(claim, truth):
    counted = {"filters": [{"column": "adverse_event", "op": "=", "value": claim.split()[0]}], "fn": "count",
               "column": "adverse_event", "check": {"op": ">", "against": "value", "value": "0"}}
    ran = run_sampled(counted, events(), "claim", claim)
    assert ran.execution is not None and ran.execution.truth is truth, ran.error
    assert ran.program.check.against == "column" and ran.program.fn == "value"


# -- arms of different sizes: the cells' percentages, not their counts ----------------------------------------------
UNEQUAL = Table(name="ae", title="", columns=["Adverse event", "Active drug (n=1012)", "Placebo (n=198)"], rows=[
    ["Nausea", "41 (4.1%)", "16 (8.1%)"], ["Headache", "88 (8.7%)", "12 (6.1%)"], ["Rash", "15 (1.5%)", "3 (1.5%)"],
    ["Dizziness", "20 (2.0%)", "7 (3.5%)"]])


@pytest.mark.parametrize("claim, truth, compared", [
    ("Nausea was more common on the active drug than on placebo.", False, "4.1% against 8.1%"),  # 41 > 16 in counts
    ("Dizziness was more frequent with placebo than with the active drug.", True, "3.5% against 2.0%"),
    ("Rash was more common on the active drug than on placebo.", False, "1.5% against 1.5%"),
    ("Headache was less common on placebo than on the active drug", True, "6.1% against 8.7%"),
    # the claim asks for the counts: 41 patients against 16
    ("More patients had nausea on the active drug than on placebo.", True, None),
    ("The number of dizziness events was lower on placebo than on the active drug", True, None),
])
def test_arms_of_different_sizes_are_compared_by_the_percentages_their_cells_write(claim, truth, compared):
    """Found as a new user: "Nausea was more common on the active drug than on placebo" was supported by 5 of 5
    programs, 41 events of 1,012 against 16 of 198."""
    typed = TypedTable.build(UNEQUAL)
    counted = {"filters": [{"column": "adverse_event", "op": "=", "value": claim.split()[0]}], "fn": "count",
               "column": "adverse_event", "check": {"op": ">", "against": "value", "value": "0"}}
    ran = run_sampled(counted, typed, "claim", claim)
    assert ran.execution is not None and ran.execution.truth is truth, ran.error
    assert ran.program.check.by_share is (compared is not None)
    if compared is not None:
        assert compared in ran.execution.check_text
        assert "by the percentages the cells write" in describe(ran.program, typed)
    else:
        assert "percentages" not in ran.execution.check_text


# -- a table with one column per entity: the claim compares two columns in the row it names -------------------------
COUNTRIES = Table(name="countries", title="", columns=["Statistic", "Norway", "Chile", "Kenya"], rows=[
    ["Population", "5.4 million", "19.5 million", "54.0 million"], ["Capital city", "Oslo", "Santiago", "Nairobi"],
    ["Physicians per 1000 people", "5.0", "2.6", "0.2"], ["Life expectancy (years)", "83.2", "80.7", "61.4"]])


@pytest.mark.parametrize("claim, truth, row", [
    ("Norway has a bigger population than Chile", False, 1),  # 5.4 < 19.5 million
    ("the population of Kenya is bigger than Chile", True, 1),
    ("Chile has a smaller population than Kenya", True, 1),
    ("Life expectancy in Kenya is higher than in Norway", False, 4),
])
def test_a_table_with_a_column_per_country_compares_the_columns_in_the_row_the_claim_names(claim, truth, row):
    """Found on PubHealthTab's tuning split: "Liberia has a bigger population than guinea" (false) was supported by
    programs that compared Guinea's population with Liberia's, the other way round ("bigger" was not read as a
    direction)."""
    typed = TypedTable.build(COUNTRIES)
    written = {"filters": [{"column": "statistic", "op": "=", "value": "Population"}], "fn": "value",
               "column": "norway", "check": {"op": ">", "against": "value", "value": "0"}}
    ran = run_sampled(written, typed, "claim", claim)
    assert ran.execution is not None and ran.execution.truth is truth, ran.error
    assert ran.execution.decisive_rows == [row] and ran.program.check.against == "column"
