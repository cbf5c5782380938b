"""A refutation must rest on the rows the claim is about (tools/_claim_counts.py)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_counts import ignored_category_blocker, named_categories, restricted_to_category
from tools._table_ops import execute
from tools._table_ops_model import Program, RowFilter
from tools._table_program import ProgramOutcome, decide, run_sampled
from tools._table_shape import describe

VACCINES = Table(name="vaccines", title="Vaccine efficacy",
                 columns=["Vaccine", "Developer", "Platform", "Participants", "Efficacy (%)", "Doses"], rows=[
                     ["BNT162b2", "Pfizer–BioNTech", "mRNA", "43,548", "95.0", "2"],
                     ["mRNA-1273", "Moderna", "mRNA", "30,420", "94.1", "2"],
                     ["Ad26.COV2.S", "Janssen", "Viral vector", "44,325", "66.9", "1"],
                     ["ChAdOx1", "Oxford–AstraZeneca", "Viral vector", "11,636", "70.4", "2"],
                     ["NVX-CoV2373", "Novavax", "Protein subunit", "29,960", "90.4", "2"],
                     ["Gam-COVID-Vac", "Gamaleya", "Viral vector", "21,977", "91.6", "2"],
                 ])
CLAIM = "Is it true that every mRNA vaccine had an efficacy above 94%?"
# What the model wrote, 3 times of 5, for CLAIM (seen as a new user): every vaccine, not every mRNA one.
EVERY_ROW = {"filters": [], "fn": "every", "column": "efficacy", "check": {"op": ">", "value": "94"}}
MRNA_ONLY = {**EVERY_ROW, "filters": [{"column": "platform", "op": "=", "value": "mRNA"}]}


def typed() -> TypedTable:
    return TypedTable.build(VACCINES)


def blocker(claim: str, raw: dict) -> str:
    t = typed()
    program = Program.model_validate(raw)
    return ignored_category_blocker(program, execute(program, t), t, claim)


def test_identifiers_used_here_are_the_tables():
    assert {"platform", "efficacy"} <= set(typed().idents)


@pytest.mark.parametrize("claim, expected", [
    (CLAIM, {"mrna": "platform"}),
    ("Viral vector vaccines need one dose.", {"viral vector": "platform"}),
    ("mRNAs are the most effective.", {}),  # not the cell's whole word
    ("Moderna's vaccine had the highest efficacy.", {}),  # one row's value: a name, which a check may test
    ("Every vaccine needs 2 doses.", {}),  # numbers are measurements, not categories
])
def test_the_categories_a_claim_names(claim, expected):
    assert named_categories(typed(), claim) == expected


def test_a_value_every_row_holds_restricts_nothing():
    table = Table(name="t", title="", columns=["Drug", "Class"], rows=[["A", "statin"], ["B", "statin"]])
    assert named_categories(TypedTable.build(table), "Every statin lowers LDL.") == {}


def test_a_category_is_named_whatever_its_accents_and_case():
    table = Table(name="t", title="", columns=["Site", "Province"],
                  rows=[["Laval", "Québec"], ["Gatineau", "Québec"], ["Ottawa", "Ontario"]])
    assert named_categories(TypedTable.build(table), "Every QUEBEC site enrolled 20.") == {"quebec": "province"}


def test_a_stop_word_is_not_a_category():
    table = Table(name="t", title="", columns=["Country", "Variant"],
                  rows=[["Brazil", "a"], ["Peru", "a"], ["Chile", "delta"], ["Chad", "delta"]])
    assert named_categories(TypedTable.build(table), "Brazil has a delta case") == {"delta": "variant"}


def test_a_refutation_over_rows_the_claim_did_not_name_does_not_vote():
    why = blocker(CLAIM, EVERY_ROW)
    assert "Platform is 'mrna'" in why, why


def test_the_program_that_keeps_the_claims_rows_votes():
    t = typed()
    program = Program.model_validate(MRNA_ONLY)
    ex = execute(program, t)
    assert ex.truth is True and ignored_category_blocker(program, ex, t, CLAIM) == ""


def test_a_check_that_holds_over_more_rows_votes():
    """Every vaccine above 60% says every mRNA one is too: support over more rows is left to vote."""
    raw = {**EVERY_ROW, "check": {"op": ">", "value": "60"}}
    assert blocker("Every mRNA vaccine had an efficacy above 60%.", raw) == ""


def test_a_refutation_that_names_the_category_in_its_check_votes():
    raw = {"filters": [], "fn": "argmax", "column": "efficacy", "answer_column": "platform",
           "check": {"op": "=", "value": "Viral vector"}}
    assert blocker("The most effective vaccine is a viral vector one.", raw) == ""


def test_the_claims_vote_end_to_end():
    """Three programs over every row refuted the claim, two over the mRNA rows supported it: the three are run over
    the mRNA rows, and all five support it."""
    t = typed()
    sampled = [run_sampled(raw, t, "claim", CLAIM) for raw in (EVERY_ROW, EVERY_ROW, EVERY_ROW, MRNA_ONLY, MRNA_ONLY)]
    assert all(s.execution is not None and s.execution.truth for s in sampled), [s.error for s in sampled]
    assert describe(sampled[0].program, t).startswith("rows where Platform = 'mRNA' → ")
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, sampled, t, "claim", CLAIM)
    assert outcome.winner == "SUPPORTS" and outcome.votes == {"SUPPORTS": 5}, outcome.votes


def _restricted(claim: str, raw: dict):
    return restricted_to_category(Program.model_validate(raw), typed(), claim)


def test_a_program_over_every_row_is_restricted_to_the_named_category():
    assert _restricted(CLAIM, EVERY_ROW).filters[0] == RowFilter(column="platform", op="=", value="mRNA")
    counted = {"filters": [], "fn": "count", "column": "vaccine", "check": {"op": "=", "value": "3"}}
    assert _restricted("There are 3 viral vector vaccines.", counted).filters[0].value == "Viral vector"


@pytest.mark.parametrize("claim, raw", [
    (CLAIM, MRNA_ONLY),  # filtered already
    ("Every mRNA vaccine is more effective than every viral vector one.", EVERY_ROW),  # two categories: which?
    (CLAIM, {**EVERY_ROW, "fn": "only"}),  # "only" sets rows apart by its own filter
    (CLAIM, {**EVERY_ROW, "check": {"op": ">", "against": "row", "value": "mRNA-1273"}}),  # a reference row
    ("Every vaccine had an efficacy above 94%.", EVERY_ROW),  # no category named
])
def test_other_programs_are_not_restricted(claim, raw):
    assert _restricted(claim, raw) is None


def test_a_program_with_filters_is_left_to_vote():
    """TabFact's tuning split: "… attendance exactly equal to that of arsenal" names Arsenal as a reference, and a
    program filtering dates and Arsenal's attendance read it right; only a program over every row is held."""
    raw = {**EVERY_ROW, "filters": [{"column": "doses", "op": "=", "value": "2"}]}
    assert blocker(CLAIM, raw) == ""


def test_which_row_is_left_to_vote():
    """Which row holds the extreme is a row's name, not an aggregate of the set: the refutation stands."""
    raw = {"filters": [], "fn": "argmax", "column": "efficacy", "answer_column": "developer",
           "check": {"op": "=", "value": "Moderna"}}
    assert blocker("Moderna made the most effective mRNA vaccine.", raw) == ""

