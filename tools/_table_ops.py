"""Table programs: a short chain of fixed operations, validated and run in plain Python.

What a program is, and the schema the model writes it under, are in :mod:`tools._table_ops_model`. Nothing the
model wrote is ever evaluated as code: the executor interprets the fixed operations over the typed table, within
row and time limits, and records the cells it read in the rows that decided the result (the citations).
Anything wrong with a program is a :class:`ProgramError` with one sentence saying what, never a crash.

This module runs a program (:func:`execute`): it selects the rows and computes the result. The check of a claim's
result is in :mod:`tools._table_checks`, the program in words in :mod:`tools._table_shape`, and the row
selection primitives all three share in :mod:`tools._table_shape`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import statistics
import time
from typing import Any

from tools._cells import TypedTable, cell_number, clipped, compare, format_value, is_empty, iso_month_match, \
    norm_text, text_words, with_written_unit, words_match
from tools._row_across import execute_across
from tools._table_checks import (check_result, check_types, in_none_of, row_change, row_names, row_ratio,
                                  row_relative_change)
from tools._table_ops_model import MAX_CELLS, MAX_FILTERS, MAX_ROWS, RATIO_FNS, TIME_LIMIT_S, Execution, \
    NoNumbersError, Program, ProgramError
from tools._table_shape import ORDINALS, column_index, compare_cell, filter_groups, meets_filter, quoted, \
    rows_but_totals, rows_in_words, total_rows


class _Clock:
    def __init__(self, limit_s: float):
        self.deadline = time.perf_counter() + limit_s
        self.limit_s = limit_s

    def tick(self) -> None:
        if time.perf_counter() > self.deadline:
            raise ProgramError(f"the program ran longer than {self.limit_s:g} s and was stopped")


def execute(program: Program, typed: TypedTable, *, time_limit_s: float = TIME_LIMIT_S,
            max_rows: int = MAX_ROWS, union_same_column: bool = False) -> Execution:
    """Run ``program`` over ``typed``; raise :class:`ProgramError` if it cannot run.

    ``union_same_column``: several '=' filters on one column select rows with any of the values (questions),
    instead of being refused as a contradiction (claims).
    """
    table = typed.table
    if table.n_rows > max_rows:
        raise ProgramError(f"the table has {table.n_rows:,} rows; programs run on at most {max_rows:,}")
    if len(program.filters) > MAX_FILTERS:
        raise ProgramError(f"at most {MAX_FILTERS} filters, got {len(program.filters)}")
    clock = _Clock(time_limit_s)
    steps: list[str] = []
    rows = list(range(1, table.n_rows + 1))
    if typed.scope:  # a follow-up about the previous answer's rows ranges over those rows only
        scope = set(typed.scope)
        rows = [r for r in rows if r in scope]
        steps.append(f"the rows of the previous answer ({rows_in_words(typed, rows)}): "
                     f"{len(rows)} of {table.n_rows} rows")
    filter_cols: list[int] = []
    named_rows: list[int] = []
    groups = filter_groups(program, union_same_column)
    totals = set(total_rows(typed))
    if totals and len(totals) < len(rows):
        rows = [r for r in rows if r not in totals]
        named = [r for r in sorted(totals) if any(f.op in ("=", "contains") and meets_filter(typed, r, f)
                                                   for group in groups for f in group)]
        rows = sorted(rows + named)
        if len(named) < len(totals):
            steps.append(f"the totals row{'s' if len(totals) - len(named) > 1 else ''} "
                         f"({', '.join(f'R{r}' for r in sorted(totals - set(named)))}) left out")
    universe = list(rows)  # what "the only rows" ranges over: every row but an unnamed totals row
    for group in groups:
        if len(group) > 1:
            c = column_index(typed, group[0].column, "filter column")
            filter_cols.append(c)
            kept = [r for r in rows if any(meets_filter(typed, r, f, words=True) for f in group)]
            clock.tick()
            steps.append(f"{typed.column(group[0].column).name} is one of "
                         f"{', '.join(repr(f.value) for f in group)}: {len(kept)} of {len(rows)} rows")
            rows = kept
            continue
        [f] = group
        c = column_index(typed, f.column, "filter column")
        filter_cols.append(c)
        if f.than_column:  # a column against another of the same row: "Enrolled < Target"
            other = column_index(typed, f.than_column, "filter column")
            filter_cols.append(other)
            either = [f] + ([f.alternative] if f.alternative is not None else [])
            if f.alternative is not None:  # "outside its range": Result < Low or Result > High
                alt = f.alternative
                filter_cols += [column_index(typed, x, "filter column")
                                for x in (alt.column, alt.than_column or alt.column)]
            kept = [r for r in rows if meets_filter(typed, r, f)]
            clock.tick()
            said = " or ".join(f"{typed.column(g.column).name} {g.op} {typed.column(g.than_column or g.column).name}"
                               for g in either)
            steps.append(f"{said}{' by the percentages the cells write' * f.by_share}: {len(kept)} of {len(rows)} rows")
            rows = kept
            continue
        wanted = cell_number(f.value)
        kept = []
        alt = f.alternative  # "an interval excluding 1": lower bound > 1 or upper bound < 1 (tools._intervals)
        if alt is not None:
            filter_cols.append(column_index(typed, alt.column, "filter column"))
        for r in rows:
            clock.tick()
            if compare_cell(typed, r, c, f.op, f.value, wanted) or (alt is not None and meets_filter(typed, r, alt)):
                kept.append(r)
        either = f" or {typed.column(alt.column).name} {alt.op} {quoted(alt.value)}" if alt is not None else ""
        note = ""
        if kept and union_same_column and f.op == "=" and wanted is None:
            # A question's value also names the cells that list it: "how many commissioners served under calvin
            # coolidge?" counts "Warren G. Harding, Calvin Coolidge" too (WTQ's training split).
            listing = [r for r in rows if r not in kept and _lists(typed.text(r, c), f.value)]
            if listing:
                kept = sorted(kept + listing)
                note = f" (with {len(listing)} that list it among others)"
        if not kept and f.op == "=" and clipped(f.value):
            # The prompt shows long cells clipped ("Oral doxycycline: 100 mg twice per…"), and the grammar
            # offers them so: such a value names the cells it is the start of.
            start = norm_text(f.value.rstrip("…. "))
            kept = [r for r in rows if norm_text(typed.text(r, c)).startswith(start)]
            note = " (a clipped value: rows whose cell starts with it)" if kept else ""
        if not kept and f.op == "=" and (wanted is None or not typed.columns[c - 1].numeric):
            # Small models write the short form of a cell ("Quebec" for "Quebec (QC)"): when nothing is equal,
            # take the cells that contain the value as whole words. A number in a text column counts too:
            # "Date = 1906" names the cells "1906–07" and "March 1906".
            kept = [r for r in rows if words_match(typed.text(r, c), f.value)]
            note = " (no cell equals it; rows whose cell contains it as words)" if kept else ""
        if not kept and f.op in ("=", "contains"):
            kept = [r for r in rows if iso_month_match(typed.text(r, c), f.value)]
            note = " (dates in the month it names)" if kept else ""
        steps.append(f"{typed.column(f.column).name} {f.op} {quoted(f.value)}{either}: {len(kept)} of {len(rows)} rows"
                     f"{note}")
        if not named_rows and f.op == "=" and 1 <= len(kept) <= 3:
            named_rows = list(kept)  # the rows a value names, cited where a count of them comes to nothing
        rows = kept
    c = column_index(typed, program.column, "column")
    fn = program.fn
    label = typed.label_col
    answer_c = column_index(typed, program.answer_column, "answer column") if program.answer_column else (label or c)
    decisive: list[int] = list(rows)
    read_cols = [c]
    truth: bool | None = None
    check_text = ""
    share_cells: list[tuple[int, int]] = []

    if program.per_column and program.minus_column and program.per_column != program.minus_column:
        # the one form with both is the relative change, (column - minus_column) / minus_column: "grew fastest"
        raise ProgramError("a program divides by another column or subtracts one, not both")
    # The computed column: ``column`` over ``per_column``, or ``column`` minus ``minus_column``, row by row.
    per_c = _operand_column(typed, program.per_column, "ratio", fn, c)
    minus_c = _operand_column(typed, program.minus_column, "change", fn, c)
    read_cols += [x for x in (per_c, minus_c) if x is not None]
    # one column of dates minus another: a number of days ("2023-12-15 − 2023-10-02 = 74 days")
    duration = minus_c is not None and typed.columns[c - 1].holds_dates

    def numbers(rs: list[int]) -> list[tuple[int, float]]:
        col = typed.columns[c - 1]
        # A column of dates has an order (the latest, the earliest), but no sum or mean.
        if not (col.numeric or (col.holds_dates and per_c is None and fn in ("argmax", "argmin", "min", "max"))):
            raise ProgramError(f"{fn} needs numbers, but column {program.column!r} holds "
                               + ("dates" if col.holds_dates else "text"))
        out = []
        for r in rs:
            clock.tick()
            # the computed column: this row's value over its divisor (none when 0 or empty)
            x = row_relative_change(typed, r, c, minus_c) if per_c is not None and minus_c is not None else \
                row_ratio(typed, r, c, per_c) if per_c is not None else \
                row_change(typed, r, c, minus_c) if minus_c is not None else typed.order_value(r, c)
            if x is None or is_empty(typed.text(r, c)):
                continue
            out.append((r, x))
        if not out:
            raise NoNumbersError(f"no numbers in column {program.column!r}"
                               + (f" with a non-zero {program.per_column!r}" if per_c else "")
                               + f" among the {len(rs)} selected rows")
        return out

    if fn not in ("count", "count_distinct") and not rows:
        raise ProgramError("no row matches the filters: "
                           + "; ".join(steps) + " (check the values against the example values)")
    if program.across:  # one row's cells across columns: "Nigeria's average coverage over 2019 to 2022"
        return execute_across(program, typed, rows, filter_cols, steps)
    if fn == "value":
        values = [typed.text(r, c) for r in rows]
        if program.check is not None and len({text_words(v) for v in values}) > 1 \
                and not in_none_of(program, typed, values, c, rows):
            # A claim states one value of one thing; a check over several different cells reads no such claim,
            # unless the value is in none of them: "the date for the opponent the chicago bear be december 5 ,
            # 1983" over two Chicago games, on other dates, is false whichever game was meant (TabFact's tuning
            # split). all() over the values then refutes it.
            raise ProgramError(f"the filters select {len(rows)} rows with different values in column "
                               f"{program.column!r}; a value check needs the one row the claim is about "
                               "(add a filter, or use every, count or argmax)")
        result: Any = values[0] if len(values) == 1 else values
        result_text = format_value(result)
    elif fn == "count":
        result = float(len(rows))
        result_text = str(len(rows))
        read_cols = []
    elif fn == "count_distinct":
        result, decisive = _distinct(typed, rows, c, clock)
        result_text = format_value(result)
        read_cols = [c]
    elif fn == "share" and not typed.columns[c - 1].numeric and not typed.columns[c - 1].holds_dates:
        # a share of a column of names is a share of the rows: "What percentage of wards passed the audit?"
        # (tools._question_counts), the selected rows over every row but a totals row
        counted = rows_but_totals(typed)
        whole_rows = set(counted)
        part = [r for r in rows if r in whole_rows]
        if not counted:
            raise ProgramError("the table has no rows but totals, of which no share can be taken")
        result = f"{format_value(round(100 * len(part) / len(counted), 1))}%"
        result_text = f"{result} ({len(part)} of {len(counted)} rows)"
        decisive, read_cols = part, [c]
    elif fn == "share":
        if typed.columns[c - 1].holds_years or not typed.columns[c - 1].numeric:
            raise ProgramError(f"column {program.column!r} holds no amounts to take a share of")
        counted = rows_but_totals(typed)
        part, whole = numbers(rows), numbers(counted)
        total = math.fsum(x for _, x in whole)
        if total == 0:
            raise ProgramError(f"column {program.column!r} adds up to 0, of which no share can be taken")
        # a text with its % sign: the answer's headline is the result, and "38.3" alone reads as a count
        result = f"{format_value(round(100 * math.fsum(x for _, x in part) / total, 1))}%"
        result_text = f"{result} ({format_value(math.fsum(x for _, x in part))} of {format_value(total)})"
        share_cells = [(r, c) for r, _ in whole if r not in rows]  # the rest of the total, cited beside the part
    elif fn in ("sum", "avg", "median", "min", "max"):
        if fn in ("sum", "avg") and typed.columns[c - 1].holds_years:
            raise ProgramError(f"column {program.column!r} holds years, which are not added up or averaged "
                               "(count the rows, or take the min or max)")
        pairs = numbers(rows)
        xs = [x for _, x in pairs]
        if fn == "sum":
            result = float(math.fsum(xs))
        elif fn == "avg":
            result = float(math.fsum(xs) / len(xs))
        elif fn == "median":
            result = float(statistics.median(xs))
        else:
            result = _nth_extreme(xs, largest=fn == "max", nth=program.nth)
            decisive = [r for r, x in pairs if x == result]
        result_text = f"{format_value(result)} days" if duration else \
            _as_written(typed, decisive, c, result) if fn in ("min", "max") else \
            with_written_unit([typed.text(r, c) for r, _ in pairs], result) + _left_out(typed, rows, pairs, c)
        if minus_c is not None and per_c is not None:  # a relative change: "+28.4%"
            result_text = f"{100 * result:+.1f}%" if fn in ("min", "max") else format_value(result)
        elif minus_c is not None and len(decisive) == 1:  # the two cells the change subtracts: "86 − 89 = -3"
            result_text = _worked(typed, decisive[0], c, "−", minus_c, result_text)
        elif per_c is not None and len(rows) == 1:  # one named row's rate, with its two cells: "61 / 412 = 0.1481"
            result_text = _worked(typed, decisive[0], c, "/", per_c, result_text)
        if typed.columns[c - 1].holds_dates and not duration:  # the latest date is the date, as its cell writes it
            result = result_text
        elif duration and program.check is None and len(decisive) == 1:  # a question's answer says its unit
            result = f"{format_value(result)} days"
    elif fn in ("argmax", "argmin") and program.group:
        result, result_text, decisive = _group_extreme(typed, numbers(rows), answer_c, fn == "argmax", program.nth,
                                                       mean=program.group == "mean")
        read_cols = [c, answer_c]
    elif fn in ("argmax", "argmin"):
        pairs = numbers(rows)
        best = _nth_extreme([x for _, x in pairs], largest=fn == "argmax", nth=program.nth)
        decisive = [r for r, x in pairs if x == best]
        names = [" ".join(typed.text(r, answer_c).split()) for r in decisive]
        result = names[0] if len(names) == 1 else names
        shown = f"{format_value(best)} days" if duration else _as_written(typed, decisive, c, best)
        if len(decisive) == 1 and per_c and minus_c:  # "(241.3 − 187.9) / 187.9 = +28.4%"
            r = decisive[0]
            start = " ".join(typed.text(r, minus_c).split())
            shown = f"({' '.join(typed.text(r, c).split())} − {start}) / {start} = {100 * best:+.1f}%"
        elif len(decisive) == 1 and (per_c or minus_c):  # with the two cells: "31 / 36 = 0.8611", "86 − 89 = -3"
            shown = _worked(typed, decisive[0], c, "/" if per_c else "−", per_c or minus_c, shown)
        result_text = f"{format_value(result)} ({shown})"
        read_cols = [c, answer_c] + [x for x in (per_c, minus_c) if x is not None]
    elif fn in ("every", "only"):
        if program.check is None:
            raise ProgramError(f"{fn} needs a check: the condition every selected row must meet")
        chk = program.check
        want = cell_number(chk.value)
        other_c = None
        if chk.against == "column":  # "every African country's coverage rose from 2022 to 2023": row by row
            other_c = column_index(typed, chk.value, "comparison column")
            if other_c == c or not (typed.columns[c - 1].numeric and typed.columns[other_c - 1].numeric):
                raise ProgramError("a comparison within each row needs two different columns of numbers")
            read_cols = [c, other_c]
        else:
            check_types(typed, chk.op, chk.value, numeric_result=typed.columns[c - 1].numeric,
                        what=f"column {program.column!r}")
        meets = set()
        for r in universe:
            clock.tick()
            if other_c is not None:
                right = typed.number(r, other_c)
                if right is not None and compare(typed.text(r, c), typed.number(r, c), chk.op,
                                                 typed.text(r, other_c), right):
                    meets.add(r)
            elif compare(typed.text(r, c), typed.number(r, c), chk.op, chk.value, want):
                meets.add(r)
        selected = set(rows)
        if fn == "every":
            failing = [r for r in rows if r not in meets]
            truth = not failing
            decisive = failing or rows
        else:
            intruders = sorted((meets - selected) | (selected - meets))
            truth = bool(selected) and not intruders
            decisive = intruders or rows
        result = truth
        result_text = format_value(truth)
        check_text = f"{typed.column(program.column).name} {chk.op} " + (
            typed.columns[other_c - 1].name if other_c is not None else quoted(chk.value))
    elif fn == "most_common" and program.more_rows_than is not None:
        result, result_text, decisive = _held_by_more_rows(typed, rows, c, clock, program.more_rows_than)
    elif fn == "most_common":
        result, result_text, decisive = _most_common(typed, rows, c, clock)
    elif fn in ("next_row", "previous_row"):
        result, decisive = _neighbour(typed, rows, universe, c, after=fn == "next_row")
        result_text = format_value(result)
    elif fn == "difference":
        pairs = numbers(rows)
        if len(pairs) != 2:
            raise ProgramError(f"difference needs exactly two selected rows with numbers in {program.column!r}, "
                               f"got {len(pairs)}")
        (ra, a), (rb, b) = pairs
        result = float(abs(a - b))
        result_text = format_value(result)
        decisive = [ra, rb]
    else:  # pragma: no cover - the Literal rules it out
        raise ProgramError(f"unknown operation {fn!r}")

    extra_cells: list[tuple[int, int]] = []
    chk = program.check
    if chk is not None and chk.against == "row" and fn in ("max", "min", "value", "sum", "avg") and len(rows) == 1 \
            and row_names(typed, rows[0], chk.value):
        # A row compared with itself decides nothing. Seen: "AWARD-1 had the most dropouts relative to its
        # participants" as the largest ratio over AWARD-1's row, checked against AWARD-1 (true of any row), and
        # "Is it true that Oslo enrolled more than its target?" as Oslo's Enrolled > Oslo's Enrolled (false).
        raise ProgramError(f"the filters keep only {chk.value!r}, the row the check compares with: a row "
                           "compared with itself decides nothing")
    if program.check is not None and fn not in ("every", "only"):
        truth, check_text, extra_cells = check_result(program, typed, result, c, rows)
    cols = list(dict.fromkeys(filter_cols + read_cols))
    cells = [(r, cc) for r in decisive for cc in cols]
    if fn in ("value", "min", "max", "sum", "avg", "count", "difference") and label and label not in cols \
            and len(decisive) <= 3:
        cells = [(r, label) for r in decisive] + cells  # name the row the number belongs to
    if fn == "count" and not cells and label and len(decisive) <= MAX_CELLS:
        # "How many countries are listed?" reads no column: the names of the rows it counted are what a reader
        # checks the count against (found as a new user: an answer citing nothing, shown as unverified).
        cells = [(r, label) for r in decisive]
    if fn == "count" and not rows and named_rows:
        # "The CI for men excludes 1" counts Men's rows whose bounds hold 1: none. The row the value named, with the
        # cells the other filters read, is what shows the count is 0 (else a true "none" would cite nothing).
        cells = [(r, cc) for r in named_rows for cc in ([label] if label else []) + filter_cols]
    cells = list(dict.fromkeys(cells + extra_cells + share_cells))[:MAX_CELLS]
    return Execution(selected=rows, result=result, result_text=result_text, decisive_rows=decisive, cells=cells,
                     truth=truth, check_text=check_text, steps=steps)


def selected_rows(program: Program, typed: TypedTable) -> list[int] | None:
    """The rows ``program`` ranges over, whatever its check (one comparing a row with itself does not run), or
    None when it cannot run."""
    try:
        return execute(program.model_copy(update={"check": None}), typed).selected
    except ProgramError:
        return None


def _operand_column(typed: TypedTable, ident: str | None, what: str, fn: str, c: int) -> int | None:
    """The index of the column a computed column takes with ``column`` (``what``: "ratio" or "change"), checked:
    another column of numbers, feeding one of RATIO_FNS; None without one."""
    if not ident:
        return None
    other = column_index(typed, ident, f"{what} column")
    if fn not in RATIO_FNS:
        raise ProgramError(f"a {what} of two columns feeds {', '.join(RATIO_FNS)}, not {fn}")
    dates = what == "change" and typed.columns[other - 1].holds_dates and typed.columns[c - 1].holds_dates
    if not (typed.columns[other - 1].numeric or dates) or other == c:  # two columns of dates: a duration
        raise ProgramError(f"the {what} column {ident!r} must be another column of numbers")
    return other


MAX_LEFT_OUT_NAMED = 3


def _left_out(typed: TypedTable, rows: list[int], pairs: list[tuple[int, float]], c: int) -> str:
    """What a sum or an average did not count: " (not counted: East '—', Central empty)"; "" when it counted every
    selected row. Found as a new user: "How many cases were there in total?" answered 190 over a table whose South
    row holds "<5" (suppressed) and whose Central row is empty, and nothing said the total leaves them out."""
    counted = {r for r, _ in pairs}
    totals = set(total_rows(typed))
    missing = [r for r in rows if r not in counted and r not in totals]
    if not missing:
        return ""
    named = [f"{typed.row_name(r)} "
             + (f"'{' '.join(typed.text(r, c).split())}'" if typed.text(r, c).strip() else "empty")
             for r in missing[:MAX_LEFT_OUT_NAMED]]
    more = f" and {len(missing) - MAX_LEFT_OUT_NAMED} more" if len(missing) > MAX_LEFT_OUT_NAMED else ""
    return f" (not counted: {', '.join(named)}{more})"


def _worked(typed: TypedTable, r: int, c: int, sign: str, other: int, shown: str) -> str:
    """Row ``r``'s computed value with the two cells it comes from: "31 / 36 = 0.8611", "86 − 89 = -3"."""
    return f"{' '.join(typed.text(r, c).split())} {sign} {' '.join(typed.text(r, other).split())} = {shown}"


