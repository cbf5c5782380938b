"""Shares the table writes beside its counts: a cell "265 (22.0%)" answers "what share of vaccine recipients had
headache?" with 22.0%.

Clinical tables write "n (%)" in one cell, with the group's size in the header ("Vaccine (n=1,204)"). Found as a
new user: asked "what share of vaccine recipients had it?" (headache), the programs read the cell's count, 265,
and :func:`tools._share_questions.read_share_of_all` made it a share of the column's total, 18.3% of all the
adverse events counted, a number the table never meant. The percentage the cell writes is the share of the
group the column is about; code reads it from the one row the program selects.

A filter the text states as a percentage ("fewer than 10% of placebo recipients") compares those percentages
too (:func:`read_stated_percent`, :func:`stated_share`): found as a new user, the programs compared 10 with the
counts and named one event of the four under 10%. So does a claim's check of one row's cell against a stated
percentage ("22% of vaccine recipients reported headache" was checked as 265 = 22).
"""

from __future__ import annotations

import re
from dataclasses import replace

from tools._cells import TypedTable, format_value, is_empty
from tools._table_ops_model import Execution, Program, RowFilter

# "265 (22.0%)", "1,204 (100 %)", "9 (0.7%)"
_COUNT_AND_SHARE = re.compile(r"^\s*\d[\d,]*(?:\.\d+)?\s*\(\s*(\d+(?:\.\d+)?)\s*%\s*\)\s*$")
SHARE_WRITERS = 0.6  # of a column's filled cells, as many write "n (p%)" for it to be a column of such cells
ONE_CELL_FNS = ("value", "sum", "max", "min", "avg")  # over one row, each reads that row's cell


def _share_digits(cell: str) -> str | None:
    """The digits of the percentage written beside a count ("265 (22.0%)" -> "22.0"), or None."""
    m = _COUNT_AND_SHARE.match(str(cell or ""))
    return m.group(1) if m else None


def written_share(cell: str) -> str | None:
    """The percentage written beside a count ("265 (22.0%)" -> "22.0%"), or None."""
    digits = _share_digits(cell)
    return f"{digits}%" if digits is not None else None


def share_number(cell: str) -> float | None:
    """The percentage written beside a count, as a number ("265 (22.0%)" -> 22.0), or None."""
    digits = _share_digits(cell)
    return float(digits) if digits is not None else None


def stated_share(typed: TypedTable, r: int, c: int, value: str) -> float | None:
    """The share cell (r, c) writes beside its count when ``value``, what it is compared with, is a percentage
    ("fewer than 10%", "22% of vaccine recipients"); None when either is not. A count is never compared with a
    percentage: filters (tools._table_rows.compare_cell) and checks (tools._table_checks) both read this."""
    return share_number(typed.text(r, c)) if str(value).strip().endswith("%") else None


def writes_shares(typed: TypedTable, ident: str) -> bool:
    """Whether most filled cells of column ``ident`` write a count with its percentage."""
    try:
        col = typed.column(ident)
    except KeyError:
        return False
    filled = [v for v in typed.table.column_values(col.index) if not is_empty(v)]
    return bool(filled) and sum(1 for v in filled if written_share(v)) / len(filled) >= SHARE_WRITERS


# The text asks for the counts themselves, not how common something is in each group: "more patients had nausea
# on the drug", "the number of events".
_COUNTS_ASKED = re.compile(r"\b(?:numbers?|counts?)\s+of\b|\babsolute\s+(?:numbers?|terms|counts?)\b|"
                           r"\b(?:more|fewer|less)\s+(?:patients|people|participants|subjects|persons|events|cases)\b",
                           re.I)


def by_share(typed: TypedTable, first: str, second: str, text: str) -> bool:
    """Whether columns ``first`` and ``second`` of one row are compared by the percentages their cells write beside
    their counts: both write "n (p%)" and ``text`` does not ask for the counts.

    Found as a new user, over an adverse-event table whose arms differ in size ("Active drug (n=1012)", "Placebo
    (n=198)"): "Nausea was more common on the active drug than on placebo" was supported by 5 of 5 programs, 41
    events against 16, while the cells say 4.1% against 8.1%. "More common", "more frequent", "higher rate" are
    about each group's share; two counts of unequal groups answer none of them."""
    return writes_shares(typed, first) and writes_shares(typed, second) and not _COUNTS_ASKED.search(text)


