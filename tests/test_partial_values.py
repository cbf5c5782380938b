"""A question's filter value it only partly writes, or writes whole, when what it writes names several cells (found
as a new user: "the outbreaks linked to onions" was written "Source = 'Red onions'", then "Source = 'Onions'")."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._table_ops import execute
from tools._table_ops_model import Program
from tools._table_program import run_sampled
from tools._values import widen_partial_value

OUTBREAKS = Table(name="o", title="Outbreaks", columns=["Outbreak", "Source", "Deaths"], rows=[
    ["Salmonella Newport", "Red onions", "0"],
    ["E. coli O157", "Romaine lettuce", "0"],
    ["Listeria", "Enoki mushrooms", "4"],
    ["Salmonella Oranienburg", "Onions", "0"],
    ["Cyclospora", "Iceberg lettuce", "1"],
])


def on_source(value: str) -> Program:
    return Program.model_validate({"filters": [{"column": "source", "op": "=", "value": value}], "fn": "sum",
                                   "column": "deaths", "answer_column": "outbreak"})


@pytest.mark.parametrize("question, value, rows", [
    ("How many deaths were there in the outbreaks linked to onions?", "Red onions", [1, 4]),
    ("How many people died in the lettuce outbreaks?", "Romaine lettuce", [2, 5]),
    # the whole cell written, and another cell holds it as words: both (found as a new user, with the real model)
    ("How many deaths were there in the outbreaks linked to onions?", "Onions", [1, 4]),
])
def test_a_partly_written_value_that_names_several_cells_keeps_them_all(question, value, rows):
    t = TypedTable.build(OUTBREAKS)
    program = widen_partial_value(on_source(value), t, question)
    assert program.filters[0].op == "contains" and execute(program, t, union_same_column=True).selected == rows


@pytest.mark.parametrize("question, value", [
    ("How many deaths were there in the red onions outbreak?", "Red onions"),  # written whole
    ("How many deaths did the enoki outbreak cause?", "Enoki mushrooms"),  # "enoki" names one cell only
    ("How many deaths were there?", "Red onions"),  # nothing of it written
])
def test_other_filters_are_left_as_written(question, value):
    assert widen_partial_value(on_source(value), TypedTable.build(OUTBREAKS), question) == on_source(value)


def test_claims_keep_the_cell_the_model_chose():
    claim = on_source("Red onions").model_copy(update={"fn": "value"}).model_dump()
    claim["check"] = {"op": "=", "against": "value", "value": "0"}
    done = run_sampled(claim, TypedTable.build(OUTBREAKS), "claim", "No one died in the outbreaks linked to onions.")
    assert done.program.filters[0].op == "="
    asked = run_sampled(on_source("Red onions").model_dump(), TypedTable.build(OUTBREAKS), "question",
                        "How many deaths were there in the outbreaks linked to onions?")
    assert asked.execution.selected == [1, 4]


def test_a_hyphenated_compound_is_another_value():
    people = TypedTable.build(Table(name="p", title="p", columns=["Name", "Nationality"], rows=[
        ["Vaid", "Indian-American"], ["Vanita", "Indian"], ["Vachon", "American"], ["Vargas", "Mexican"]]))
    program = Program.model_validate({"filters": [{"column": "nationality", "op": "=", "value": "Indian"}],
                                      "fn": "count", "column": "name", "answer_column": "name"})
    assert widen_partial_value(program, people, "how many people in this group were indian?") == program


INCOME = Table(name="coverage", title="coverage", columns=["Country", "2019", "2021", "Income group"], rows=[
    ["Brazil", "87", "73", "Upper middle"], ["India", "95", "89", "Lower middle"],
    ["Nigeria", "59", "59", "Lower middle"], ["Philippines", "67", "57", "Lower middle"],
    ["Germany", "97", "97", "High"]])


def on_income(value: str, op: str = "contains") -> dict:
    return {"filters": [{"column": "income_group", "op": op, "value": value}], "fn": "argmax", "column": "c2_2019",
            "answer_column": "country"}


@pytest.mark.parametrize("question, written, kept", [
    # found as a new user: "contains 'middle'" kept Brazil (Upper middle) in
    ("Which lower-middle-income country had the highest coverage in 2019?", "middle", "Lower middle"),
    ("Which Lower Middle income country had the highest coverage in 2019?", "iddle", "Lower middle"),
])
def test_a_contains_filter_is_narrowed_to_the_one_cell_the_question_writes_whole(question, written, kept):
    ran = run_sampled(on_income(written), TypedTable.build(INCOME), "question", question)
    f = ran.program.filters[0]
    assert (f.op, f.value) == ("=", kept) and ran.execution.result == "India"


@pytest.mark.parametrize("question, written", [
    ("Which middle-income country had the highest coverage in 2019?", "middle"),  # both middle groups meant
    ("Which country in a middle income group had the highest coverage in 2019?", "middle"),
    ("How many deaths were there in the outbreaks linked to onions?", "onions"),  # the text writes the part only
])
def test_a_contains_filter_the_question_writes_no_longer_cell_of_is_kept(question, written):
    table = OUTBREAKS if "onions" in question else INCOME
    program = ({"filters": [{"column": "source", "op": "contains", "value": written}], "fn": "sum",
                "column": "deaths", "answer_column": "outbreak"} if table is OUTBREAKS else on_income(written))
    ran = run_sampled(program, TypedTable.build(table), "question", question)
    assert (ran.program.filters[0].op, ran.program.filters[0].value) == ("contains", written)