def _as_written(typed: TypedTable, rows: list[int], c: int, number: float) -> str:
    """The number as its cells write it ("17.1%", "$4,512"), so a reason keeps the unit the table shows; the
    plain number when the cells differ or hold another number (a ratio over two columns)."""
    written = {" ".join(typed.text(r, c).split()) for r in rows}
    if len(written) == 1:
        (text,) = written
        # the column's own number for the cell: the cell's number, or its number in the column's unit ("1200 mg")
        if (typed.number(rows[0], c) == number or typed.columns[c - 1].holds_dates) and len(text) <= 40:
            return text
    if typed.columns[c - 1].holds_dates and number.is_integer() and number >= 1:
        return dt.date.fromordinal(int(number)).isoformat()
    return format_value(number)


def _nth_extreme(xs: list[float], *, largest: bool, nth: int) -> float:
    """The ``nth`` distinct value from the top (or bottom) of ``xs``: ties share a place, so the second highest of
    9, 9, 7 is 7."""
    distinct = sorted(set(xs), reverse=largest)
    if nth > len(distinct):
        raise ProgramError(f"the {ORDINALS.get(nth, str(nth))} {'largest' if largest else 'smallest'} value is "
                           f"asked, but the selected rows hold only {len(distinct)} different values")
    return distinct[nth - 1]


