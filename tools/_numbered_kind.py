"""Rows named by a number and a column's word: "the two-dose vaccines" are the rows whose Doses is 2.

Found as a new user over a table of vaccine trials: "What is the average efficacy of the two-dose vaccines?" was
answered with the mean of all six vaccines (77.8) by 5 of 5 programs; none filtered on Doses. A number written
before a hyphen and the singular of a numeric column's header word ("two-dose", "3-star", "single-dose",
"four-bed") names the rows holding that number in that column, when some rows hold it and some do not. The filter
is added to a program that reads over rows and does not filter on that column yet.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._claim_counts import names_column
from tools._table_ops_model import MAX_FILTERS, Program, RowFilter
from tools.lang.lexicon import CARDINALS

_COUNTS = {**CARDINALS, "single": 1.0, "double": 2.0, "triple": 3.0}
_NUMBERED = re.compile(r"\b(?P<n>\d+|" + "|".join(_COUNTS) + r")-(?P<noun>[^\W\d_]+)\b", re.I)
_OVER_ROWS = ("count", "sum", "avg", "median", "min", "max", "argmax", "argmin", "every", "value")


def add_numbered_kind(program: Program, typed: TypedTable, text: str) -> Program:
    """The program with a filter for each "<number>-<header word>" the text writes (module docstring)."""
    if program.fn not in _OVER_ROWS:
        return program
    filters = list(program.filters)
    for m in _NUMBERED.finditer(text or ""):
        raw = m.group("n").lower()
        number = float(raw) if raw.isdigit() else _COUNTS[raw]
        noun = m.group("noun").casefold()
        columns = [col for col in typed.columns if col.numeric and names_column(col.name, noun)]
        if len(columns) != 1 or len(filters) >= MAX_FILTERS or any(f.column == columns[0].ident for f in filters) \
                or program.column == columns[0].ident:
            continue  # (a program reading Doses checks the number: "Ad26.COV2.S is a two-dose vaccine")
        col = columns[0]
        rows = typed.scope or range(1, typed.table.n_rows + 1)
        hits = [r for r in rows if typed.number(r, col.index) == number]
        if not hits or len(hits) == len(rows):
            continue
        filters.append(RowFilter(column=col.ident, op="=", value=f"{number:g}"))
    return program if filters == program.filters else program.model_copy(update={"filters": filters})
