"""A claim about several named rows at once reads two values of one column as the rows named
(tools._claim_counts)."""

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_counts import joined_by_and, read_joint_rows
from tools._table_ops_model import Program

TRIALS = Table(name="trials", title="", columns=["Trial", "Drug", "Participants", "Primary endpoint met"], rows=[
    ["ALPHA-1", "Semaglutide", "1961", "Yes"], ["BETA-2", "Tirzepatide", "2539", "Yes"],
    ["GAMMA-3", "Liraglutide", "3731", "Yes"], ["ZETA-6", "Lorcaserin", "12000", "No"]])
TYPED = TypedTable.build(TRIALS)


def program(drugs: list[str], fn: str = "every", column: str = "primary_endpoint_met", op: str = "=",
            value: str = "Yes") -> Program:
    return Program.model_validate({"filters": [{"column": "drug", "op": "=", "value": d} for d in drugs], "fn": fn,
                                   "column": column, "answer_column": column,
                                   "check": {"op": op, "against": "value", "value": value}})


@pytest.mark.parametrize("claim", [
    "Semaglutide and Tirzepatide both met their primary endpoint.",
    "Both Semaglutide and Tirzepatide met their primary endpoint.",
    "Semaglutide, Tirzepatide and Liraglutide met their primary endpoint.",
    "All of Semaglutide, Tirzepatide and Liraglutide met their primary endpoint.",
])
def test_rows_named_jointly_are_read_as_their_union(claim):
    drugs = [d for d in ("Semaglutide", "Tirzepatide", "Liraglutide") if d in claim]
    assert read_joint_rows(program(drugs), claim, TYPED) == program(drugs)
    # A value check over those rows asks each of them.
    assert read_joint_rows(program(drugs, fn="value"), claim, TYPED).fn == "every"


@pytest.mark.parametrize("prog, claim", [
    # The claim compares the two rather than saying the same of both.
    (program(["Semaglutide", "Tirzepatide"]), "Semaglutide had fewer participants than Tirzepatide."),
    # A value the claim does not write.
    (program(["Semaglutide", "Orlistat"]), "Semaglutide and Tirzepatide both met their primary endpoint."),
    # A count or an extreme over the two values is left as written.
    (program(["Semaglutide", "Tirzepatide"], fn="count", value="2"), "Semaglutide and Tirzepatide both met it."),
    (program(["Semaglutide", "Tirzepatide"], fn="max", column="participants", op=">", value="2000"),
     "Semaglutide and Tirzepatide both had over 2000 participants."),
    # The check reads the named column back: false of any two rows.
    (program(["Semaglutide", "Tirzepatide"], column="drug", value="Semaglutide"),
     "Semaglutide and Tirzepatide both met their primary endpoint."),
    # One value only: nothing to join.
    (program(["Semaglutide"]), "Semaglutide and Tirzepatide both met their primary endpoint."),
])
def test_other_programs_are_left_as_written(prog, claim):
    assert read_joint_rows(prog, claim, TYPED) is None


def test_joined_by_and():
    assert joined_by_and(["A-1", "B-2"], "a-1 and b-2 met it")
    assert joined_by_and(["A-1", "B-2", "C-3"], "A-1, B-2, and C-3 met it")
    assert not joined_by_and(["A-1", "B-2"], "A-1 beat B-2")
    assert not joined_by_and(["A-1", "B-2"], "A-1 met it")


@pytest.mark.parametrize("claim, verdict", [
    ("Semaglutide and Tirzepatide both met their primary endpoint.", "SUPPORTS"),
    ("Both Semaglutide and Lorcaserin met their primary endpoint.", "REFUTES"),
])
def test_the_verdict_is_the_named_rows(claim, verdict):
    """Seen as a new user: 4 of 5 programs were written this way and none ran; the fifth, over all rows, refuted
    the true claim with a trial it never named."""
    from tools._table_program import ProgramOutcome, decide, run_sampled

    typed = TypedTable.build(TRIALS)
    drugs = [d for d in ("Semaglutide", "Tirzepatide", "Lorcaserin") if d in claim]
    sampled = [run_sampled(program(drugs).model_dump(), typed, "claim", claim) for _ in range(3)]
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, sampled, typed, "claim", claim)
    assert outcome.winner == verdict and outcome.votes == {verdict: 3}, outcome.votes


