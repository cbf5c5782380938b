"""Medians, and averages per group (tools._question_counts), found as a new user over a table of foods."""

from __future__ import annotations

import pytest

from tools.lang.routing import score_table
from kb.tables import Table
from tools._cells import TypedTable
from tools._question_counts import read_group_mean, read_median
from tools._table_ops import execute
from tools._table_ops_model import Check, Program, RowFilter, RowGroups
from tools._table_shape import describe

FOODS = Table(name="foods", title="foods", columns=["Food", "Calories (kcal/100g)", "Sugar (g)", "Category"], rows=[
    ["Apple", "52", "10.4", "Fruit"], ["Banana", "89", "12.2", "Fruit"], ["Chicken breast", "165", "0.0", "Meat"],
    ["Salmon", "208", "0.0", "Fish"], ["Almonds", "579", "4.4", "Nut"], ["Cheddar", "403", "0.5", "Dairy"],
    ["Broccoli", "34", "1.7", "Vegetable"], ["Walnuts", "654", "2.6", "Nut"], ["Pear", "57", "9.8", "Fruit"]])


@pytest.fixture
def foods() -> TypedTable:
    return TypedTable.build(FOODS)


def test_the_median_is_the_middle_value_not_the_mean(foods):
    written = Program(filters=[], fn="avg", column="sugar_g")
    read = read_median(written, foods, "What is the median sugar content?")
    ex = execute(read, foods)
    # 0, 0, 0.5, 1.7, 2.6, 4.4, 9.8, 10.4, 12.2: the fifth; the mean would be 4.62
    assert read.fn == "median" and ex.result == pytest.approx(2.6), ex.result_text
    assert "median of Sugar (g)" in describe(read, foods)
    even = Program(filters=[RowFilter(column="category", op="!=", value="Meat")], fn="avg", column="sugar_g")
    # eight values without the chicken: 0, 0.5, 1.7, 2.6, 4.4, …: the mean of the middle two
    assert execute(read_median(even, foods, "the median sugar"), foods).result == pytest.approx((2.6 + 4.4) / 2)


@pytest.mark.parametrize("fn", ["max", "argmin", "argmax"])
def test_an_extreme_where_the_text_asks_for_the_median_is_the_median(foods, fn):
    """Found as a new user: 10 of 10 programs wrote "What is the median sugar content?" as an extreme."""
    written = Program(filters=[], fn=fn, column="sugar_g", answer_column="food")
    assert execute(read_median(written, foods, "What is the median sugar content?"), foods).result == 2.6
    assert read_median(written, foods, "Which food has the highest median sugar?") == written  # a superlative


def test_a_median_claim_is_checked_against_the_median(foods):
    claim = Program(filters=[], fn="avg", column="calories_kcal_100g", check=Check(op=">", value="200"))
    ex = execute(read_median(claim, foods, "The median food has more than 200 kcal."), foods)
    assert ex.result == 165 and ex.truth is False  # the mean, 249, would have made it true


def test_median_is_not_read_where_the_text_or_the_column_does_not_ask_for_it(foods):
    mean = Program(filters=[], fn="avg", column="sugar_g")
    assert read_median(mean, foods, "What is the average sugar content?") == mean
    one_row = Program(filters=[RowFilter(column="food", op="=", value="Apple")], fn="value", column="sugar_g")
    assert read_median(one_row, foods, "Is the apple's sugar above the median?") == one_row
    medians = TypedTable.build(Table(name="s", title="s", columns=["Site", "Median age (years)"],
                                     rows=[["A", "41"], ["B", "38"], ["C", "50"]]))
    avg_of_medians = Program(filters=[], fn="avg", column="median_age_years")
    assert read_median(avg_of_medians, medians, "What is the median age across sites?") == avg_of_medians


@pytest.mark.parametrize("question, fn, answer", [
    ("Which category has the most calories on average?", "avg", "Nut"),  # (579 + 654) / 2; not the mean of all
    ("Which category has the fewest calories on average?", "avg", "Vegetable"),
    ("Which category has the highest mean calories?", "argmax", "Nut"),  # Walnuts' row is Nut as well
])
def test_which_group_has_the_largest_average_compares_each_groups_mean(foods, question, fn, answer):
    written = Program(filters=[], fn=fn, column="calories_kcal_100g", answer_column="food")
    read = read_group_mean(written, foods, question)
    ex = execute(read, foods)
    assert read.options.grouping == RowGroups(by="mean") and ex.result == answer, ex.result_text
    if answer == "Nut":
        assert "Nut 616.5 (2 rows)" in ex.result_text and "Fruit 66 (3 rows)" in ex.result_text
        assert ex.decisive_rows == [5, 8]


def test_a_group_mean_needs_an_average_an_extreme_and_repeating_groups(foods):
    written = Program(filters=[], fn="argmax", column="calories_kcal_100g", answer_column="food")
    assert read_group_mean(written, foods, "Which category has the most calories?") == written  # no average
    assert read_group_mean(written, foods, "Which food has the most calories on average?") == written  # one row each
    mean = Program(filters=[], fn="avg", column="calories_kcal_100g")
    assert read_group_mean(mean, foods, "What is the average calorie count?") == mean  # no which-noun, no extreme


def test_a_median_question_routes_to_the_table():
    """Found as a new user: "What is the median sugar content?" went to the text knowledge base ("Sugary means high
    in sugar"): one header and no table-shaped word."""
    assert score_table("What is the median sugar content?", FOODS).routes
