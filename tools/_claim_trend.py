"""Claims of a trend over every period ("Revenue grew every month", "Cases fell each year"), settled in code.

Found as a new user: over a monthly sales table, "Revenue grew every month in 2024" was Supported by a program
that compared January's *profit* with February's; revenue had fallen in February. The grammar has no "each
value above the one before", and the claim's form settles the check, so code does:

- the claim says a column rose (grew, increased, rose, went up, climbed) or fell (fell, decreased, declined,
  dropped, went down) every or each period (year, month, quarter, week, season), or steadily, consistently,
  year on year, year after year;
- it names exactly one numeric column of the table (not a column of years);
- the rows are put in time order by a column of years or of ISO dates ("2024-03", "2019-05-01"); without one,
  the table's own order is the order, and the reason says so. Periods the claim writes bound the run ("from 2015 to
  2020", "since 2016"); otherwise a year the claim states keeps the rows of that year when the time column spans
  several; totals rows are left out.

The claim holds when every value is strictly above (below) the one before. A refutation cites the first pair of
rows that breaks the run; a support cites the column's values (at most ten rows, else nothing is decided here).
Anything else (no named column, an empty or text cell in the run, fewer than three rows) leaves the claim to
the programs. So does a claim that writes a number other than its periods and names ("rose to 600", "by 49",
"by about 10%"); "rose by more than 10% from January to March" is the two periods' relative change against the
bound.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kb.table_model import Table
from tools._cells import TypedTable, compare, format_value, is_empty, iso_month_names, names_month, norm_text
from tools._grounding import column_named, named_words
from tools._table_shape import total_rows
from tools.lang.lexicon import change_pattern

# "grew", "is rising", "improves": any verb form but the participle ("has risen" reads as "rose" through "has")
_UP = change_pattern("up", "base", "third", "past", "gerund", improve=True)
_DOWN = change_pattern("down", "base", "third", "past", "gerund")
_VERB = re.compile(rf"\b(?:(?P<up>{_UP})|(?P<down>{_DOWN}))\b", re.I)
_EVERY = re.compile(r"\b(?:every|each)\s+(?:single\s+)?(?:year|month|quarter|week|day|season|period|time|decade)\b|"
                    r"\b(?:steadily|consistently|continuously|monotonically|year[- ]on[- ]year|year after year|"
                    r"month after month|month[- ]on[- ]month)\b", re.I)
_NEGATED = re.compile(r"\b(?:not|never|n't)\b", re.I)
# shared with tools._dose_trend, whose claims rise or fall in the same words
TREND_VERB, NEGATED = _VERB, _NEGATED
# "rises with age", "falls with increasing dose": along the column of row labels, when it names that column
_ALONG = re.compile(r"\s*(?:\w+\s+){0,2}?(?:with|by|across)\s+(?:increasing\s+|higher\s+|rising\s+|greater\s+|"
                    r"older\s+)?(?P<along>[^\W\d_][\w-]*)", re.I)
_YEAR = re.compile(r"\b(1[89]\d{2}|20\d{2})\b")
# ISO dates ("2024-03", "2019-05-01") and ISO weeks ("2025-W40", "2025W40": surveillance tables), each ordered
# as text
_ISO = re.compile(r"^\d{4}(?:-\d{2}){0,2}$|^\d{4}-?W\d{2}$")
MIN_ROWS = 3
# "increased by more than 10%", "fell by at least 5 percent": a bound on the relative change between two periods.
# Rough amounts ("by about 10%") and absolute ones ("by 49") are left to the programs.
_BY_BOUND = {"more than": ">", "over": ">", "at least": ">=", "less than": "<", "under": "<", "at most": "<=",
             "no more than": "<="}
_BY_PERCENT = re.compile(r"\bby\s+(?:(?P<bound>more\s+than|over|at\s+least|less\s+than|under|at\s+most|"
                         r"no\s+more\s+than)\s+)?(?P<n>\d+(?:\.\d+)?)\s*(?:%|percent\b|per\s+cent\b)", re.I)
_SINCE = {"since", "after", "from"}
_UNTIL = {"until", "till", "to", "through", "before"}
MAX_CITED_ROWS = 10


@dataclass(frozen=True)
class TrendCheck:
    verdict: str  # "SUPPORTS" | "REFUTES"
    cells: list[tuple[int, int]]
    reason: str


def _time_order(typed: TypedTable, rows: list[int]) -> tuple[list[int], int | None]:
    """``rows`` in time order and the column that gave it (None: the table's own order)."""
    for col in typed.columns:
        if col.numeric and col.holds_years and all(col.numbers[r - 1] is not None for r in rows):
            return sorted(rows, key=lambda r: (col.numbers[r - 1], r)), col.index
    for col in typed.columns:
        values = [typed.text(r, col.index).strip() for r in rows]
        if not col.numeric and all(_ISO.match(v) for v in values):
            return sorted(rows, key=lambda r: (typed.text(r, col.index).strip(), r)), col.index
    return rows, None


def _stated_span(typed: TypedTable, rows: list[int], cols: list[int], claim: str) -> list[int] | None:
    """The run of ``rows`` (in time order) the claim bounds by periods it writes, or None.

    Periods are cells of the time column or the row names ("2017-18", "2015"), written whole in the claim. Two
    or more bound the run at both ends ("from 2015 to 2020", "after 2017-18 until 2020-21": the run starts at the
    period the change is measured from); one bounds it at one end when a word says which ("since 2016", "until
    2019"). Found as a new user: "hospitalisations fell every season after 2017-18 until 2020-21" was read as a
    trend within 2017 alone (too few rows) and left to a program that compared 2020-21 with 2017-18.
    """
    low = norm_text(claim)
    marks: list[tuple[int, re.Match]] = []
    month_names = {(r, c): name for c in cols
                   for r, name in zip(rows, iso_month_names([typed.text(r, c) for r in rows]) or [])}
    for i, r in enumerate(rows):
        for c in cols:
            cell = norm_text(typed.text(r, c))
            m = re.search(rf"(?<![\w-]){re.escape(cell)}(?![\w-])", low) if cell else None
            if m is None and (r, c) in month_names:  # "from February to May" over "2024-02" … "2024-05"
                m = names_month(claim, month_names[r, c])
            if m:
                marks.append((i, m))
                break
    if len(marks) >= 2:
        first, last = min(i for i, _ in marks), max(i for i, _ in marks)
        return rows[first:last + 1]
    if len(marks) == 1:
        i, m = marks[0]
        before = m.string[:m.start()].lower().split()[-1:]  # the claim or its normalised text
        if before and before[0] in _SINCE:
            return rows[i:]
        if before and before[0] in _UNTIL:
            return rows[:i + 1]
    return None


def _named_group(typed: TypedTable, rows: list[int], time_col: int | None, claim: str
                 ) -> tuple[list[int], int] | None:
    """In a long table (a row per thing and period: Country, Year, …), the rows of the one thing the claim names
    ("in Kenya") and the column naming it; None when no text column that repeats its values has exactly one of
    them in the claim.

    Found as a new user over TB incidence by country and year: "TB incidence fell every year in Kenya" was refuted
    by Ghana's 2019 against Kenya's 2020, the three countries' rows taken as one series."""
    low = norm_text(claim)
    for col in typed.columns:
        if col.numeric or col.index == time_col:
            continue
        values = {norm_text(typed.text(r, col.index)) for r in rows} - {""}
        if len(values) == len(rows):
            continue  # every row its own value: names rows, does not group them
        named = [v for v in values if re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", low)]
        if len(named) == 1:
            return [r for r in rows if norm_text(typed.text(r, col.index)) == named[0]], col.index
    return None


def _states_an_amount(claim: str, typed: TypedTable, rows: list[int], time_col: int | None) -> bool:
    """Whether the claim writes a number besides its periods and names: an amount of the change ("increased by 49
    from January to March") or a value ("rose to 600"), which a direction alone does not check.

    Found as a new user: "Admissions increased by more than 10% from January to March." (512 to 561, 9.6%) was
    Supported here, "the claim says it rose". A bounded percentage between two periods is computed here
    (``_BY_PERCENT``); any other amount is left to the programs."""
    said = claim
    periods = sorted({" ".join(typed.text(r, time_col).split()) for r in rows} if time_col is not None else set(),
                     key=len, reverse=True)
    for period in periods:
        if period:
            said = re.sub(rf"(?<!\w){re.escape(period)}(?!\w)", " ", said)
    # a number that names something is no amount: "seen within 18 weeks" (a header), "Region 1" (a row)
    names = " ".join([*(c.name for c in typed.columns),
                      *(typed.text(r, c.index) for c in typed.columns if not c.numeric for r in rows)])
    named = set(re.findall(r"\d+(?:\.\d+)?", names))
    return any(n not in named for n in re.findall(r"\d+(?:\.\d+)?", _YEAR.sub(" ", said)))


def trend_check(claim: str, table: Table) -> TrendCheck | None:
    """The verdict on a claim that a column rose or fell every period, or from one period to another in a table
    with a time column ("TB incidence in Uganda rose from 2020 to 2021", the two periods' values compared), or
    None (module docstring)."""
    verb, every = _VERB.search(claim), _EVERY.search(claim)
    if not verb:
        return None
    # Typed only once the claim's words call for it: every claim check passes here, and the programs type the
    # table themselves.
    typed = TypedTable.build(table)
    along = _ALONG.match(claim, verb.end())
    if not every and along and typed.label_col and column_named(typed.columns[typed.label_col - 1].name,
                                                                along.group("along")):
        # "Coverage rises with age" over rows of age groups: a rise at every step of the rows' own order (found as
        # a new user: supported by "the average coverage > the 18-24 group's", which the claim never said)
        every = along
    measures = [c for c in typed.columns if c.numeric and not c.holds_years and column_named(c.name, claim)]
    if len(measures) > 1:
        # "The share seen within 18 weeks fell every month" names "Seen within 18 weeks (%)" by three words and
        # "Median wait (weeks)" by one (seen as a new user): the column it names best, when one does
        best = max(len(named_words(c.name, claim)) for c in measures)
        measures = [c for c in measures if len(named_words(c.name, claim)) == best]
    if len(measures) != 1:
        return None
    measure = measures[0]
    totals = set(total_rows(typed))
    rows = [r for r in range(1, typed.table.n_rows + 1) if r not in totals]
    rows, time_col = _time_order(typed, rows)
    # (also without a time column, in the table's order: "Admissions in the North rose every week" over rows of
    # two regions, found as a new user, was refuted by the South's first week after the North's last)
    group = _named_group(typed, rows, time_col, claim)
    group_col = None
    if group:
        rows, group_col = group
    if time_col is not None and len({typed.text(r, time_col).strip() for r in rows}) < len(rows):
        return None  # a period twice in the run: several things per period, and the claim names none of them
    change = _BY_PERCENT.search(claim)
    if _states_an_amount(claim[:change.start()] + claim[change.end():] if change else claim, typed, rows, time_col) \
            or (change and every):
        return None
    if not every:
        # "rose from 2020 to 2021": the two periods' values, in a table with a time column (a table with a
        # column per period is tools._claim_changes')
        ends = _stated_span(typed, rows, [time_col], claim) if time_col is not None else None
        if not ends or len(ends) < 2 or not re.search(r"\bfrom\b.*\bto\b|\bbetween\b.*\band\b", claim, re.I):
            return None
        negated = bool(_NEGATED.search(claim[:verb.start()]))
        if change and negated:
            return None
        return _endpoints(typed, measure, ends[0], ends[-1], time_col, verb.group("up") is not None,
                          negated, group_col, change)
    span = _stated_span(typed, rows, [c for c in (time_col, typed.label_col) if c], claim)
    year = _YEAR.search(claim)
    if span is not None:
        rows = span
    elif year and time_col is not None:
        in_year = [r for r in rows if year.group(1) in typed.text(r, time_col)]
        if in_year and len(in_year) < len(rows):
            rows = in_year
    if len(rows) < MIN_ROWS or any(is_empty(typed.text(r, measure.index)) or measure.numbers[r - 1] is None
                                   for r in rows):
        return None
    up = verb.group("up") is not None
    negated = bool(_NEGATED.search(claim[:verb.start()]))
    xs = [measure.numbers[r - 1] for r in rows]
    broken = next((i for i in range(1, len(xs)) if (xs[i] <= xs[i - 1] if up else xs[i] >= xs[i - 1])), None)
    # A row is named by its period when there is a time column ("2019"), else by its label ("North").
    label = time_col if time_col is not None else typed.label_col

    def name(r: int) -> str:
        return " ".join(typed.text(r, label).split()) if label else f"row {r}"

    def cells(rs: list[int]) -> list[tuple[int, int]]:
        named_by = [c for c in (group_col, label) if c]
        return [cell for r in rs for cell in [(r, c) for c in named_by] + [(r, measure.index)]]

    def at(r: int) -> str:
        return f"{typed.text(r, measure.index)} ({name(r)})"

    order = "" if time_col is not None else " (in the table's row order)"
    direction = "rose" if up else "fell"
    if broken is None:
        if len(rows) > MAX_CITED_ROWS:
            return None
        found = (f"{measure.name} {direction} at every step{order}: " + ", ".join(at(r) for r in rows))
        holds = True
        cited = cells(rows)
    else:
        a, b = rows[broken - 1], rows[broken]
        moved = "fell" if xs[broken] < xs[broken - 1] else "rose" if xs[broken] > xs[broken - 1] else "stayed"
        found = (f"{measure.name} {moved} from {at(a)} to {at(b)}" if moved != "stayed"
                 else f"{measure.name} stayed at {format_value(xs[broken])} from {name(a)} to {name(b)}") + order
        holds = False
        cited = cells([a, b])
    if negated:
        holds = not holds
    verdict = "SUPPORTS" if holds else "REFUTES"
    says = f"did not {'rise' if up else 'fall'} every time" if negated else f"{direction} every time"
    reason = f"{found}; the claim says it {says}, so the table {'supports' if holds else 'refutes'} the claim."
    if group_col:  # a long table's rows of one thing: say whose
        reason = f"In the rows of {' '.join(typed.text(rows[0], group_col).split())}: {reason}"
    return TrendCheck(verdict, cited, reason)


def _endpoints(typed: TypedTable, measure, first: int, last: int, time_col: int, up: bool,
               negated: bool, group_col: int | None, change: re.Match | None = None) -> TrendCheck | None:
    """The claim that ``measure`` rose (``up``) or fell from row ``first``'s period to row ``last``'s, by the
    percentage ``change`` states when it states one."""
    a, b = measure.numbers[first - 1], measure.numbers[last - 1]
    if a is None or b is None or (change is not None and a == 0):
        return None
    holds = (b > a) if up else (b < a)
    if negated:
        holds = not holds
    moved = "rose" if b > a else "fell" if b < a else "stayed the same"
    says = f"did not {'rise' if up else 'fall'}" if negated else ("rose" if up else "fell")
    if change is not None:
        # "increased by more than 10%": the relative change, in the claim's direction, against the stated bound
        pct = abs(b - a) / abs(a) * 100
        stated = change.group("n")
        op = _BY_BOUND.get(" ".join((change.group("bound") or "").lower().split()), "=")
        holds = holds and compare(format_value(pct), pct, op, stated)
        moved += f" by {pct:.1f}%" if b != a else ""
        says += f" by {change.group(0)[3:].strip()}"

    def at(r: int) -> str:
        return f"{typed.text(r, measure.index)} ({' '.join(typed.text(r, time_col).split())})"

    reason = (f"{measure.name} {moved} from {at(first)} to {at(last)}; the claim says it {says}, so the table "
              f"{'supports' if holds else 'refutes'} the claim.")
    label = group_col or typed.label_col
    cells = [cell for r in (first, last) for cell in (((r, label),) if label and label != time_col else ())
             + ((r, time_col), (r, measure.index))]
    if group_col:
        reason = f"In the rows of {' '.join(typed.text(first, group_col).split())}: {reason}"
    return TrendCheck("SUPPORTS" if holds else "REFUTES", cells, reason)
