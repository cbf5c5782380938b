"""A row's value against its own row's range (tools._settle_rules): found as a new user over a TSV of lab results,
where "Glucose is within its reference range" (92 in 70–99) was refuted by the model's judgement and "Which results
are above their reference range?" listed every result."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.test_table_program import llm_for, scripted
from tools._cells import TypedTable
from tools._settle_rules import range_check, read_range_question
from tools._table_ops import execute
from tools._table_ops_model import Program
from tools._table_program import solve
from tools._table_shape import describe, shape_for_programs
from tools.verify_claim import check_claim

LABS = Table(name="labs", title="", columns=["Test", "Result", "Unit", "Reference range"], rows=[
    ["Sodium", "138", "mmol/L", "135–145"], ["Potassium", "5.6", "mmol/L", "3.5–5.0"],
    ["Creatinine", "1.4", "mg/dL", "0.6–1.2"], ["Glucose", "92", "mg/dL", "70–99"],
    ["Hemoglobin", "11.2", "g/dL", "12.0–15.5"]])


@pytest.mark.parametrize("claim, verdict, row", [
    ("Glucose is within its reference range.", "SUPPORTS", 4),
    ("Potassium is above the upper limit of its reference range.", "SUPPORTS", 2),
    ("Creatinine is not within the reference range", "SUPPORTS", 3),
    ("Hemoglobin is below its reference range", "SUPPORTS", 5),
    ("Hemoglobin isn't in the normal range", "SUPPORTS", 5),
    ("Sodium is outside its normal range.", "REFUTES", 1),
    ("Potassium is below the upper limit of its reference range.", "REFUTES", 2),
    ("Glucose is above its reference range.", "REFUTES", 4),
])
def test_a_claim_places_the_rows_value_against_its_own_range(claim, verdict, row):
    check = range_check(claim, LABS)
    assert check is not None and check.verdict == verdict, check
    assert check.cells == [(row, 1), (row, 2), (row, 4)]  # the test, its result and its range
    assert LABS.rows[row - 1][3] in check.reason and LABS.rows[row - 1][1] in check.reason


@pytest.mark.parametrize("claim", [
    "Glucose was high.",  # no range named
    "Results are within their reference ranges.",  # no one row
])
def test_other_claims_are_left_to_the_programs(claim):
    assert range_check(claim, LABS) is None


@pytest.mark.parametrize("question, fn, result", [
    ("Which results are above their reference range?", "value", ["Potassium", "Creatinine"]),
    ("Which tests are below the reference range?", "value", "Hemoglobin"),
    ("How many results are within their reference range?", "count", 2),
])
def test_a_question_filters_on_each_rows_own_bounds(question, fn, result):
    typed = TypedTable.build(shape_for_programs(LABS).table)
    read = read_range_question(Program(filters=[], fn="value", column="result"), typed, question)
    assert read.fn == fn and all(f.than_column for f in read.filters)
    assert execute(read, typed).result == result


@pytest.mark.parametrize("question, result", [
    ("Which results are outside their reference range?", ["Potassium", "Creatinine", "Hemoglobin"]),
    ("Which results are not within their reference range?", ["Potassium", "Creatinine", "Hemoglobin"]),
    ("How many results are outside the reference range?", 3),
    ("Which results are not outside their reference range?", ["Sodium", "Glucose"]),
    ("Which results are not above the upper limit of their reference range?", ["Sodium", "Glucose", "Hemoglobin"]),
    ("Which tests are not below their reference range?", ["Sodium", "Potassium", "Creatinine", "Glucose"]),
    ("Is hemoglobin outside its reference range?", 1),  # a yes: the question's row meets it
    ("Is glucose outside its reference range?", 0),
])
def test_outside_and_negated_questions_filter_on_each_rows_own_bounds(question, result):
    """Found as a new user: "Which results are outside their reference range?" is the question a lab table is for,
    and it was left to the programs (a filter that all must hold cannot say "below one bound or above the other")."""
    typed = TypedTable.build(shape_for_programs(LABS).table)
    read = read_range_question(Program(filters=[], fn="value", column="result"), typed, question)
    assert execute(read, typed).result == result


def test_an_outside_filter_cites_both_bounds_and_says_either():
    typed = TypedTable.build(shape_for_programs(LABS).table)
    read = read_range_question(Program(filters=[], fn="value", column="result"), typed,
                               "Which results are outside their reference range?")
    ex = execute(read, typed)
    assert " or " in ex.steps[0] and ex.steps[0].endswith("3 of 5 rows"), ex.steps
    assert " or " in describe(read, typed)
    cited_cols = {c for _, c in ex.cells}
    assert len(cited_cols) >= 3  # the name, the result and the bounds it was compared with


async def test_the_claim_check_decides_without_the_model(tmp_settings, fake_llm_server):
    def no_model(req):
        raise AssertionError("the model was asked")

    with fake_llm_server(no_model) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), LABS, "Glucose is within its reference range.")
    assert check.label == "SUPPORTS" and check.decided_by == "rule:value-in-range" and not srv.requests


async def test_the_question_lists_the_rows_above_their_range(tmp_settings, fake_llm_server):
    every_result = {"filters": [{"column": "result", "op": ">", "value": "0"}], "fn": "value", "column": "result",
                    "answer_column": "test"}
    with fake_llm_server(scripted(["test", "result"], [every_result] * 5)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), LABS, "question",
                              "Which results are above their reference range?")
    assert outcome.winner == "Potassium, Creatinine", outcome.votes


@pytest.mark.parametrize("question, answer", [
    ("Is potassium within its reference range?", 0),  # 5.6 in 3.5–5.0: no
    ("Is glucose within its reference range?", 1),
    ("Is hemoglobin below the reference range?", 1),
    ("Is sodium above its reference range?", 0),
])
def test_a_yes_no_question_checks_the_named_row_against_its_bounds(question, answer):
    """Found as a new user: "Is potassium within its reference range?" was answered yes by 5 of 5 programs, which
    counted Potassium's row."""
    typed = TypedTable.build(shape_for_programs(LABS).table)
    counted = Program(filters=[], fn="count", column="test")
    read = read_range_question(counted, typed, question)
    assert read.fn == "count" and read.filters[0].column == "test"
    assert execute(read, typed).result == answer


