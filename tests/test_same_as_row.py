"""'Which nation won the same number of gold medals as Hungary?' asks for the other rows holding Hungary's value
(issue 13): every sample the model writes for it selects Hungary's own row, or every other row."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._question_rules import read_same_as_row
from tools._table_ops_model import Program

MEDALS = Table(name="medals", title="Medal table", columns=["Nation", "Gold", "Silver", "Region"], rows=[
    ["Hungary", "3", "2", "Europe"],
    ["Bulgaria", "3", "5", "Europe"],
    ["Kenya", "1", "4", "Africa"],
    ["Perú", "2", "1", "Americas"],
    ["Japan", "2", "0", "Asia"],
    ["Chile", "0", "2", "Americas"],
    ["David Möller", "0", "6", "Oceania"],
    ["David Mair", "4", "7", "Oceania"],
])


def typed() -> TypedTable:
    return TypedTable.build(MEDALS)


def names(value: str, op: str = "=", fn: str = "value") -> dict:
    return {"filters": [{"column": "nation", "op": op, "value": value}], "fn": fn, "column": "nation",
            "answer_column": "nation"}


def voted(question: str, programs: list[dict]):
    from tools.program_replay import replay_runs

    return replay_runs(MEDALS, question, [{"raw": p} for p in programs])


@pytest.mark.parametrize("question, program, expected", [
    ("which nation won the same number of gold medals as hungary?", names("Hungary"), "Bulgaria"),
    ("Which nation won the same number of gold medals as Hungary?", names("Hungary", "!="), "Bulgaria"),
    ("which country won the same number of gold as peru?", names("Perú"), "Japan"),  # accents as text compares them
    ("who is in the same region as kenya?", names("Kenya"), None),  # nobody else: no program runs
    ("name a nation from the same region as chile.", names("Chile"), "Perú"),
    ("how many nations won the same number of silver medals as chile?", names("Chile", fn="count"), "1"),
    # the row before "same" when "as who?" asks for the others; its Gold read as written names the row instead
    ("hungary won the same number of gold as which other nation?", names("Hungary"), "Bulgaria"),
    # the largest over Hungary's row alone is Hungary: an extreme the question never asks for
    ("which nation had the same amount of gold as hungary?", {**names("Hungary"), "fn": "argmax", "column": "gold"},
     "Bulgaria"),
    # a count names no nation: the rows' names are read (found as a new user: "1" for "… as which other orchestra?")
    ("Hungary won the same number of gold medals as which other nation?", names("Hungary", fn="count"), "Bulgaria"),
    ("which nation won the same number of gold medals as hungary?", names("Hungary", fn="count"), "Bulgaria"),
    ("which nation won the same number of gold medals as hungary?",
     {**names("3", fn="count"), "filters": [{"column": "gold", "op": "=", "value": "3"}]}, "Bulgaria"),
    # the row after it, when the question places nothing in the table's order (found as a new user)
    ("Hungary won the same number of gold medals as which other nation?",
     {**names("Hungary"), "fn": "next_row", "column": "gold"}, "Bulgaria"),
    # a cell stated most fully names the row: "david moller" is Möller, not Mair
    ("how many athletes won the same gold as david moller?", names("David Möller", fn="count"), "1"),
    ("japan won the same number of gold medals as who?", {**names("Japan"), "column": "gold"}, "Perú"),
    ("which nation won the same number of gold medals as hungary?", {**names("Hungary"), "column": "gold"},
     "Bulgaria"),
    # Gold read as its own answer column: the row's name
    ("who won the same number of gold medals as hungary?", {**names("Hungary"), "column": "gold",
                                                          "answer_column": "gold"}, "Bulgaria"),
    ("which nation had the same amount of gold as hungary?", {**names("Hungary"), "fn": "argmax", "column": "silver",
                                                             "answer_column": "silver"}, "Bulgaria"),
])
def test_the_other_rows_holding_the_named_rows_value_answer(question, program, expected):
    outcome = voted(question, [program] * 3)
    assert outcome.winner == expected, (question, [r.program for r in outcome.runs])
    if expected is None:  # not Kenya itself: the step says no other row matches
        assert all(not r.ran and "no row matches" in r.error for r in outcome.runs)


def test_the_rewrite_excludes_the_named_row_and_adds_its_value_as_the_table_writes_it():
    read = read_same_as_row(Program.model_validate(names("Hungary")), typed(),
                            "which nation won the same number of gold medals as hungary?")
    assert [(f.column, f.op, f.value) for f in read.filters] == [("gold", "=", "3"), ("nation", "!=", "Hungary")]
    # a program that already fixes the shared column keeps it, and leaves the named row out by its label
    fixed = Program.model_validate({**names("3"), "filters": [{"column": "gold", "op": "=", "value": "3"}]})
    read = read_same_as_row(fixed, typed(), "which nation won the same number of gold medals as hungary?")
    assert [(f.column, f.op, f.value) for f in read.filters] == [("gold", "=", "3"), ("nation", "!=", "Hungary")]


@pytest.mark.parametrize("question, program", [
    # "the same as X" names no column
    ("is hungary's gold the same as bulgaria's?", names("Hungary")),
    # "as which other nation", and no row stated before "same" either
    ("one nation won the same number of gold as which other nation?", names("Hungary")),
    # two columns named between "same" and "as"
    ("which nation won the same gold and silver as hungary?", names("Hungary")),
    # a row the table does not hold
    ("which nation won the same number of gold medals as france?", names("France")),
    # the nearest value, not an equal one
    ("which nation won almost the same number of gold medals as hungary?", names("Hungary")),
    # the row after it, asked so
    ("which nation is listed after the one with the same number of gold medals as hungary?",
     {**names("Hungary"), "fn": "next_row"}),
    # the row after it in a question that asks for no row
    ("how many gold medals did the nation with the same silver as chile win?", {**names("Chile"), "fn": "next_row"}),
    # not "same"
    ("which nation won more gold medals than hungary?", names("Hungary")),
    # an extreme the question asks for
    ("which nation with the same number of gold medals as hungary won the most silver?",
     {**names("Hungary"), "fn": "argmax", "column": "silver"}),
    # an extreme over more than the named row
    ("which nation won the same number of gold medals as hungary?",
     {**names("Hungary"), "filters": [], "fn": "argmax", "column": "silver"}),
])
def test_left_as_written_when_the_form_does_not_settle_it(question, program):
    written = Program.model_validate(program)
    assert read_same_as_row(written, typed(), question) == written


@pytest.mark.parametrize("value, grounded", [("3", True), ("3.0", True), ("2", False)])
def test_the_shared_value_is_stated_by_the_question(value, grounded):
    """"Gold = 3" reads the question as much as "Nation = Hungary" does: Hungary's gold is 3."""
    from tools._grounding import grounding

    program = Program.model_validate({**names("x"), "filters": [{"column": "gold", "op": "=", "value": value}]})
    assert grounding(program, "which nation won the same number of gold medals as hungary?", typed())[0] is grounded