def share_pair(typed: TypedTable, r: int, first: int, second: int) -> tuple[float, float] | None:
    """The percentages cells (r, first) and (r, second) write beside their counts, or None when either writes
    none."""
    a, b = share_number(typed.text(r, first)), share_number(typed.text(r, second))
    return None if a is None or b is None else (a, b)


def read_written_share(ex: Execution, program: Program, typed: TypedTable, share_asked: bool) -> Execution:
    """The percentage the one selected row's cell writes, as the answer to a question that asks for a share."""
    if (not share_asked or program.fn not in ONE_CELL_FNS or program.per_column or program.minus_column
            or len(ex.selected) != 1 or not writes_shares(typed, program.column)):
        return ex
    r, c = ex.selected[0], typed.column(program.column).index
    share = written_share(typed.text(r, c))
    if share is None:
        return ex
    cells = [(r, c)] + [cell for cell in ex.cells if cell != (r, c)]
    return replace(ex, result=share, result_text=share, decisive_rows=[r], cells=cells, steps=ex.steps + [
        f"the cell writes the share beside the count: {typed.text(r, c)}"])


_STATED_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b)", re.I)
_FILTER_OPS = ("=", "!=", "<", "<=", ">", ">=")


def read_stated_percent(program: Program, typed: TypedTable, text: str) -> Program:
    """A filter over cells that write "n (p%)" whose value the text states as a percentage compares with the
    percentages: "fewer than 10% of placebo recipients" written as "Placebo < 10" (or "< 0.1") becomes
    "Placebo < 10%"."""
    stated = {round(float(m.group(1)), 6) for m in _STATED_PERCENT.finditer(text)}
    if not stated or not program.filters:
        return program
    filters, changed = [], False
    for f in program.filters:
        if f.op in _FILTER_OPS and writes_shares(typed, f.column) \
                and (as_percent := _as_stated_percent(f.value, stated)) is not None:
            f, changed = RowFilter(column=f.column, op=f.op, value=as_percent), True
        filters.append(f)
    chk = program.check
    if chk is not None and chk.against == "value" and writes_shares(typed, program.column) \
            and program.fn in ONE_CELL_FNS and (as_percent := _as_stated_percent(chk.value, stated)) is not None:
        # "22% of vaccine recipients reported headache": Vaccine of Headache = 22 compares the cell's 22.0%; read as
        # the cell's value (over one row a sum or max is that cell), so the reason shows "265 (22.0%)", not 265.
        return program.model_copy(update={"filters": filters, "fn": "value",
                                          "check": chk.model_copy(update={"value": as_percent})})
    return program.model_copy(update={"filters": filters}) if changed else program


def _as_stated_percent(value: str, stated: set[float]) -> str | None:
    """``value`` written as the percentage the text states ("22" or "0.22" for a stated 22%), else None."""
    value = value.strip()
    if value.endswith("%"):
        return None
    try:
        written = float(value.replace(",", ""))
    except ValueError:
        return None
    as_percent = next((p for p in (written, written * 100) if round(p, 6) in stated), None)
    return f"{as_percent:g}%" if as_percent is not None else None


_PERCENT_ASKED = re.compile(r"\b(?:what|which)\s+(?:share|percentage|percent)\s+of\b", re.I)


def ratio_as_percent(ex: Execution, program: Program, question: str) -> Execution:
    """A ratio of two columns (``per_column``) at most 1, asked for as a share or percentage: "51.6%".

    Found as a new user: "What share of Elm Ridge's population is fully vaccinated?" was answered "0.5162"."""
    if not program.per_column or not _PERCENT_ASKED.search(question) or isinstance(ex.result, bool) \
            or not isinstance(ex.result, (int, float)) or not 0 <= ex.result <= 1:
        return ex
    shown = f"{format_value(round(ex.result * 100, 1))}%"
    return replace(ex, result=shown, result_text=shown,
                   steps=ex.steps + [f"as a percentage: {format_value(ex.result)} is {shown}"])
