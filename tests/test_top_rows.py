"""The top few rows (tools._question_rules; found as a new user: "Which three trials had the most participants?" was
answered with one trial)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._question_rules import top_asked
from tools._table_program import run_sampled

TRIALS = Table(name="trials", title="Trials", columns=["trial", "drug", "participants", "responders"], rows=[
    ["ALPHA", "Drug A", "1200", "540"], ["BRAVO", "Drug B", "450", "270"], ["CHARLIE", "Drug A", "800", "296"],
    ["DELTA", "Drug C", "300", "87"], ["ECHO", "Drug B", "950", "513"]])


@pytest.mark.parametrize("question, asked", [
    ("Which three trials had the most participants?", (3, True)),
    ("What are the top 2 trials by responders?", (2, True)),
    ("Which two trials had the fewest participants?", (2, False)),
    ("Which trial had the most participants?", None),
    ("Which trials had more than 2 drugs?", None),
    # a chart position, not rows (WikiTableQuestions' training split: a first version lost this one)
    ("which album was the first to peak in the top ten positions?", None),
])
def test_top_asked(question, asked):
    assert top_asked(question) == asked


@pytest.mark.parametrize("raw", [
    {"filters": [], "fn": "argmax", "column": "participants", "answer_column": "trial"},
    # the model's guess at the cut-off, a value the question does not state, is replaced by the computed one
    {"filters": [{"column": "participants", "op": "=", "value": "1200"}], "fn": "argmax", "column": "participants",
     "answer_column": "trial"},
    {"filters": [{"column": "participants", "op": ">", "value": "400"}], "fn": "most_common", "column": "trial",
     "answer_column": "trial"},
    # "the participants that occurs in most rows": "most" misread as the most frequent value
    {"filters": [], "fn": "most_common", "column": "participants", "answer_column": "trial"},
])
def test_the_three_largest_rows_whatever_extreme_the_model_wrote(raw):
    ran = run_sampled(raw, TypedTable.build(TRIALS), "question", "Which three trials had the most participants?")
    assert ran.execution is not None and ran.execution.result == ["ALPHA", "CHARLIE", "ECHO"], ran.error


def test_the_smallest_within_the_model_s_other_filters():
    raw = {"filters": [{"column": "drug", "op": "=", "value": "Drug A"}], "fn": "argmin", "column": "responders",
           "answer_column": "trial"}
    ran = run_sampled(raw, TypedTable.build(TRIALS), "question", "Which two trials had the fewest responders?")
    # Drug A has two trials only: both are its two with the fewest
    assert ran.execution is not None and ran.execution.result == ["ALPHA", "CHARLIE"]
