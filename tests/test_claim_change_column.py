"""Claims that something rose or fell, read from a column of changes (tools/_claim_changes.py); found as a
new user over an antibiotic-resistance table whose "Change since 2019 (pp)" no program read."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_changes import read_change_column
from tools._claim_grounding import change_columns, stated_direction
from tools._table_ops import execute
from tools._table_ops_model import Program
from tools._table_program import run_sampled

RESISTANCE = Table(name="resistance", title="resistance", columns=[
    "Pathogen", "Antibiotic", "Isolates tested", "Resistant (%)", "Change since 2019 (pp)"], rows=[
    ["E. coli", "Ciprofloxacin", "12,480", "22.4", "+1.8"],
    ["E. coli", "Ceftriaxone", "12,102", "14.9", "+2.6"],
    ["K. pneumoniae", "Carbapenems", "4,311", "8.7", "+3.9"],
    ["K. pneumoniae", "Ceftriaxone", "4,290", "31.2", "+0.4"],
    ["S. aureus", "Methicillin (MRSA)", "6,874", "17.3", "-2.1"],
    ["P. aeruginosa", "Carbapenems", "2,955", "16.8", "-0.7"]])
# what the model wrote for "MRSA resistance fell since 2019": the resistance against a number from the year
WRITTEN = {"filters": [{"column": "antibiotic", "op": "=", "value": "Methicillin (MRSA)"}], "fn": "sum",
           "column": "resistant", "answer_column": "pathogen", "check": {"op": "<", "against": "value", "value": "19"}}
UNFILTERED = {**WRITTEN, "filters": []}


def test_the_tables_change_column_is_found_by_its_header():
    typed = TypedTable.build(RESISTANCE)
    assert [typed.column(c).name for c in change_columns(typed)] == ["Change since 2019 (pp)"]
    assert change_columns(TypedTable.build(Table(name="fx", title="fx", columns=["Currency", "Exchange rate"],
                                                 rows=[["EUR", "1.08"]]))) == []


@pytest.mark.parametrize("text, op", [
    ("MRSA resistance fell since 2019.", "<"), ("Resistance rose in E. coli", ">"),
    ("Did carbapenem resistance decrease in P. aeruginosa?", "<"), ("Has resistance in E. coli gone up?", ">"),
])
def test_a_direction_is_read_from_its_verb(text, op):
    assert stated_direction(text)[0] == op


@pytest.mark.parametrize("text", ["Resistance did not fall.", "Resistance rose by 2 points.", "It fell to 5%.",
                                  "Resistance is high."])
def test_no_direction_without_a_bare_verb(text):
    assert stated_direction(text) is None


def _read(claim: str, written: dict = WRITTEN) -> tuple[Program, bool | None]:
    typed = TypedTable.build(RESISTANCE)
    prog = read_change_column(Program.model_validate(written), typed, claim)
    return prog, execute(prog, typed).truth


@pytest.mark.parametrize("claim, written, truth", [
    ("MRSA resistance fell since 2019.", WRITTEN, True),  # the row by the model's filter (MRSA is not a label)
    ("Resistance in P. aeruginosa rose since 2019.", UNFILTERED, False),  # by its label: -0.7
    # E. coli has two rows: the model's filter and the label together select the one
    ("E. coli resistance to ceftriaxone increased.",
     {**WRITTEN, "filters": [{"column": "antibiotic", "op": "=", "value": "Ceftriaxone"}]}, True),
    ("Did MRSA resistance decrease?", WRITTEN, True),
])
def test_the_named_rows_change_is_compared_with_zero(claim, written, truth):
    prog, got = _read(claim, written)
    assert (prog.column, prog.fn, prog.check.value) == ("change_since_2019_pp", "value", "0")
    assert got is truth


@pytest.mark.parametrize("claim, written", [
    ("MRSA resistance did not fall since 2019.", WRITTEN),  # negated
    ("MRSA resistance fell by 2 points.", WRITTEN),  # an amount: the model's bound
    ("MRSA resistance fell since 2015.", WRITTEN),  # not the column's year
    ("Resistance fell since 2019.", UNFILTERED),  # no row named
    ("E. coli resistance rose since 2019.", UNFILTERED),  # two rows, none chosen
    ("MRSA resistance is below 19%.", WRITTEN),  # no change
])
def test_other_claims_are_left_as_written(claim, written):
    assert _read(claim, written)[0] == Program.model_validate(written)


def test_a_refutation_by_the_change_votes_end_to_end():
    """The check against zero is the claim's own: held to its stated numbers, "0" would be kept out of the vote."""
    ran = run_sampled(UNFILTERED, TypedTable.build(RESISTANCE), "claim",
                      "Carbapenem resistance in P. aeruginosa rose since 2019.")
    assert ran.error == "" and ran.execution is not None and ran.execution.truth is False
    assert [c for c in ran.execution.cells if c[1] == 5] == [(6, 5)]
