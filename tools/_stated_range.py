"""A range of dates the question states, with both ends included: "between March and May" is March, April and May.

Found as a new user over a monthly sales table: "How many units were sold between March and May?" was written by
two programs as Month > 'Mar 2024' and Month < 'May 2024' (April alone, 987), by one with both ends (3,141), and
the split vote fell to the model, which answered "May". Said of periods, "between", "from … to" and "through"
name the first and the last period counted, so two bounds the question states on one column of dates or years
are read inclusive.
"""
from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._question_grounding import value_grounded
from tools._table_ops_model import Program, RowFilter

_RANGE = re.compile(r"\b(?:between\b.+\band|from\b.+\b(?:to|until|till|through|thru))\b", re.I)
_INCLUSIVE = {">": ">=", "<": "<="}


def read_inclusive_range(program: Program, typed: TypedTable, question: str) -> Program:
    """The program with its two stated bounds on one column of dates or years made inclusive (module docstring)."""
    if not _RANGE.search(question):
        return program
    bounds = [f for f in program.filters if f.op in (">", ">=", "<", "<=")]
    if len(bounds) != 2 or bounds[0].column != bounds[1].column or bounds[0].than_column or bounds[1].than_column:
        return program
    lower = [f for f in bounds if f.op in (">", ">=")]
    if len(lower) != 1 or not all(value_grounded(f.value, question) for f in bounds):
        return program
    try:
        col = typed.column(bounds[0].column)
    except KeyError:
        return program
    if not (col.holds_dates or col.holds_years):
        return program
    filters = [RowFilter(column=f.column, op=_INCLUSIVE.get(f.op, f.op), value=f.value) if f in bounds else f
               for f in program.filters]
    return program.model_copy(update={"filters": filters}) if filters != program.filters else program