def test_an_every_check_over_all_rows_does_not_vote_on_rows_the_claim_names():
    """Seen in the browser: 2 of 5 programs for the Semaglutide claim read every trial, and the sixth decided."""
    from tools._claim_counts import named_rows_blocker

    typed = TypedTable.build(TRIALS)
    every_row = Program.model_validate({"filters": [], "fn": "every", "column": "primary_endpoint_met",
                                        "answer_column": "primary_endpoint_met",
                                        "check": {"op": "=", "against": "value", "value": "Yes"}})
    claim = "Semaglutide and Tirzepatide both met their primary endpoint."
    assert "names its rows" in named_rows_blocker(every_row, typed, claim)
    # A claim about every row names none; the checked column's own value is the check, not a row.
    assert named_rows_blocker(every_row, typed, "Every trial met its primary endpoint.") == ""
    assert named_rows_blocker(every_row, typed, "Every trial's primary endpoint met was Yes.") == ""
    # With the named rows as filters, the program votes.
    assert named_rows_blocker(program(["Semaglutide", "Tirzepatide"]), typed, claim) == ""
    # A row named in the possessive is named (found as a new user: "VaxC's efficacy confidence interval excludes
    # 75%." was voted on by "all rows → whether every one has 95% CI contains 75")
    assert "names its rows" in named_rows_blocker(every_row, typed, "Semaglutide's primary endpoint was met.")
    assert "names its rows" in named_rows_blocker(every_row, typed, "Semaglutide’s primary endpoint was met.")


RATES = Table(name="rates", title="", columns=["Country", "Cases", "Per 100,000"], rows=[
    ["Seychelles", "141", "145"], ["Mongolia", "2,408", "75"], ["Kuwait", "1,747", "42"], ["Oman", "1,993", "40"]])


def against_row(countries: list[str], op: str, other: str) -> Program:
    return Program.model_validate({"filters": [{"column": "country", "op": "=", "value": c} for c in countries],
                                   "fn": "value", "column": "per_100_000",
                                   "check": {"op": op, "against": "row", "value": other}})


@pytest.mark.parametrize("claim, op, countries, other, verdict", [
    ("Oman and Kuwait saw more cases per 100,000 than Seychelles.", ">", ["Oman", "Kuwait"], "Seychelles",
     "REFUTES"),
    ("Mongolia and Kuwait both had more cases per 100,000 than Oman.", ">", ["Mongolia", "Kuwait"], "Oman",
     "SUPPORTS"),
    ("Oman and Kuwait had fewer cases per 100,000 than Mongolia.", "<", ["Oman", "Kuwait"], "Mongolia", "SUPPORTS"),
    ("Mongolia and Oman had fewer cases per 100,000 than Kuwait.", "<", ["Mongolia", "Oman"], "Kuwait", "REFUTES"),
])
def test_rows_named_jointly_against_a_third_row(claim, op, countries, other, verdict):
    """PubHealthTab's tuning split: 3 of 5 programs asked one column for both countries (no row has two names), so
    none ran, and the one that did read Kuwait alone."""
    from tools._table_program import ProgramOutcome, decide, run_sampled

    typed = TypedTable.build(RATES)
    written = against_row(countries, op, other)
    assert read_joint_rows(written, claim, typed).fn == ("min" if op == ">" else "max")
    sampled = [run_sampled(written.model_dump(), typed, "claim", claim) for _ in range(2)]
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, sampled, typed, "claim", claim)
    assert outcome.winner == verdict and outcome.votes == {verdict: 2}, outcome.votes
    cited = {r for r, _ in sampled[0].execution.cells}
    assert 1 + [row[0] for row in RATES.rows].index(other) in cited  # the row compared with is cited


@pytest.mark.parametrize("fn", ["max", "min"])
def test_an_extreme_over_rows_named_jointly_against_a_third_row_is_each_of_them(fn):
    written = against_row(["Oman", "Kuwait"], ">", "Seychelles").model_copy(update={"fn": fn})
    assert read_joint_rows(written, "Oman and Kuwait saw more cases than Seychelles", TypedTable.build(RATES)).fn \
        == "min"


def test_a_comparison_between_the_rows_named_is_left_as_written():
    # "Oman had more than Kuwait" written with both as filters and Kuwait as the row compared with
    typed = TypedTable.build(RATES)
    assert read_joint_rows(against_row(["Oman", "Kuwait"], ">", "Kuwait"), "Oman and Kuwait: Oman had more",
                           typed) is None


def test_two_names_in_one_row_are_its_two_sides_not_two_rows():
    """TabFact: "the match between south melbourne and richmond drew a bigger crowd than hawthorn's" names one game."""
    games = TypedTable.build(Table(name="games", title="", columns=["Home team", "Away team", "Crowd"], rows=[
        ["South Melbourne", "Richmond", "22000"], ["Hawthorn", "Richmond", "15000"],
        ["Richmond", "Hawthorn", "18000"]]))
    written = Program.model_validate({
        "filters": [{"column": "home_team", "op": "=", "value": "South Melbourne"},
                    {"column": "home_team", "op": "=", "value": "Richmond"}],
        "fn": "value", "column": "crowd", "check": {"op": ">", "against": "row", "value": "Hawthorn"}})
    claim = "the match between south melbourne and richmond drew a bigger crowd than hawthorn"
    assert read_joint_rows(written, claim, games) is None
