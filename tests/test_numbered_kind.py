"""Rows named by a number and a column's word ("the two-dose vaccines"), tools._claim_counts."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_counts import add_numbered_kind
from tools._table_ops import execute
from tools._table_ops_model import Program, RowFilter

VACCINES = TypedTable.build(Table(name="v", title="v", columns=["Vaccine", "Doses", "Efficacy (%)"], rows=[
    ["BNT162b2", "2", "95.0"], ["mRNA-1273", "2", "94.1"], ["Ad26.COV2.S", "1", "66.9"], ["ChAdOx1", "2", "70.4"],
    ["CoronaVac", "2", "50.7"]]))


@pytest.mark.parametrize("text, doses, result", [
    ("What is the average efficacy of the two-dose vaccines?", "2", 77.55),  # not 75.42, all five
    ("What was the efficacy of the single-dose vaccine?", "1", 66.9),
    ("The 1-dose vaccine had an efficacy under 70%.", "1", 66.9),
])
def test_a_number_before_a_header_word_selects_the_rows_holding_it(text, doses, result):
    """Found as a new user: "What is the average efficacy of the two-dose vaccines?" was the mean of all of them."""
    read = add_numbered_kind(Program(filters=[], fn="avg", column="efficacy"), VACCINES, text)
    assert read.filters == [RowFilter(column="doses", op="=", value=doses)]
    assert execute(read, VACCINES).result == pytest.approx(result)


def test_a_numbered_word_that_names_no_column_or_every_row_adds_nothing():
    mean = Program(filters=[], fn="avg", column="efficacy")
    assert add_numbered_kind(mean, VACCINES, "the average of the two-arm trials") == mean  # no Arms column
    assert add_numbered_kind(mean, VACCINES, "the average of the three-dose vaccines") == mean  # no row has 3
    filtered = Program(filters=[RowFilter(column="doses", op=">", value="1")], fn="avg", column="efficacy")
    assert add_numbered_kind(filtered, VACCINES, "the two-dose vaccines") == filtered  # the column is filtered
    reads_doses = Program(filters=[RowFilter(column="vaccine", op="=", value="Ad26.COV2.S")], fn="value",
                          column="doses")
    assert add_numbered_kind(reads_doses, VACCINES, "Ad26.COV2.S is a two-dose vaccine.") == reads_doses
    all_two = TypedTable.build(Table(name="w", title="w", columns=["Vaccine", "Doses"], rows=[["A", "2"], ["B", "2"]]))
    count = Program(filters=[], fn="count", column="vaccine")
    assert add_numbered_kind(count, all_two, "How many two-dose vaccines are there?") == count  # all rows
