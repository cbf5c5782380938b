"""Claims that count a column's different values ("a total of 4 country represent by the player"), from
TabFact's tuning split."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_counts import counted_nouns, read_counted_column
from tools._table_ops import execute
from tools._table_ops_model import Program
from tools._table_program import run_sampled

GOLF = Table(name="golf", title="1989 us open", columns=["place", "player", "country", "score", "game"], rows=[
    ["1", "curtis strange", "united states", "278", "1"],
    ["t2", "chip beck", "united states", "279", "2"],
    ["t2", "ian woosnam", "wales", "279", "3"],
    ["t4", "nick faldo", "england", "280", "4"],
    ["t4", "masashi ozaki", "japan", "280", "5"],
    ["t4", "scott simpson", "united states", "280", "6"],
])


def counting(value: str, filters=()) -> Program:
    return Program.model_validate({"filters": list(filters), "fn": "count", "column": "player",
                                   "answer_column": "player",
                                   "check": {"op": "=", "against": "value", "value": value}})


@pytest.mark.parametrize("claim, want", [
    ("there be a total of 4 country represent by the player", [(4.0, "country")]),
    ("three different nationality", [(3.0, "nationality")]),
    ("he scored 12.5 points", []),
])
def test_counted_nouns(claim, want):
    assert counted_nouns(claim) == want


def test_a_count_of_a_named_column_counts_its_different_values():
    t = TypedTable.build(GOLF)
    read = read_counted_column(counting("4"), t, "there be a total of 4 country represent by the player")
    assert read.fn == "count_distinct" and read.column == "country"
    assert execute(read, t).truth is True  # united states, wales, england, japan
    t4 = [{"column": "place", "op": "=", "value": "t4"}]
    for n, truth in (("3", True), ("2", False)):  # england, japan, united states
        read = read_counted_column(counting(n, t4), t, f"{n} country be represent among the player tie for fourth")
        assert execute(read, t).truth is truth


def test_other_counts_are_left_alone():
    t = TypedTable.build(GOLF)
    # a column with a different value in every row counts as many values as rows: the result does not change
    assert execute(read_counted_column(counting("6"), t, "6 player finish the tournament"), t).result == 6.0
    assert read_counted_column(counting("4"), t, "4 game be play") == counting("4")  # a numeric column
    assert read_counted_column(counting("5"), t, "there be a total of 4 country") == counting("5")  # another number


def test_the_claim_check_votes_with_the_distinct_count():
    raw = counting("4").model_dump()
    ran = run_sampled(raw, TypedTable.build(GOLF), "claim", "there be a total of 4 country represent by the player")
    assert ran.execution is not None and ran.execution.truth is True, ran.error


def test_a_distinct_count_over_no_row_does_not_vote():
    """TabFact: "each contribute 1 player" filtered to no row counted 0 players and refuted; a count over no row
    says nothing about the claim, distinct or not."""
    raw = counting("1", [{"column": "country", "op": "=", "value": "france"}]).model_dump()
    ran = run_sampled(raw, TypedTable.build(GOLF), "claim", "france contribute 1 player")
    assert ran.execution is None and "select no row" in ran.error


@pytest.mark.parametrize("raw", [
    {"filters": [], "fn": "count", "column": "player", "check": {"op": ">=", "against": "value", "value": "0"}},
    {"filters": [], "fn": "count", "column": "player", "check": {"op": ">", "against": "value", "value": "-1"}},
])
def test_checks_true_of_any_table_do_not_vote(raw):
    """TabFact's tuning split: "both a male and female leave the cube alive" was supported by "the number of rows
    >= 0"."""
    ran = run_sampled({"answer_column": "player", **raw}, TypedTable.build(GOLF), "claim", "wales have 1 player")
    assert ran.execution is None and "true of any table" in ran.error


def test_a_real_every_check_still_votes():
    raw = {"filters": [{"column": "country", "op": "=", "value": "united states"}], "fn": "every", "column": "score",
           "answer_column": "player", "check": {"op": "<=", "against": "value", "value": "280"}}
    ran = run_sampled(raw, TypedTable.build(GOLF), "claim", "every united states player score 280 or less")
    assert ran.execution is not None and ran.execution.truth is True
