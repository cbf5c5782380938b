"""Table programs: a short chain of fixed operations, validated and run in plain Python.

What a program is, and the schema the model writes it under, are in :mod:`tools._table_ops_model`. Nothing the
model wrote is ever evaluated as code: the executor interprets the fixed operations over the typed table, within
row and time limits, and records the cells it read in the rows that decided the result (the citations).
Anything wrong with a program is a :class:`ProgramError` with one sentence saying what, never a crash.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import time
from typing import Any

from tools._cell_compare import clipped, compare, format_value, iso_month_match, leading_number, named_number, \
    norm_text, text_words, words_match, written_tolerance
from tools._cells import TypedTable, cell_number, is_empty
from tools._dates import compare_dates
from tools._table_ops_model import MAX_CELLS, MAX_FILTERS, MAX_ROWS, RATIO_FNS, TIME_LIMIT_S, Check, Execution, \
    NoNumbersError, Program, ProgramError, RowFilter
from tools._words import ORDINAL_WORDS

_PLAIN_NUMBER = re.compile(r"[−-]?\d[\d,]*(?:\.\d+)?%?")


class _Clock:
    def __init__(self, limit_s: float):
        self.deadline = time.perf_counter() + limit_s
        self.limit_s = limit_s

    def tick(self) -> None:
        if time.perf_counter() > self.deadline:
            raise ProgramError(f"the program ran longer than {self.limit_s:g} s and was stopped")


def _col(typed: TypedTable, ident: str | None, role: str) -> int:
    if not ident:
        raise ProgramError(f"the program gives no {role}")
    try:
        return typed.column(ident).index
    except KeyError:
        raise ProgramError(f"the {role} {ident!r} is not a column of this table; columns: "
                           + ", ".join(typed.idents)) from None


def quoted(value: str) -> str:
    """A program's value as the user reads it: a number as written ("Efficacy (%) > 94"), text in quotes
    ("Platform = 'mRNA'"). Seen as a new user: "whether every one has Efficacy (%) > '94'" read as a text match."""
    return value if _PLAIN_NUMBER.fullmatch(value.strip()) else repr(value)


def describe(program: Program, typed: TypedTable, *, any_of: bool = True) -> str:
    """The program in words with the real column names (shown to the user). ``any_of``: several '=' filters on one
    column are said as "is one of" (a question's reading); False for a claim's, which the executor refuses, so its
    step does not say "drug is one of 'A', 'B'" beside "two filters ask one column for two different values"."""
    def name(ident: str | None) -> str:
        try:
            return typed.column(ident or "").name
        except KeyError:
            return str(ident)

    # Several '=' on one column are a question's "any of": the executor's groups, said as such.
    where = " and ".join(f"{name(g[0].column)} is one of {', '.join(repr(f.value) for f in g)}" if len(g) > 1
                         else f"{name(g[0].column)} {g[0].op} {quoted(g[0].value)}"
                         for g in (_filter_groups(program, union_same_column=True) if any_of
                                   else [[f] for f in program.filters]))
    rows = f"rows where {where}" if where else "all rows"
    if typed.scope:
        previous = f"the previous answer's rows ({_names(typed, list(typed.scope))})"
        rows = f"of {previous}, those where {where}" if where else previous
    fn = program.fn
    measure = name(program.column) + (f" per {name(program.per_column)}" if program.per_column else "")
    nth = f"{_ORDINALS[program.nth]} " if program.nth > 1 else ""
    dated = typed.is_dated(program.column)
    larger, smaller = ("latest", "earliest") if dated else ("largest", "smallest")
    if fn in ("argmax", "argmin") and program.group_total:
        what = f"the {name(program.answer_column)} whose rows add up to the {nth}" \
               f"{'largest' if fn == 'argmax' else 'smallest'} total {measure}"
    elif fn in ("argmax", "argmin"):
        what = f"{name(program.answer_column)} of the row with the {nth}" \
               f"{larger if fn == 'argmax' else smaller} {measure}"
    elif (nth or dated) and fn in ("max", "min"):
        what = f"the {nth}{larger if fn == 'max' else smaller} {measure}"
    elif program.per_column:
        what = f"{fn} of {measure}"
    elif fn == "value":
        what = f"{name(program.column)}"
    elif fn == "share":
        what = f"the share of the total {name(program.column)}"
    elif fn == "most_common":
        what = f"the {name(program.column)} that occurs in most rows"
    elif fn in ("next_row", "previous_row"):
        what = f"{name(program.column)} of the row {'after' if fn == 'next_row' else 'before'} it"
    elif fn == "difference":
        what = f"the difference between the two rows' {name(program.column)}"
    elif fn == "count":
        what = "the number of rows"
    elif fn == "count_distinct":
        what = f"the number of different {name(program.column)}"
    elif fn in ("every", "only") and program.check is not None:
        cond = f"{name(program.column)} {program.check.op} {quoted(program.check.value)}"
        what = (f"whether every one has {cond}" if fn == "every"
                else f"whether they are the only rows with {cond}")
    else:
        what = f"{fn} of {name(program.column)}"
    text = f"{rows} → {what}"
    if program.check is not None and fn not in ("every", "only"):
        chk = program.check
        rhs = (f"{name(program.column)} of {chk.value!r}" if chk.against == "row"
               else f"{name(chk.value)} of the same row" if chk.against == "column"
               else f"the row with the {'largest' if chk.extreme == 'max' else 'smallest'} {name(chk.value)}"
               if chk.against == "extreme"
               else f"{name(program.column)} of {' and '.join(repr(r) for r in chk.rows)} combined"
               if chk.against == "rows" else f"the total of {name(program.column)}"
               if chk.against == "total" else quoted(chk.value))
        if chk.factor:
            rhs = f"{chk.factor:g} × {rhs}"
        text += f"; check: result {program.check.op} {rhs}"
    return text


_TOTAL_ROW = re.compile(r"^(grand |overall )?totals?\b|^all$|^sum$", re.I)


def _names(typed: TypedTable, rows: list[int], shown: int = 5) -> str:
    """"Ontario, Alberta and 3 more": the rows' names, the first few."""
    more = f" and {len(rows) - shown} more" if len(rows) > shown else ""
    return ", ".join(typed.row_name(r) for r in rows[:shown]) + more


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


def _filter_groups(program: Program, union_same_column: bool) -> list[list[RowFilter]]:
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
        steps.append(f"the rows of the previous answer ({_names(typed, rows)}): {len(rows)} of {table.n_rows} rows")
    filter_cols: list[int] = []
    groups = _filter_groups(program, union_same_column)
    totals = set(total_rows(typed))
    if totals and len(totals) < len(rows):
        rows = [r for r in rows if r not in totals]
        named = [r for r in sorted(totals) if any(f.op in ("=", "contains") and _matches(typed, r, f)
                                                   for group in groups for f in group)]
        rows = sorted(rows + named)
        if len(named) < len(totals):
            steps.append(f"the totals row{'s' if len(totals) - len(named) > 1 else ''} "
                         f"({', '.join(f'R{r}' for r in sorted(totals - set(named)))}) left out")
    universe = list(rows)  # what "the only rows" ranges over: every row but an unnamed totals row
    for group in groups:
        if len(group) > 1:
            c = _col(typed, group[0].column, "filter column")
            filter_cols.append(c)
            kept = [r for r in rows if any(_matches(typed, r, f, words=True) for f in group)]
            clock.tick()
            steps.append(f"{typed.column(group[0].column).name} is one of "
                         f"{', '.join(repr(f.value) for f in group)}: {len(kept)} of {len(rows)} rows")
            rows = kept
            continue
        [f] = group
        c = _col(typed, f.column, "filter column")
        filter_cols.append(c)
        wanted = cell_number(f.value)
        kept = []
        for r in rows:
            clock.tick()
            if _compare_cell(typed, r, c, f.op, f.value, wanted):
                kept.append(r)
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
        steps.append(f"{typed.column(f.column).name} {f.op} {quoted(f.value)}: {len(kept)} of {len(rows)} rows{note}")
        rows = kept
    c = _col(typed, program.column, "column")
    fn = program.fn
    label = typed.label_col
    answer_c = _col(typed, program.answer_column, "answer column") if program.answer_column else (label or c)
    decisive: list[int] = list(rows)
    read_cols = [c]
    truth: bool | None = None
    check_text = ""
    share_cells: list[tuple[int, int]] = []

    per_c = None
    if program.per_column:
        per_c = _col(typed, program.per_column, "ratio column")
        if fn not in RATIO_FNS:
            raise ProgramError(f"a ratio of two columns feeds {', '.join(RATIO_FNS)}, not {fn}")
        if not typed.columns[per_c - 1].numeric or per_c == c:
            raise ProgramError(f"the ratio column {program.per_column!r} must be another column of numbers")
        read_cols.append(per_c)

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
            x = _ratio(typed, r, c, per_c) if per_c is not None else typed.order_value(r, c)
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
    if fn == "value":
        values = [typed.text(r, c) for r in rows]
        if program.check is not None and len({text_words(v) for v in values}) > 1 \
                and not _in_none_of(program, typed, values, c, rows):
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
    elif fn == "share":
        if typed.columns[c - 1].holds_years or not typed.columns[c - 1].numeric:
            raise ProgramError(f"column {program.column!r} holds no amounts to take a share of")
        counted = [r for r in range(1, typed.table.n_rows + 1) if r not in set(total_rows(typed))]
        part, whole = numbers(rows), numbers(counted)
        total = math.fsum(x for _, x in whole)
        if total == 0:
            raise ProgramError(f"column {program.column!r} adds up to 0, of which no share can be taken")
        # a text with its % sign: the answer's headline is the result, and "38.3" alone reads as a count
        result = f"{format_value(round(100 * math.fsum(x for _, x in part) / total, 1))}%"
        result_text = f"{result} ({format_value(math.fsum(x for _, x in part))} of {format_value(total)})"
        share_cells = [(r, c) for r, _ in whole if r not in rows]  # the rest of the total, cited beside the part
    elif fn in ("sum", "avg", "min", "max"):
        if fn in ("sum", "avg") and typed.columns[c - 1].holds_years:
            raise ProgramError(f"column {program.column!r} holds years, which are not added up or averaged "
                               "(count the rows, or take the min or max)")
        pairs = numbers(rows)
        xs = [x for _, x in pairs]
        if fn == "sum":
            result = float(math.fsum(xs))
        elif fn == "avg":
            result = float(math.fsum(xs) / len(xs))
        else:
            result = _nth_extreme(xs, largest=fn == "max", nth=program.nth)
            decisive = [r for r, x in pairs if x == result]
        result_text = _as_written(typed, decisive, c, result) if fn in ("min", "max") else \
            _with_unit(typed, [r for r, _ in pairs], c, result)
        if typed.columns[c - 1].holds_dates:  # the latest date is the date, as its cell writes it
            result = result_text
    elif fn in ("argmax", "argmin") and program.group_total:
        result, result_text, decisive = _group_extreme(typed, numbers(rows), answer_c, fn == "argmax", program.nth)
        read_cols = [c, answer_c]
    elif fn in ("argmax", "argmin"):
        pairs = numbers(rows)
        best = _nth_extreme([x for _, x in pairs], largest=fn == "argmax", nth=program.nth)
        decisive = [r for r, x in pairs if x == best]
        names = [" ".join(typed.text(r, answer_c).split()) for r in decisive]
        result = names[0] if len(names) == 1 else names
        shown = _as_written(typed, decisive, c, best)
        if per_c is not None and len(decisive) == 1:  # the ratio with the two cells it divides: "31 / 36 = 0.8611"
            [r] = decisive
            shown = f"{' '.join(typed.text(r, c).split())} / {' '.join(typed.text(r, per_c).split())} = {shown}"
        result_text = f"{format_value(result)} ({shown})"
        read_cols = [c, answer_c] + ([per_c] if per_c else [])
    elif fn in ("every", "only"):
        if program.check is None:
            raise ProgramError(f"{fn} needs a check: the condition every selected row must meet")
        chk = program.check
        want = cell_number(chk.value)
        _check_types(typed, chk.op, chk.value, numeric_result=typed.columns[c - 1].numeric,
                     what=f"column {program.column!r}")
        meets = set()
        for r in universe:
            clock.tick()
            if compare(typed.text(r, c), typed.number(r, c), chk.op, chk.value, want):
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
        check_text = f"{typed.column(program.column).name} {chk.op} {quoted(chk.value)}"
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
        truth, check_text, extra_cells = _check(program, typed, result, c, rows)
    cols = list(dict.fromkeys(filter_cols + read_cols))
    cells = [(r, cc) for r in decisive for cc in cols]
    if fn in ("value", "min", "max", "sum", "avg", "count", "difference") and label and label not in cols \
            and len(decisive) <= 3:
        cells = [(r, label) for r in decisive] + cells  # name the row the number belongs to
    if fn == "count" and not cells and label and len(decisive) <= MAX_CELLS:
        # "How many countries are listed?" reads no column: the names of the rows it counted are what a reader
        # checks the count against (found as a new user: an answer citing nothing, shown as unverified).
        cells = [(r, label) for r in decisive]
    cells = list(dict.fromkeys(cells + extra_cells + share_cells))[:MAX_CELLS]
    return Execution(selected=rows, result=result, result_text=result_text, decisive_rows=decisive, cells=cells,
                     truth=truth, check_text=check_text, steps=steps)


# "second", "third", …: the words of tools._words' ordinals, by place
_ORDINALS = {i: w for w, i in ORDINAL_WORDS.items() if w.isalpha()}


def _in_none_of(program: Program, typed: TypedTable, values: list[str], c: int, rows: list[int]) -> bool:
    """Whether an "=" check against a stated value matches none of the cells the filters select, when the value
    is of the column's kind (a number for numbers, text for text). A program with no filter, or one that checks
    a number against names, reads the wrong column more often than the claim is false (TabFact and SciTab)."""
    chk = program.check
    if chk is None or chk.op != "=" or chk.against != "value" or not program.filters:
        return False
    if (cell_number(chk.value) is not None) != typed.columns[c - 1].numeric:
        return False
    return not any(_check(program, typed, v, c, rows)[0] for v in values)


def _as_written(typed: TypedTable, rows: list[int], c: int, number: float) -> str:
    """The number as its cells write it ("17.1%", "$4,512"), so a reason keeps the unit the table shows; the
    plain number when the cells differ or hold another number (a ratio over two columns)."""
    written = {" ".join(typed.text(r, c).split()) for r in rows}
    if len(written) == 1:
        (text,) = written
        if (cell_number(text) == number or typed.columns[c - 1].holds_dates) and len(text) <= 40:
            return text
    if typed.columns[c - 1].holds_dates and number.is_integer() and number >= 1:
        return dt.date.fromordinal(int(number)).isoformat()
    return format_value(number)


def _with_unit(typed: TypedTable, rows: list[int], c: int, number: float) -> str:
    """A sum or mean with the unit every cell it read writes: "18.36%" over "27.0%", "10.2%", …; "$4,000" over
    "$1,500" and "$2,500" (the number plain when the cells differ)."""
    texts = [typed.text(r, c).strip() for r in rows]
    shown = format_value(number)
    if texts and all(t.endswith("%") for t in texts):
        return shown + "%"
    for sign in ("$", "€", "£"):
        if texts and all(t.startswith(sign) for t in texts):
            return ("-" + sign + shown[1:]) if shown.startswith("-") else sign + shown
    return shown


def _nth_extreme(xs: list[float], *, largest: bool, nth: int) -> float:
    """The ``nth`` distinct value from the top (or bottom) of ``xs``: ties share a place, so the second highest of
    9, 9, 7 is 7."""
    distinct = sorted(set(xs), reverse=largest)
    if nth > len(distinct):
        raise ProgramError(f"the {_ORDINALS.get(nth, str(nth))} {'largest' if largest else 'smallest'} value is "
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
                   nth: int) -> tuple[Any, str, list[int]]:
    """The value of ``answer_c`` whose rows' numbers add up to the largest (smallest) total, that total, and its
    rows: "which region has the fewest beds in total?" over clinics sums each region's clinics."""
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
    best = _nth_extreme(list(totals.values()), largest=largest, nth=nth)
    keys = [k for k, v in totals.items() if v == best]
    names = [first[k] for k in keys]
    result: Any = names[0] if len(names) == 1 else names
    shown = "; ".join(f"{first[k]} {format_value(v)}" for k, v in sorted(totals.items(), key=lambda kv: -kv[1]))
    return result, f"{format_value(result)} (totals: {shown})", sorted(r for k in keys for r in rows_of[k])


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


def _distinct(typed: TypedTable, rows: list[int], c: int, clock: _Clock) -> tuple[float, list[int]]:
    """How many different non-empty values column ``c`` holds among ``rows``, and the first row of each."""
    _, where = _value_groups(typed, rows, c, clock)
    return float(len(where)), sorted(rs[0] for rs in where.values())


def _neighbour(typed: TypedTable, rows: list[int], universe: list[int], c: int, *, after: bool) -> tuple[str, list[int]]:
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


def _matches(typed: TypedTable, r: int, f: RowFilter, *, words: bool = False) -> bool:
    """Whether row ``r`` meets filter ``f`` (``words``: an '=' text value may also be whole words of the cell)."""
    try:
        c = typed.column(f.column).index
    except KeyError:
        return False
    if f.op in ("=", "contains"):
        in_month = iso_month_match(typed.text(r, c), f.value)
        if in_month is not None:
            return in_month
    wanted = cell_number(f.value)
    if _compare_cell(typed, r, c, f.op, f.value, wanted):
        return True
    return words and f.op == "=" and wanted is None and words_match(typed.text(r, c), f.value)


_ORDER = ("<", "<=", ">", ">=")


def _compare_cell(typed: TypedTable, r: int, c: int, op: str, value: str, wanted: float | None) -> bool:
    """Whether cell (r, c) meets ``op value``: in time for a column of dates ("Published > 2020"), else as
    numbers or text (``tools._cell_compare.compare``)."""
    if op in _ORDER and typed.columns[c - 1].holds_dates:
        in_time = compare_dates(typed.text(r, c), op, value)
        if in_time is not None:
            return in_time
    return compare(typed.text(r, c), typed.number(r, c), op, value, wanted,
                   tolerance=written_tolerance(value) if wanted is not None else 0)


def _check_types(typed: TypedTable, op: str, value: str, *, numeric_result: bool, what: str) -> None:
    """Refuse a check whose sides cannot be compared: the typed grammar's rules, repeated in code.

    A program that compares a count with a place name, or orders two texts, is not a reading of the claim;
    running it would only add a false verdict to the vote.
    """
    names = {norm_text(col.ident) for col in typed.columns} | {norm_text(col.name) for col in typed.columns}
    if norm_text(value) in names and not any(norm_text(value) == norm_text(v) for col in typed.columns
                                         for v in typed.table.column_values(col.index)):
        raise ProgramError(f"the check compares with {value!r}, which is a column name, not a value")
    if numeric_result and op != "contains" and cell_number(value) is None:
        raise ProgramError(f"the check compares the number in {what} with the text {value!r}")
    if not numeric_result and op in _ORDER:
        raise ProgramError(f"the check orders texts ({what} {op} {value!r}); only numbers have an order")


def _row_like_the_selection(program: Program, typed: TypedTable, named: list[int], label: int, c: int) -> int:
    """Of the rows named like the check's row, the one that meets the program's other filters.

    "Uganda had more malaria deaths in 2020 than Kenya" filters Uganda's row by year; Kenya's row must be the
    2020 one too. Seen in the browser: the first row named Kenya (2019) was compared instead. Filters on the
    row-name column itself (``country = Uganda``) do not apply to the other row.
    """
    if len(named) == 1:
        return named[0]
    others = [f for f in program.filters if typed.column(f.column).index != label]
    like = [r for r in named if all(_matches(typed, r, f, words=True) for f in others)]
    if not like:
        raise ProgramError(f"no row named {typed.row_name(named[0])!r} meets the other filters ("
                           + "; ".join(f"{f.column} {f.op} {f.value!r}" for f in others) + ")")
    if len({norm_text(typed.text(r, c)) for r in like}) > 1:
        raise ProgramError(f"{len(like)} rows are named {typed.row_name(like[0])!r} with different values in "
                           f"column {program.column!r}; add a filter that tells them apart")
    return like[0]


def selected_rows(program: Program, typed: TypedTable) -> list[int] | None:
    """The rows ``program`` ranges over, whatever its check (one comparing a row with itself does not run), or
    None when it cannot run."""
    try:
        return execute(program.model_copy(update={"check": None}), typed).selected
    except ProgramError:
        return None


def row_names(typed: TypedTable, r: int, value: str) -> bool:
    """Whether row ``r``'s name (its label cell) is ``value``, compared as texts are (markup, accents, case), or, for
    a row named by an ISO month ("2024-02"), as the month ``value`` names ("February")."""
    label = typed.label_col
    if not label:
        return False
    cell = typed.text(r, label)
    in_month = iso_month_match(cell, value)  # "February" names the row "2024-02"
    return in_month if in_month is not None else norm_text(cell) == norm_text(value)


def _ratio(typed: TypedTable, r: int, c: int, per_c: int) -> float | None:
    """Row ``r``'s value in column ``c`` over its value in ``per_c``; None when either is missing or the divisor 0."""
    x, d = typed.number(r, c), typed.number(r, per_c)
    if x is None or d is None or d == 0 or is_empty(typed.text(r, c)) or is_empty(typed.text(r, per_c)):
        return None
    return x / d


def _check_own_row(program: Program, typed: TypedTable, c: int,
                   rows: list[int]) -> tuple[bool, str, list[tuple[int, int]]]:
    """"Oslo enrolled more than its target": the row's value against another column of the same row."""
    chk = program.check
    assert chk is not None
    other = _col(typed, chk.value, "comparison column")
    if program.fn != "value" or len(rows) != 1:
        raise ProgramError("a comparison with another column of the same row needs one selected row and its value")
    [r] = rows
    if other == c or not (typed.columns[c - 1].numeric and typed.columns[other - 1].numeric):
        raise ProgramError("a comparison within a row needs two different columns of numbers")
    left, right = typed.number(r, c), typed.number(r, other)
    if left is None or right is None:
        raise ProgramError(f"{typed.row_name(r)} has no number in {program.column!r} or {chk.value!r}")
    shown = f"{typed.row_name(r)}'s {typed.columns[other - 1].name} {format_value(typed.text(r, other))}"
    right_text, shown, tolerance = _scaled(chk, typed.text(r, other), right, shown)
    truth = compare(typed.text(r, c), left, chk.op, right_text, right * (chk.factor or 1.0), tolerance=tolerance)
    return truth, f"{chk.op} {shown}", [(r, other)]


def _check_combined(program: Program, typed: TypedTable, c: int,
                    rows: list[int]) -> tuple[bool, str, list[tuple[int, int]]]:
    """"Lyon enrolled more patients than Utrecht and Bergen combined": the one selected row's value against the
    sum of the same column over the rows the check names (each found as a compared row is, by its name)."""
    chk = program.check
    assert chk is not None
    if program.fn != "value" or len(rows) != 1:
        raise ProgramError("a comparison with several rows combined needs one selected row and its value")
    label = typed.label_col
    if not label:
        raise ProgramError("the check names rows, but this table has no column of row names")
    if not typed.columns[c - 1].numeric:
        raise ProgramError(f"column {program.column!r} holds text, which does not add up")
    others: list[int] = []
    for name in chk.rows:
        matches = [r for r in range(1, typed.table.n_rows + 1) if row_names(typed, r, name)]
        if not matches:
            raise ProgramError(f"no row is named {name!r} in column {typed.columns[label - 1].ident!r}")
        others.append(_row_like_the_selection(program, typed, matches, label, c))
    if len(set(others)) < 2 or rows[0] in others:
        raise ProgramError("a combined comparison needs two other rows at least")
    numbers = [typed.number(r, c) for r in others]
    if any(x is None or is_empty(typed.text(r, c)) for r, x in zip(others, numbers)):
        raise ProgramError(f"a row named in the check has no number in column {program.column!r}")
    total = sum(x for x in numbers if x is not None)
    [r0] = rows
    left = typed.number(r0, c)
    if left is None:
        raise ProgramError(f"{typed.row_name(r0)} has no number in column {program.column!r}")
    parts = [f"{typed.row_name(r)} ({format_value(typed.text(r, c))})" for r in others]
    shown = f"{typed.columns[c - 1].name} of {', '.join(parts[:-1])} and {parts[-1]} combined, {format_value(total)}"
    truth = compare(typed.text(r0, c), left, chk.op, format_value(total), total, tolerance=0.0)
    return truth, f"{chk.op} {shown}", [(r, cc) for r in others for cc in (label, c)]


def _check_share_of_total(program: Program, typed: TypedTable, c: int,
                          rows: list[int]) -> tuple[bool, str, list[tuple[int, int]]]:
    """"St Mary has more than a third of all beds": the selected rows' sum against ``factor`` times the column's
    total over every row (a totals row, which repeats the others' sum, left out)."""
    chk = program.check
    assert chk is not None and chk.factor is not None
    if program.fn not in ("value", "sum") or not typed.columns[c - 1].numeric:
        raise ProgramError("a share of a column's total needs the value or sum of a column of numbers")
    counted = [r for r in range(1, typed.table.n_rows + 1) if r not in set(total_rows(typed))]
    numbers = {r: typed.number(r, c) for r in counted if not is_empty(typed.text(r, c))}
    if not rows or any(numbers.get(r) is None for r in rows):
        raise ProgramError(f"a selected row has no number in column {program.column!r}")
    if set(rows) >= set(numbers):
        raise ProgramError("the filters select every row: a share of the total needs fewer")
    part = sum(numbers[r] or 0.0 for r in rows)
    total = sum(x for x in numbers.values() if x is not None)
    target = chk.factor * total
    shown = f"{chk.factor:.3g} × the total {typed.columns[c - 1].name} {format_value(total)} = {format_value(target)}"
    truth = compare(format_value(part), part, chk.op, format_value(target), target,
                    tolerance=abs(target) * chk.relative_tolerance)
    return truth, f"{chk.op} {shown}", [(r, c) for r in numbers if r not in rows]


def _scaled(chk: Check, text: str, number: float | None, shown: str) -> tuple[str, str, float]:
    """The other value a claim's multiplier scales ("twice as many as East"), how the step shows it, and the
    tolerance of "=" (none without a multiplier: two cells of a table are compared exactly)."""
    if not chk.factor or number is None:
        return text, shown, 0.0
    scaled = number * chk.factor
    return (format_value(scaled), f"{chk.factor:g} × {shown} = {format_value(scaled)}",
            abs(scaled) * chk.relative_tolerance)


def _check_extreme(program: Program, typed: TypedTable, result: Any,
                   rows: list[int]) -> tuple[bool, str, list[tuple[int, int]]]:
    """"The region with the fewest hospitals has the highest occupancy": the row the program's argmax or argmin
    names must be one holding the largest (or smallest) value of the check's column, over the same rows."""
    chk = program.check
    assert chk is not None and chk.extreme is not None
    if program.fn not in ("argmax", "argmin"):
        raise ProgramError("a comparison of two extremes needs argmax or argmin")
    other = _col(typed, chk.value, "extreme column")
    if not typed.columns[other - 1].numeric:
        raise ProgramError(f"column {chk.value!r} holds text, which has no largest or smallest value")
    pairs = [(r, typed.number(r, other)) for r in rows if not is_empty(typed.text(r, other))]
    pairs = [(r, x) for r, x in pairs if x is not None]
    if not pairs:
        raise ProgramError(f"no numbers in column {chk.value!r} among the {len(rows)} selected rows")
    best = (max if chk.extreme == "max" else min)(x for _, x in pairs)
    holders = [r for r, x in pairs if x == best]
    answer_c = _col(typed, program.answer_column, "answer column") if program.answer_column else typed.label_col
    names = {text_words(typed.text(r, answer_c)) for r in holders}
    named = result if isinstance(result, list) else [result]
    truth = all(text_words(n) in names for n in named)
    column = typed.columns[other - 1].name
    holder_names = ", ".join(" ".join(typed.text(r, answer_c).split()) for r in holders)
    shown = f"the row with the {'largest' if chk.extreme == 'max' else 'smallest'} {column}: {holder_names} " \
            f"({format_value(best)})"
    said = f"to be {shown}" if chk.op == "=" else f"{chk.op} {shown}"  # the reason: "the claim needs it to be …"
    return truth, said, [(r, cc) for r in holders for cc in (answer_c, other)]


def _check(program: Program, typed: TypedTable, result: Any, c: int,
           rows: list[int]) -> tuple[bool, str, list[tuple[int, int]]]:
    """Compare the computed result with the claim's value (or another row's value, or another column's)."""
    chk = program.check
    assert chk is not None
    extra: list[tuple[int, int]] = []
    fn = program.fn
    if chk.against == "column":
        return _check_own_row(program, typed, c, rows)
    if chk.against == "extreme":
        return _check_extreme(program, typed, result, rows)
    if chk.against == "rows":
        return _check_combined(program, typed, c, rows)
    if chk.against == "total":
        return _check_share_of_total(program, typed, c, rows)
    if fn in ("argmax", "argmin") and chk.op in _ORDER:
        raise ProgramError(f"{fn} names a row; a row name is checked with = or !=, not {chk.op}")
    if fn == "count" and chk.against == "row":
        raise ProgramError("a count is checked against a number, not against another row's cell")
    if chk.against == "value":
        numeric_result = fn in ("count", "count_distinct", "sum", "avg", "min", "max") or (
            fn == "value" and typed.columns[c - 1].numeric)
        _check_types(typed, chk.op, chk.value, numeric_result=numeric_result,
                     what="the result" if fn != "value" else f"column {program.column!r}")
    if chk.against == "row":
        label = typed.label_col
        if not label:
            raise ProgramError("the check names a row, but this table has no column of row names")
        matches = [r for r in range(1, typed.table.n_rows + 1) if row_names(typed, r, chk.value)]
        if not matches:
            raise ProgramError(f"no row is named {chk.value!r} in column {typed.columns[label - 1].ident!r}")
        other = _row_like_the_selection(program, typed, matches, label, c)
        rhs_text, rhs_number = typed.text(other, c), typed.number(other, c)
        extra = [(other, label), (other, c)]
        measure = typed.columns[c - 1].name
        if program.per_column:  # the other row's ratio, as the result is one (not its raw cell)
            per_c = _col(typed, program.per_column, "ratio column")
            rhs_number = _ratio(typed, other, c, per_c)
            if rhs_number is None:
                raise ProgramError(f"{typed.row_name(other)} has no ratio of {program.column!r} to "
                                   f"{program.per_column!r} to compare with")
            rhs_text = format_value(rhs_number)
            extra.append((other, per_c))
            measure += f" per {typed.columns[per_c - 1].name}"
        shown = f"{typed.row_name(other)}'s {measure} {format_value(rhs_text)}"
        rhs_text, shown, tolerance = _scaled(chk, rhs_text, rhs_number, shown)
        rhs_number = rhs_number * chk.factor if chk.factor and rhs_number is not None else rhs_number
    else:
        rhs_text, rhs_number, shown, tolerance = chk.value, cell_number(chk.value), quoted(chk.value), None
        if chk.relative_tolerance and rhs_number is not None:  # "about half": within a tenth of 50%, set by code
            tolerance = abs(rhs_number) * chk.relative_tolerance
    values = result if isinstance(result, list) else [result]
    outcomes = []
    for v in values:
        if isinstance(v, float):
            outcomes.append(compare(format_value(v), v, chk.op, rhs_text, rhs_number, tolerance))
        else:
            left_number = cell_number(v)
            if left_number is None and rhs_number is not None and chk.op != "contains":
                left_number = leading_number(str(v))  # '464 pages' states the number 464
                if left_number is None:
                    left_number = named_number(str(v))  # 'n mcmillan (7)': 7 assists, by the name before it
            same = compare(str(v), left_number, chk.op, rhs_text, rhs_number, tolerance)
            if not same and chk.op in ("=", "!=") and cell_number(v) is None and rhs_number is None:
                # "Quebec" stated for a computed "Quebec (QC)" (or the reverse) is the same answer.
                loose = words_match(str(v), rhs_text) or words_match(rhs_text, str(v))
                same = loose if chk.op == "=" else not loose
            outcomes.append(same)
    truth = bool(outcomes) and all(outcomes)
    return truth, f"{chk.op} {shown}", extra
