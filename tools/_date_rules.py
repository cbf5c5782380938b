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


def _stated(value: str, text: str) -> bool:
    """Whether ``text`` writes this filter's date or, for a year, the year."""
    parsed = parse_date(value, year_alone=True)
    if parsed is None:
        return False
    if value.casefold() in text.casefold():
        return True
    return parsed[1] == YEAR and re.search(rf"(?<![\d-]){parsed[0].year}(?![\d-])", text) is not None


def dated_filter_columns(program: Program, typed: TypedTable, text: str) -> set[str]:
    """The columns of dates ``program`` filters by a date or year that ``text`` writes."""
    out = set()
    for f in program.filters:
        try:
            dated = typed.column(f.column).holds_dates
        except KeyError:
            continue
        if dated and _stated(f.value, text):
            out.add(f.column)
    return out


def leaves_out_stated_date(programs: list[Program], typed: TypedTable, text: str) -> list[str]:
    """For each program, why it does not vote (or ""): another program filters a column of dates by a date or year
    the claim writes, and this one reads that column nowhere.

    Found as a new user: "Is it true that every drug the FDA approved after 2022 treats Alzheimer disease?" had four
    programs check every FDA drug, refuted by two approved in 2017 and 2022, and one that kept the approvals after
    2022 (true). The date is what the claim states; a program without it checks another claim.
    """
    stated = [dated_filter_columns(p, typed, text) for p in programs]
    wanted = set().union(*stated) if stated else set()
    out = []
    for p in programs:
        read = {f.column for f in p.filters} | {p.column}
        missing = sorted(wanted - read)
        out.append(f"another program keeps the rows of the date the claim states ({typed.column(missing[0]).name}), "
                   "and this one reads every date" if missing else "")
    return out
