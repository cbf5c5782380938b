"""'How many teams had more points than Sílex?' counts the rows beyond Sílex's value (issue 13): every sample the
model writes for it counts Sílex's own row, or every other row."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_compare import read_count_than_row
from tools._table_ops_model import Program
from tools._table_program import run_sampled

SCHOOLS = Table(name="schools", title="Schools", columns=["Name", "Town", "Intake", "Rank"], rows=[
    ["St Mary's", "Ayr", "1,200", "3"],
    ["Sacred Heart", "Troon", "950", "1"],
    ["Hillside", "Ayr", "1,010", "2"],
    ["Kirkview", "Irvine", "640", "5"],
    ["Riverbank", "Troon", "980", "4"],
    ["Sílex", "Irvine", "1,100", "6"],
])


def typed() -> TypedTable:
    return TypedTable.build(SCHOOLS)


def counts(value: str, op: str = "=") -> dict:
    return {"filters": [{"column": "name", "op": op, "value": value}], "fn": "count", "column": "name"}


@pytest.mark.parametrize("question, expected", [
    ("how many schools have a larger intake than sacred heart?", 4),  # 1,200, 1,010, 980, 1,100
    ("How many schools had more intake than Hillside?", 2),
    ("how many schools have an intake greater than Riverbank?", 3),
    ("How many schools had a smaller intake than Sacred Heart?", 1),  # 640
    ("how many schools had fewer pupils in their intake than St Mary's?", 5),
    ("how many schools had a larger intake than silex?", 1),  # the question drops the accent
])
def test_counts_the_rows_beyond_the_named_rows_value(question, expected):
    for op in ("=", "!="):
        named = question.split("than ")[1].rstrip("?").replace("silex", "Sílex")
        sampled = run_sampled(counts(named, op), typed(),
                              "question", question)
        assert sampled.error == ""
        assert sampled.execution.result == expected, (question, op, sampled.program)


def test_the_filter_compares_with_the_named_rows_value_and_keeps_other_filters():
    program = Program.model_validate({"filters": [{"column": "name", "op": "=", "value": "Sacred Heart"},
                                                  {"column": "town", "op": "=", "value": "Ayr"}],
                                      "fn": "count", "column": "name"})
    read = read_count_than_row(program, typed(), "how many schools in Ayr have a larger intake than Sacred Heart?")
    assert [(f.column, f.op, f.value) for f in read.filters] == [("intake", ">", "950"), ("town", "=", "Ayr")]
    # the bound as the cell writes it: "1,200", not "1200"
    read = read_count_than_row(program.model_copy(update={"filters": [program.filters[0].model_copy(
        update={"value": "St Mary's"})]}), typed(), "how many schools have a smaller intake than St Mary's?")
    assert [(f.column, f.op, f.value) for f in read.filters] == [("intake", "<", "1,200")]


@pytest.mark.parametrize("question, program", [
    # a number after "than" is a bound the program writes itself
    ("how many schools have an intake of more than 1000?", counts("1000")),
    # negated: the rest, ties included
    ("how many schools do not have a larger intake than Riverbank?", counts("Riverbank")),
    # "how many more" asks for a difference
    ("how many more pupils did St Mary's take in than Sacred Heart?", counts("Sacred Heart")),
    # a rank's "higher" is the smaller number: left as written
    ("how many schools have a higher rank than Kirkview?", counts("Kirkview")),
    # the compared column is not named
    ("how many schools are bigger than Kirkview?", counts("Kirkview")),
    # no filter names the row after "than"
    ("how many schools have a larger intake than Sacred Heart?", counts("Hillside")),
    # not a count
    ("how many schools have a larger intake than Sacred Heart?",
     {**counts("Sacred Heart"), "fn": "sum", "column": "intake"}),
])
def test_left_as_written_when_the_form_does_not_settle_it(question, program):
    written = Program.model_validate(program)
    assert read_count_than_row(written, typed(), question) == written


@pytest.mark.parametrize("question, value, grounded", [
    ("how many schools have a larger intake than sacred heart?", "950", True),  # Sacred Heart's intake
    ("how many schools have a larger intake than silex?", "1,100", True),  # accents as text compares them
    ("how many schools have a larger intake than sacred heart?", "900", False),  # a bound nobody stated
    ("how many schools in Troon have a larger intake than Riverbank?", "980", True),
    ("how many schools have a larger intake than the schools in Ayr?", "1200", False),  # two rows: no one bound
    ("how many schools have an intake of more than 950?", "951", False),
])
def test_a_bound_that_is_the_named_rows_value_is_stated_by_the_question(question, value, grounded):
    from tools._grounding import grounding

    program = Program.model_validate({"filters": [{"column": "intake", "op": ">", "value": value}],
                                      "fn": "count", "column": "name"})
    assert grounding(program, question, typed())[0] is grounded


def test_counts_of_the_compared_row_do_not_vote_against_a_comparison_with_its_value():
    """"Touchdowns" names no column ("TD's"), so the counts of Anthony Hines's row cannot be rewritten; one sample
    compared TD's with his 12 and answered 3 (WTQ training, nt-502): it alone votes."""
    from tools.program_replay import replay_runs

    players = Table(name="players", title="Scoring", columns=["Player", "TD's", "Yards"], rows=[
        ["Ray Ortiz", "15", "900"], ["Anthony Hines", "12", "822"], ["Lee Moss", "14", "700"],
        ["Dan Price", "13", "650"], ["Sam Hale", "4", "300"]])
    question = "how many players scored a greater number of touchdowns than anthony hines?"
    own = {"filters": [{"column": "player", "op": "=", "value": "Anthony Hines"}], "fn": "count", "column": "player"}
    beyond = {"filters": [{"column": "td_s", "op": ">", "value": "12"}], "fn": "count", "column": "player"}
    outcome = replay_runs(players, question, [{"raw": p} for p in (own, own, own, beyond, own)])
    assert outcome.winner == "3"
    assert sum("the row the question compares with" in r.error for r in outcome.runs) == 4
    # without a program comparing with his value, the counts stand (nothing better to vote)
    assert replay_runs(players, question, [{"raw": own}] * 3).winner == "1"


