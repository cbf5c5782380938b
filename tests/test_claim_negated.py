"""A claim that no row has something is checked as one count: the rows with the condition number zero
(tools._claim_grounding)."""

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_grounding import negated_count_blocker, negated_existence, read_negated_existence
from tools._table_ops_model import Program

TRIALS = Table(name="trials", title="", columns=["Trial", "Phase", "Participants", "Met", "Dropout rate"], rows=[
    ["ALPHA-1", "3", "1961", "Yes", "7.0%"], ["BETA-2", "3", "2539", "Yes", "6.2%"],
    ["DELTA-4", "4", "3305", "Yes", "48%"], ["EPSILON-5", "3", "21", "Yes", "14%"],
    ["ZETA-6", "3", "12000", "No", "12.5%"]])
TYPED = TypedTable.build(TRIALS)


def prog(filters, fn="count", column="trial", op="=", value="0") -> Program:
    return Program.model_validate({"filters": [{"column": c, "op": o, "value": v} for c, o, v in filters],
                                   "fn": fn, "column": column, "answer_column": column,
                                   "check": {"op": op, "against": "value", "value": value}})


@pytest.mark.parametrize("claim, negated", [
    ("No trial had more than 5000 participants.", True),
    ("There is no phase 4 trial.", True),
    ("there be no home team that score more than 11", True),
    ("None of the trials lasted a year.", True),
    ("Not a single trial failed.", True),
    ("No more than 3 trials lasted a year.", False),  # a bound on a count
    ("No. 5 won the race.", False),
    ("Northgate has no trials.", False),  # not at the start: left to the programs
])
def test_negated_existence(claim, negated):
    assert negated_existence(claim) is negated


@pytest.mark.parametrize("program, claim, read", [
    # A count over the condition is checked "= 0", whatever the model compared it with.
    (prog([("dropout_rate", ">", "50")], op=">", value="0"), "No trial had a dropout rate above 50%.",
     prog([("dropout_rate", ">", "50")])),
    # A row-by-row check that states the condition joins the filters.
    (prog([("met", "=", "Yes")], fn="every", column="participants", op="<", value="100"),
     "None of the trials that met their endpoint had fewer than 100 participants.",
     prog([("met", "=", "Yes"), ("participants", "<", "100")])),
    (prog([], fn="value", column="phase", op="=", value="4"), "There is no phase 4 trial.",
     prog([("phase", "=", "4")])),
    # A filter that states the condition: the rows it keeps number zero, whatever the check after it asks (found
    # as a new user: "… → whether every one has Serious adverse events != 0" supported the claim).
    (prog([("dropout_rate", ">", "50")], fn="every", column="dropout_rate", op="!=", value="0"),
     "No trial had a dropout rate above 50%.", prog([("dropout_rate", ">", "50")])),
    (prog([("dropout_rate", ">", "50")], fn="sum", column="participants", op=">", value="0"),
     "No trial had a dropout rate above 50%.", prog([("dropout_rate", ">", "50")])),
])
def test_the_condition_is_counted_zero(program, claim, read):
    got = read_negated_existence(program, TYPED, claim)
    assert (got.filters, got.fn, got.check) == (read.filters, read.fn, read.check)


@pytest.mark.parametrize("program, claim", [
    # Already the negation: every one has the opposite bound.
    (prog([], fn="every", column="dropout_rate", op="<=", value="50"), "No trial had a dropout rate above 50%."),
    # A "!=" filter may already read the negation.
    (prog([("phase", "!=", "4")], op="=", value="5"), "There is no phase 4 trial."),
    # The count's own check carries the bounded number: the condition is not in the filters.
    (prog([("met", "=", "Yes")], op="<", value="100"),
     "None of the trials that met their endpoint had fewer than 100 participants."),
    # A text filter no cell holds selects no row whatever the table says (seen with the real model).
    (prog([("participants", ">", "5000"), ("trial", "=", "No trial had more than 5000 participants")]),
     "No trial had more than 5000 participants."),
    # Two bounded numbers: the filter may state the other condition.
    (prog([("participants", ">", "100")], fn="every", column="dropout_rate", op="!=", value="0"),
     "No trial with more than 100 participants had a dropout rate above 50%."),
    # A filter bounded the other way is no statement of the condition.
    (prog([("dropout_rate", "<=", "50")], fn="every", column="dropout_rate", op="!=", value="0"),
     "No trial had a dropout rate above 50%."),
    # Not a negated claim.
    (prog([("dropout_rate", ">", "50")], op=">", value="0"), "Some trial had a dropout rate above 50%."),
    # An extreme is a reading of its own ("the largest dropout rate <= 50").
    (prog([], fn="max", column="dropout_rate", op="<=", value="50"), "No trial had a dropout rate above 50%."),
])
def test_other_programs_are_left_as_written(program, claim):
    assert read_negated_existence(program, TYPED, claim) == program


