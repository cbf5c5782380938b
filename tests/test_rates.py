"""A rate the message names over a column of counts (found as a new user: "the highest completion rate" was
answered with the trial that completed the most participants)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._question_counts import population, read_rate
from tools._table_ops_model import Program
from tools._table_program import run_sampled

TRIALS = Table(name="trials", title="Trials", columns=["Trial", "Year", "Enrolled", "Completed",
                                                       "Serious adverse events", "Dropout %"], rows=[
    ["ALPHA-1", "2019", "1420", "1301", "88", "8.4%"],
    ["BETA-2", "2020", "2210", "2050", "97", "7.2%"],
    ["GAMMA-3", "2018", "640", "512", "41", "20.0%"],
    ["DELTA-4", "2021", "1875", "1790", "120", "4.5%"],
    ["EPS-5", "2017", "3050", "2480", "210", "18.7%"],
])


def typed() -> TypedTable:
    return TypedTable.build(TRIALS)


def argmax(column: str) -> dict:
    return {"fn": "argmax", "column": column, "answer_column": "trial", "filters": []}


def test_the_population_is_the_column_at_least_as_large_as_every_other():
    t = typed()
    assert population(t, 4) == 3  # Completed of Enrolled
    assert population(t, 5) == 3  # adverse events of Enrolled (not of Completed, which Enrolled bounds)
    assert population(t, 3) is None  # nothing bounds Enrolled


@pytest.mark.parametrize("question, column, answer", [
    ("Which trial had the highest completion rate?", "completed", "DELTA-4"),  # 1790/1875
    ("Which trial had the lowest serious adverse event rate?", "serious_adverse_events", "BETA-2"),  # 97/2210
    ("Which trial completed the most participants?", "completed", "EPS-5"),  # no rate: the count itself
])
def test_a_named_rate_divides_by_the_population(question, column, answer):
    raw = argmax(column) if "highest" in question or "most" in question else {**argmax(column), "fn": "argmin"}
    ran = run_sampled(raw, typed(), "question", question)
    assert ran.execution is not None and ran.execution.result == answer, ran.program


def test_a_column_that_is_already_a_rate_is_left_alone():
    p = Program.model_validate(argmax("dropout"))
    assert read_rate(p, typed(), "Which trial had the highest dropout rate?") == p


def test_a_claim_about_a_rate_is_checked_over_the_rate():
    raw = {**argmax("completed"), "check": {"op": "=", "against": "value", "value": "DELTA-4"}}
    ran = run_sampled(raw, typed(), "claim", "DELTA-4 had the highest completion rate.")
    assert ran.execution is not None and ran.execution.truth is True, ran.error


@pytest.mark.parametrize("message, column, per, answer", [
    # found as a new user: the most hospitalized is not the highest share hospitalized
    ("Which trial had the highest share of its enrolled patients completing?", "completed", "enrolled", "DELTA-4"),
    ("Which trial had the lowest proportion of enrolled participants with serious adverse events?",
     "serious_adverse_events", "enrolled", "BETA-2"),  # 97/2210
    ("Which trial completed the highest percentage of the enrolled?", "completed", "enrolled", "DELTA-4"),
    # the phrase names no column at least as large: as written
    ("Which trial had the highest share of completed in 2020?", "enrolled", None, "EPS-5"),
    ("Which trial had the most completions?", "completed", None, "EPS-5"),
])
def test_a_share_of_a_population_is_read_as_a_rate(message, column, per, answer):
    done = run_sampled(argmax(column) | ({"fn": "argmin"} if "lowest" in message else {}), typed(), "question",
                       message)
    assert done.program.options.divides_by == per and done.execution.result == answer


def test_one_named_row_s_rate_is_its_count_over_its_population():
    """Found as a new user over a trial's arms: "What was the event rate in the placebo arm?" answered 61, the
    events."""
    raw = {"filters": [{"column": "trial", "op": "=", "value": "GAMMA-3"}], "fn": "value", "column": "completed",
           "answer_column": "trial"}
    ran = run_sampled(raw, typed(), "question", "What was the completion rate of GAMMA-3?")
    assert ran.execution is not None and ran.execution.result_text == "512 / 640 = 0.8", ran.error
    # the count itself when no rate is asked, and a claim keeps its value check (it states the rate in its form)
    assert run_sampled(raw, typed(), "question", "How many completed GAMMA-3?").execution.result_text == "512"
    claim = {**raw, "check": {"op": "=", "against": "value", "value": "512"}}
    assert run_sampled(claim, typed(), "claim", "GAMMA-3's completion rate was 512.").program.options.derive is None


@pytest.mark.parametrize("fn", ["value", "avg", "sum"])
def test_one_named_row_s_rate_whatever_one_cell_reader_the_program_wrote(fn):
    """Found as a new user over a table of regions: "What was the death rate in the North?" was written as "rows
    where Region = 'North' -> avg of Deaths" and answered 3, the deaths; the rate is per the population, a small
    number shown in positional notation."""
    regions = Table(name="regions", title="Regions", columns=["Region", "Cases", "Deaths", "Population"], rows=[
        ["North", "124", "3", "1,204,000"], ["South", "<5", "0", "310,500"], ["East", "57", "—", "845,200"],
        ["West", "9", "1", "402,000"]])
    raw = {"filters": [{"column": "region", "op": "=", "value": "North"}], "fn": fn, "column": "deaths",
           "answer_column": "region"}
    ran = run_sampled(raw, TypedTable.build(regions), "question", "What was the death rate in the North?")
    assert ran.execution is not None and ran.execution.result_text == "3 / 1,204,000 = 0.000002492", ran.error


OUTBREAKS = Table(name="outbreaks", title="Outbreaks", columns=["Country", "Disease", "Cases", "Deaths",
                                                                "Population"], rows=[
    ["Chad", "Measles", "8342", "61", "17,700,000"], ["Nigeria", "Diphtheria", "14210", "596", "223,800,000"],
    ["Pakistan", "Measles", "12003", "38", "240,500,000"]])


@pytest.mark.parametrize("question, per, shown", [
    # found as a new user: answered 596, the deaths
    ("What was the case fatality rate of diphtheria in Nigeria?", "cases", "596 / 14210 = 0.04194"),
    ("What was the mortality rate in Nigeria?", "population", "596 / 223,800,000 = 0.000002663"),
    ("How many died in Nigeria?", None, "596"),
])
def test_a_rate_named_in_other_words_divides_what_it_counts(question, per, shown):
    raw = {"filters": [{"column": "country", "op": "=", "value": "Nigeria"}], "fn": "value", "column": "deaths",
           "answer_column": "country"}
    ran = run_sampled(raw, TypedTable.build(OUTBREAKS), "question", question)
    assert ran.program.options.divides_by == per and ran.execution.result_text == shown, ran.error