def test_the_named_rows_value_is_cited_and_the_reason_says_whose_it_is():
    """Found as a new user: "How many hospitals have more beds than Riverside General?" answered 2 citing the two
    hospitals' beds, but not Riverside General's 310 that the count compared with."""
    from tools.program_replay import replay_runs

    question = "how many schools have a larger intake than sacred heart?"
    outcome = replay_runs(SCHOOLS, question, [{"raw": counts("Sacred Heart")}] * 3)
    assert outcome.winner == "4"
    assert (2, 3) in outcome.cells  # Sacred Heart's Intake, 950
    assert "Intake > 950, Sacred Heart's Intake" in outcome.reason
    plain = replay_runs(SCHOOLS, "how many schools have an intake of more than 950?",
                        [{"raw": {**counts("950"), "filters": [{"column": "intake", "op": ">", "value": "950"}]}}] * 3)
    assert plain.winner == "4" and (2, 3) not in plain.cells and "Sacred Heart's" not in plain.reason


@pytest.mark.parametrize("row, said", [("Sacred Heart", "Sacred Heart's Intake"), ("St Mary's", "St Mary's Intake"),
                                       ("Hillside", "Hillside's Intake")])
def test_the_reason_names_the_rows_value_in_plain_english(row, said):
    """Found as a new user: "Saint Anne's's Nurses"."""
    from tools.program_replay import replay_runs

    question = f"how many schools have a larger intake than {row}?"
    outcome = replay_runs(SCHOOLS, question, [{"raw": counts(row)}] * 3)
    assert f", {said}" in outcome.reason and "'s's" not in outcome.reason
