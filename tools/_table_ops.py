"""Table programs: a short chain of fixed operations, validated and run in plain Python.

What a program is, and the schema the model writes it under, are in :mod:`tools._table_ops_model`. Nothing the
model wrote is ever evaluated as code: the executor interprets the fixed operations over the typed table, within
row and time limits, and records the cells it read in the rows that decided the result (the citations).
Anything wrong with a program is a :class:`ProgramError` with one sentence saying what, never a crash.

This module runs a program (:func:`execute`) as a small operator algebra (issue 76), in stages:

- select: the filters keep rows (:func:`_select`), the same for every program;
- derive: the column the program computes over, with the column it divides by or subtracts row by row (the
  program's ``options.derive``: a ratio, a change or a relative change), checked (:func:`_derive`);
- the operator the program's ``fn`` names, looked up in :data:`OPERATORS`: one handler per operator, each a small
  function of the run (:class:`_Run`) that gives an :class:`_Outcome`. Operators are grouped by what they do with
  the selected rows: *select* reads their cells (or a neighbour's), *aggregate* computes one value over them,
  *compare* tests a condition on each of them, *rank* names the row (or value) that ranks first;
- the shared post-steps: the claim's check of the result and the cells cited (:func:`_checked`, :func:`_cited`).

A program whose ``options.grouping`` is across columns (one row's cells over several columns) is run by
:func:`execute_across` instead, after the select stage. The check of a claim's result is in
:mod:`tools._table_checks`, the program in words in :mod:`tools._table_shape`, and the row selection primitives all
three share in :mod:`tools._table_shape`.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from tools._cells import TypedTable, cell_number, clipped, compare, format_value, is_empty, iso_month_match, \
    norm_text, text_words, with_written_unit, words_match
from tools._table_checks import (check_result, check_types, in_none_of, row_change, row_names, row_ratio,
                                  row_relative_change)
from tools._table_ops_model import MAX_CELLS, MAX_FILTERS, MAX_ROWS, RATIO_FNS, TIME_LIMIT_S, Execution, \
    NoNumbersError, Program, ProgramError, RowFilter, RowGroups
from tools._table_shape import ORDINALS, column_index, compare_cell, filter_groups, meets_filter, quoted, \
    rows_but_totals, rows_in_words, total_rows


# ======================================================================================================================
# A program grouped across columns (``options.grouping``, an :class:`~tools._table_ops_model.AcrossColumns`): one
# row's cells in several columns aggregated (the mean, total, median, largest or smallest of them, or the column
# holding the largest or smallest). Code sets it (tools._claim_changes.read_across_years); no grammar offers it.
# ======================================================================================================================

ACROSS_FNS = ("avg", "sum", "median", "min", "max", "argmax", "argmin")


def execute_across(program: Program, typed: TypedTable, rows: list[int], filter_cols: list[int],
                   steps: list[str]) -> Execution:
    """Run a program grouped across columns over the one row its filters selected (the section's comment)."""
    if program.fn not in ACROSS_FNS:
        raise ProgramError(f"{program.fn} does not aggregate across columns ({', '.join(ACROSS_FNS)} do)")
    if len(rows) != 1:
        raise ProgramError(f"an aggregate across columns reads one row; the filters select {len(rows)}")
    [r] = rows
    across = program.options.across
    cols = [column_index(typed, ident, "column") for ident in across]
    pairs = [(c, typed.number(r, c)) for c in cols if not is_empty(typed.text(r, c))]
    pairs = [(c, x) for c, x in pairs if x is not None]
    if not pairs:
        raise NoNumbersError(f"{typed.row_name(r)} has no numbers in {', '.join(across)}")
    xs = [x for _, x in pairs]
    fn = program.fn
    result: Any
    if fn in ("argmax", "argmin"):
        best = max(xs) if fn == "argmax" else min(xs)
        read = [c for c, x in pairs if x == best]
        names = [typed.columns[c - 1].name for c in read]
        result = names[0] if len(names) == 1 else names
        result_text = f"{', '.join(names)} ({' '.join(typed.text(r, read[0]).split())})"
    else:
        result = float({"avg": lambda v: math.fsum(v) / len(v), "sum": math.fsum, "median": statistics.median,
                        "max": max, "min": min}[fn](xs))
        read = [c for c, x in pairs if x == result] if fn in ("max", "min") else [c for c, _ in pairs]
        result_text = with_written_unit([typed.text(r, c) for c, _ in pairs], round(result, 2))
    first, last = typed.columns[cols[0] - 1].name, typed.columns[cols[-1] - 1].name
    said = {"avg": "mean", "sum": "total", "median": "median", "max": "largest", "min": "smallest",
            "argmax": "year of the largest", "argmin": "year of the smallest"}[fn]
    listed = ", ".join(f"{typed.columns[c - 1].name} {' '.join(typed.text(r, c).split())}" for c, _ in pairs)
    steps.append(f"the {said} of {typed.row_name(r)}'s {first} to {last} ({listed}): {result_text}")
    truth, check_text, extra = None, "", []
    if program.check is not None:
        if program.check.against != "value":
            raise ProgramError("an aggregate across columns is checked against a value")
        truth, check_text, extra = check_result(program, typed, result, cols[0], rows)
    label = typed.label_col
    cells = ([(r, label)] if label else []) + [(r, c) for c in dict.fromkeys(filter_cols + read) if c != label]
    return Execution(selected=rows, result=result, result_text=result_text, decisive_rows=[r],
                     cells=list(dict.fromkeys(cells + extra)), truth=truth, check_text=check_text, steps=steps)



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
    picked = _select(program, typed, clock, union_same_column)
    run = _derive(program, typed, clock, picked)
    operator = OPERATORS.get(program.fn)  # None is refused below, after the checks an unknown fn meets first
    if not picked.rows and not (operator is not None and operator.runs_on_no_rows):
        raise ProgramError("no row matches the filters: "
                           + "; ".join(picked.steps) + " (check the values against the example values)")
    if program.options.across:  # one row's cells across columns: "Nigeria's average coverage over 2019 to 2022"
        return execute_across(program, typed, picked.rows, picked.filter_cols, picked.steps)
    if operator is None:  # pragma: no cover - the Literal rules it out
        raise ProgramError(f"unknown operation {program.fn!r}")
    outcome = operator.handler(run)
    truth, check_text, extra_cells = _checked(run, operator, outcome)
    return Execution(selected=picked.rows, result=outcome.result, result_text=outcome.result_text,
                     decisive_rows=outcome.decisive, cells=_cited(run, operator, picked, outcome, extra_cells),
                     truth=truth, check_text=check_text, steps=picked.steps)


def selected_rows(program: Program, typed: TypedTable) -> list[int] | None:
    """The rows ``program`` ranges over, whatever its check (one comparing a row with itself does not run), or
    None when it cannot run."""
    try:
        return execute(program.model_copy(update={"check": None}), typed).selected
    except ProgramError:
        return None


# -- select: the rows the filters keep ---------------------------------------------------------------------------
@dataclass
class _Selection:
    rows: list[int]  # the rows left after the filters
    universe: list[int] = field(default_factory=list)  # what "the only rows" ranges over (set before the filters)
    filter_cols: list[int] = field(default_factory=list)  # the columns the filters read, cited beside the result
    named_rows: list[int] = field(default_factory=list)  # the rows an '=' filter's value names (1 to 3 of them)
    steps: list[str] = field(default_factory=list)


def _select(program: Program, typed: TypedTable, clock: _Clock, union_same_column: bool) -> _Selection:
    """The select stage: the rows in scope, less an unnamed totals row, then each filter group in turn."""
    table = typed.table
    picked = _Selection(rows=list(range(1, table.n_rows + 1)))
    if typed.scope:  # a follow-up about the previous answer's rows ranges over those rows only
        scope = set(typed.scope)
        picked.rows = [r for r in picked.rows if r in scope]
        picked.steps.append(f"the rows of the previous answer ({rows_in_words(typed, picked.rows)}): "
                            f"{len(picked.rows)} of {table.n_rows} rows")
    groups = filter_groups(program, union_same_column)
    _leave_out_totals(typed, groups, picked)
    picked.universe = list(picked.rows)  # every row but an unnamed totals row
    for group in groups:
        if len(group) > 1:
            _keep_any_of(typed, group, picked, clock)
            continue
        [f] = group
        c = column_index(typed, f.column, "filter column")
        picked.filter_cols.append(c)
        if f.than_column:
            _keep_against_column(typed, f, picked, clock)
        else:
            _keep_by_value(typed, f, c, picked, clock, union_same_column)
    return picked


def _leave_out_totals(typed: TypedTable, groups: list[list[RowFilter]], picked: _Selection) -> None:
    """Drop the totals rows from the selection, but those an '=' or 'contains' filter names."""
    totals = set(total_rows(typed))
    if not totals or len(totals) >= len(picked.rows):
        return
    rows = [r for r in picked.rows if r not in totals]
    named = [r for r in sorted(totals) if any(f.op in ("=", "contains") and meets_filter(typed, r, f)
                                               for group in groups for f in group)]
    picked.rows = sorted(rows + named)
    if len(named) < len(totals):
        picked.steps.append(f"the totals row{'s' if len(totals) - len(named) > 1 else ''} "
                            f"({', '.join(f'R{r}' for r in sorted(totals - set(named)))}) left out")


def _keep_any_of(typed: TypedTable, group: list[RowFilter], picked: _Selection, clock: _Clock) -> None:
    """Several values of one column (a question's "A or B"): the rows with any of them."""
    picked.filter_cols.append(column_index(typed, group[0].column, "filter column"))
    rows = picked.rows
    kept = [r for r in rows if any(meets_filter(typed, r, f, words=True) for f in group)]
    clock.tick()
    picked.steps.append(f"{typed.column(group[0].column).name} is one of "
                        f"{', '.join(repr(f.value) for f in group)}: {len(kept)} of {len(rows)} rows")
    picked.rows = kept


def _keep_against_column(typed: TypedTable, f: RowFilter, picked: _Selection, clock: _Clock) -> None:
    """A column against another of the same row: "Enrolled < Target"."""
    picked.filter_cols.append(column_index(typed, f.than_column, "filter column"))
    either = [f] + ([f.alternative] if f.alternative is not None else [])
    if f.alternative is not None:  # "outside its range": Result < Low or Result > High
        alt = f.alternative
        picked.filter_cols.extend(column_index(typed, x, "filter column")
                                  for x in (alt.column, alt.than_column or alt.column))
    rows = picked.rows
    kept = [r for r in rows if meets_filter(typed, r, f)]
    clock.tick()
    said = " or ".join(f"{typed.column(g.column).name} {g.op} {typed.column(g.than_column or g.column).name}"
                       for g in either)
    picked.steps.append(f"{said}{' by the percentages the cells write' * f.by_share}: {len(kept)} of {len(rows)} rows")
    picked.rows = kept


def _keep_by_value(typed: TypedTable, f: RowFilter, c: int, picked: _Selection, clock: _Clock,
                   union_same_column: bool) -> None:
    """A column against a value ("Province = Quebec"); an '=' that no cell meets is read more widely
    (:func:`_widened`)."""
    rows = picked.rows
    wanted = cell_number(f.value)
    kept = []
    alt = f.alternative  # "an interval excluding 1": lower bound > 1 or upper bound < 1 (tools._values)
    if alt is not None:
        picked.filter_cols.append(column_index(typed, alt.column, "filter column"))
    for r in rows:
        clock.tick()
        if compare_cell(typed, r, c, f.op, f.value, wanted) or (alt is not None and meets_filter(typed, r, alt)):
            kept.append(r)
    either = f" or {typed.column(alt.column).name} {alt.op} {quoted(alt.value)}" if alt is not None else ""
    kept, note = _widened(typed, f, c, rows, kept, wanted, union_same_column)
    picked.steps.append(f"{typed.column(f.column).name} {f.op} {quoted(f.value)}{either}: {len(kept)} of {len(rows)} "
                        f"rows{note}")
    if not picked.named_rows and f.op == "=" and 1 <= len(kept) <= 3:
        picked.named_rows = list(kept)  # the rows a value names, cited where a count of them comes to nothing
    picked.rows = kept


def _widened(typed: TypedTable, f: RowFilter, c: int, rows: list[int], kept: list[int], wanted: float | None,
             union_same_column: bool) -> tuple[list[int], str]:
    """The rows a value filter keeps, read more widely where the plain comparison keeps none (or, in a question,
    where cells list the value among others), with a note saying how."""
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
    return kept, note


# -- derive: the column computed over ----------------------------------------------------------------------------
@dataclass
class _Run:
    """What every operator's handler reads: the program, the typed table, the selected rows, and the column it
    computes over with the column that column is divided by or has subtracted, row by row (the derive stage)."""

    program: Program
    typed: TypedTable
    clock: _Clock
    rows: list[int]  # the selected rows
    universe: list[int]  # every row but an unnamed totals row
    c: int  # the column ``fn`` computes over
    answer_c: int  # the column an operator that names a row answers with
    per_c: int | None  # ``column`` over this column, row by row
    minus_c: int | None  # ``column`` minus this column, row by row

    @property
    def fn(self) -> str:
        return self.program.fn

    @property
    def operand_cols(self) -> list[int]:
        """The columns the computed column reads: cited beside the result."""
        return [self.c] + [x for x in (self.per_c, self.minus_c) if x is not None]

    @property
    def duration(self) -> bool:
        """One column of dates minus another: a number of days ("2023-12-15 − 2023-10-02 = 74 days")."""
        return self.minus_c is not None and self.typed.columns[self.c - 1].holds_dates

    def numbers(self, rs: list[int]) -> list[tuple[int, float]]:
        """The computed column's number in each of ``rs`` that has one; a :class:`NoNumbersError` when none has."""
        typed, c, program = self.typed, self.c, self.program
        col = typed.columns[c - 1]
        # A column of dates has an order (the latest, the earliest), but no sum or mean.
        if not (col.numeric or (col.holds_dates and self.per_c is None
                                and self.fn in ("argmax", "argmin", "min", "max"))):
            raise ProgramError(f"{self.fn} needs numbers, but column {program.column!r} holds "
                               + ("dates" if col.holds_dates else "text"))
        out = []
        for r in rs:
            self.clock.tick()
            x = self._computed(r)
            if x is None or is_empty(typed.text(r, c)):
                continue
            out.append((r, x))
        if not out:
            raise NoNumbersError(f"no numbers in column {program.column!r}"
                                 + (f" with a non-zero {program.options.divides_by!r}" if self.per_c else "")
                                 + f" among the {len(rs)} selected rows")
        return out

    def _computed(self, r: int) -> float | None:
        """Row ``r``'s value of the computed column: its value over its divisor (none when 0 or empty), its change,
        its relative change (both operands), or the column's own value."""
        typed, c, per_c, minus_c = self.typed, self.c, self.per_c, self.minus_c
        if per_c is not None and minus_c is not None:
            return row_relative_change(typed, r, c, minus_c)
        if per_c is not None:
            return row_ratio(typed, r, c, per_c)
        if minus_c is not None:
            return row_change(typed, r, c, minus_c)
        return typed.order_value(r, c)


def _derive(program: Program, typed: TypedTable, clock: _Clock, picked: _Selection) -> _Run:
    """The derive stage: the program's columns, with the computed column's operands checked."""
    c = column_index(typed, program.column, "column")
    answer_c = column_index(typed, program.answer_column, "answer column") if program.answer_column else \
        (typed.label_col or c)
    # a relative change, (column - from_column) / from_column, is the one derived column that does both
    per_c = _operand_column(typed, program.options.divides_by, "ratio", program.fn, c)
    minus_c = _operand_column(typed, program.options.subtracts, "change", program.fn, c)
    return _Run(program, typed, clock, picked.rows, picked.universe, c, answer_c, per_c, minus_c)


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


# -- the operators -----------------------------------------------------------------------------------------------
@dataclass
class _Outcome:
    """What an operator computed, and what it read: the rows that decided it and their columns to cite."""

    result: Any  # a number, a text, a bool or a list of texts
    result_text: str
    decisive: list[int]
    read_cols: list[int]
    truth: bool | None = None  # set by the operators that are a check themselves (every, only)
    check_text: str = ""
    share_cells: list[tuple[int, int]] = field(default_factory=list)  # the rest of a total, cited beside the part


Stage = Literal["select", "aggregate", "compare", "rank"]
Handler = Callable[[_Run], _Outcome]


@dataclass(frozen=True)
class Operator:
    """One entry of :data:`OPERATORS`: what the operator does with the selected rows (its stage), the handler that
    computes it, and how the shared steps around it treat it."""

    stage: Stage
    handler: Handler
    runs_on_no_rows: bool = False  # a count of no rows is 0, not a failure
    checks_itself: bool = False  # the claim's check is the operator's condition, not a test of its result
    names_its_row: bool = False  # a result read from up to 3 rows cites their names (the label column) too


def _value(run: _Run) -> _Outcome:
    """The selected rows' cells of ``column``, as written."""
    typed, program, rows, c = run.typed, run.program, run.rows, run.c
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
    return _Outcome(result, format_value(result), list(rows), run.operand_cols)


def _neighbour_row(run: _Run) -> _Outcome:
    """next_row, previous_row: ``column`` of the row after (before) the one selected, in the table's order."""
    result, decisive = _neighbour(run.typed, run.rows, run.universe, run.c, after=run.fn == "next_row")
    return _Outcome(result, format_value(result), decisive, run.operand_cols)


def _count(run: _Run) -> _Outcome:
    """The number of selected rows; it reads no column (:func:`_cited` names the rows instead)."""
    return _Outcome(float(len(run.rows)), str(len(run.rows)), list(run.rows), [])


def _count_distinct(run: _Run) -> _Outcome:
    """How many different values ``column`` holds among the selected rows, citing the first row of each."""
    result, decisive = _distinct(run.typed, run.rows, run.c, run.clock)
    return _Outcome(result, format_value(result), decisive, [run.c])


_REDUCTIONS: dict[str, Callable[[list[float]], float]] = {
    "sum": math.fsum, "avg": lambda xs: math.fsum(xs) / len(xs), "median": statistics.median}


def _aggregate(run: _Run) -> _Outcome:
    """sum, avg, median, min and max of the computed column over the selected rows; min and max take the nth
    distinct value from their end and cite the rows that hold it."""
    typed, program, fn, c = run.typed, run.program, run.fn, run.c
    if fn in ("sum", "avg") and typed.columns[c - 1].holds_years:
        raise ProgramError(f"column {program.column!r} holds years, which are not added up or averaged "
                           "(count the rows, or take the min or max)")
    pairs = run.numbers(run.rows)
    xs = [x for _, x in pairs]
    decisive = list(run.rows)
    if fn in _REDUCTIONS:
        result = float(_REDUCTIONS[fn](xs))
    else:
        result = _nth_extreme(xs, largest=fn == "max", nth=program.options.nth)
        decisive = [r for r, x in pairs if x == result]
    result, result_text = _aggregate_text(run, result, pairs, decisive)
    return _Outcome(result, result_text, decisive, run.operand_cols)


def _aggregate_text(run: _Run, result: float, pairs: list[tuple[int, float]],
                    decisive: list[int]) -> tuple[Any, str]:
    """An aggregate's result and its text: in the unit its cells write, with the cells a computed value comes from,
    and what a sum or an average left out."""
    typed, fn, c, per_c, minus_c, duration = run.typed, run.fn, run.c, run.per_c, run.minus_c, run.duration
    result_text = f"{format_value(result)} days" if duration else \
        _as_written(typed, decisive, c, result) if fn in ("min", "max") else \
        with_written_unit([typed.text(r, c) for r, _ in pairs], result) + _left_out(typed, run.rows, pairs, c)
    if minus_c is not None and per_c is not None:  # a relative change: "+28.4%"
        result_text = f"{100 * result:+.1f}%" if fn in ("min", "max") else format_value(result)
    elif minus_c is not None and len(decisive) == 1:  # the two cells the change subtracts: "86 − 89 = -3"
        result_text = _worked(typed, decisive[0], c, "−", minus_c, result_text)
    elif per_c is not None and len(run.rows) == 1:  # one named row's rate, with its two cells: "61 / 412 = 0.1481"
        result_text = _worked(typed, decisive[0], c, "/", per_c, result_text)
    answer: Any = result
    if typed.columns[c - 1].holds_dates and not duration:  # the latest date is the date, as its cell writes it
        answer = result_text
    elif duration and run.program.check is None and len(decisive) == 1:  # a question's answer says its unit
        answer = f"{format_value(result)} days"
    return answer, result_text


def _share(run: _Run) -> _Outcome:
    """The selected rows' share of the whole, as a percentage: of the rows for a column of names, of the column's
    total for a column of amounts."""
    col = run.typed.columns[run.c - 1]
    return _share_of_rows(run) if not col.numeric and not col.holds_dates else _share_of_total(run)


def _share_of_rows(run: _Run) -> _Outcome:
    """A share of a column of names is a share of the rows: "What percentage of wards passed the audit?"
    (tools._question_counts), the selected rows over every row but a totals row."""
    counted = rows_but_totals(run.typed)
    whole_rows = set(counted)
    part = [r for r in run.rows if r in whole_rows]
    if not counted:
        raise ProgramError("the table has no rows but totals, of which no share can be taken")
    result = f"{format_value(round(100 * len(part) / len(counted), 1))}%"
    return _Outcome(result, f"{result} ({len(part)} of {len(counted)} rows)", part, [run.c])


def _share_of_total(run: _Run) -> _Outcome:
    """The selected rows' sum as a percentage of the column's total over every row but a totals row."""
    typed, program, rows, c = run.typed, run.program, run.rows, run.c
    if typed.columns[c - 1].holds_years or not typed.columns[c - 1].numeric:
        raise ProgramError(f"column {program.column!r} holds no amounts to take a share of")
    counted = rows_but_totals(typed)
    part, whole = run.numbers(rows), run.numbers(counted)
    total = math.fsum(x for _, x in whole)
    if total == 0:
        raise ProgramError(f"column {program.column!r} adds up to 0, of which no share can be taken")
    # a text with its % sign: the answer's headline is the result, and "38.3" alone reads as a count
    result = f"{format_value(round(100 * math.fsum(x for _, x in part) / total, 1))}%"
    result_text = f"{result} ({format_value(math.fsum(x for _, x in part))} of {format_value(total)})"
    return _Outcome(result, result_text, list(rows), run.operand_cols,
                    share_cells=[(r, c) for r, _ in whole if r not in rows])  # the rest of the total, cited too


def _difference(run: _Run) -> _Outcome:
    """The difference between the numbers of exactly two selected rows."""
    pairs = run.numbers(run.rows)
    if len(pairs) != 2:
        raise ProgramError(f"difference needs exactly two selected rows with numbers in {run.program.column!r}, "
                           f"got {len(pairs)}")
    (ra, a), (rb, b) = pairs
    result = float(abs(a - b))
    return _Outcome(result, format_value(result), [ra, rb], run.operand_cols)


def _most_common_value(run: _Run) -> _Outcome:
    """The value of ``column`` in most selected rows; with a row-count condition (``options.row_count``), every
    value in more rows than it says."""
    if (held_by := run.program.options.row_count) is not None:
        result, result_text, decisive = _held_by_more_rows(run.typed, run.rows, run.c, run.clock, held_by.rows)
    else:
        result, result_text, decisive = _most_common(run.typed, run.rows, run.c, run.clock)
    return _Outcome(result, result_text, decisive, run.operand_cols)


def _every_or_only(run: _Run) -> _Outcome:
    """every: whether each selected row meets the check; only: whether the selected rows are exactly those (of
    every row but an unnamed totals row) that meet it. Cites the rows that break it, else the selected rows."""
    typed, program, fn, rows, c = run.typed, run.program, run.fn, run.rows, run.c
    if program.check is None:
        raise ProgramError(f"{fn} needs a check: the condition every selected row must meet")
    chk = program.check
    read_cols = run.operand_cols
    other_c = None
    if chk.against == "column":  # "every African country's coverage rose from 2022 to 2023": row by row
        other_c = column_index(typed, chk.value, "comparison column")
        if other_c == c or not (typed.columns[c - 1].numeric and typed.columns[other_c - 1].numeric):
            raise ProgramError("a comparison within each row needs two different columns of numbers")
        read_cols = [c, other_c]
    else:
        check_types(typed, chk.op, chk.value, numeric_result=typed.columns[c - 1].numeric,
                    what=f"column {program.column!r}")
    meets = _rows_meeting(run, other_c)
    selected = set(rows)
    if fn == "every":
        failing = [r for r in rows if r not in meets]
        truth = not failing
        decisive = failing or rows
    else:
        intruders = sorted((meets - selected) | (selected - meets))
        truth = bool(selected) and not intruders
        decisive = intruders or rows
    check_text = f"{typed.column(program.column).name} {chk.op} " + (
        typed.columns[other_c - 1].name if other_c is not None else quoted(chk.value))
    return _Outcome(truth, format_value(truth), decisive, read_cols, truth=truth, check_text=check_text)


def _rows_meeting(run: _Run, other_c: int | None) -> set[int]:
    """The rows of the universe whose ``column`` meets the check: against its value, or against column
    ``other_c`` of the same row."""
    typed, c, chk = run.typed, run.c, run.program.check
    want = cell_number(chk.value)
    meets = set()
    for r in run.universe:
        run.clock.tick()
        if other_c is not None:
            right = typed.number(r, other_c)
            if right is not None and compare(typed.text(r, c), typed.number(r, c), chk.op,
                                             typed.text(r, other_c), right):
                meets.add(r)
        elif compare(typed.text(r, c), typed.number(r, c), chk.op, chk.value, want):
            meets.add(r)
    return meets


def _arg_extreme(run: _Run) -> _Outcome:
    """argmax, argmin: ``answer_column`` of the row with the nth largest (smallest) computed value, shown with the
    value; grouped into rows (``options.grouping``), the value of ``answer_column`` whose rows' total or mean is."""
    typed, program, fn, c, answer_c = run.typed, run.program, run.fn, run.c, run.answer_c
    if isinstance(groups := program.options.grouping, RowGroups):
        result, result_text, decisive = _group_extreme(typed, run.numbers(run.rows), answer_c, fn == "argmax",
                                                       program.options.nth, mean=groups.by == "mean")
        return _Outcome(result, result_text, decisive, [c, answer_c])
    per_c, minus_c = run.per_c, run.minus_c
    pairs = run.numbers(run.rows)
    best = _nth_extreme([x for _, x in pairs], largest=fn == "argmax", nth=program.options.nth)
    decisive = [r for r, x in pairs if x == best]
    names = [" ".join(typed.text(r, answer_c).split()) for r in decisive]
    result = names[0] if len(names) == 1 else names
    shown = f"{format_value(best)} days" if run.duration else _as_written(typed, decisive, c, best)
    if len(decisive) == 1 and per_c and minus_c:  # "(241.3 − 187.9) / 187.9 = +28.4%"
        r = decisive[0]
        start = " ".join(typed.text(r, minus_c).split())
        shown = f"({' '.join(typed.text(r, c).split())} − {start}) / {start} = {100 * best:+.1f}%"
    elif len(decisive) == 1 and (per_c or minus_c):  # with the two cells: "31 / 36 = 0.8611", "86 − 89 = -3"
        shown = _worked(typed, decisive[0], c, "/" if per_c else "−", per_c or minus_c, shown)
    return _Outcome(result, f"{format_value(result)} ({shown})", decisive, [c, answer_c] + run.operand_cols[1:])


# The operator table: every ``fn`` a program may name (tools._table_ops_model.Fn), its stage and its handler.
OPERATORS: dict[str, Operator] = {
    "value": Operator("select", _value, names_its_row=True),
    "next_row": Operator("select", _neighbour_row),
    "previous_row": Operator("select", _neighbour_row),
    "count": Operator("aggregate", _count, runs_on_no_rows=True, names_its_row=True),
    "count_distinct": Operator("aggregate", _count_distinct, runs_on_no_rows=True),
    "sum": Operator("aggregate", _aggregate, names_its_row=True),
    "avg": Operator("aggregate", _aggregate, names_its_row=True),
    "median": Operator("aggregate", _aggregate),
    "min": Operator("aggregate", _aggregate, names_its_row=True),
    "max": Operator("aggregate", _aggregate, names_its_row=True),
    "share": Operator("aggregate", _share),
    "difference": Operator("aggregate", _difference, names_its_row=True),
    "every": Operator("compare", _every_or_only, checks_itself=True),
    "only": Operator("compare", _every_or_only, checks_itself=True),
    "argmax": Operator("rank", _arg_extreme),
    "argmin": Operator("rank", _arg_extreme),
    "most_common": Operator("rank", _most_common_value),
}

# The operators whose result, over one row, is that row's own value: checked against that same row, it decides
# nothing (:func:`_checked`).
_OWN_ROW_VALUE_FNS = ("max", "min", "value", "sum", "avg")


# -- the post-steps: the claim's check and the citations ---------------------------------------------------------
def _checked(run: _Run, operator: Operator, outcome: _Outcome) -> tuple[bool | None, str, list[tuple[int, int]]]:
    """The claim's check of the result: its truth, in words, and the cells it read beside the result's."""
    typed, program, rows = run.typed, run.program, run.rows
    chk = program.check
    if chk is not None and chk.against == "row" and program.fn in _OWN_ROW_VALUE_FNS and len(rows) == 1 \
            and row_names(typed, rows[0], chk.value):
        # A row compared with itself decides nothing. Seen: "AWARD-1 had the most dropouts relative to its
        # participants" as the largest ratio over AWARD-1's row, checked against AWARD-1 (true of any row), and
        # "Is it true that Oslo enrolled more than its target?" as Oslo's Enrolled > Oslo's Enrolled (false).
        raise ProgramError(f"the filters keep only {chk.value!r}, the row the check compares with: a row "
                           "compared with itself decides nothing")
    if chk is not None and not operator.checks_itself:
        return check_result(program, typed, outcome.result, run.c, rows)
    return outcome.truth, outcome.check_text, []


def _cited(run: _Run, operator: Operator, picked: _Selection, outcome: _Outcome,
           extra_cells: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The cells that decided the result, at most MAX_CELLS: the columns read in the decisive rows, with the rows'
    names where they say whose number it is, and the cells the check read."""
    label, decisive, filter_cols = run.typed.label_col, outcome.decisive, picked.filter_cols
    cols = list(dict.fromkeys(filter_cols + outcome.read_cols))
    cells = [(r, cc) for r in decisive for cc in cols]
    if operator.names_its_row and label and label not in cols and len(decisive) <= 3:
        cells = [(r, label) for r in decisive] + cells  # name the row the number belongs to
    if run.fn == "count" and not cells and label and len(decisive) <= MAX_CELLS:
        # "How many countries are listed?" reads no column: the names of the rows it counted are what a reader
        # checks the count against (found as a new user: an answer citing nothing, shown as unverified).
        cells = [(r, label) for r in decisive]
    if run.fn == "count" and not run.rows and picked.named_rows:
        # "The CI for men excludes 1" counts Men's rows whose bounds hold 1: none. The row the value named, with the
        # cells the other filters read, is what shows the count is 0 (else a true "none" would cite nothing).
        cells = [(r, cc) for r in picked.named_rows for cc in ([label] if label else []) + filter_cols]
    return list(dict.fromkeys(cells + extra_cells + outcome.share_cells))[:MAX_CELLS]


# -- what the operators share ----------------------------------------------------------------------------------
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
