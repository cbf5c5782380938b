"""A count over every row while the question writes one column's cell (WikiTableQuestions' training split: "how
many times is "friendly" a type of game?" counted all 14 games)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._table_ops import execute
from tools._table_ops_model import Program
from tools._values import add_stated_value

GAMES = Table(name="games", title="Games", columns=["Date", "Opponent", "Type", "Result"], rows=[
    ["1 May", "Spain", "Friendly", "Won"],
    ["9 May", "Italy", "Friendly match", "Lost"],
    ["3 June", "France", "Qualifier", "Won"],
    ["8 June", "Spain", "Qualifier", "Drawn"],
    ["2 July", "Wales", "Friendly", "Won"],
])


def count(**kw) -> Program:
    return Program.model_validate({"filters": [], "fn": "count", "column": "opponent", "answer_column": "opponent"}
                                  | kw)


@pytest.mark.parametrize("question, rows", [
    ('how many times is "friendly" a type of game?', [1, 5]),
    ("how many qualifier games were there?", [3, 4]),
    ("how many friendly match games were played?", [2]),  # the longer cell wins over the one it contains
    ("how many games were drawn?", [4]),
])
def test_a_count_keeps_the_rows_of_the_cell_the_question_writes(question, rows):
    program = add_stated_value(count(), TypedTable.build(GAMES), question)
    assert execute(program, TypedTable.build(GAMES)).selected == rows


@pytest.mark.parametrize("question", [
    "how many games were played?",  # no cell
    "how many games against spain were won?",  # cells of two columns: the programs decide
    "how many friendly or qualifier games were there?",  # two values of one column
])
def test_no_single_stated_cell_leaves_the_count(question):
    assert add_stated_value(count(), TypedTable.build(GAMES), question) == count()


def test_programs_with_filters_and_other_functions_are_left_alone():
    t = TypedTable.build(GAMES)
    filtered = count(filters=[{"column": "opponent", "op": "=", "value": "Spain"}])
    assert add_stated_value(filtered, t, "how many friendly games against spain?") == filtered
    listing = count(fn="value")
    assert add_stated_value(listing, t, "which opponents played a qualifier?") == listing
    every = TypedTable.build(Table(name="t", title="t", columns=["Team", "Kind"], rows=[["A", "Cup"], ["B", "Cup"]]))
    assert add_stated_value(count(column="team", answer_column="team"), every, "how many cup games?").filters == []


TB = TypedTable.build(Table(name="tb", title="tb", columns=["Country", "Year", "TB incidence"], rows=[
    ["Kenya", "2019", "267"], ["Kenya", "2020", "259"], ["Ghana", "2019", "143"], ["Ghana", "2020", "139"],
    ["Total", "", "808"]]))


@pytest.mark.parametrize("fn, question, result", [
    # found as a new user: all five programs of a turn averaged the four rows (202)
    ("avg", "What was the average TB incidence in Ghana?", 141.0),
    ("max", "What was the highest TB incidence in Kenya?", 267.0),
    ("sum", "What was the total TB incidence in Kenya?", 526.0),
    ("argmax", "In which year was TB incidence highest in Ghana?", "2019"),
])
def test_an_aggregate_over_every_row_keeps_the_rows_of_the_cell_the_question_writes(fn, question, result):
    program = Program.model_validate({"filters": [], "fn": fn, "column": "tb_incidence", "answer_column": "year"})
    assert execute(add_stated_value(program, TB, question), TB).result == result


def test_a_totals_row_or_the_answer_s_own_column_is_no_filter():
    summed = Program.model_validate({"filters": [], "fn": "sum", "column": "tb_incidence", "answer_column": "year"})
    # "total" writes the totals row's label (WikiTableQuestions' test split: 24, the table's total, for 4)
    assert add_stated_value(summed, TB, "What is the total TB incidence?") == summed
    ranked = Program.model_validate({"filters": [], "fn": "argmax", "column": "tb_incidence",
                                     "answer_column": "country"})
    assert add_stated_value(ranked, TB, "Which country had a higher TB incidence than Ghana?") == ranked
