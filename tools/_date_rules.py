"""A year the text states, read at the grain it is written in: "after 2020" is a later year, not a later day.

Found as a new user: "Every study published after 2020 enrolled fewer than 1,000 participants" was written as
"Published > '2020-01-01'", which keeps a study of November 2020. When a filter orders a column of dates by a
full date the text never writes, and the text writes that date's year as a bare number, the filter compares
years ("Published > '2020'"; ``tools._cells.compare_dates`` reads a year at the year's grain). Claims and
questions alike.
"""

from __future__ import annotations

import re

from tools._cells import YEAR, TypedTable, parse_date
from tools._table_ops_model import Program

_ORDER = ("<", "<=", ">", ">=")


def read_stated_year(program: Program, typed: TypedTable, text: str) -> Program:
    """``program`` with each date filter the text only gives the year of read as that year (module docstring)."""
    changed = False
    filters = []
    for f in program.filters:
        parsed = parse_date(f.value, year_alone=True) if f.op in _ORDER and typed.is_dated(f.column) else None
        if parsed is not None and parsed[1] > YEAR and f.value.casefold() not in text.casefold() \
                and _writes_year(text, parsed[0].year):
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
    return parsed[1] == YEAR and _writes_year(text, parsed[0].year)


def _writes_year(text: str, year: int) -> bool:
    """Whether ``text`` writes ``year`` as a number of its own (not inside "2020-21" or "12020")."""
    return re.search(rf"(?<![\d-]){year}(?![\d-])", text) is not None


def dated_filter_columns(program: Program, typed: TypedTable, text: str) -> set[str]:
    """The columns of dates ``program`` filters by a date or year that ``text`` writes."""
    return {f.column for f in program.filters if typed.is_dated(f.column) and _stated(f.value, text)}


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
