"""Which rows a table program's filters select: the primitives the executor, its checks and its description share.

A filter's column looked up by name, a filter met by one row, the rows that only add up the others, and
several '=' filters on one column read as one choice. They sit below :mod:`tools._table_ops` (which runs a
program), :mod:`tools._table_checks` (which checks its result) and :mod:`tools._table_describe` (which says it in
words) because all three need them, and imports point one way: none of these primitives imports any of the three.
"""

from __future__ import annotations

import re

from tools._cells import TypedTable, cell_number, compare, compare_dates, iso_month_match, norm_text, words_match, \
    written_tolerance
from tools._table_ops_model import Program, ProgramError, RowFilter
from tools._written_share import share_pair, stated_share

_TOTAL_ROW = re.compile(r"^(grand |overall )?totals?\b|^all$|^sum$", re.I)


def column_index(typed: TypedTable, ident: str | None, role: str) -> int:
    """The index of column ``ident``; a :class:`ProgramError` naming the table's columns when it has none."""
    if not ident:
        raise ProgramError(f"the program gives no {role}")
    try:
        return typed.column(ident).index
    except KeyError:
        raise ProgramError(f"the {role} {ident!r} is not a column of this table; columns: "
                           + ", ".join(typed.idents)) from None


def total_rows(typed: TypedTable) -> list[int]:
    """Rows that sum up the others ("Total", "Totals", "Grand total" in the first two columns).

    A maximum, a count or an argmax over a league table must not pick its totals row; a filter that
    names the totals row selects it as usual.
    """
    out = []
    for r in range(1, typed.table.n_rows + 1):
        heads = [norm_text(typed.text(r, c)) for c in range(1, min(2, typed.table.n_cols) + 1)]
        if any(_TOTAL_ROW.match(h) for h in heads if h):
            out.append(r)
    return out


def rows_but_totals(typed: TypedTable) -> list[int]:
    """Every row but a totals row: the whole a share is taken of (the totals found once, not once per row)."""
    totals = set(total_rows(typed))
    return [r for r in range(1, typed.table.n_rows + 1) if r not in totals]


def filter_groups(program: Program, union_same_column: bool) -> list[list[RowFilter]]:
    """The filters as AND-ed groups; a group of several is their OR (one column asked for several values)."""
    equal_on = [(f.column, norm_text(f.value)) for f in program.filters if f.op == "="]
    if len({col for col, _ in equal_on}) == len(set(equal_on)):
        return [[f] for f in program.filters]
    if not union_same_column:
        # "Species = 'Gray wolf' and Species = 'Red fox'" selects nothing by construction: not a reading of a claim.
        raise ProgramError("two filters ask one column for two different values, which no row has")
    # A question's "how many in Barrington, Farmington or Rochester" comes as three '=' filters on one column:
    # read as AND they select nothing, so they mean any of the values.
    groups: dict[str, list[RowFilter]] = {}
    out: list[list[RowFilter]] = []
    for f in program.filters:
        if f.op == "=":
            if f.column not in groups:
                groups[f.column] = []
                out.append(groups[f.column])
            groups[f.column].append(f)
        else:
            out.append([f])
    return out


def meets_filter(typed: TypedTable, r: int, f: RowFilter, *, words: bool = False) -> bool:
    """Whether row ``r`` meets filter ``f`` (``words``: an '=' text value may also be whole words of the cell)."""
    try:
        c = typed.column(f.column).index
        other = typed.column(f.than_column).index if f.than_column else None
    except KeyError:
        return False
    if other is not None:  # this row's numbers in two columns (tools._column_against)
        shares = share_pair(typed, r, c, other) if f.by_share else None
        a, b = shares if shares is not None else (typed.number(r, c), typed.number(r, other))
        if a is not None and b is not None and compare(str(a), a, f.op, str(b), b, tolerance=0):
            return True
        return f.alternative is not None and meets_filter(typed, r, f.alternative)
    if f.op in ("=", "contains"):
        in_month = iso_month_match(typed.text(r, c), f.value)
        if in_month is not None:
            return in_month
    wanted = cell_number(f.value)
    if compare_cell(typed, r, c, f.op, f.value, wanted):
        return True
    if f.alternative is not None and meets_filter(typed, r, f.alternative):
        return True
    return words and f.op == "=" and wanted is None and words_match(typed.text(r, c), f.value)


ORDER = ("<", "<=", ">", ">=")


def compare_cell(typed: TypedTable, r: int, c: int, op: str, value: str, wanted: float | None) -> bool:
    """Whether cell (r, c) meets ``op value``: in time for a column of dates ("Published > 2020"), else as
    numbers or text (``tools._cells.compare``)."""
    if op in ORDER and typed.columns[c - 1].holds_dates:
        in_time = compare_dates(typed.text(r, c), op, value)
        if in_time is not None:
            return in_time
    # "fewer than 10%" over a cell "98 (8.2%)" compares the share it writes, not the count
    share = stated_share(typed, r, c, value) if wanted is not None else None
    number = share if share is not None else typed.number(r, c)
    return compare(typed.text(r, c), number, op, value, wanted,
                   tolerance=written_tolerance(value) if wanted is not None else 0)


def selects_only(typed: TypedTable, f: RowFilter, row: int) -> bool:
    """``f`` selects ``row`` alone (its "!=" every row but ``row``)."""
    as_equal = f.model_copy(update={"op": "="}) if f.op == "!=" else f
    return [r for r in range(1, typed.table.n_rows + 1) if meets_filter(typed, r, as_equal)] == [row]
