"""The check step of a table program: its computed result against the claim's value, another row, another
column of the same row, several rows combined, a share of the column's total, or the row holding an extreme.

Apart from the executor (:mod:`tools._table_ops`) because a check is a claim's question about a result, not a way
of computing one: :func:`check_result` takes the result the executor computed and the rows it selected, and says
whether the claim holds of them. The executor imports this module, never the reverse.
"""

from __future__ import annotations

import math
import re
from typing import Any

from tools._cells import TypedTable, cell_bounds, cell_number, compare, format_value, is_empty, iso_month_match, \
    leading_number, named_number, norm_text, text_words, with_written_unit, words_match, written_scale, \
    written_tolerance
from tools._table_ops_model import Check, Program, ProgramError, RowFilter
from tools._table_shape import ONE_CELL_FNS, ORDER, column_index, meets_filter, quoted, rows_but_totals, share_pair, \
    stated_share, written_share


_POINT_THOUSANDS = re.compile(r"^\d{1,3}(?:\.\d{3})+$")


def check_result(program: Program, typed: TypedTable, result: Any, c: int,
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
    if chk.against == "group":
        return _check_group(program, typed, result, c, rows)
    if fn in ("argmax", "argmin") and chk.op in ORDER:
        raise ProgramError(f"{fn} names a row; a row name is checked with = or !=, not {chk.op}")
    if fn == "count" and chk.against == "row":
        raise ProgramError("a count is checked against a number, not against another row's cell")
    if chk.against == "value":
        numeric_result = fn in ("count", "count_distinct", "sum", "avg", "median", "min", "max") or (
            fn == "value" and typed.columns[c - 1].numeric)
        check_types(typed, chk.op, chk.value, numeric_result=numeric_result,
                    what="the result" if fn != "value" else f"column {program.column!r}")
        if fn == "value" and typed.columns[c - 1].numeric and rows and cell_number(chk.value) is not None \
                and all(not typed.text(r, c).strip() for r in rows):
            # An empty cell says nothing, not "not 0": found as a new user, "Zika caused no deaths" was refuted by
            # Zika's empty Deaths cell compared with 0
            raise ProgramError(f"{typed.row_name(rows[0])}'s cell in column {program.column!r} is empty: the table "
                               "gives no value to compare")
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
        if (per := program.options.divides_by):  # the other row's ratio, as the result is one (not its raw cell)
            per_c = column_index(typed, per, "ratio column")
            rhs_number = row_ratio(typed, other, c, per_c)
            if rhs_number is None:
                raise ProgramError(f"{typed.row_name(other)} has no ratio of {program.column!r} to "
                                   f"{per!r} to compare with")
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
    if chk.against == "value" and len(rows) == 1 and fn in ONE_CELL_FNS and program.options.derive is None:
        share = stated_share(typed, rows[0], c, chk.value)  # "22% of vaccine recipients" against "265 (22.0%)"
        values = [share] if share is not None else values
    outcomes = []
    for v in values:
        if isinstance(v, float):
            outcomes.append(compare(format_value(v), v, chk.op, rhs_text, rhs_number, tolerance))
        else:
            left_number = cell_number(v)
            scaled = written_scale(v) if rhs_number is not None else None
            if scaled and written_scale(rhs_text) is None and abs(rhs_number) < scaled[1] / 1000:
                # "Guinea has a population of 12.3 million" checked as "= 12.3" over the cell "12.3 million": a number
                # far below the cell's scale is in its unit (PubHealthTab's eval split: refuted by 12,300,000 ≠ 12.3)
                left_number = scaled[0]
            rhs_here = rhs_number
            if left_number is not None and chk.op in ("=", "!=") and _POINT_THOUSANDS.match(rhs_text.strip()) \
                    and left_number == float(rhs_text.strip().replace(".", "")):
                # "24.035" written with a point between thousands (PubHealthTab's eval split: "… are 24.035" over the
                # cell "24,035" was refuted by 3 of 3 programs); only where the cell is that number to the digit
                rhs_here = left_number
            if left_number is None and rhs_number is not None and chk.op != "contains":
                left_number = leading_number(str(v))  # '464 pages' states the number 464
                if left_number is None:
                    left_number = named_number(str(v))  # 'n mcmillan (7)': 7 assists, by the name before it
            same = compare(str(v), left_number, chk.op, rhs_text, rhs_here, tolerance)
            if not same and chk.op in ("=", "!=") and cell_number(v) is None and rhs_number is None:
                # "Quebec" stated for a computed "Quebec (QC)" (or the reverse) is the same answer.
                loose = words_match(str(v), rhs_text) or words_match(rhs_text, str(v))
                same = loose if chk.op == "=" else not loose
            outcomes.append(same)
    truth = bool(outcomes) and all(outcomes)
    if chk.against == "value" and tolerance is None and chk.op in ("=", "!=") and rhs_number is not None:
        shown += _precision_note(values, rhs_text, rhs_number)
    return truth, f"{chk.op} {shown}", extra


def _precision_note(values: list[Any], rhs_text: str, rhs_number: float) -> str:
    """" (as written: 11.5 to 12.5)" where a computed number differs from the stated one but within the precision
    the claim writes it with: "Fever (%) is 12.5; the claim needs it = 12, so the table supports the claim" read
    as a contradiction (found as a new user)."""
    tol = written_tolerance(rhs_text)
    numbers = [v if isinstance(v, float) else cell_number(v) for v in values]
    if not tol or not any(x is not None and x != rhs_number and abs(x - rhs_number) <= tol for x in numbers):
        return ""
    return f" (as written: {format_value(rhs_number - tol)} to {format_value(rhs_number + tol)})"


def in_none_of(program: Program, typed: TypedTable, values: list[str], c: int, rows: list[int]) -> bool:
    """Whether an "=" check against a stated value matches none of the cells the filters select, when the value
    is of the column's kind (a number for numbers, text for text). A program with no filter, or one that checks
    a number against names, reads the wrong column more often than the claim is false (TabFact and SciTab)."""
    chk = program.check
    if chk is None or chk.op != "=" or chk.against != "value" or not program.filters:
        return False
    if (cell_number(chk.value) is not None) != typed.columns[c - 1].numeric:
        return False
    return not any(check_result(program, typed, v, c, rows)[0] for v in values)


def check_types(typed: TypedTable, op: str, value: str, *, numeric_result: bool, what: str) -> None:
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
    if not numeric_result and op in ORDER:
        raise ProgramError(f"the check orders texts ({what} {op} {value!r}); only numbers have an order")


def row_names(typed: TypedTable, r: int, value: str) -> bool:
    """Whether row ``r``'s name (its label cell) is ``value``, compared as texts are (markup, accents, case), or, for
    a row named by an ISO month ("2024-02"), as the month ``value`` names ("February")."""
    label = typed.label_col
    if not label:
        return False
    cell = typed.text(r, label)
    in_month = iso_month_match(cell, value)  # "February" names the row "2024-02"
    return in_month if in_month is not None else norm_text(cell) == norm_text(value)


def _row_like_the_selection(program: Program, typed: TypedTable, named: list[int], label: int, c: int) -> int:
    """Of the rows named like the check's row, the one that meets the program's other filters.

    "Uganda had more malaria deaths in 2020 than Kenya" filters Uganda's row by year; Kenya's row must be the
    2020 one too. Seen in the browser: the first row named Kenya (2019) was compared instead. Filters on the
    row-name column itself (``country = Uganda``) do not apply to the other row.
    """
    if len(named) == 1:
        return named[0]
    others = [f for f in program.filters if typed.column(f.column).index != label]
    like = [r for r in named if all(meets_filter(typed, r, f, words=True) for f in others)]
    if not like:
        raise ProgramError(f"no row named {typed.row_name(named[0])!r} meets the other filters ("
                           + "; ".join(f"{f.column} {f.op} {f.value!r}" for f in others) + ")")
    if len({norm_text(typed.text(r, c)) for r in like}) > 1:
        raise ProgramError(f"{len(like)} rows are named {typed.row_name(like[0])!r} with different values in "
                           f"column {program.column!r}; add a filter that tells them apart")
    return like[0]


def row_ratio(typed: TypedTable, r: int, c: int, per_c: int) -> float | None:
    """Row ``r``'s value in column ``c`` over its value in ``per_c``; None when either is missing or the divisor 0."""
    x, d = typed.number(r, c), typed.number(r, per_c)
    if x is None or d is None or d == 0 or is_empty(typed.text(r, c)) or is_empty(typed.text(r, per_c)):
        return None
    return x / d


def row_change(typed: TypedTable, r: int, c: int, minus_c: int) -> float | None:
    """Row ``r``'s value in column ``c`` minus its value in ``minus_c`` (in days for two columns of dates: a
    duration, tools._question_dates); None when either is missing."""
    x, y = typed.order_value(r, c), typed.order_value(r, minus_c)
    if x is None or y is None or is_empty(typed.text(r, c)) or is_empty(typed.text(r, minus_c)):
        return None
    return x - y


def row_relative_change(typed: TypedTable, r: int, c: int, from_c: int) -> float | None:
    """Row ``r``'s change from column ``from_c`` to ``c`` as a share of ``from_c`` (0.284: grew 28.4%); None when
    either is missing or the start is 0."""
    change, start = row_change(typed, r, c, from_c), typed.number(r, from_c)
    return None if change is None or not start else change / abs(start)


def _scaled(chk: Check, text: str, number: float | None, shown: str) -> tuple[str, str, float]:
    """The other value a claim's multiplier scales ("twice as many as East"), how the step shows it, and the
    tolerance of "=" (none without a multiplier: two cells of a table are compared exactly)."""
    if not chk.factor or number is None:
        return text, shown, 0.0
    scaled = number * chk.factor
    tolerance = abs(scaled) * chk.relative_tolerance
    # "about twice": the range an equality accepts is said, or "= 18" reads as exact (found as a new user:
    # "Emergency has roughly twice as many doctors as Oncology" refuted by 22 against "= 2 × 9 = 18")
    within = (f" (within {chk.relative_tolerance:.0%}: {format_value(scaled - tolerance)} to "
              f"{format_value(scaled + tolerance)})") if tolerance and chk.op in ("=", "!=") else ""
    return format_value(scaled), f"{chk.factor:g} × {shown} = {format_value(scaled)}{within}", tolerance


def _check_own_row(program: Program, typed: TypedTable, c: int,
                   rows: list[int]) -> tuple[bool, str, list[tuple[int, int]]]:
    """"Oslo enrolled more than its target": the row's value against another column of the same row."""
    chk = program.check
    assert chk is not None
    other = column_index(typed, chk.value, "comparison column")
    if program.fn != "value" or len(rows) != 1:
        raise ProgramError("a comparison with another column of the same row needs one selected row and its value")
    [r] = rows
    if other == c or not (typed.columns[c - 1].numeric and typed.columns[other - 1].numeric):
        raise ProgramError("a comparison within a row needs two different columns of numbers")
    shares = share_pair(typed, r, c, other) if chk.by_share else None
    left, right = shares if shares is not None else (typed.number(r, c), typed.number(r, other))
    if left is None or right is None:
        raise ProgramError(f"{typed.row_name(r)} has no number in {program.column!r} or {chk.value!r}")
    shown = f"{typed.row_name(r)}'s {typed.columns[other - 1].name} {format_value(typed.text(r, other))}"
    # groups of different sizes: the percentages each cell writes, as written (tools._table_shape.by_share)
    left_text, right_cell = ((written_share(typed.text(r, c)) or "", written_share(typed.text(r, other)) or "")
                             if shares is not None else (typed.text(r, c), typed.text(r, other)))
    right_text, shown, tolerance = _scaled(chk, right_cell, right, shown)
    if shares is not None:
        shown += f", compared by the percentages the cells write ({left_text} against {right_cell})"
    truth = compare(left_text, left, chk.op, right_text, right * (chk.factor or 1.0), tolerance=tolerance)
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
    # A suppressed count ("<5") is a range: the sum is one too, and settles the claim when the row is beyond it
    # (found as a new user: "The East had more cases than the West and South combined", 57 against 9 and "<5",
    # did not run, and the fallback invented the counts).
    nonnegative = all(x >= 0 for x in typed.columns[c - 1].numbers if x is not None)
    ranges = [(x, x) if x is not None and not is_empty(typed.text(r, c))
              else cell_bounds(typed.text(r, c), nonnegative) for r, x in ((r, typed.number(r, c)) for r in others)]
    if any(b is None for b in ranges):
        raise ProgramError(f"a row named in the check has no number in column {program.column!r}")
    low, high = sum(b[0] for b in ranges if b), sum(b[1] for b in ranges if b)
    [r0] = rows
    left = typed.number(r0, c)
    if left is None:
        raise ProgramError(f"{typed.row_name(r0)} has no number in column {program.column!r}")
    parts = [f"{typed.row_name(r)} ({format_value(typed.text(r, c))})" for r in others]
    listed = f"{typed.columns[c - 1].name} of {', '.join(parts[:-1])} and {parts[-1]} combined"
    if low == high:
        shown = f"{listed}, {format_value(low)}"
        truth = compare(typed.text(r0, c), left, chk.op, format_value(low), low, tolerance=0.0)
    else:
        shown = f"{listed}, " + (f"between {format_value(low)} and {format_value(high)}" if math.isfinite(high)
                                 else f"over {format_value(low)}")
        below, above = left < low, left > high  # the row's value is beyond every sum the range allows
        if chk.op in (">", ">="):
            truth = True if above else False if left <= low else None
        elif chk.op in ("<", "<="):
            truth = True if below else False if left >= high else None
        else:
            truth = False if below or above else None
        if truth is None:
            raise ProgramError(f"{typed.row_name(r0)}'s {format_value(left)} against {shown}: the suppressed "
                               "counts leave it open")
    return truth, f"{chk.op} {shown}", [(r, cc) for r in others for cc in (label, c)]


def _check_group(program: Program, typed: TypedTable, result: Any, c: int,
                 rows: list[int]) -> tuple[bool, str, list[tuple[int, int]]]:
    """"Hospitals in the South have more beds in total than those in the East": the selected rows' sum (or mean)
    against the same over the rows whose ``group_column`` holds the check's value (a totals row left out)."""
    chk = program.check
    assert chk is not None and chk.group_column
    if program.fn not in ("sum", "avg") or not typed.columns[c - 1].numeric or not isinstance(result, (int, float)):
        raise ProgramError("a comparison of two groups compares their sums or means of a column of numbers")
    group = RowFilter(column=chk.group_column, op="=", value=chk.value)
    others = [r for r in rows_but_totals(typed) if meets_filter(typed, r, group)]
    if not others or set(others) & set(rows):
        raise ProgramError(f"no rows of their own have {chk.group_column} = {chk.value!r} to compare with")
    numbers = [typed.number(r, c) for r in others]
    if any(x is None for x in numbers):
        raise ProgramError(f"a row with {chk.group_column} = {chk.value!r} has no number in column "
                           f"{program.column!r}")
    other = sum(numbers) if program.fn == "sum" else sum(numbers) / len(numbers)
    what = "the total" if program.fn == "sum" else "the mean"
    shown = f"{what} of {typed.columns[c - 1].name} where {typed.column(chk.group_column).name} is {chk.value}, " \
            f"{with_written_unit([typed.text(r, c) for r in others], other)}"
    truth = compare(format_value(result), float(result), chk.op, format_value(other), other, tolerance=0.0)
    label = typed.label_col
    return truth, f"{chk.op} {shown}", [(r, cc) for r in others for cc in ([label] if label else []) + [c]]


def _check_share_of_total(program: Program, typed: TypedTable, c: int,
                          rows: list[int]) -> tuple[bool, str, list[tuple[int, int]]]:
    """"St Mary has more than a third of all beds": the selected rows' sum against ``factor`` times the column's
    total over every row (a totals row, which repeats the others' sum, left out)."""
    chk = program.check
    assert chk is not None and chk.factor is not None
    if program.fn not in ("value", "sum") or not typed.columns[c - 1].numeric:
        raise ProgramError("a share of a column's total needs the value or sum of a column of numbers")
    counted = rows_but_totals(typed)
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


def _check_extreme(program: Program, typed: TypedTable, result: Any,
                   rows: list[int]) -> tuple[bool, str, list[tuple[int, int]]]:
    """"The region with the fewest hospitals has the highest occupancy": the row the program's argmax or argmin
    names must be one holding the largest (or smallest) value of the check's column, over the same rows."""
    chk = program.check
    assert chk is not None and chk.extreme is not None
    if program.fn not in ("argmax", "argmin"):
        raise ProgramError("a comparison of two extremes needs argmax or argmin")
    other = column_index(typed, chk.value, "extreme column")
    if not typed.columns[other - 1].numeric:
        raise ProgramError(f"column {chk.value!r} holds text, which has no largest or smallest value")
    pairs = [(r, typed.number(r, other)) for r in rows if not is_empty(typed.text(r, other))]
    pairs = [(r, x) for r, x in pairs if x is not None]
    if not pairs:
        raise ProgramError(f"no numbers in column {chk.value!r} among the {len(rows)} selected rows")
    best = (max if chk.extreme == "max" else min)(x for _, x in pairs)
    holders = [r for r, x in pairs if x == best]
    answer_c = column_index(typed, program.answer_column, "answer column") if program.answer_column else typed.label_col
    names = {text_words(typed.text(r, answer_c)) for r in holders}
    named = result if isinstance(result, list) else [result]
    truth = all(text_words(n) in names for n in named)
    column = typed.columns[other - 1].name
    holder_names = ", ".join(" ".join(typed.text(r, answer_c).split()) for r in holders)
    shown = f"the row with the {'largest' if chk.extreme == 'max' else 'smallest'} {column}: {holder_names} " \
            f"({format_value(best)})"
    said = f"to be {shown}" if chk.op == "=" else f"{chk.op} {shown}"  # the reason: "the claim needs it to be …"
    return truth, said, [(r, cc) for r in holders for cc in (answer_c, other)]
