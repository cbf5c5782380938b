"""A filter on a number the text bounds compares the way the words say (tools._values)."""

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._table_ops_model import Program
from tools._values import read_stated_bound, stated_bounds

HOSPITALS = Table(name="infections", title="", columns=["Hospital", "Region", "Beds"], rows=[
    ["St. Luke's", "North", "420"], ["Mercy General", "South", "610"], ["Harbor View", "North", "300"],
    ["Pine Ridge", "East", "150"], ["Lakeside Medical", "South", "380"], ["Northgate", "North", "510"]])
CLAIM = "Fewer than three hospitals have more than 400 beds."


def _count(op: str, value: str = "400") -> Program:
    return Program.model_validate({"filters": [{"column": "beds", "op": op, "value": value}], "fn": "count",
                                   "column": "hospital", "answer_column": "hospital",
                                   "check": {"op": "<", "against": "value", "value": "3"}})


@pytest.mark.parametrize("text, bounds", [
    (CLAIM, {3.0: "<", 400.0: ">"}),
    ("At least 1,200 patients and no more than 15 sites.", {1200.0: ">=", 15.0: "<="}),
    ("Not more than 40% were under 18.", {40.0: "<=", 18.0: "<"}),
    ("More than 400 beds here, fewer than 400 there.", {}),  # one number bounded both ways: no reading
    ("It has 400 beds.", {}),
    ("Average coverage over 2019 to 2022 was above 80%.", {80.0: ">"}),  # a span's start bounds nothing
    ("Patients aged under 18-65 were excluded.", {}),
])
def test_stated_bounds(text, bounds):
    assert stated_bounds(text) == bounds


def test_a_reversed_filter_compares_as_the_claim_says():
    """Seen as a new user: written 5 of 5 times as "rows where Beds < 400"."""
    typed = TypedTable.build(HOSPITALS)
    read = read_stated_bound(_count("<"), typed, CLAIM)
    assert read.filters[0].op == ">" and read.check == _count("<").check  # the count's own bound is the check's
    assert read_stated_bound(_count("<="), typed, CLAIM).filters[0].op == ">"


@pytest.mark.parametrize("program, text", [
    (_count("<", "500"), CLAIM),  # a number the claim does not bound
    (_count("<"), "Fewer than three hospitals have 400 beds or fewer."),  # no bound right before 400
    (Program.model_validate({"filters": [{"column": "region", "op": "<", "value": "400"}], "fn": "count",
                             "column": "hospital", "answer_column": "hospital"}), CLAIM),  # a text column
])
def test_other_filters_are_left_as_written(program, text):
    assert read_stated_bound(program, TypedTable.build(HOSPITALS), text) == program


def test_the_claim_is_refuted_for_its_own_reason():
    """With the filter as written, a table where three hospitals are under 400 beds would support the claim."""
    from tools._table_program import ProgramOutcome, decide, run_sampled

    five = HOSPITALS.model_copy(update={"rows": [r for r in HOSPITALS.rows if r[0] != "Pine Ridge"]})
    typed = TypedTable.build(five)  # three hospitals over 400 (so the claim is false), two under
    sampled = [run_sampled(_count("<").model_dump(), typed, "claim", CLAIM) for _ in range(5)]
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, sampled, typed, "claim", CLAIM)
    assert outcome.winner == "REFUTES" and outcome.votes == {"REFUTES": 5}, outcome.votes


def _value_check(op: str, value: str = "400", fn: str = "value") -> Program:
    return Program.model_validate({"filters": [{"column": "hospital", "op": "=", "value": "Northgate"}], "fn": fn,
                                   "column": "beds", "answer_column": "beds",
                                   "check": {"op": op, "against": "value", "value": value}})


@pytest.mark.parametrize("op, fn, read", [
    ("!=", "value", ">="),  # TabFact's tuning split: "... at least 1" checked "!= 1"
    ("<", "value", ">="),  # a reversed direction
    ("<=", "every", ">="),
    (">", "value", ">"),  # the same direction: as written
    ("=", "value", "="),  # no direction to reverse: as written
    ("!=", "count", "!="),  # a count's check: the bound may be a column's amount, not the count's
])
def test_a_check_on_a_bounded_number_compares_as_the_text_says(op, fn, read):
    text = "Northgate has at least 400 beds."
    assert read_stated_bound(_value_check(op, fn=fn), TypedTable.build(HOSPITALS), text).check.op == read
    # A number the text does not bound is left as written.
    assert read_stated_bound(_value_check(op, "500", fn), TypedTable.build(HOSPITALS), text).check.op == op


def test_a_filter_as_strict_as_the_words():
    """Found as a new user: "More than half of the wards have over 40 nurses" was filtered "Nurses >= 40"."""
    typed = TypedTable.build(HOSPITALS)
    assert read_stated_bound(_count(">="), typed, CLAIM).filters[0].op == ">"
    assert read_stated_bound(_count(">"), typed, "At least two hospitals have at least 400 beds.").filters[0].op == ">="
    assert read_stated_bound(_count(">"), typed, CLAIM) == _count(">")
