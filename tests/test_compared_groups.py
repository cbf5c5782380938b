"""Two groups of rows compared by their totals or means (tools/_claim_compare.py, the "group" check of
tools/_table_checks.py); found as a new user over a hospital-capacity table."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_compare import compared_groups
from tools._table_ops import execute
from tools._table_ops_model import Program, ProgramError
from tools._table_program import decided_by_form
from tools._table_shape import shape_for_programs

BEDS = Table(name="beds", title="Hospital capacity", columns=[
    "Hospital", "Region", "Beds", "Occupancy (%)", "ICU beds"], rows=[
    ["St. Anne's", "North", "1,240", "94.2", "48"], ["Riverside General", "South", "860", "88.5", "32"],
    ["Kingsway", "North", "510", "97.1", "12"], ["Mercy Hill", "East", "1,020", "91.0", "40"],
    ["Harbourside", "South", "730", "85.3", "26"]])


def typed() -> TypedTable:
    return TypedTable.build(shape_for_programs(BEDS).table)


@pytest.mark.parametrize("claim, fn, column, truth, other", [
    # South 860 + 730 = 1,590 against East's 1,020
    ("Hospitals in the South have more beds in total than hospitals in the East.", "sum", "beds", True, "1,020"),
    ("The North has fewer ICU beds combined than the South.", "sum", "icu_beds", False, "58"),  # 60 against 58
    ("On average, occupancy in the South is lower than in the North.", "avg", "occupancy", True, "95.65"),
    ("Compared with the East, the South has more ICU beds in total.", "sum", "icu_beds", True, "40"),
])
def test_the_words_give_the_program_and_code_computes_both_groups(claim, fn, column, truth, other):
    t = typed()
    words = compared_groups(t, claim)
    assert words is not None
    assert (words.raw["fn"], words.raw["column"], words.raw["check"]["against"]) == (fn, column, "group")
    ran = decided_by_form(t, "claim", claim)
    assert ran is not None and ran.error == "" and ran.execution.truth is truth
    assert ran.execution.check_text.endswith(other)  # as its cells write it ("1,020")
    # the other group's rows are cited with the selected ones: every row of both regions named
    regions = {words.raw["filters"][0]["value"], words.raw["check"]["value"]}
    assert {r for r, _ in ran.execution.cells} == {r for r in range(1, 6) if t.text(r, 2) in regions}


@pytest.mark.parametrize("claim, why", [
    ("The South has more beds than the East.", "no total or mean: each, or the largest?"),
    ("The South does not have more beds in total than the East.", "negated"),
    ("The South has 500 more beds in total than the East.", "states a difference"),
    ("The South has more beds in total than the South.", "one group"),
    ("The South has more beds in total than Mercy Hill.", "a row, not a group"),
    ("Hospitals in the South have more in total than the East.", "no column named"),
])
def test_no_program_unless_every_part_is_plain(claim, why):
    assert compared_groups(typed(), claim) is None, why


def test_a_group_check_needs_a_sum_or_mean_over_rows_of_its_own():
    t = typed()
    check = {"op": ">", "against": "group", "value": "East", "group_column": "region"}
    with pytest.raises(ProgramError, match="sums or means"):
        execute(Program.model_validate({"filters": [{"column": "region", "op": "=", "value": "South"}],
                                        "fn": "max", "column": "beds", "check": check}), t)
    with pytest.raises(ProgramError, match="no rows of their own"):
        execute(Program.model_validate({"filters": [], "fn": "sum", "column": "beds", "check": check}), t)


def test_a_header_inside_a_longer_one_is_not_named_by_it():
    """"ICU beds" writes the header "Beds" too; the claim names the longer one. "beds" alone names "Beds"."""
    from tools._claim_compare import numbers_column_named

    assert numbers_column_named(typed(), "St. Anne's has more ICU beds than Kingsway") == "icu_beds"
    assert numbers_column_named(typed(), "St. Anne's has more beds than Kingsway") == "beds"
