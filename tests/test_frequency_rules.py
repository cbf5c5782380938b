""""Most frequent" over a table with one row per thing and a count per arm (tools._question_counts), and filter
values grounded by their own words, not by their column's header (tools._grounding).

Found as a new user over an adverse-event table: "Which adverse event was most frequent on placebo?" was answered
"Any serious adverse event" (Headache has the most cases on placebo)."""

from __future__ import annotations

from kb.tables import Table
from tests.test_table_program import llm_for, scripted
from tools._cells import TypedTable
from tools._grounding import grounding
from tools._question_counts import read_frequency_of_measure
from tools._table_ops import execute
from tools._table_ops_model import Program
from tools._table_program import solve

EVENTS = Table(name="ae", title="", columns=["Adverse event", "Placebo (n=412)", "Drug 10 mg (n=409)",
                                             "Drug 20 mg (n=415)"], rows=[
    ["Headache", "31 (7.5%)", "45 (11.0%)", "58 (14.0%)"],
    ["Nausea", "12 (2.9%)", "27 (6.6%)", "41 (9.9%)"],
    ["Dizziness", "9 (2.2%)", "14 (3.4%)", "22 (5.3%)"],
    ["Fatigue", "20 (4.9%)", "19 (4.6%)", "25 (6.0%)"],
    ["Insomnia", "6 (1.5%)", "11 (2.7%)", "9 (2.2%)"],
    ["Any serious adverse event", "8 (1.9%)", "10 (2.4%)", "13 (3.1%)"],
])
QUESTION = "Which adverse event was most frequent on placebo?"


def typed() -> TypedTable:
    return TypedTable.build(EVENTS)


def ident(name: str) -> str:
    return next(c.ident for c in typed().columns if c.name == name)


def most_common(*filters) -> Program:
    return Program.model_validate({"filters": list(filters), "fn": "most_common", "column": ident("Adverse event"),
                                   "answer_column": ident("Adverse event")})


def test_most_frequent_over_rows_that_each_name_one_thing_is_the_largest_count_named():
    read = read_frequency_of_measure(most_common(), typed(), QUESTION)
    assert (read.fn, read.column, read.answer_column) == ("argmax", ident("Placebo (n=412)"), ident("Adverse event"))
    assert execute(read, typed()).result == "Headache"
    assert execute(read_frequency_of_measure(most_common(), typed(), "Which adverse event was most common on "
                                             "20 mg?"), typed()).result == "Headache"
    # No number column named, or two: the program stays as written (no column to read the frequency from).
    assert read_frequency_of_measure(most_common(), typed(), "Which adverse event was most frequent?").fn \
        == "most_common"
    assert read_frequency_of_measure(most_common(), typed(), "Which adverse event was most frequent on placebo "
                                     "and on 20 mg?").fn == "most_common"
    # Names that repeat (a race won by the same driver twice): the most common name is the answer.
    races = TypedTable.build(Table(name="races", title="", columns=["Driver", "Laps"], rows=[
        ["Jim Clark", "70"], ["Graham Hill", "72"], ["Jim Clark", "68"]]))
    repeated = Program.model_validate({"filters": [], "fn": "most_common", "column": "driver",
                                       "answer_column": "driver"})
    assert read_frequency_of_measure(repeated, races, "Which driver appears most often by laps?") == repeated
    # No frequency asked: as written.
    assert read_frequency_of_measure(most_common(), typed(), "Which adverse event had the most placebo cases?").fn \
        == "most_common"


def test_a_value_is_not_grounded_by_the_words_of_its_own_column_header():
    named_row = {"column": ident("Adverse event"), "op": "=", "value": "Any serious adverse event"}
    program = most_common(named_row)
    assert grounding(program, QUESTION, typed())[:2] == (False, 0)
    # Its own words do ground it, and without the table the old reading stands.
    assert grounding(program, "Was any serious adverse event the most frequent on placebo?", typed())[:2] == (True, 1)
    assert grounding(program, QUESTION)[:2] == (True, 1)
    # A value made only of the header's words is read as before.
    table = TypedTable.build(Table(name="t", title="", columns=["Event", "Count"], rows=[["Event", "3"],
                                                                                            ["Other", "4"]]))
    only_header = Program.model_validate({"filters": [{"column": "event", "op": "=", "value": "Event"}],
                                          "fn": "value", "column": "count", "answer_column": "event"})
    assert grounding(only_header, "How many were counted for the event?", table)[:2] == (True, 1)


async def test_the_five_programs_seen_answer_headache(tmp_settings, fake_llm_server):
    placebo, event = ident("Placebo (n=412)"), ident("Adverse event")
    above = [{"column": placebo, "op": ">", "value": "30"}]
    positive = [{"column": placebo, "op": ">", "value": "0"}]
    seen = [
        {"filters": above, "fn": "most_common", "column": event, "answer_column": event},
        {"filters": positive, "fn": "argmax", "column": placebo, "answer_column": event},
        {"filters": positive, "fn": "most_common", "column": event, "answer_column": event},
        {"filters": [{"column": event, "op": "=", "value": "Any serious adverse event"}], "fn": "most_common",
         "column": event, "answer_column": event},
        {"filters": [], "fn": "most_common", "column": event, "answer_column": event},
    ]
    with fake_llm_server(scripted([event, placebo], seen)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), EVENTS, "question", QUESTION)
    assert outcome.winner == "Headache", (outcome.votes, [(r.program, r.verdict, r.error) for r in outcome.runs])
    # "Placebo > 0" keeps every row and votes; "> 30" and the row named by its own header words do not
    assert outcome.votes == {"Headache": 3}, outcome.votes
    assert (1, 1) in outcome.cells


def test_a_filter_every_row_meets_costs_no_vote():
    """Four of five programs wrote "Placebo > 0" (every row has cases): they answer as the one without a filter, so
    they vote with it (confidence 1.0, not 0.2)."""
    placebo, event = ident("Placebo (n=412)"), ident("Adverse event")
    largest = {"fn": "argmax", "column": placebo, "answer_column": event}
    every_row = Program.model_validate({**largest, "filters": [{"column": placebo, "op": ">", "value": "0"}]})
    some_rows = Program.model_validate({**largest, "filters": [{"column": placebo, "op": ">", "value": "10"}]})
    assert grounding(every_row, QUESTION, typed())[:2] == (True, 0)  # as no filter: it reads nothing stated
    assert grounding(some_rows, QUESTION, typed())[:2] == (False, 0)  # it drops rows the question never dropped
    # within a follow-up's scope, "every row" is every row in scope
    scoped = TypedTable.build(EVENTS, scope=(1, 2))
    assert grounding(some_rows, QUESTION, scoped)[:2] == (True, 0)
