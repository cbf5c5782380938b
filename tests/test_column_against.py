"""Questions that compare two columns of each row (tools/_claim_changes.py); found as a new user on a JSON export
of trial sites: "Which sites missed their enrolment target?" named the site with the fewest enrolled."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_changes import read_column_against
from tools._table_ops_model import Program
from tools._table_program import run_sampled
from tools._table_shape import describe

SITES = Table(name="sites", title="", columns=["Site", "Enrolled", "Target", "Dropouts", "PI since"], rows=[
    ["Leeds", "84", "80", "6", "2019"], ["Lyon", "61", "75", "9", "2021"], ["Porto", "77", "70", "4", "2018"],
    ["Graz", "45", "60", "11", "2022"], ["Cork", "58", "55", "3", "2020"], ["Oslo", "70", "70", "5", "2019"]])
TYPED = TypedTable.build(SITES)
# what the programs wrote: a guessed bound that no row meets
GUESSED = {"filters": [{"column": "target", "op": "<", "value": "35"}], "fn": "value", "column": "site",
           "answer_column": "site"}


@pytest.mark.parametrize("question, answer", [
    ("Which sites missed their enrolment target?", ["Lyon", "Graz"]),
    ("Which sites exceeded their target?", ["Leeds", "Porto", "Cork"]),  # Enrolled: on the target's scale
    ("Which sites met their target?", ["Leeds", "Porto", "Cork", "Oslo"]),
    ("Which sites enrolled fewer patients than their target?", ["Lyon", "Graz"]),
    ("How many sites fell short of their target?", 2),
    ("Did any site fail to reach its target?", "yes"),
])
def test_rows_are_kept_by_one_column_against_another(question, answer):
    ran = run_sampled(GUESSED, TYPED, "question", question)
    assert ran.error == "" and ran.execution is not None
    assert ran.execution.result == answer
    assert "Enrolled" in describe(ran.program, TYPED) and "Target" in describe(ran.program, TYPED)


def test_both_columns_are_cited():
    ran = run_sampled(GUESSED, TYPED, "question", "Which sites missed their enrolment target?")
    assert {(2, 2), (2, 3), (4, 2), (4, 3)} <= set(ran.execution.cells)
    assert describe(ran.program, TYPED) == "rows where Enrolled < Target → Site"


@pytest.mark.parametrize("question", [
    "Which site has the most dropouts?",  # no comparison with a column of the row
    "Which sites exceeded their budget?",  # no column named by it
])
def test_other_questions_are_left_as_written(question):
    assert run_sampled(GUESSED, TYPED, "question", question).program.filters[0].than_column is None


def test_without_a_column_on_the_target_s_scale_nothing_is_guessed():
    # Enrolled and Screened are both near the target's scale: which one "exceeded their target" means is unclear
    t = TypedTable.build(Table(name="s", title="", columns=["Site", "Screened", "Enrolled", "Target"], rows=[
        ["Leeds", "95", "84", "80"], ["Lyon", "70", "61", "75"], ["Porto", "90", "77", "70"]]))
    ran = run_sampled(GUESSED | {"filters": []}, t, "question", "Which sites exceeded their target?")
    assert not ran.program.filters


def test_more_in_one_year_than_in_another_compares_the_measure_s_two_year_columns():
    """Found as a new user: "How many counties had more measles cases in 2024 than in 2023?" counted all 6 rows."""
    from tools._claim_changes import read_column_against
    from tools._table_ops import execute
    from tools._table_ops_model import Program

    table = Table(name="measles", title="measles", columns=[
        "County", "MMR coverage (%)", "Measles cases 2023", "Measles cases 2024"], rows=[
        ["Ashford", "94.1", "3", "0"], ["Belmont", "88.7", "12", "27"], ["Carver", "91.5", "5", "9"],
        ["Dunmore", "85.2", "18", "41"], ["Elmwood", "96.3", "0", "1"], ["Fairview", "90.0", "7", "4"]])
    typed = TypedTable.build(table)
    counted = Program.model_validate({"filters": [], "fn": "count", "column": "county", "answer_column": "county"})
    prog = read_column_against(counted, typed, "How many counties had more measles cases in 2024 than in 2023?")
    assert execute(prog, typed).result_text == "4"
    listed = {"filters": [{"column": "mmr_coverage", "op": "<", "value": "95"},  # the question's own condition
                          {"column": "measles_cases_2024", "op": ">", "value": "0"}],  # the model's, dropped
              "fn": "value", "column": "county", "answer_column": "county"}
    prog = read_column_against(Program.model_validate(listed), typed,
                               "Which counties with MMR coverage below 95% had fewer cases in 2024 than in 2023?")
    assert execute(prog, typed).result == ["Ashford", "Fairview"]


# -- two arms of a trial, one column each -----------------------------------------------------------------------
def _unequal_arms() -> TypedTable:
    from tests.test_claim_arms import UNEQUAL

    return TypedTable.build(UNEQUAL)


@pytest.mark.parametrize("question, answer", [
    ("Which adverse event was more common on placebo than on the active drug?", ["Nausea", "Dizziness"]),
    ("How many adverse events were less frequent on the active drug than on placebo?", 2),
    ("Which adverse events were more common with the active drug than with placebo?", "Headache"),
    # counts asked: 41 of 1,012 patients is more patients than 16 of 198
    ("Which adverse events did more patients have on the active drug than on placebo?",
     ["Nausea", "Headache", "Rash", "Dizziness"]),
])
def test_two_arms_are_compared_row_by_row(question, answer):
    """Found as a new user: "Which adverse event was more common on placebo than on the active drug?" was answered
    with every event (3 of 5 programs took the most common name of all rows)."""
    typed = _unequal_arms()
    most_common = {"filters": [], "fn": "most_common", "column": "adverse_event", "answer_column": "adverse_event"}
    ran = run_sampled(most_common, typed, "question", question)
    assert ran.error == "" and ran.execution is not None
    assert ran.execution.result == answer
    assert ran.program.filters[0].than_column is not None


@pytest.mark.parametrize("question", [
    "How many more adverse events were reported on the active drug than on placebo?",  # a difference of counts
    "How many positions above did nausea place on placebo vs the active drug?",
])
def test_a_difference_between_two_arms_is_no_count_of_rows(question):
    """WTQ's training split: "how many more bronze medals were awarded than silver?" was read as the rows with
    Bronze > Silver, counted."""
    typed = _unequal_arms()
    written = Program.model_validate({"filters": [], "fn": "sum", "column": "active_drug_n_1012"})
    assert read_column_against(written, typed, question) == written


def test_without_a_possessive_no_measure_is_guessed():
    """WTQ's training split: "who was the first coach to reach the NCAA tournament?" was read as Years >= NCAA
    Tournament, the column on the same scale guessed as the measure."""
    written = Program.model_validate(GUESSED)
    assert read_column_against(written, TYPED, "Which sites reached the target?") == written
    assert read_column_against(written, TYPED, "Which sites reached their target?") != written