def test_the_named_rows_cell_is_cited_and_the_reason_says_whose_value_it_is():
    outcome = voted("which nation won the same number of gold medals as hungary?", [names("Hungary")] * 3)
    assert outcome.winner == "Bulgaria"
    assert (1, 2) in outcome.cells  # Hungary's Gold, 3
    assert (2, 1) in outcome.cells or (2, 2) in outcome.cells  # Bulgaria's row
    assert "Gold = 3, as for Hungary" in outcome.reason


def test_a_row_name_too_long_to_write_as_a_filter_value_leaves_the_program_as_written():
    """Cut short, "Nation != '<first 60 characters>'" would not leave the named row out: its own value would answer."""
    long_name = "The Most Serene Republic of Hungary and its Associated Territories Overseas"
    table = Table(name="medals", title="Medal table", columns=["Nation", "Gold"],
                  rows=[[long_name, "3"], ["Bulgaria", "3"], ["Kenya", "1"]])
    fixed = Program.model_validate({"filters": [{"column": "gold", "op": "=", "value": "3"}], "fn": "value",
                                    "column": "nation", "answer_column": "nation"})
    question = "which nation won the same number of gold medals as the most serene republic of hungary and its " \
               "associated territories overseas?"
    assert read_same_as_row(fixed, TypedTable.build(table), question) == fixed
    short = Table(name="medals", title="Medal table", columns=["Nation", "Gold"],
                  rows=[["Hungary", "3"], ["Bulgaria", "3"], ["Kenya", "1"]])
    read = read_same_as_row(fixed, TypedTable.build(short), "which nation won the same number of gold as hungary?")
    assert [(f.column, f.op, f.value) for f in read.filters] == [("gold", "=", "3"), ("nation", "!=", "Hungary")]
