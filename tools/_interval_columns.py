"""The bounds of a column of intervals, as two columns of numbers programs can compare.

Found as a new user over a table of vaccine trials: "The lower bound of the confidence interval for BNT162b2 was
above 90%." could not be checked. Its "95% CI" column writes "90.3-97.6", a text to a program, and a hazard-ratio
column writes "0.81 (0.65–1.01)", whose number is the estimate alone. A column whose header names an interval
(CI, confidence or credible interval, range, IQR) and whose cells write one gets two more columns, "<header> lower
bound" and "<header> upper bound", each cell cited as the interval's own cell.

A range that writes its unit is an interval whatever its header says: PubHealthTab's tuning split has a weight-gain
table whose column "You should gain..." writes "37-54 pounds", so "… is recommended to gain a minimum 50 lbs"
could not be read from its lower bound. Only units of amounts count ("pounds", "mg", "%", "years"), so that
TabFact's seasons ("1993 - 4 details"), scores ("24 - 17") and terms ("1863-1875") stay as they are.

A column that mixes single numbers with ranges is a column of amounts too, its unit in the header: found as a new
user, a vaccines table's "Storage temp (°C)" writes "-70", "-20" and "2 to 8", so it was text to a program and "Is
Novavax's vaccine stored at a colder temperature than Moderna's?" could not be computed. There a single number is
a range of one point: both its bounds are the number.
"""

from __future__ import annotations

import re

from kb.tables import Table
from tools._cells import cell_number, is_empty

INTERVAL_HEADER = re.compile(r"\bCI\b|\bconfidence\b|\bcredible\b|\binterval\b|\brange\b|\bIQR\b", re.I)
_NUM = r"[-−]?\d[\d,]*(?:\.\d+)?%?"
# "90.3-97.6", "59.0 to 73.4", "[0.52, 0.99]", "0.81 (0.65–1.01)", "1.2 (95% CI 0.9-1.6)"
_SEP = r"\s*(?:-|–|—|to|,|;)\s*"
# Units of amounts a range may end with ("37-54 pounds", "18.5–24.9 kg/m2", "5 to 11 years"): a word outside these
# ("details", "wins") leaves the cell a text.
_UNIT = (r"(?:%|percent|lbs?|pounds?|kg|g|mg|mcg|µg|ug|ng|ml|mL|l|litres?|liters?|oz|ounces?|kcal|calories|cal|"
         r"iu|units?|mmhg|mmol/l|mg/dl|bpm|cm|mm|m|km|in|inch(?:es)?|ft|feet|years?|yrs?|months?|weeks?|days?|"
         r"hours?|hrs?|h|minutes?|mins?|seconds?|s|times|servings?|doses?|drinks?|cups?|steps)"
         r"(?:\s*/\s*(?:m2|m²|kg|day|d|week|wk|dl|l|ml))?")
_INTERVAL = re.compile(rf"^\s*(?:(?P<lo>{_NUM}){_SEP}(?P<hi>{_NUM})(?:\s*(?P<unit>{_UNIT}))?|"
                       rf"(?:(?P<est>{_NUM})\s*)?[(\[]\s*(?:95%\s*CI[:,]?\s*)?"
                       rf"(?P<lo2>{_NUM}){_SEP}(?P<hi2>{_NUM})\s*[)\]])\s*\.?\s*$", re.I)
MIN_SHARE = 0.6  # of the column's filled cells that must write an interval
# How the bound columns' names end; tools._interval_claims finds the pairs by them
LOWER_BOUND, UPPER_BOUND = " lower bound", " upper bound"


def interval_bounds(cell: str) -> tuple[float, float] | None:
    """The lower and upper bound an interval cell writes, or None: "0.81 (0.65–1.01)" -> (0.65, 1.01)."""
    m = _INTERVAL.match(cell or "")
    if m is None:
        return None
    ends = ("lo", "hi") if m.group("lo") is not None else ("lo2", "hi2")
    lo, hi = (cell_number(m.group(g).replace("−", "-")) for g in ends)
    if lo is None or hi is None or lo > hi:
        return None
    return lo, hi


def _interval_name(header: str) -> str:
    """The part of a header that names its interval: "95% CI" of "Hazard ratio (95% CI)"; the header itself when
    no bracketed part does ("95% CI", "Range")."""
    for part in re.findall(r"[(\[]([^()\[\]]+)[)\]]", header):
        if INTERVAL_HEADER.search(part):
            return " ".join(part.split())
    return " ".join(header.split())


