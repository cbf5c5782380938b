"""A year the text states, read at the grain it is written in: "after 2020" is a later year, not a later day.

Found as a new user: "Every study published after 2020 enrolled fewer than 1,000 participants" was written as
"Published > '2020-01-01'", which keeps a study of November 2020. When a filter orders a column of dates by a
full date the text never writes, and the text writes that date's year as a bare number, the filter compares
years ("Published > '2020'"; ``tools._dates.compare_dates`` reads a year at the year's grain). Claims and
questions alike.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable
from tools._dates import YEAR, parse_date
from tools._table_ops_model import Program

_ORDER = ("<", "<=", ">", ">=")


def read_stated_year(program: Program, typed: TypedTable, text: str) -> Program:
    """``program`` with each date filter the text only gives the year of read as that year (module docstring)."""
    changed = False
    filters = []
    for f in program.filters:
        try:
            dated = typed.column(f.column).holds_dates
        except KeyError:
            dated = False
        parsed = parse_date(f.value, year_alone=True) if dated and f.op in _ORDER else None
        if parsed is not None and parsed[1] > YEAR and f.value.casefold() not in text.casefold() \
                and re.search(rf"(?<![\d-]){parsed[0].year}(?![\d-])", text):
            f = f.model_copy(update={"value": str(parsed[0].year)})
            changed = True
        filters.append(f)
    return program.model_copy(update={"filters": filters}) if changed else program