def _value_groups(typed: TypedTable, rows: list[int], c: int,
                  clock: _Clock) -> tuple[dict[str, str], dict[str, list[int]]]:
    """``rows`` grouped by the non-empty value of column ``c`` (compared as words): each group's value as first
    written, and its rows, in table order."""
    first: dict[str, str] = {}
    where: dict[str, list[int]] = {}
    for r in rows:
        clock.tick()
        text = typed.text(r, c)
        if is_empty(text):
            continue
        key = text_words(text)
        first.setdefault(key, " ".join(str(text).split()))
        where.setdefault(key, []).append(r)
    return first, where


def _group_extreme(typed: TypedTable, pairs: list[tuple[int, float]], answer_c: int, largest: bool,
                   nth: int, mean: bool = False) -> tuple[Any, str, list[int]]:
    """The value of ``answer_c`` whose rows' numbers add up to the largest (smallest) total, that total, and its
    rows: "which region has the fewest beds in total?" over clinics sums each region's clinics. With ``mean``,
    each group's average instead: "which category has the most calories on average?"."""
    first: dict[str, str] = {}
    totals: dict[str, float] = {}
    rows_of: dict[str, list[int]] = {}
    for r, x in pairs:
        text = typed.text(r, answer_c)
        if is_empty(text):
            continue
        key = text_words(text)
        first.setdefault(key, " ".join(str(text).split()))
        totals[key] = totals.get(key, 0.0) + x
        rows_of.setdefault(key, []).append(r)
    if not totals:
        raise ProgramError("no rows with a value to group by")
    if mean:
        totals = {k: v / len(rows_of[k]) for k, v in totals.items()}
    best = _nth_extreme(list(totals.values()), largest=largest, nth=nth)
    keys = [k for k, v in totals.items() if v == best]
    names = [first[k] for k in keys]
    result: Any = names[0] if len(names) == 1 else names
    counted = {k: f" ({len(rs)} row{'s' * (len(rs) != 1)})" if mean else "" for k, rs in rows_of.items()}
    shown = "; ".join(f"{first[k]} {format_value(round(v, 4))}{counted[k]}"
                      for k, v in sorted(totals.items(), key=lambda kv: -kv[1]))
    label = "averages" if mean else "totals"
    return result, f"{format_value(result)} ({label}: {shown})", sorted(r for k in keys for r in rows_of[k])


