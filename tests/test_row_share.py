""""What percentage of wards passed the audit?" is the share of the rows that meet the condition
(tools/_question_counts.py); found as a new user, 6 of 10 programs averaged the passing wards' antibiotic use (74.4)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._table_program import run_sampled
from tools._table_shape import describe

WARDS = TypedTable.build(Table(name="abx", title="", columns=["Ward", "Beds", "DDD Q1", "Audit passed"], rows=[
    ["Cardiology", "32", "61.2", "Yes"], ["Oncology", "28", "94.7", "No"], ["ICU", "16", "142.5", "Yes"],
    ["Paediatrics", "24", "38.9", "Yes"], ["Surgery", "40", "77.0", "No"], ["Geriatrics", "36", "55.1", "Yes"],
    ["Total", "176", "", ""]]))
PASSED = [{"column": "audit_passed", "op": "=", "value": "Yes"}]


@pytest.mark.parametrize("question", [
    "What percentage of wards passed the audit?",
    "What proportion of the wards passed the audit?",
    "what share of all rows passed the audit?",
])
def test_the_share_of_the_rows_the_condition_keeps(question):
    raw = {"filters": PASSED, "fn": "avg", "column": "ddd_q1", "answer_column": "ward"}
    ran = run_sampled(raw, WARDS, "question", question)
    # 4 of the 6 wards: the totals row is not a ward
    assert ran.execution is not None and ran.execution.result_text == "66.7% (4 of 6 rows)", ran.error
    assert describe(ran.program, WARDS).startswith("rows where Audit passed = 'Yes' → the share of the table's rows")


@pytest.mark.parametrize("question, raw", [
    # a share of a column's total is read_share_of_all's: the beds of the passing wards over all beds
    ("What percentage of beds are in wards that passed the audit?",
     {"filters": PASSED, "fn": "sum", "column": "beds", "answer_column": "ward"}),
    # no condition: nothing to take a share of
    ("What percentage of wards are listed?", {"filters": [], "fn": "count", "column": "ward"}),
    # one named row is no share of the rows
    ("What percentage of wards is the ICU?", {"filters": [{"column": "ward", "op": "=", "value": "ICU"}],
                                               "fn": "value", "column": "beds"}),
])
def test_other_questions_are_not_a_share_of_the_rows(question, raw):
    ran = run_sampled(raw, WARDS, "question", question)
    assert not (ran.program.fn == "share" and ran.program.column == "ward")


def test_a_condition_code_reads_from_a_yes_no_column_counts_too():
    # no filter written: the Audit passed column's "Yes" is read from "passed the audit" (tools._table_shape)
    ran = run_sampled({"filters": [], "fn": "count", "column": "ward"}, WARDS, "question",
                      "What percentage of wards passed the audit?")
    assert ran.execution is not None and ran.execution.result_text == "66.7% (4 of 6 rows)", ran.error
