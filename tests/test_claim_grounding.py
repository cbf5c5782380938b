"""Claim programs vote only when they check what the claim states (tools/_claim_grounding.py)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_grounding import claim_numbers, vote_blocker
from tools._table_ops import Program, execute

TABLE = Table(name="deaths", title="Deaths by cause", columns=["Cause", "Deaths", "Share"], rows=[
    ["Heart disease", "659,041", "23%"],
    ["Cancer", "599,601", "21%"],
    ["Accidents", "173,040", "6%"],
    ["Stroke", "150,005", "5%"],
])


def run(claim: str, **program) -> str:
    typed = TypedTable.build(TABLE)
    prog = Program.model_validate({"answer_column": "cause", **program})
    return vote_blocker(prog, execute(prog, typed), claim, TABLE.n_rows)


HEART = [{"column": "cause", "op": "=", "value": "Heart disease"}]


@pytest.mark.parametrize("claim, numbers", [
    ("Heart disease killed 659,041 people, 23% of deaths.", {659041.0, 23.0}),
    ("Three causes account for 1.5 million deaths.", {3.0, 1.5}),
    ("No year is given.", {0.0}),
    ("Deaths fell by −2 points.", {-2.0}),
])
def test_claim_numbers(claim, numbers):
    assert claim_numbers(claim) == numbers


def test_a_check_against_a_stated_number_votes_either_way():
    assert run("Heart disease caused 659,041 deaths.", filters=HEART, fn="value", column="deaths",
               check={"op": "=", "against": "value", "value": "659041"}) == ""
    # A refutation with the claim's own number is a reading of the claim: it votes.
    assert run("Heart disease caused 700,000 deaths.", filters=HEART, fn="value", column="deaths",
               check={"op": "=", "against": "value", "value": "700,000"}) == ""
    # Percent and scale words: "23%" meets 23, "1.5 million" meets 1500000.
    assert run("Heart disease was 23 percent of deaths.", filters=HEART, fn="value", column="share",
               check={"op": "=", "against": "value", "value": "23%"}) == ""
    assert run("All causes together killed 1.5 million.", fn="sum", column="deaths",
               check={"op": "=", "against": "value", "value": "1500000"}) == ""


def test_a_refutation_by_a_number_the_claim_does_not_state_does_not_vote():
    why = run("Heart disease is the leading cause of death.", filters=HEART, fn="value", column="deaths",
              check={"op": ">", "against": "value", "value": "700000"})
    assert "does not state" in why and "700000" in why
    # A check that holds is left to vote: only a refutation is held to the claim's own values.
    assert run("Heart disease is the leading cause of death.", filters=HEART, fn="value", column="deaths",
               check={"op": ">", "against": "value", "value": "600000"}) == ""


def test_text_checks_need_the_claims_words():
    assert run("Cancer kills the most.", fn="argmax", column="deaths",
               check={"op": "=", "against": "value", "value": "Cancer"}) == ""
    assert "does not state" in run("The top killer is cancer.", fn="argmax", column="deaths",
                                   check={"op": "=", "against": "value", "value": "Stroke"})


def test_a_count_against_more_rows_than_the_table_has_does_not_vote():
    why = run("Accidents killed more than 50 people.", filters=[{"column": "cause", "op": "=", "value": "Accidents"}],
              fn="count", column="deaths", check={"op": ">", "against": "value", "value": "50"})
    assert "cannot be a number of rows" in why
    assert run("Two causes killed more than 500,000 people.",
               filters=[{"column": "deaths", "op": ">", "value": "500000"}], fn="count", column="deaths",
               check={"op": "=", "against": "value", "value": "2"}) == ""


def test_a_count_over_no_rows_does_not_vote_unless_the_claim_says_none():
    no_rows = [{"column": "deaths", "op": ">", "value": "900000"}]
    why = run("Two causes killed more than 900,000 people.", filters=no_rows, fn="count", column="deaths",
              check={"op": "=", "against": "value", "value": "2"})
    assert "select no row" in why
    assert run("No cause killed more than 900,000 people.", filters=no_rows, fn="count", column="deaths",
               check={"op": "=", "against": "value", "value": "0"}) == ""


def test_row_checks_and_every_are_left_alone():
    assert run("Cancer killed fewer than heart disease.", filters=[{"column": "cause", "op": "=", "value": "Cancer"}],
               fn="value", column="deaths", check={"op": "<", "against": "row", "value": "Heart disease"}) == ""
