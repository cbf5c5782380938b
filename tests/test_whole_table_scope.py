"""A whole-table superlative is not read over a group the claim never names (tools._grounding), and a
superlative written as a compound ("the lowest-calorie food") is one (tools.lang.reading.is_superlative).

Found as a new user: "Cod is the lowest-calorie food in the table." was decided by "rows where Category = 'Fish'
→ min of Calories": Cod against one other fish."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._grounding import read_whole_table_extreme, says_whole_table
from tools._table_ops_model import Program
from tools._table_program import run_sampled
from tools._table_shape import shape_for_programs
from tools.lang.reading import is_superlative

FOOD = Table(name="food", title="", columns=["Food", "Category", "Calories (kcal per 100 g)", "Protein (g)"], rows=[
    ["Lentils", "Legume", "116", "9.0"],
    ["Salmon", "Fish", "208", "20.4"],
    ["Cod", "Fish", "82", "17.8"],
    ["Chicken breast", "Meat", "165", "31.0"],
    ["Tofu", "Legume", "76", "8.1"]])


def typed() -> TypedTable:
    return TypedTable.build(shape_for_programs(FOOD).table)


def fish_min(check_row: str) -> dict:
    return {"filters": [{"column": "category", "op": "=", "value": "Fish"}], "fn": "min",
            "column": "calories_kcal_per_100_g", "answer_column": "food",
            "check": {"op": "=", "against": "row", "value": check_row}}


@pytest.mark.parametrize("text, expected", [
    ("Cod is the lowest-calorie food", True),
    ("the best-selling drug", True),
    ("which country won the second-highest number of medals?", True),
    ("the most-attended game", True),
    ("the right-most column", False),
    ("a low-calorie food", False),
    ("the lowest value", True),
])
def test_compound_superlatives(text, expected):
    assert is_superlative(text) is expected


@pytest.mark.parametrize("claim, truth, rows", [
    # the whole table: Tofu (76) is lower than Cod (82), so the claim is false, whatever the fish filter says
    ("Cod is the lowest-calorie food in the table.", False, 5),
    ("Of all the foods, Cod has the fewest calories.", False, 5),
    # the claim names the group: the filter stays, and among fish Cod is lowest
    ("Cod is the lowest-calorie fish in the table.", True, 2),
    # no whole-table words: as the program was written (measured: holding unstated filters hurt on TabFact)
    ("Cod is the lowest-calorie food.", True, 2),
])
def test_a_filter_the_claim_never_names_is_dropped_only_over_the_whole_table(claim, truth, rows):
    ran = run_sampled(fish_min("Cod"), typed(), "claim", claim)
    assert ran.execution is not None, ran.error
    assert ran.execution.truth is truth
    assert len(ran.execution.selected) == rows


def test_only_extremes_with_filters_are_read():
    t = typed()
    value = Program.model_validate({"filters": [{"column": "category", "op": "=", "value": "Fish"}], "fn": "value",
                                    "column": "calories_kcal_per_100_g", "answer_column": "food"})
    claim = "Cod is the lowest-calorie food in the table."
    assert read_whole_table_extreme(value, t, claim) == value
    bare = Program.model_validate({**fish_min("Cod"), "filters": []})
    assert read_whole_table_extreme(bare, t, claim) == bare
    assert says_whole_table(claim) and not says_whole_table("Cod is in the table.")
