"""An order on a column of ranges, where the text asks what is possible (tools._values): found as a new
user over an antibiotics TSV, "Can the adult dose of cephalexin be higher than 900 mg?" (250-1000) could not be
computed, so the model's judgement answered."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._values import asks_possibility, read_possible_bound
from tools._table_ops_model import Program
from tools._table_program import run_sampled
from tools._table_shape import shape_for_programs

ANTIBIOTICS = Table(name="antibiotics", title="", columns=["Drug", "Class", "Adult dose (mg)", "Half-life (h)"], rows=[
    ["Amoxicillin", "Penicillin", "500", "1.0"], ["Azithromycin", "Macrolide", "250 to 500", "68"],
    ["Ciprofloxacin", "Fluoroquinolone", "250-750", "4"], ["Doxycycline", "Tetracycline", "100", "18"],
    ["Cephalexin", "Cephalosporin", "250-1000", "0.9"]])


def typed() -> TypedTable:
    return TypedTable.build(shape_for_programs(ANTIBIOTICS).table)


def dose_check(drug: str, op: str, value: str) -> dict:
    return {"filters": [{"column": "drug", "op": "=", "value": drug}], "fn": "value", "column": "adult_dose_mg",
            "answer_column": "drug", "check": {"op": op, "against": "value", "value": value}}


@pytest.mark.parametrize("claim, drug, op, value, truth", [
    ("Can the adult dose of cephalexin be higher than 900 mg?", "Cephalexin", ">", "900", True),
    ("Can the adult dose of ciprofloxacin be higher than 900 mg?", "Ciprofloxacin", ">", "900", False),
    ("The adult dose of ciprofloxacin could be as low as 250 mg.", "Ciprofloxacin", "<=", "250", True),
    ("Could the adult dose of doxycycline be below 150 mg?", "Doxycycline", "<", "150", True),
    ("Adults may take more than 600 mg of azithromycin.", "Azithromycin", ">", "600", False),
])
def test_can_reads_the_bound_the_order_points_to(claim, drug, op, value, truth):
    ran = run_sampled(dose_check(drug, op, value), typed(), "claim", claim)
    assert ran.execution is not None, ran.error
    assert ran.execution.truth is truth
    bound = "upper" if op.startswith(">") else "lower"
    assert ran.program.column == f"adult_dose_mg_{bound}_boun"


def test_a_filter_on_the_range_is_read_on_its_bound_too():
    question = "Which antibiotics can be given at more than 600 mg?"
    raw = {"filters": [{"column": "adult_dose_mg", "op": ">", "value": "600"}], "fn": "value", "column": "drug",
           "answer_column": "drug"}
    ran = run_sampled(raw, typed(), "question", question)
    assert ran.execution is not None, ran.error
    assert ran.execution.result_text == "Ciprofloxacin, Cephalexin"


def test_without_a_modal_word_the_program_stays_as_written():
    """"The dose is higher than 900 mg" is a fact of the whole range, which 250-1000 neither supports nor refutes."""
    program = Program.model_validate(dose_check("Cephalexin", ">", "900"))
    assert read_possible_bound(program, typed(), "The adult dose of cephalexin is higher than 900 mg.") == program


def test_a_number_column_and_an_equality_are_left_alone():
    t = typed()
    half_life = Program.model_validate({**dose_check("Cephalexin", ">", "1"), "column": "half_life_h"})
    assert read_possible_bound(half_life, t, "Can its half-life be longer than 1 h?") == half_life
    equal = Program.model_validate(dose_check("Cephalexin", "=", "1000"))
    assert read_possible_bound(equal, t, "Can the dose of cephalexin be 1000 mg?") == equal


@pytest.mark.parametrize("text, modal", [
    ("Can the dose be higher than 900 mg?", True),
    ("May the dose exceed 900 mg?", True),
    ("Adults may take up to 4 g a day.", True),
    ("In May 2014 the approval rating was 44%.", False),
    ("May 2014 saw the lowest rating.", False),
    ("The dose is higher than 900 mg.", False),
])
def test_what_asks_a_possibility(text, modal):
    assert asks_possibility(text) is modal