def _most_common(typed: TypedTable, rows: list[int], c: int, clock: _Clock) -> tuple[Any, str, list[int]]:
    """The value of column ``c`` found in most of ``rows`` (ties: all of them, in table order)."""
    first, where = _value_groups(typed, rows, c, clock)
    if not where:
        raise ProgramError("no values to count among the selected rows")
    top = max(len(rs) for rs in where.values())
    keys = [k for k, rs in where.items() if len(rs) == top]
    names = [first[k] for k in keys]
    result: Any = names[0] if len(names) == 1 else names
    return result, f"{format_value(result)} ({top} rows)", sorted(r for k in keys for r in where[k])


def _held_by_more_rows(typed: TypedTable, rows: list[int], c: int, clock: _Clock,
                       more_than: int) -> tuple[Any, str, list[int]]:
    """The values of column ``c`` each held by more than ``more_than`` of ``rows`` (table order), with their rows;
    "none of them" when no value is (an answer: the rows were counted and no value recurs that often)."""
    first, where = _value_groups(typed, rows, c, clock)
    keys = [k for k, rs in where.items() if len(rs) > more_than]
    if not keys:
        # not "none": a cell written "none" is an empty cell to the answer's checks
        return "none of them", f"none of them (no value is in more than {more_than} row{'s' * (more_than != 1)})", \
            sorted(rows)
    names = [first[k] for k in keys]
    shown = "; ".join(f"{first[k]} ({len(where[k])} rows)" for k in keys)
    return (names[0] if len(names) == 1 else names), shown, sorted(r for k in keys for r in where[k])


