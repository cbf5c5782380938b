"""An "every" check whose own filter makes it true is run over the rows the claim's other filters keep."""

import itertools

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_compare import implies, read_self_filtered_every
from tools._table_ops import execute
from tools._table_ops_model import Check, Program, RowFilter

STATINS = Table(name="statins", title="", columns=["Drug", "Class", "LDL reduction (%)"], rows=[
    ["Atorvastatin", "Synthetic", "50"], ["Rosuvastatin", "Synthetic", "55"],
    ["Simvastatin", "Fungal-derived", "41"], ["Pravastatin", "Fungal-derived", "34"],
    ["Pitavastatin", "Synthetic", "43"], ["Lovastatin", "Fungal-derived", "40"]])
CLAIM = "Is it true that all synthetic statins lower LDL by more than 45%?"
SYNTHETIC = {"column": "class", "op": "=", "value": "Synthetic"}
ABOVE_45 = {"column": "ldl_reduction", "op": ">", "value": "45"}


def _every(filters: list[dict], op: str = ">=", value: str = "45") -> Program:
    return Program.model_validate({"filters": filters, "fn": "every", "column": "ldl_reduction",
                                   "answer_column": "drug", "check": {"op": op, "against": "value", "value": value}})


OPS = ["=", "!=", "<", "<=", ">", ">="]


@pytest.mark.parametrize("rule_op, check_op", list(itertools.product(OPS, OPS)))
def test_implies_agrees_with_brute_force(rule_op, check_op):
    """Against every x on a fine grid around the two bounds: "implies" is true exactly when no x passes the
    filter and fails the check."""
    grid = [x / 4 for x in range(0, 81)]  # 0 .. 20 in quarters
    compare = {"=": lambda x, y: x == y, "!=": lambda x, y: x != y, "<": lambda x, y: x < y,
               "<=": lambda x, y: x <= y, ">": lambda x, y: x > y, ">=": lambda x, y: x >= y}
    for a, v in itertools.product([5, 10, 15], [5, 10, 15]):
        rule = RowFilter(column="c", op=rule_op, value=str(a))
        check = Check(op=check_op, against="value", value=str(v))
        brute = all(compare[check_op](x, v) for x in grid if compare[rule_op](x, a))
        assert implies(rule, check) is brute, (rule_op, a, check_op, v)


def test_a_text_value_implies_nothing():
    assert not implies(RowFilter(column="c", op="=", value="Synthetic"),
                       Check(op="=", against="value", value="Synthetic"))


def test_the_statin_tautology_is_run_over_the_synthetic_rows():
    """Seen as a new user: it voted SUPPORTS, true of any table; over the synthetic rows Pitavastatin's 43 refutes."""
    typed = TypedTable.build(STATINS)
    written = _every([SYNTHETIC, ABOVE_45])
    assert execute(written, typed).truth is True  # the tautology
    read = read_self_filtered_every(written, typed)
    assert [f.column for f in read.filters] == ["class"]
    assert execute(read, typed).truth is False


@pytest.mark.parametrize("program", [
    _every([ABOVE_45]),  # no other filter: "every row" is a reading the claim need not make
    _every([SYNTHETIC, {"column": "ldl_reduction", "op": ">", "value": "40"}]),  # 40 does not imply >= 45
    _every([SYNTHETIC, ABOVE_45], op="<"),  # a filter and a check that disagree: not a tautology
    Program.model_validate({"filters": [SYNTHETIC, ABOVE_45], "fn": "count", "column": "ldl_reduction",
                            "answer_column": "drug", "check": {"op": "=", "against": "value", "value": "2"}}),
    Program.model_validate({"filters": [SYNTHETIC, {"column": "class", "op": "=", "value": "Synthetic"}],
                            "fn": "every", "column": "class", "answer_column": "drug",
                            "check": {"op": "=", "against": "value", "value": "Synthetic"}}),  # text: kept
])
def test_other_programs_are_left_as_written(program):
    typed = TypedTable.build(STATINS)
    assert read_self_filtered_every(program, typed) == program


