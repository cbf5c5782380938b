"""A claim about one named row, written as every/only, is read as that row meeting the filters
(tools/_claim_grounding.py)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_grounding import read_named_row_every
from tools._table_ops_model import Program
from tools._table_program import run_sampled

SPECIES = Table(name="extinct", title="Late Pleistocene extinctions", columns=["Species", "Region", "Last seen"], rows=[
    ["Mammuthus primigenius (woolly mammoth)", "Northern Eurasia", "ca. 10,000 BP"],
    ["Megaloceros giganteus (giant deer)", "Europe", "ca. 7,700 BP"],
    ["Smilodon fatalis (sabre-tooth cat)", "North America", "ca. 10,000 BP"],
    ["Arctodus simus (short-faced bear)", "North America", "ca. 11,000 BP"],
    ["Coelodonta antiquitatis (woolly rhinoceros)", "Northern Eurasia", "ca. 14,000 BP"]])
TYPED = TypedTable.build(SPECIES)
NAME, REGION, _ = TYPED.idents


def every(region: str, species: str, fn: str = "every") -> dict:
    return {"filters": [{"column": REGION, "op": "=", "value": region}], "fn": fn, "column": NAME,
            "answer_column": NAME, "check": {"op": "=", "against": "value", "value": species}}


@pytest.mark.parametrize("fn", ["every", "only"])
@pytest.mark.parametrize("claim, region, species, truth", [
    ("Smilodon fatalis was found in North America.", "North America", "Smilodon fatalis", True),
    ("Arctodus simus lived in North America.", "North America", "Arctodus simus", True),
    ("Megaloceros giganteus was found in North America.", "North America", "Megaloceros giganteus", False),
    ("The woolly rhinoceros lived in Northern Eurasia.", "Northern Eurasia", "woolly rhinoceros", True),
])
def test_a_claim_about_one_named_row_is_that_row_meeting_the_filters(fn, claim, region, species, truth):
    """Found on PubHealthTab's tuning split: "Panthera leo atrox is found in North America." was checked as "every
    species in North America is Panthera leo atrox" and refuted, where two species are."""
    ran = run_sampled(every(region, species, fn), TYPED, "claim", claim)
    assert ran.execution is not None and ran.execution.truth is truth, ran.error
    assert ran.program.fn == "count" and len(ran.program.filters) == 2
    assert ran.program.check.op == ">=" and ran.program.check.value == "1"


@pytest.mark.parametrize("claim, species", [
    ("Only Smilodon fatalis was found in North America.", "Smilodon fatalis"),  # says only
    ("Every species in North America was Smilodon fatalis.", "Smilodon fatalis"),  # says every
    ("Smilodon fatalis was the sole big predator of North America.", "Smilodon fatalis"),
    ("Sabre-toothed predators were found in North America.", "Panthera leo"),  # the value names no row
    ("Cats were found in North America.", "Smilodon fatalis"),  # the claim does not state the value
])
def test_every_or_only_stays_where_the_claim_says_so_or_names_no_row(claim, species):
    program = Program.model_validate(every("North America", species))
    assert read_named_row_every(program, TYPED, claim) == program


def test_a_value_that_says_more_than_a_row_s_name_or_a_program_without_filters_is_left_alone():
    """Seen replaying this session's PubHealthTab test log: "every row has Column 2 containing 'STAGE 4 breast
    cancer'" (no filter) became "a row is named 'BREAST CANCER'", which holds; the value says more than the name,
    and with no filter there is no condition for the row to meet."""
    claim = "Research on stage 4 woolly rhinoceros survivors"
    more = Program.model_validate(every("Northern Eurasia", "stage 4 woolly rhinoceros"))
    assert read_named_row_every(more, TYPED, claim) == more
    bare = Program.model_validate({**every("x", "woolly rhinoceros"), "filters": []})
    assert read_named_row_every(bare, TYPED, "The woolly rhinoceros lived in Northern Eurasia.") == bare


def test_a_check_on_another_column_or_a_number_is_left_alone():
    on_region = Program.model_validate({**every("North America", "x"), "column": REGION,
                                        "check": {"op": "=", "against": "value", "value": "North America"}})
    claim = "Smilodon fatalis was found in North America."
    assert read_named_row_every(on_region, TYPED, claim) == on_region
    full = Program.model_validate({**every("North America", "Smilodon fatalis"), "filters": [
        {"column": REGION, "op": "=", "value": "North America"}, {"column": NAME, "op": "contains", "value": "a"},
        {"column": REGION, "op": "contains", "value": "America"}]})
    assert read_named_row_every(full, TYPED, claim) == full  # no room for the row's filter