def _estimate_in_interval(cell: str) -> bool:
    """Whether a cell writes an estimate with the interval around it ("0.74 (0.58-0.95)"), whatever the header says:
    found as a new user, a trials table's "primary_outcome_hr" column was read on its estimates when asked which
    confidence intervals excluded 1."""
    m = _INTERVAL.match(cell or "")
    if m is None or m.group("est") is None:
        return False
    est, lo, hi = (cell_number(m.group(g).replace("−", "-")) for g in ("est", "lo2", "hi2"))
    return None not in (est, lo, hi) and lo <= est <= hi and lo < hi


def _with_unit(cell: str) -> bool:
    """Whether a cell writes a range of an amount: its bounds and its unit ("37-54 pounds", "11%–15%")."""
    m = _INTERVAL.match(cell or "")
    return m is not None and m.group("lo") is not None and (
        m.group("unit") is not None or (m.group("hi") or "").endswith("%"))


# A range in a column of single numbers: its bounds joined by a dash or "to" ("2 to 8", "10-20"), not a list ("3, 5")
_DASHED = re.compile(r"\d%?\s*(?:-|–|—|to)\s*[-−]?\d", re.I)


# Of a column of single numbers, the share of ranges that makes it a column of ranges: a few stray ones are more
# likely something else (SciTab writes exponents as "2.10-5", 2 of 12 cells of a column of p-values)
MIXED_MIN_SHARE = 1 / 3


def _numbers_and_ranges(filled: list[str]) -> bool:
    """Whether a column's filled cells are single numbers and ranges ("-70", "-20", "2 to 8"), two ranges at least
    and a third of the cells."""
    is_range = [interval_bounds(x) is not None and _DASHED.search(x) is not None for x in filled]
    ranges = sum(is_range)
    singles = sum(not r and cell_number(x) is not None for x, r in zip(filled, is_range))
    return ranges >= max(2, MIXED_MIN_SHARE * len(filled)) and singles >= 1 and ranges + singles == len(filled)


def _filled(table: Table, c: int) -> list[str]:
    return [table.cell(r, c) for r in range(1, table.n_rows + 1) if not is_empty(table.cell(r, c))]


def interval_columns(table: Table) -> list[int]:
    """The (1-based) columns whose filled cells mostly write an interval, under a header that names one or in cells
    that write their unit or an estimate inside it, and the columns of single numbers and ranges."""
    found = []
    for c, header in enumerate(table.columns, start=1):
        filled = _filled(table, c)
        named = INTERVAL_HEADER.search(header) is not None
        # without a header naming an interval, two cells at least must write one with its unit
        if len(filled) >= (1 if named else 2) and sum(
                interval_bounds(x) is not None and (named or _with_unit(x) or _estimate_in_interval(x))
                for x in filled) >= MIN_SHARE * len(filled):
            found.append(c)
        elif not named and _numbers_and_ranges(filled):
            found.append(c)
    return found


def _cell_bounds(cell: str, points: bool) -> tuple[float, float] | None:
    """An interval cell's bounds; in a column of amounts (``points``) a single number's too, both the number. Under a
    header naming an interval a single number is an estimate whose interval is not written ("0.81"): no bounds."""
    bounds = interval_bounds(cell)
    if bounds is None and points and (x := cell_number(cell)) is not None:
        return x, x
    return bounds


def with_bounds(table: Table) -> tuple[Table, dict[tuple[int, int], tuple[int, int]]] | None:
    """The table with a lower and an upper bound column after its last for each interval column, and where each new
    cell comes from (its interval cell); None when the table has no interval column."""
    columns = interval_columns(table)
    if not columns:
        return None
    names = list(table.columns)
    rows = [list(r) + [""] * (table.n_cols - len(r)) for r in table.rows]
    sources: dict[tuple[int, int], tuple[int, int]] = {}
    stems = {c: _interval_name(table.columns[c - 1]) for c in columns}
    for c in columns:
        points = INTERVAL_HEADER.search(table.columns[c - 1]) is None
        # the bounds are named by the interval ("95% CI lower bound"), not by the estimate's header ("Hazard ratio
        # (95% CI)"): found as a new user, "Which subgroup had the lowest hazard ratio?" was read on the lower bounds
        stem = stems[c] if list(stems.values()).count(stems[c]) == 1 else " ".join(table.columns[c - 1].split())
        for suffix, i in ((LOWER_BOUND, 0), (UPPER_BOUND, 1)):
            names.append(stem + suffix)
            new_c = len(names)
            for r, row in enumerate(rows, start=1):
                bounds = _cell_bounds(table.cell(r, c), points)
                row.append("" if bounds is None else "%.10g" % bounds[i])
                sources[(r, new_c)] = (r, c)
    return Table(name=table.name, title=table.title, columns=names, rows=rows, source=table.source), sources