def test_the_vote_over_the_statin_claim():
    """The five programs of the browser session, with the one tautology: the vote is now 4 to 0 to refute."""
    from tools._table_program import ProgramOutcome, decide, run_sampled

    typed = TypedTable.build(STATINS)
    written = [_every([SYNTHETIC], ">", "45").model_dump(), _every([SYNTHETIC, ABOVE_45]).model_dump(),
               _every([], ">", "45").model_dump(), _every([], ">", "45").model_dump(),
               _every([], ">", "45").model_dump()]
    sampled = [run_sampled(raw, typed, "claim", CLAIM) for raw in written]
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, sampled, typed, "claim", CLAIM)
    assert outcome.winner == "REFUTES" and outcome.votes == {"REFUTES": 5}, outcome.votes


HOSPITALS = Table(name="infections", title="", columns=["Hospital", "Region", "Hand-hygiene compliance"], rows=[
    ["St. Luke's", "North", "86%"], ["Mercy General", "South", "74%"], ["Eastfield", "East", "88%"]])
BETTER = "Is it true that Eastfield has a better hand-hygiene compliance than St. Luke's?"


def _extreme(filters: list[dict], value: str) -> dict:
    return {"filters": filters, "fn": "argmax", "column": "hand_hygiene_compliance", "answer_column": "hospital",
            "check": {"op": "=", "against": "value", "value": value}}


EASTFIELD = [{"column": "hospital", "op": "=", "value": "Eastfield"}]


@pytest.mark.parametrize("raw, held", [
    (_extreme(EASTFIELD, "St. Luke's"), True),  # seen as a new user: refuted whatever the table holds
    (_extreme(EASTFIELD, "Eastfield"), False),  # the supporting way round: measured and kept (tautology_blocker)
    (_extreme([{"column": "hospital", "op": "=", "value": "St. Luke"}], "St. Luke's"), False),  # a partial name
    (_extreme([{"column": "region", "op": "=", "value": "East"}], "St. Luke's"), False),  # another column fixed
    ({**_extreme(EASTFIELD, "St. Luke's"), "fn": "value", "column": "hospital"}, True),
    # the other way round, seen as the reason shown for the verdict: true whatever the table holds
    ({**_extreme(EASTFIELD, "St. Luke's"), "check": {"op": "!=", "against": "value", "value": "St. Luke's"}}, True),
])
def test_a_program_that_reads_back_its_filter_refutes_nothing(raw, held):
    from tools._table_program import run_sampled

    sampled = run_sampled(raw, TypedTable.build(HOSPITALS), "claim", BETTER)
    assert ("reads back its own filter" in (sampled.error or "")) is held, sampled.error


SKIN = Table(name="skin", title="", columns=["Place of study", "Diagnosis years", "No. of cases"], rows=[
    ["Canada", "1977-1978", "92"], ["USA", "1985-1986", "33"], ["Canada", "1988", "538"], ["Egypt", "1991", "136"]])
EARLIER = "Canada studied cases of skin cancer earlier than USA."


def _every_place(value: str, op: str = "=") -> dict:
    return {"filters": [{"column": "place_of_study", "op": "=", "value": "Canada"}], "fn": "every",
            "column": "place_of_study", "answer_column": "place_of_study",
            "check": {"op": op, "against": "value", "value": value}}


@pytest.mark.parametrize("raw, held", [
    (_every_place("USA"), True),  # seen on the tuning split: false of any table
    (_every_place("USA", "!="), True),  # true of any table
    (_every_place("Canada"), False),  # the filter's own value: "all X are X", kept (tautology_blocker)
    ({**_every_place("USA"), "column": "diagnosis_years"}, False),  # another column checked: a real check
])
def test_an_every_check_against_its_own_filter_decides_nothing(raw, held):
    from tools._table_program import run_sampled

    sampled = run_sampled(raw, TypedTable.build(SKIN), "claim", EARLIER)
    assert ("reads back its own filter" in (sampled.error or "")) is held, sampled.error