@pytest.mark.parametrize("claim, start, end", [
    ("Is potassium within its reference range?", "**No** by table labs", "so the answer is no. [T1:R2C1]"),
    ("Is glucose within its reference range?", "**Yes** by table labs", "so the answer is yes. [T1:R4C1]"),
    ("Potassium is within its reference range.", "**Refuted** by table labs", "so the table refutes the claim. [T1"),
])
def test_a_yes_no_question_checked_as_a_claim_is_answered_yes_or_no(claim, start, end):
    """Found as a new user through `evidentia ask`: "Is potassium within its reference range?" came back "**Refuted**
    by table labs: … so the table refutes the claim"."""
    from tools.verify_claim import Output

    ruled = range_check(claim, LABS)
    cells = [f"T1:R{r}C{c}" for r, c in ruled.cells]
    reply = Output(verdict=ruled.verdict, claim=claim, table="labs", table_id="T1", cells=cells, reason=ruled.reason,
                   explanations={}, decided_by="rule:value-in-range").reply()
    assert reply.startswith(start) and end in reply, reply


async def test_a_question_its_form_settles_is_answered_without_the_model(tmp_settings, fake_llm_server):
    """Found as a new user: "Which results are outside their reference range?" waited 80-100 s for five sampled
    programs that the rules all rewrote into the same one."""
    def no_model(req):
        raise AssertionError("the model was asked")

    with fake_llm_server(no_model) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), LABS, "question",
                              "Which results are outside their reference range?")
    assert not srv.requests and outcome.by_form
    assert outcome.winner == "Potassium, Creatinine, Hemoglobin" and outcome.confidence == 1.0
    assert "no model call" in outcome.vote_text()


async def test_a_question_its_form_does_not_settle_is_sampled(tmp_settings, fake_llm_server):
    above = {"filters": [{"column": "result", "op": ">", "value": "100"}], "fn": "value", "column": "test",
             "answer_column": "test"}
    with fake_llm_server(scripted(["test", "result"], [above] * 5)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), LABS, "question", "Which results are above 100?")
    assert srv.requests and not outcome.by_form and outcome.winner == "Sodium"
