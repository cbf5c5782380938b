"""How long a row lasted, over a start and an end column of dates (tools._question_dates; found as a new user with a
TSV of vaccination campaigns: "Which campaign lasted the longest?" answered the one that ended last)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._question_dates import date_span, stated_days
from tools._table_program import run_sampled

CAMPAIGNS = Table(name="campaigns", title="Campaigns", columns=["Campaign", "Country", "Start", "End", "Doses given"],
                  rows=[["Measles catch-up", "Malawi", "2024-03-04", "2024-03-22", "1,250,000"],
                        ["Polio round 1", "Nigeria", "2024-01-15", "2024-01-19", "8,900,000"],
                        ["HPV school", "Kenya", "2023-10-02", "2023-12-15", "610,000"],
                        ["Cholera OCV", "Mozambique", "2024-02-10", "2024-02-16", "720,000"]])


def typed() -> TypedTable:
    return TypedTable.build(CAMPAIGNS)


def test_the_span_is_the_start_and_the_end_column():
    assert date_span(typed()) == ("start", "end")
    one = Table(name="t", title="t", columns=["Campaign", "Start", "Doses"], rows=[["A", "2024-01-01", "3"]])
    assert date_span(TypedTable.build(one)) is None


@pytest.mark.parametrize("question, fn, answer", [
    ("Which campaign lasted the longest?", "argmax", "HPV school (2023-12-15 − 2023-10-02 = 74 days)"),
    ("Which campaign was the shortest?", "argmax", "Polio round 1 (2024-01-19 − 2024-01-15 = 4 days)"),
])
def test_the_longest_is_the_largest_end_minus_start_not_the_latest_end(question, fn, answer):
    raw = {"filters": [], "fn": fn, "column": "end", "answer_column": "campaign"}
    ran = run_sampled(raw, typed(), "question", question)
    assert ran.execution is not None and ran.execution.result_text == answer, ran.error


def test_how_long_one_row_lasted_in_days_with_the_row_named_by_a_word():
    # the model's "difference between two rows" with no row filter: the row "cholera" names, end minus start
    raw = {"filters": [], "fn": "difference", "column": "doses_given", "answer_column": "campaign"}
    ran = run_sampled(raw, typed(), "question", "How long did the cholera campaign run?")
    assert ran.execution is not None and ran.execution.result == "6 days", ran.error
    assert ran.execution.result_text == "2024-02-16 − 2024-02-10 = 6 days"
    # without a duration word the program is left as written
    raw_end = {"filters": [{"column": "campaign", "op": "=", "value": "Cholera OCV"}], "fn": "value",
               "column": "end", "answer_column": "campaign"}
    assert run_sampled(raw_end, typed(), "question", "When did the cholera campaign end?").execution.result \
        == "2024-02-16"


@pytest.mark.parametrize("claim, truth", [
    ("The polio round lasted less than a week.", True),
    ("The cholera campaign lasted more than two weeks.", False),
    ("The HPV campaign lasted longer than 60 days.", True),
])
def test_a_claimed_span_is_checked_in_days(claim, truth):
    # the model compared with a date; the claim states a span
    row = {"polio": "Polio round 1", "cholera": "Cholera OCV", "HPV": "HPV school"}
    name = next(v for k, v in row.items() if k in claim)
    raw = {"filters": [{"column": "campaign", "op": "=", "value": name}], "fn": "value", "column": "end",
           "answer_column": "campaign", "check": {"op": "=", "against": "value", "value": "2024-02-16"}}
    ran = run_sampled(raw, typed(), "claim", claim)
    assert ran.execution is not None and ran.execution.truth is truth, ran.error


@pytest.mark.parametrize("text, stated", [
    ("lasted less than a week", ("<", 7.0)), ("ran for 74 days", ("=", 74.0)), ("at least three weeks", (">=", 21.0)),
    ("more than two months", (">", 60.875)), ("lasted 18 months", None), ("cost 5 dollars", None)])
def test_stated_days(text, stated):
    assert stated_days(text) == stated
