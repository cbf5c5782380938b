"""Numbers a claim writes in another form than the cell: a magnitude word, a point between thousands (found on
PubHealthTab's eval split, the tuning split)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._table_ops import execute
from tools._table_ops_model import Check, Program, RowFilter

STATS = TypedTable.build(Table(name="s", title="s", columns=["Statistic", "Guinea", "Sierra Leone"], rows=[
    ["population", "12.3 million", "6.3 million"], ["cases", "24,035", "3,955"]]))


def _check(column: str, op: str, value: str, row: str = "population") -> bool | None:
    program = Program(filters=[RowFilter(column="statistic", op="=", value=row)], fn="value", column=column,
                      check=Check(op=op, value=value))
    return execute(program, STATS).truth


@pytest.mark.parametrize("column, op, value, truth", [
    ("guinea", "=", "12.3", True),  # "a population of 12.3 million": refuted by 12,300,000 != 12.3
    ("sierra_leone", ">", "12.3", False),  # 6.3 million is not more than Guinea's 12.3 (million)
    ("guinea", "=", "12300000", True),  # the model scaled it itself
    ("sierra_leone", ">", "500000", True),  # a number near the cell's scale is a count, not millions
    ("guinea", "=", "12.3 million", True),
])
def test_a_number_far_below_the_cells_magnitude_is_in_its_unit(column, op, value, truth):
    assert _check(column, op, value) is truth


@pytest.mark.parametrize("value, truth", [("24.035", True), ("24.036", False), ("24", False)])
def test_a_point_between_thousands_reads_as_the_cells_number_only_to_the_digit(value, truth):
    """PubHealthTab's eval split: "… are 24.035" over the cell "24,035" was refuted by 3 of 3 programs."""
    assert _check("guinea", "=", value, row="cases") is truth