def test_one_value_bounded_the_other_way_is_every_rows():
    """Seen as a new user: "all rows → Serious adverse events; check: result <= 3" for "No vaccine had more than 3
    serious adverse events." ran into "a value check needs the one row"; it is every row's value."""
    claim = "No trial had a dropout rate above 50%."
    assert read_negated_existence(prog([], fn="value", column="dropout_rate", op="<=", value="50"), TYPED,
                                  claim).fn == "every"
    # bounded the same way, it is the condition itself: counted zero, as before
    assert read_negated_existence(prog([], fn="value", column="dropout_rate", op=">", value="50"), TYPED,
                                  claim).fn == "count"
    # another number: left as written
    assert read_negated_existence(prog([], fn="value", column="dropout_rate", op="<=", value="40"), TYPED,
                                  claim).fn == "value"


def test_a_count_of_every_row_does_not_vote():
    """Seen as a new user: "There is no phase 4 trial." was supported 3 votes to 2 by "all rows → the number of
    different Trial != 4"."""
    assert negated_count_blocker(prog([], fn="count_distinct", op="!=", value="4"), "There is no phase 4 trial.")
    assert not negated_count_blocker(prog([("phase", "=", "4")]), "There is no phase 4 trial.")
    assert not negated_count_blocker(prog([], op="!=", value="4"), "There are 4 trials.")


@pytest.mark.parametrize("claim, program, verdict", [
    ("No trial had a dropout rate above 50%.", prog([("dropout_rate", ">", "50")], op=">", value="0"), "SUPPORTS"),
    ("No trial had a dropout rate above 40%.", prog([("dropout_rate", ">", "40")], op=">", value="0"), "REFUTES"),
    ("There is no phase 4 trial.", prog([], fn="value", column="phase", value="4"), "REFUTES"),
    ("No trial had more than 3000 participants.",
     prog([("participants", ">", "3000")], fn="every", column="participants", op="!=", value="0"), "REFUTES"),
    ("No trial had more than 3000 participants.", prog([], fn="value", column="participants", op="<=",
                                                        value="3000"), "REFUTES"),
    ("No trial had more than 13000 participants.", prog([], fn="value", column="participants", op="<=",
                                                         value="13000"), "SUPPORTS"),
    ("None of the trials that met their endpoint had fewer than 100 participants.",
     prog([("met", "=", "Yes")], fn="every", column="participants", op="<", value="100"), "REFUTES"),
])
def test_the_verdict_is_the_count(claim, program, verdict):
    from tools._table_program import ProgramOutcome, decide, run_sampled

    sampled = [run_sampled(program.model_dump(), TYPED, "claim", claim) for _ in range(3)]
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, sampled, TYPED, "claim", claim)
    assert outcome.winner == verdict and outcome.votes == {verdict: 3}, [r.error for r in outcome.runs]


NO_DEATHS = Table(name="o", title="Outbreaks", columns=["Outbreak", "Country", "Deaths"], rows=[
    ["Cholera Haiti", "Haiti", "9,792"], ["Zika", "Brazil", ""], ["Mpox", "Multi-country", "0"]])


@pytest.mark.parametrize("claim, row, outcome", [
    ("Mpox caused no deaths.", "Mpox", True),
    ("Cholera Haiti had no deaths.", "Cholera Haiti", False),
    ("Zika caused no deaths.", "Zika", None),  # an empty cell gives no value: no vote (was refuted)
])
def test_one_named_row_had_none_of_a_column(claim, row, outcome):
    """Found as a new user: "Zika caused no deaths." was refuted by "rows where Outbreak = 'Zika' -> the number of
    rows = 0", and then by Zika's empty Deaths cell compared with 0."""
    from tools._table_program import run_sampled

    raw = {"filters": [{"column": "outbreak", "op": "=", "value": row}], "fn": "count", "column": "deaths",
           "answer_column": "outbreak", "check": {"op": "=", "against": "value", "value": "0"}}
    ran = run_sampled(raw, TypedTable.build(NO_DEATHS), "claim", claim)
    if outcome is None:
        assert ran.execution is None and "is empty" in ran.error
    else:
        assert ran.execution is not None and ran.execution.truth is outcome, ran.error
