"""Claims that something rose or fell, over a table with a column of changes: "MRSA resistance fell since 2019"
over "Change since 2019 (pp)".

Found as a new user over an antibiotic-resistance table (pathogen, antibiotic, isolates, "Resistant (%)",
"Change since 2019 (pp)"): no program read the change column. Two compared one row's resistance with another's
and failed, two checked the resistance against numbers the claim does not state ("< 19", "> 0"), and the claim
was decided by those. The table states the change, so the claim's form settles the program: the one row the claim
names, its change, compared with zero in the verb's direction (a rise is above zero, a fall below).

Left to the programs: a claim that states an amount ("rose by more than 2 points": the model writes that bound
itself), a negated verb, a table with its measure in two year columns (tools._claim_changes compares those), a
table with several change columns the claim does not choose between, a claim whose year is not the column's
("fell since 2015" over "Change since 2019"), and a claim that names no one row.
"""

from __future__ import annotations

from tools._cells import TypedTable
from tools._claim_changes import year_pair
from tools._claim_grounding import change_columns, row_names_in, stated_direction, years_agree
from tools._grounding import column_named, question_numbers, value_grounded
from tools._table_ops import selected_rows
from tools._table_ops_model import VALUE_MAX_CHARS, Check, Program, RowFilter


def change_column_for(typed: TypedTable, claim: str) -> str | None:
    """The change column a claim of a rise or fall is read from: the table's only one, or the one the claim names
    among several; None when there is none, or the claim states another year."""
    columns = change_columns(typed)
    if len(columns) > 1:
        columns = [c for c in columns if column_named(typed.column(c).name, claim)]
    if len(columns) != 1 or not years_agree(typed.column(columns[0]).name, claim):
        return None
    return columns[0]


def read_change_column(program: Program, typed: TypedTable, claim: str) -> Program:
    """The named row's change compared with zero in the claim's direction (module docstring); any other claim
    as written."""
    said = stated_direction(claim)
    if said is None or program.check is None or year_pair(typed, claim) is not None:
        return program
    column = change_column_for(typed, claim)
    if column is None:
        return program
    filters = _one_named_row(program, typed, claim, column)
    if filters is None:
        return program
    return Program(filters=filters, fn="value", column=column, answer_column=program.answer_column,
                   check=Check(op=said[0], against="value", value="0"))


def _one_named_row(program: Program, typed: TypedTable, claim: str, column: str) -> list[RowFilter] | None:
    """Filters that select the one row the claim is about: the model's own (on other columns than the change),
    else the row label the claim writes, else both together; None unless one of these selects exactly one row
    and the claim names a text cell of that row."""
    own = [f for f in program.filters if f.column != column]
    label = typed.label_col
    names, _ = row_names_in(typed, claim)
    by_name = [RowFilter(column=typed.columns[label - 1].ident, op="=", value=names[0][:VALUE_MAX_CHARS])] \
        if label and len(names) == 1 else []
    numbers = question_numbers(claim)
    for filters in (own, by_name, own + by_name):
        if not filters:
            continue
        rows = selected_rows(Program(filters=filters, fn="count", column=column), typed)
        if rows is not None and len(rows) == 1 and any(
                value_grounded(typed.text(rows[0], col.index), claim, numbers)
                for col in typed.columns if not col.numeric and typed.text(rows[0], col.index).strip()):
            return filters
    return None