def _distinct(typed: TypedTable, rows: list[int], c: int, clock: _Clock) -> tuple[float, list[int]]:
    """How many different non-empty values column ``c`` holds among ``rows``, and the first row of each."""
    _, where = _value_groups(typed, rows, c, clock)
    return float(len(where)), sorted(rs[0] for rs in where.values())


def _neighbour(typed: TypedTable, rows: list[int], universe: list[int], c: int, *,
               after: bool) -> tuple[str, list[int]]:
    """Column ``c`` of the row after (or before) the one selected row, in the table's order."""
    if len(rows) != 1:
        raise ProgramError(f"{'next_row' if after else 'previous_row'} needs the filters to select one row, "
                           f"got {len(rows)}")
    [anchor] = rows
    order = universe if anchor in universe else sorted(universe + [anchor])
    i = order.index(anchor) + (1 if after else -1)
    if not 0 <= i < len(order):
        raise ProgramError(f"R{anchor} is the {'last' if after else 'first'} row: there is no row "
                           f"{'after' if after else 'before'} it")
    other = order[i]
    return " ".join(str(typed.text(other, c)).split()), [anchor, other]


_LIST_SEPARATOR = re.compile(r"\s*(?:[,;/&]|\band\b)\s*", re.I)


def _lists(cell: str, value: str) -> bool:
    """Whether ``cell`` is a list of several items ("Warren G. Harding, Calvin Coolidge") and one is ``value``."""
    items = [i for i in _LIST_SEPARATOR.split(cell) if i]
    return len(items) > 1 and len(norm_text(value)) >= 3 and any(text_words(i) == text_words(value) for i in items)
