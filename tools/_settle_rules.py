"""Claims whose form settles the verdict in code (settle rules), and the trend reading they share: a rise or fall
over every period, statistical significance read from the table's p-value, a rise or fall with the dose across
dose arms, a row's value against the range its own row gives, two measures that go together across the rows, the
fields of one record, and how long a span lasts when one cell writes both its ends. A question of the significance
or the range form becomes a program's filter here too.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from itertools import combinations

from scipy.stats import spearmanr
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from kb.table_model import Table
from tools._cells import TypedTable, cell_number, compare, format_value, is_empty, iso_month_names, \
    norm_text, parse_date, text_words
from tools._grounding import column_named, named_words, row_stated, yes_no_asked
from tools._question_dates import stated_days
from tools._table_ops_model import MAX_CELLS, MAX_FILTERS, VALUE_MAX_CHARS, Program, RowFilter
from tools._table_shape import interval_bounds, interval_columns, lists_items, total_rows
from tools._values import ORDER_OPS, ROUGH_SHARE, bound_pairs
from tools.lang.lexicon import change_pattern, related
from tools.lang.reading import names_month, read


# ======================================================================================================================
# Claims of a trend over every period ("Revenue grew every month", "Cases fell each year"), settled in code.
#
# Found as a new user: over a monthly sales table, "Revenue grew every month in 2024" was Supported by a program
# that compared January's *profit* with February's; revenue had fallen in February. The grammar has no "each
# value above the one before", and the claim's form settles the check, so code does:
#
# - the claim says a column rose (grew, increased, rose, went up, climbed) or fell (fell, decreased, declined,
#   dropped, went down) every or each period (year, month, quarter, week, season), or steadily, consistently,
#   year on year, year after year;
# - it names exactly one numeric column of the table (not a column of years);
# - the rows are put in time order by a column of years or of ISO dates ("2024-03", "2019-05-01"); without one,
#   the table's own order is the order, and the reason says so. Periods the claim writes bound the run ("from 2015 to
#   2020", "since 2016"); otherwise a year the claim states keeps the rows of that year when the time column spans
#   several; totals rows are left out.
#
# The claim holds when every value is strictly above (below) the one before. A refutation cites the first pair of
# rows that breaks the run; a support cites the column's values (at most ten rows, else nothing is decided here).
# Anything else (no named column, an empty or text cell in the run, fewer than three rows) leaves the claim to
# the programs. So does a claim that writes a number other than its periods and names ("rose to 600", "by 49",
# "by about 10%"); "rose by more than 10% from January to March" is the two periods' relative change against the
# bound.
# ======================================================================================================================

# "grew", "is rising", "improves": any verb form but the participle ("has risen" reads as "rose" through "has")
_UP = change_pattern("up", "base", "third", "past", "gerund", improve=True)
_DOWN = change_pattern("down", "base", "third", "past", "gerund")
_VERB = re.compile(rf"\b(?:(?P<up>{_UP})|(?P<down>{_DOWN}))\b", re.I)
# "every month", "each single year" (the Reading's quantifier, then a period), or a word that says so alone
_PERIOD_AFTER = re.compile(r"\s+(?:single\s+)?(?:year|month|quarter|week|day|season|period|time|decade)\b", re.I)
_STEADILY = re.compile(r"\b(?:steadily|consistently|continuously|monotonically|year[- ]on[- ]year|year after year|"
                       r"month after month|month[- ]on[- ]month)\b", re.I)


def _every_period(claim: str) -> bool:
    """Whether the claim says a change held every period ("every month", "each year", "steadily")."""
    return any(q.word in ("every", "each") and _PERIOD_AFTER.match(claim, q.end) for q in read(claim).quantifiers) \
        or _STEADILY.search(claim) is not None
_NEGATED = re.compile(r"\b(?:not|never|n't)\b", re.I)
# shared with the dose trend below, whose claims rise or fall in the same words
TREND_VERB, NEGATED = _VERB, _NEGATED
# "rises with age", "falls with increasing dose": along the column of row labels, when it names that column
_ALONG = re.compile(r"\s*(?:\w+\s+){0,2}?(?:with|by|across)\s+(?:increasing\s+|higher\s+|rising\s+|greater\s+|"
                    r"older\s+)?(?P<along>[^\W\d_][\w-]*)", re.I)
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
    marks: list[tuple[int, str]] = []  # (the row's place in the run, the text before the claim names it)
    month_names = {(r, c): name for c in cols
                   for r, name in zip(rows, iso_month_names([typed.text(r, c) for r in rows]) or [])}
    for i, r in enumerate(rows):
        for c in cols:
            cell = norm_text(typed.text(r, c))
            m = re.search(rf"(?<![\w-]){re.escape(cell)}(?![\w-])", low) if cell else None
            month = names_month(claim, month_names[r, c]) if m is None and (r, c) in month_names else None
            if m or month:  # a month: "from February to May" over "2024-02" … "2024-05"
                marks.append((i, low[:m.start()] if m else claim[:month.start]))
                break
    if len(marks) >= 2:
        first, last = min(i for i, _ in marks), max(i for i, _ in marks)
        return rows[first:last + 1]
    if len(marks) == 1:
        i, said_before = marks[0]
        before = said_before.lower().split()[-1:]  # of the claim or its normalised text
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
    unyeared = read(said).without(read(said).year_list())
    return any(n not in named for n in re.findall(r"\d+(?:\.\d+)?", unyeared))


def trend_check(claim: str, table: Table) -> TrendCheck | None:
    """The verdict on a claim that a column rose or fell every period, or from one period to another in a table
    with a time column ("TB incidence in Uganda rose from 2020 to 2021", the two periods' values compared), or
    None (section comment)."""
    verb, every = _VERB.search(claim), _every_period(claim)
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
    year = next(iter(read(claim).year_list()), None)
    if span is not None:
        rows = span
    elif year and time_col is not None:
        in_year = [r for r in rows if year.text in typed.text(r, time_col)]
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


# ======================================================================================================================
# Claims of statistical significance, settled by the p-value the table gives for the row the claim names; and
# questions about the rows that were significant (:func:`add_significance_filter`).
#
# Found as a new user: over a trial table with a "p-value" column, "Is it true that Drug B's effect was
# statistically significant?" came back NOT ENOUGH INFO ("the table mentions only 1 of the claim's 4 content
# words"), although the table answers it (p = 0.37). The small model does not turn "significant" into a
# comparison with 0.05, and the claim's form settles the check, so code does:
#
# - the claim says (statistically) significant, or negates it ("not significant", "non-significant", "failed to
#   reach significance");
# - the table has one p-value column (a header such as "p", "P value", "p-value (two-sided)");
# - the claim names exactly one row (its label, as whole words; a longer name wins over one it contains, so
#   "Drug A + B" is not also "Drug A");
# - and says nothing else (words of the table's headers name what was measured, and may be said): "Drug A
#   significantly reduced deaths" also states a direction, which a p-value does not check (it would support
#   "significantly increased" alike), so such a claim is left to the programs.
#
# The threshold is the one the claim states ("at the 1% level", "p < 0.01"), else 0.05. A cell "<0.001" is below
# 0.001; "NS" or "n.s." is not significant. Anything else (no such column, no or several named rows, an unreadable
# cell) leaves the claim to the programs.
# ======================================================================================================================

DEFAULT_ALPHA = 0.05
_SIGNIFICANT = re.compile(r"\b(?:statistically\s+)?(?:significant(?:ly)?|significance)\b", re.I)
_NOT_SIGNIFICANT = re.compile(
    r"\b(?:not|no|non|never|nor|failed\s+to\s+(?:reach|achieve|show)|did\s+not\s+(?:reach|achieve|show))"
    r"[\s-]+(?:\w+[\s-]+){0,2}?(?:statistically\s+)?significan|\b(?:insignificant|nonsignificant)\b", re.I)
_P_HEADER = re.compile(r"^\s*p(?:[\s-]*values?|[\s-]*val\.?)?\s*(?:\([^)]*\))?\s*$|\bp[\s-]?values?\b", re.I)
_STATED_ALPHA = re.compile(
    r"\bp\s*(?:<|≤|<=)\s*(0?\.\d+)|\bat\s+the\s+(\d+(?:\.\d+)?)\s*%\s+level|\balpha\s*(?:=|of)\s*(0?\.\d+)", re.I)
_BELOW_CELL = re.compile(r"^\s*[<≤]\s*=?\s*(0?\.\d+|\d(?:\.\d+)?(?:e-?\d+)?)\s*$", re.I)
_NOT_SIGNIFICANT_CELL = re.compile(r"^\s*(?:n\.?\s?s\.?|not\s+significant)\s*$", re.I)
# Words a claim of bare (non-)significance may use besides the row's name; any other word states something more.
_ONLY_SIGNIFICANCE = frozenset("""is it true that the a an was were be been is are its their of for in on at to s
effect effects result results difference differences association finding findings outcome outcomes
statistically statistical significant significantly significance insignificant nonsignificant non not no did
does do had has have reach reached achieve achieved show showed shown failed fail level alpha p value""".split())


@dataclass(frozen=True)
class SignificanceCheck:
    verdict: str  # "SUPPORTS" | "REFUTES"
    row: int  # 1-based data row
    label_col: int  # 1-based
    p_col: int  # 1-based
    reason: str

    @property
    def cells(self) -> list[tuple[int, int]]:
        return [(self.row, self.label_col), (self.row, self.p_col)]


def _mentions_significance(text: str) -> bool:
    return bool(_SIGNIFICANT.search(text) or re.search(r"\b(?:in|non)significant\b", text, re.I))


def _alpha(claim: str) -> float:
    m = _STATED_ALPHA.search(claim)
    if not m:
        return DEFAULT_ALPHA
    if m.group(2):
        return float(m.group(2)) / 100
    return float(m.group(1) or m.group(3))


def _p_column(table: Table) -> int | None:
    hits = [c for c, name in enumerate(table.columns, 1) if _P_HEADER.search(name)]
    return hits[0] if len(hits) == 1 else None


def _says_only_significance(claim: str, name: str, headers: list[str] = ()) -> bool:
    """Whether the claim says nothing but (non-)significance of the named row. The table's own header words name
    what was measured, not a further finding: "The treatment effect was statistically significant in women" over
    "Events (treatment)" (found as a new user: "treatment" left it to the programs, which compared the p-value
    with itself and supported it at p = 0.08)."""
    rest = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", " ", norm_text(claim), count=1)
    allowed = _ONLY_SIGNIFICANCE | {w for h in headers for w in re.findall(r"[^\W\d_]+", norm_text(h))}
    return all(w in allowed for w in re.findall(r"[^\W\d_]+", rest))


def _named_row(table: Table, claim: str) -> int | None:
    label = table.row_label_col
    if not label:
        return None
    said = norm_text(claim)
    named = {}
    for r in range(1, table.n_rows + 1):
        name = norm_text(table.cell(r, label))
        if len(name) >= 2 and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", said):
            named[r] = name
    longest = [r for r, n in named.items() if not any(n != m and n in m for m in named.values())]
    return longest[0] if len(longest) == 1 else None


def _significant(cell: str, alpha: float) -> tuple[bool, str] | None:
    """(below alpha, the p as the reason writes it), or None when the cell says neither."""
    if _NOT_SIGNIFICANT_CELL.match(cell):
        return False, "not significant (NS)"
    m = _BELOW_CELL.match(cell)
    if m:
        bound = float(m.group(1))
        return (True, f"below {format_value(bound)}") if bound <= alpha else None
    p = cell_number(cell)
    if p is None or not 0 <= p <= 1:
        return None
    return p < alpha, format_value(p)


def significance_check(claim: str, table: Table) -> SignificanceCheck | None:
    """The verdict on a claim of (non-)significance from the named row's p-value, or None (section comment)."""
    if not _mentions_significance(claim):
        return None
    p_col = _p_column(table)
    row = _named_row(table, claim) if p_col else None
    if p_col is None or row is None:
        return None
    if not _says_only_significance(claim, norm_text(table.cell(row, table.row_label_col)), table.columns):
        return None
    cell = table.cell(row, p_col)
    if is_empty(cell):
        return None
    alpha = _alpha(claim)
    read = _significant(cell, alpha)
    if read is None:
        return None
    below, shown = read
    negated = bool(_NOT_SIGNIFICANT.search(claim))
    holds = below != negated
    name, header = table.cell(row, table.row_label_col), table.columns[p_col - 1]
    finding = (f"{header} of {name} is {shown}, below {format_value(alpha)}: statistically significant" if below
               else f"{header} of {name} is {shown}, not below {format_value(alpha)}: not statistically significant")
    says = "not significant" if negated else "significant"
    verdict = "SUPPORTS" if holds else "REFUTES"
    reason = (f"{finding[0].upper()}{finding[1:]} at the {format_value(alpha)} level; the claim says it is {says}, "
              f"so the table {'supports' if holds else 'refutes'} the claim.")
    return SignificanceCheck(verdict, row, table.row_label_col, p_col, reason)


# "Which subgroups …", "List the trials …": rows asked for, not "which p-value"
_WHICH_ROWS = re.compile(r"^\s*(?:which|list|name|show)\b(?!\s+(?:p[\s-]?values?|p)\b)", re.I)


def add_significance_filter(program: Program, typed: TypedTable, question: str) -> Program:
    """"How many studies reported a statistically significant result?" keeps the rows whose p-value is below 0.05.

    Found as a new user: over a table of studies with a "P value" column, the model counted all 6 studies. The
    question's word settles the filter, as for claims above: p below the stated level (else 0.05), or not below
    it for "not significant". Only when the table has one p-value column and the program reads it nowhere: a
    program that already filters on it, or asks for the p-value itself, is left as written.
    """
    if not _mentions_significance(question):
        return program
    if program.fn in ("every", "only") or len(program.filters) >= MAX_FILTERS:
        return program
    p_col = _p_column(typed.table)
    if p_col is None:
        return program
    ident = typed.columns[p_col - 1].ident
    op = ">=" if _NOT_SIGNIFICANT.search(question) else "<"
    added = RowFilter(column=ident, op=op, value=format_value(_alpha(question)))
    label = typed.label_col
    if _WHICH_ROWS.match(question) and label and program.column == ident \
            and program.fn in ("most_common", "value", "min", "max", "argmin", "argmax"):
        # "Which subgroups had a statistically significant effect?" asks for rows, not a p-value: found as a new
        # user, 4 of 5 programs answered "<0.001", the p-value that occurs most
        name = typed.columns[label - 1].ident
        kept = [f for f in program.filters if f.column != ident]
        return Program(filters=[*kept, added], fn="value", column=name, answer_column=name)
    if any(f.column == ident for f in program.filters) or (program.fn != "count" and program.column == ident):
        return program
    return program.model_copy(update={"filters": [*program.filters, added]})


# ======================================================================================================================
# Claims that a row's value rises or falls with the dose, over a table with one column per dose arm, settled in
# code: "Insomnia increased with dose" over "Placebo (n=412) | Drug 10 mg (n=409) | Drug 20 mg (n=415)".
#
# Found as a new user over an adverse-event table: that claim was refuted (rightly: 1.5%, 2.7%, 2.2%) for a wrong
# reason, two programs comparing Insomnia's 20 mg cell with Dizziness's; the grammar has no "each arm above the one
# before", and the trend rules above run along rows, not columns.
#
# - the claim says something rose or fell (the trend verbs above), not negated, "with (increasing) dose" or
#   "dose-dependently";
# - the table has three arms or more: number columns whose headers give a dose ("10 mg", "0.5 mg/kg") or name the
#   placebo or control arm (dose 0), each dose once;
# - the claim names exactly one row.
#
# The arms are ordered by dose. Where every cell writes a percentage ("11 (2.7%)") the percentages are compared,
# since arms differ in size; else the numbers. The claim holds when every arm's value is strictly above (below) the
# one before; a refutation cites the first pair that breaks the run.
# ======================================================================================================================

_WITH_DOSE = re.compile(r"\b(?:with|by|across)\s+(?:(?:increasing|higher|rising|greater|the|each)\s+)*"
                        r"(?:doses?|dosages?|dose levels?)\b|\bdose[- ]dependent(?:ly)?\b", re.I)
_DOSE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(?:mg|g|mcg|µg|μg|ug|ml|iu|units?)(?:/\w+)?\b", re.I)
_NO_DOSE = re.compile(r"\b(?:placebo|control|vehicle|sham)\b", re.I)
_PERCENT = re.compile(r"\(\s*(\d+(?:\.\d+)?)\s*%\s*\)")
MIN_ARMS = 3


def _arms(typed: TypedTable) -> list[tuple[float, int]] | None:
    """(dose, column) for each dose arm, in dose order; None when fewer than three or a dose repeats."""
    arms = []
    for col in typed.columns:
        if not col.numeric:
            continue
        doses = {float(m.group(1)) for m in _DOSE.finditer(col.name)}
        if len(doses) == 1:
            arms.append((doses.pop(), col.index))
        elif not doses and _NO_DOSE.search(col.name):
            arms.append((0.0, col.index))
    if len(arms) < MIN_ARMS or len({d for d, _ in arms}) < len(arms):
        return None
    return sorted(arms)


def dose_trend_check(claim: str, table: Table) -> TrendCheck | None:
    """The verdict on a claim that a row's value rises or falls with the dose, or None (section comment)."""
    verb = TREND_VERB.search(claim)
    if not verb or not _WITH_DOSE.search(claim) or NEGATED.search(claim):
        return None
    typed = TypedTable.build(table)
    arms = _arms(typed)
    row = row_stated(typed, claim) if arms else None
    if row is None:
        return None
    texts = [typed.text(row, c).strip() for _, c in arms]
    shares = [_PERCENT.search(t) for t in texts]
    if all(shares):
        values, shown = [float(m.group(1)) for m in shares], [m.group(1) + "%" for m in shares]
    else:
        values = [typed.number(row, c) for _, c in arms]
        if any(v is None for v in values):
            return None
        shown = [format_value(v) for v in values]
    rising = verb.group("up") is not None
    label = typed.row_name(row)
    listed = ", ".join(f"{typed.columns[c - 1].name} {t}" for (_, c), t in zip(arms, texts))
    for i in range(1, len(arms)):
        if (values[i] > values[i - 1]) != rising or values[i] == values[i - 1]:
            (_, before), (_, after) = arms[i - 1], arms[i]
            moved = "stays at" if values[i] == values[i - 1] else ("falls to" if rising else "rises to")
            return TrendCheck("REFUTES", [(row, typed.label_col or 1), (row, before), (row, after)],
                              f"{label} by dose: {listed}. From {typed.columns[before - 1].name} to "
                              f"{typed.columns[after - 1].name} it {moved} {shown[i]}, so the table refutes the claim.")
    cells = [(row, typed.label_col or 1)] + [(row, c) for _, c in arms]
    return TrendCheck("SUPPORTS", cells, f"{label} by dose: {listed}; each arm's value is "
                      f"{'above' if rising else 'below'} the one before, so the table supports the claim.")


# ======================================================================================================================
# A row's value against the range its own row gives: "Glucose is within its reference range", "Potassium is above
# the upper limit of its reference range", "Which results are below their reference range?".
#
# Found as a new user over a TSV of lab results ("Result", "Reference range": "3.5–5.0"): no program compared a row's
# value with its own range. "Glucose is within its reference range" (92 in 70–99) went to the model's judgement and was
# refuted; "Which results are above their reference range?" listed every result; "Potassium is above the upper limit
# …" was supported by "upper bound > lower bound" (1 of 5 programs).
#
# The message's form settles it when it places something within, inside, in, outside, above, over, below or under a
# range, interval or limits (with "the upper/lower limit of" naming one bound), and the table has one interval column
# (tools._table_shape) and one other number column (or one the message names). A claim naming one row is
# decided here, in code; a which/how-many question becomes a program filtering on the row's own bounds (the value
# column against the bound columns, tools._claim_changes's "than_column"). "Outside" keeps a row below its lower
# bound or above its upper (the filter's ``alternative``); a negation turns the placement round ("not within" is
# outside, "not above" at most the bound).
# ======================================================================================================================

_PLACED = re.compile(
    r"(?:(?P<neg>\bnot\s+|n['’]t\s+))?\b(?P<pos>within|inside|in|outside|above|over|exceeds?|exceeding|higher than|"
    r"greater than|below|under|beneath|lower than|less than)\s+(?:the\s+)?(?:(?P<limit>upper|lower)\s+"
    r"(?:limit|bound|end)\s+of\s+)?(?:its|their|the|a)?\s*(?:[\w-]+\s+){0,2}?(?:ranges?|intervals?|limits)\b", re.I)
_ABOVE = {"above", "over", "exceed", "exceeds", "exceeding", "higher than", "greater than"}
_BELOW = {"below", "under", "beneath", "lower than", "less than"}
_WITHIN = {"within", "inside", "in"}


def _placement(text: str) -> tuple[str, str | None, bool] | None:
    """(within | outside | above | below, the limit named or None, negated) the text states, or None."""
    m = _PLACED.search(text or "")
    if m is None:
        return None
    pos = " ".join(m.group("pos").lower().split())
    side = "within" if pos in _WITHIN else "outside" if pos == "outside" else "above" if pos in _ABOVE else "below"
    return side, (m.group("limit") or "").lower() or None, bool(m.group("neg"))


def _holds(side: str, limit: str | None, value: float, lo: float, hi: float) -> bool:
    if side == "within":
        return lo <= value <= hi
    if side == "outside":
        return value < lo or value > hi
    if side == "above":
        return value > (lo if limit == "lower" else hi)
    return value < (hi if limit == "upper" else lo)


def _value_column(typed: TypedTable, skip: set[int], text: str) -> int | None:
    """The one number column besides the label and the intervals (or the one the text names among several)."""
    candidates = [c for c in typed.columns if c.numeric and c.index not in skip and c.index != typed.label_col]
    if len(candidates) > 1:
        candidates = [c for c in candidates if column_named(c.name, text)]
    return candidates[0].index if len(candidates) == 1 else None


def range_check(claim: str, table: Table) -> TrendCheck | None:
    """The verdict on a claim placing one row's value within, outside, above or below that row's range, or None
    (section comment)."""
    placed = _placement(claim)
    if placed is None:
        return None
    intervals = interval_columns(table)
    if len(intervals) != 1:
        return None
    typed = TypedTable.build(table)
    value_col = _value_column(typed, set(intervals), claim)
    row = row_stated(typed, claim) if value_col is not None and typed.label_col else None
    if row is None:
        return None
    interval = intervals[0]
    value, bounds = typed.number(row, value_col), interval_bounds(typed.text(row, interval))
    if value is None or bounds is None:
        return None
    side, limit, negated = placed
    holds = _holds(side, limit, value, *bounds) != negated
    lo, hi = bounds
    where = ("within" if lo <= value <= hi else "above the upper bound" if value > hi else "below the lower bound")
    reason = (f"{typed.row_name(row)}'s {typed.columns[value_col - 1].name} is {typed.text(row, value_col).strip()} "
              f"and its {table.columns[interval - 1]} is {typed.text(row, interval).strip()}: {where}, so the table "
              f"{'supports' if holds else 'refutes'} the claim.")
    return TrendCheck("SUPPORTS" if holds else "REFUTES",
                      [(row, typed.label_col), (row, value_col), (row, interval)], reason)


def _bound_filters(value: str, lower: str, upper: str, side: str, limit: str | None,
                   negated: bool) -> list[RowFilter]:
    """The filters, all to hold, that keep a row whose ``value`` is placed against its own bounds as stated."""
    if side in ("within", "outside") and negated:  # "not within" is outside, "not outside" within
        side, negated = ("outside" if side == "within" else "within"), False
    if side == "within":
        return [RowFilter(column=value, op=">=", value="", than_column=lower),
                RowFilter(column=value, op="<=", value="", than_column=upper)]
    if side == "outside":
        return [RowFilter(column=value, op="<", value="", than_column=lower,
                          alternative=RowFilter(column=value, op=">", value="", than_column=upper))]
    if side == "above":  # "not above the upper limit": at most it
        bound = lower if limit == "lower" else upper
        return [RowFilter(column=value, op="<=" if negated else ">", value="", than_column=bound)]
    bound = upper if limit == "upper" else lower
    return [RowFilter(column=value, op=">=" if negated else "<", value="", than_column=bound)]


_WHICH_OR_HOW_MANY = re.compile(r"^\s*(?:which|what|who|list|name|how many)\b", re.I)


def read_range_question(program: Program, typed: TypedTable, question: str) -> Program:
    """"Which results are above their reference range?" as the rows whose value is above their own upper bound
    (within: at least the lower and at most the upper; "how many" counts them; "Is potassium within its reference
    range?" asks whether that row meets them: found as a new user, 5 of 5 programs counted Potassium's row and
    answered yes for 5.6 in 3.5–5.0). ``typed`` is the table with its intervals' bound columns
    (tools._table_shape)."""
    yes_no = yes_no_asked(question or "")
    placed = _placement(question) if _WHICH_OR_HOW_MANY.match(question or "") or yes_no else None
    pairs = bound_pairs(typed) if placed else []
    if not placed or len(pairs) != 1 or not typed.label_col:
        return program
    _, lower, upper = pairs[0]
    bound_cols = {typed.column(lower).index, typed.column(upper).index}
    interval_cols = {c.index for c in typed.columns if c.name == pairs[0][0].strip()} | bound_cols
    value_col = _value_column(typed, interval_cols, question)
    if value_col is None:
        return program
    value = typed.columns[value_col - 1].ident
    filters = _bound_filters(value, lower, upper, *placed)
    label = typed.columns[typed.label_col - 1].ident
    if yes_no:  # "Is potassium within its reference range?": whether the row it names meets its own bounds
        row = row_stated(typed, question)
        name = typed.text(row, typed.label_col).strip() if row else ""
        if not name or len(name) > VALUE_MAX_CHARS:
            return program
        return Program(filters=[RowFilter(column=label, op="=", value=name), *filters], fn="count", column=label)
    if program.fn == "count" or re.match(r"^\s*how many\b", question, re.I):
        return Program(filters=filters, fn="count", column=label)
    return Program(filters=filters, fn="value", column=label, answer_column=label)


# ======================================================================================================================
# Claims that two measures go together across the rows: "Hospitals with more beds had lower compliance", "The more
# beds a hospital has, the lower its hand hygiene compliance", settled by the rank correlation of the two columns.
#
# Found as a new user over a JSON table of four hospitals (Beds; Hand hygiene compliance): "Is it true that hospitals
# with more beds had lower compliance?" came back NOT ENOUGH INFO from the judge, whose reason said the table gives no
# compliance, and was cut off mid-sentence. No program can say "tends to": the grammar compares a row with a value or
# another row. The claim's form settles the computation:
#
# - "<things> with more/higher/fewer/lower <A> had/have/showed higher/lower/more/fewer <B>", or "the more/higher <A>
#   …, the lower/higher <B>";
# - A and B each name exactly one number column (by its header's words), two different ones;
# - at least three rows hold both numbers (a totals row left out).
#
# Spearman's rank correlation (scipy) of A and B over those rows decides: the claim holds when its sign is the one
# the claim says (more with more, or more with less) and it is at least 0.5 in size; else the table refutes it. The
# reason gives rho and the number of rows, and says when every pair of rows is ordered so (or which pair is not), so a
# reader can weigh a tendency over few rows. A negated claim is left to the programs.
# ======================================================================================================================

MIN_RHO = 0.5  # the size of a rank correlation that counts as the tendency the claim states
MIN_PAIRED_ROWS = 3
_MORE = r"more|higher|larger|greater|bigger|better|longer|older"
_LESS = r"fewer|lower|smaller|less|worse|shorter|younger"
_THING = r"[\w%'’ -]{1,40}?"
_WITH = re.compile(
    rf"\b(?:with|having|that\s+have|that\s+had|which\s+have|which\s+had)\s+(?P<a_dir>{_MORE}|{_LESS})\s+"
    rf"(?P<a>{_THING})\s+(?:also\s+)?(?:had|have|has|showed|show|shows|reported|report|tended\s+to\s+have|"
    rf"tend\s+to\s+have|were|was|are|is)\s+(?:a\s+|an\s+)?(?P<b_dir>{_MORE}|{_LESS})\s+(?P<b>{_THING})\s*(?:[.?!]|$)",
    re.I)
_THE_MORE = re.compile(
    rf"\bthe\s+(?P<a_dir>{_MORE}|{_LESS})\s+(?P<a>{_THING})\b[^,;]*,\s*the\s+(?P<b_dir>{_MORE}|{_LESS})\s+"
    rf"(?P<b>{_THING})\s*(?:[.?!]|$)", re.I)
_DOWN_WORDS = set(_LESS.split("|"))
# words of a phrase that name no column: "its", "their", "the", a subject's possessive
_FILLER = {"its", "their", "the", "a", "an", "of", "rate", "rates", "level", "levels"}


def _stated(claim: str) -> tuple[str, str, bool] | None:
    """(A's words, B's words, whether the claim says they go the same way) or None."""
    for pattern in (_WITH, _THE_MORE):
        m = pattern.search(claim)
        if m:
            same = (m.group("a_dir").lower() in _DOWN_WORDS) == (m.group("b_dir").lower() in _DOWN_WORDS)
            return m.group("a"), m.group("b"), same
    return None


def _column(typed: TypedTable, phrase: str, skip: set[int]) -> int | None:
    """The one number column (not the label, not in ``skip``) whose header the phrase names."""
    words = " ".join(w for w in re.findall(r"[\w%]+", phrase.lower()) if w not in _FILLER)
    hits = [c.index for c in typed.columns if c.numeric and c.index != typed.label_col and c.index not in skip
            and not c.holds_years and named_words(c.name, words)]
    return hits[0] if len(hits) == 1 else None


def association_check(claim: str, table: Table) -> TrendCheck | None:
    """The verdict on a claim that two measures go together across the rows, or None (section comment)."""
    stated = _stated(claim)
    if stated is None or NEGATED.search(claim):
        return None
    a_words, b_words, same = stated
    typed = TypedTable.build(table)
    a = _column(typed, a_words, set())
    b = _column(typed, b_words, {a}) if a is not None else None
    if a is None or b is None:
        return None
    totals = set(total_rows(typed))
    rows = [r for r in range(1, table.n_rows + 1) if r not in totals
            and typed.number(r, a) is not None and typed.number(r, b) is not None]
    if len(rows) < MIN_PAIRED_ROWS:
        return None
    xs, ys = [typed.number(r, a) for r in rows], [typed.number(r, b) for r in rows]
    rho = float(spearmanr(xs, ys).statistic)
    if rho != rho:  # NaN: one of the columns is constant over these rows
        return None
    holds = abs(rho) >= MIN_RHO and (rho > 0) == same
    a_name, b_name = table.columns[a - 1], table.columns[b - 1]
    against = [(p, q) for p, q in combinations(range(len(rows)), 2)
               if xs[p] != xs[q] and ((xs[p] - xs[q]) * (ys[p] - ys[q]) > 0) != same]
    if not against:
        pairs = f"every pair of rows is ordered so ({b_name} {'rises' if same else 'falls'} with {a_name})"
    else:
        p, q = against[0]

        def both(i: int) -> str:  # the two cells as the table writes them: "(420; 87%)"
            return f"{typed.row_name(rows[i])} ({typed.text(rows[i], a).strip()}; {typed.text(rows[i], b).strip()})"

        pairs = f"not every pair is ordered so: {both(p)} against {both(q)}"
    says = f"{'higher' if same else 'lower'} {b_name} with higher {a_name}"
    reason = (f"Over the {len(rows)} rows with both numbers, the rank correlation (Spearman's rho) of {a_name} and "
              f"{b_name} is {rho:+.2f}; {pairs}. The claim says {says}, which needs rho "
              f"{'at least +' if same else 'at most -'}{MIN_RHO:g}, so the table {'supports' if holds else 'refutes'} "
              "the claim.")
    # the cells cited: each row's name, A and B, for the rows of lowest and highest A when there are more
    by_a = sorted(rows, key=lambda r: typed.number(r, a))
    per_row = (typed.label_col, a, b) if typed.label_col else (a, b)
    most = MAX_CELLS // len(per_row)
    shown = by_a if len(by_a) <= most else by_a[:most // 2] + by_a[-(most // 2):]
    cells = [(r, c) for r in shown for c in per_row]
    return TrendCheck("SUPPORTS" if holds else "REFUTES", cells, reason)


# ======================================================================================================================
# Claims about one record: a table of fields and their values (a book's Title, Author, Publisher, Length), laid
# out as two columns (field, value) or as one row under the fields' names.
#
# Found on PubHealthTab's tuning split (its eval split), where 13 of the 195 tables are book records: "The book A
# History of Mental Health Nursing was written by Nelson Thornes and published by Peter Nolan." (Author: Peter Nolan;
# Publisher: Nelson Thornes, 2000; the roles swapped) and "The Medical Marijuana Law book was published in 2006 with
# 200 pages." (Ronin Publishing, 2007; 240 pages) were both supported by the programs, which read back the title or
# compared cells that do not decide the claim. A field the claim states with a value the record does not hold refutes
# it, in code:
#
# - a role, by its verb or its name: "written by X", "authored by X", "X wrote", "X is the author", "the author of …
#   is X", "published by X", "X published", "X was the publisher" (likewise edited, manufactured, developed,
#   sponsored, produced, directed) is the field named for the role (Author(s), Writer; Publisher; Editor …); it
#   refutes when a name the claim gives for it is not in the field's cell;
# - a year, by the verb: "published in 2006", "In 2005, … published" is the year the role's field (or a Year,
#   Date or Published field) writes; "approved in 2001" the year of a field named by the verb (Approved);
# - a number with the unit a field's cell writes: "200 pages", "over 700 pages" against "240 pages".
#
# Only refutations are decided here. A record that agrees on these fields may still differ on what else the claim
# says (its title, its subject), which the programs and the judge read.
# ======================================================================================================================

# Verbs and the stems of the field names they fill ("published" -> "Publisher", "Published by").
_ROLE_STEMS = {"written": ("author", "writer", "written"), "wrote": ("author", "writer", "written"),
               "authored": ("author",), "published": ("publisher", "published"), "edited": ("editor", "edited"),
               "manufactured": ("manufacturer", "manufactured"), "developed": ("developer", "developed"),
               "sponsored": ("sponsor",), "produced": ("producer", "produced"), "directed": ("director",)}
_ROLE_NOUNS = {"author": "written", "writer": "written", "publisher": "published", "editor": "edited",
               "manufacturer": "manufactured", "developer": "developed", "sponsor": "sponsored",
               "producer": "produced", "director": "directed"}
_VERBS = "|".join(_ROLE_STEMS)
_NOUNS = "|".join(_ROLE_NOUNS)
# A name: capitalised words, initials ("D. A. Brading"), joined by "&", "of", "and" ("Johnson & Johnson",
# "Peter Smith and Nelson Johnson"). Lower-case words end it.
_WORD = r"(?:[A-Z][\w'’-]*\.?|[A-Z]\.)"
# Each repeat takes a word, or a joining word with the word after it, so no text splits two ways (no backtracking
# blow-up), and the patterns stay case-sensitive around it: under re.I every word would be a name's.
_NAME = rf"{_WORD}(?:\s+(?:&|of|and|de|van|von|la|le)\s+{_WORD}|\s+{_WORD})*"
_BY_VERB = re.compile(rf"\b(?P<verb>{_VERBS})\s+by\s+(?P<name>{_NAME})")
# "X wrote", "X published": every role verb but the passive "written"
_ACTIVE_VERBS = "|".join(v for v in _ROLE_STEMS if v != "written")
_NAME_VERB = re.compile(rf"(?P<name>{_NAME})\s+(?P<verb>{_ACTIVE_VERBS})\b")
_NAME_IS_ROLE = re.compile(rf"(?P<name>{_NAME})\s+(?:is|was)\s+(?i:the)\s+(?P<noun>(?i:{_NOUNS}))s?\b")
_ROLE_IS_NAME = re.compile(rf"\b(?i:the)\s+(?P<noun>(?i:{_NOUNS}))s?\s+(?:of\s+.{{1,120}}?\s+)?(?:is|was|are|were)\s+"
                           rf"(?P<name>{_NAME})")
_ANY_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")
# "published in 2006", "approved on 3 May 2004", "In 2005, … published": a verb and the year it happened
_YEAR_VERB = re.compile(r"\b(?P<verb>[a-z]{3,}ed)\s+(?:in|on)\s+(?:\w+\s+){0,2}?(?P<year>1[5-9]\d\d|20\d\d)\b"
                        rf"|\bin\s+(?P<year2>1[5-9]\d\d|20\d\d)\b[^.]{{0,80}}?\b(?P<verb2>{_VERBS})\b", re.I)
_YEAR_FIELDS = ("year", "date", "published", "publication")
_AMOUNT = re.compile(r"(?P<bound>\b(?:over|more than|at least|under|less than|fewer than|about|around|"
                     r"approximately|nearly|almost)\s+)?(?P<n>\d[\d,]*(?:\.\d+)?)[\s-]*(?P<unit>[a-z]+)\b", re.I)
_CELL_AMOUNT = re.compile(r"(?P<n>\d[\d,]*(?:\.\d+)?)\s*(?P<unit>[a-z]+)\b", re.I)
_NOT_A_NAME = {"the", "a", "an", "this", "that", "it", "he", "she", "they", "book", "in", "on", "and"}


@dataclass(frozen=True)
class Field:
    name: str
    value: str
    cells: tuple[tuple[int, int], tuple[int, int] | None]  # the value's cell, and the name's cell where it has one


def record_fields(table: Table) -> list[Field] | None:
    """The record's fields, or None when the table is not one record: two columns whose first holds distinct
    short field names (not items of one kind: "Stage I", "Stage II"; a calendar's days), or one row under the
    fields' names."""
    if table.n_cols == 2 and table.n_rows >= 3:
        names = [" ".join(str(r[0]).split()) for r in table.rows]
        if len({norm_text(n) for n in names}) == len(names) and all(
                n and len(n.split()) <= 4 and cell_number(n) is None for n in names) and not lists_items(names):
            return [Field(n, " ".join(str(r[1]).split()), ((i, 2), (i, 1)))
                    for i, (n, r) in enumerate(zip(names, table.rows), start=1)]
    if table.n_rows == 1 and table.n_cols >= 3:
        return [Field(" ".join(str(c).split()), " ".join(str(v).split()), ((1, j), None))
                for j, (c, v) in enumerate(zip(table.columns, table.rows[0]), start=1)]
    return None


def _role_field(fields: list[Field], verb: str) -> Field | None:
    """The field a verb fills: by the role's names ("written" -> Author), else a field named by a form of the verb
    itself ("approved" -> Approved or First approved, "released" -> Release date)."""
    stems = _ROLE_STEMS.get(verb.lower())
    if stems is not None:  # the role's own name first: "Publisher" before "Published" (a date)
        for stem in stems:
            found = [f for f in fields if (words := norm_text(f.name).split()) and words[0].startswith(stem)]
            if found:
                return found[0] if len(found) == 1 else None
        return None
    else:
        found = [f for f in fields if any(related(w, verb.lower()) for w in norm_text(f.name).split())]
    return found[0] if len(found) == 1 else None


def _names(phrase: str) -> list[str]:
    """The names in "Peter Smith and Nelson Johnson" (one name keeps "&": "Johnson & Johnson")."""
    out = []
    for part in re.split(r"\s+and\s+|,\s*", phrase):
        words = [w for w in part.split() if w.lower() not in _NOT_A_NAME]
        if words and len(words[-1]) > 2:  # the sentence's full stop, not an initial's
            words[-1] = words[-1].rstrip(".")
        if words:
            out.append(" ".join(words))
    return out


def _tokens(text: str) -> set[str]:
    return {t for t in text_words(text).split() if len(t) > 1}


def _holds_name(cell: str, name: str) -> bool:
    """Every word of the name (initials aside) is a word of the cell."""
    words = _tokens(name)
    return bool(words) and words <= _tokens(cell)


@dataclass(frozen=True)
class _Miss:
    field: Field
    reason: str


def _role_misses(claim: str, fields: list[Field]) -> list[_Miss]:
    stated: list[tuple[str, str]] = []  # (verb, name phrase)
    for m in _BY_VERB.finditer(claim):
        stated.append((m.group("verb"), m.group("name")))
    for m in _NAME_VERB.finditer(claim):
        stated.append((m.group("verb"), m.group("name")))
    for pattern in (_NAME_IS_ROLE, _ROLE_IS_NAME):
        for m in pattern.finditer(claim):
            stated.append((_ROLE_NOUNS[m.group("noun").lower()], m.group("name")))
    misses = []
    for verb, phrase in stated:
        field = _role_field(fields, verb)
        if field is None:
            continue
        for name in _names(phrase):
            if not _tokens(name) or _holds_name(field.value, name):
                continue
            elsewhere = [f for f in fields if f is not field and _holds_name(f.value, name)]
            if any(norm_text(f.name).startswith(("title", "name")) for f in elsewhere):
                continue  # "Sacred Work published in 2005 …": the record's own title, not who published it
            if elsewhere == [] and _holds_name(" ".join(f.value for f in fields), name):
                continue
            where = f" ({name} is its {elsewhere[0].name}: {elsewhere[0].value!r})" if elsewhere else ""
            misses.append(_Miss(field, f"its {field.name} is {field.value!r}, not {name}{where}"))
    return misses


def _year_misses(claim: str, fields: list[Field]) -> list[_Miss]:
    misses = []
    for m in _YEAR_VERB.finditer(claim):
        verb, year = m.group("verb") or m.group("verb2"), m.group("year") or m.group("year2")
        field = _role_field(fields, verb)
        if field is not None and _ANY_YEAR.search(field.value):
            candidates = [field]
        elif verb.lower() in _ROLE_STEMS:  # "published in 2006" over a record whose year has a field of its own
            candidates = [f for f in fields if norm_text(f.name).startswith(_YEAR_FIELDS) and _ANY_YEAR.search(f.value)]
        else:  # other verbs need a field of their own
            candidates = []
        if len(candidates) != 1:
            continue
        years = set(_ANY_YEAR.findall(candidates[0].value))
        if len(years) == 1 and year not in years:
            misses.append(_Miss(candidates[0], f"its {candidates[0].name} is {candidates[0].value!r}, not {year}"))
    return misses


def _field_holds(written: float, op: str, stated: float, decimals: int = 0) -> bool:
    if op in ORDER_OPS:
        return ORDER_OPS[op](written, stated)
    if op == "~":
        return abs(written - stated) <= ROUGH_SHARE * stated  # "about 250 pages": within 5%
    # "a population of 12 million" for "12.3 million": a number written to fewer places is the cell rounded
    return written == stated or round(written, decimals) == stated


_BOUND_OP = {"over": ">", "more than": ">", "at least": ">=", "under": "<", "less than": "<", "fewer than": "<",
             "about": "~", "around": "~", "approximately": "~", "nearly": "~", "almost": "~"}


def _amount_misses(claim: str, fields: list[Field]) -> list[_Miss]:
    misses = []
    amounts = [m for m in _AMOUNT.finditer(claim) if len(m.group("unit")) >= 2
               and m.group("unit").lower() not in ENGLISH_STOP_WORDS and not _ANY_YEAR.fullmatch(m.group("n"))]
    for m in amounts:
        unit = m.group("unit").lower().rstrip("s")
        if sum(o.group("unit").lower().rstrip("s") == unit for o in amounts) > 1:
            continue  # "500 mg three times a day, 1500 mg in all": which amount is the field's is not said
        holding = [(f, c) for f in fields for c in _CELL_AMOUNT.finditer(f.value)
                   if c.group("unit").lower().rstrip("s") == unit]
        if len(holding) != 1:
            continue
        field, cell = holding[0]
        stated, written = cell_number(m.group("n")), cell_number(cell.group("n"))
        if stated is None or written is None:
            continue
        bound = " ".join((m.group("bound") or "").lower().split())
        places = len(m.group("n").partition(".")[2])
        if not _field_holds(written, _BOUND_OP.get(bound, "="), stated, places):
            said = f"{bound} {m.group('n')} {m.group('unit')}".strip()
            misses.append(_Miss(field, f"its {field.name} is {field.value!r}, not {said}"))
    return misses


def record_check(claim: str, table: Table) -> TrendCheck | None:
    """REFUTES when the claim gives a field of a one-record table a value the record does not hold (section
    comment); None otherwise (the claim is left to the programs)."""
    fields = record_fields(table)
    if fields is None:
        return None
    misses = _role_misses(claim, fields) + _year_misses(claim, fields) + _amount_misses(claim, fields)
    if not misses:
        return None
    cells: list[tuple[int, int]] = []
    for miss in misses:
        value_cell, name_cell = miss.field.cells
        cells += [c for c in (name_cell, value_cell) if c is not None and c not in cells]
    said = "; ".join(dict.fromkeys(m.reason for m in misses))
    return TrendCheck("REFUTES", cells, f"The table is one record: {said}, so the table refutes the claim.")


# ======================================================================================================================
# How long a span lasts when one cell writes both its ends: "Monday 5 October - Wednesday 16 December".
#
# Found on PubHealthTab's tuning split (its eval split): "The Fixture Window time frame is over 3 months." over a
# sports calendar whose row "Fixture window" holds that range (72 days) was decided by the judge after the programs
# split (no program can read two dates out of one cell). The durations of tools._question_dates cover a start column
# and an end column; here the claim's form settles it in code when:
#
# - the claim states a span with a bound or a number ("over 3 months", "less than 10 weeks", "74 days"; as
#   tools._question_dates.stated_days reads it) and speaks of a span ("time frame", "period", "window", "lasted", "long");
# - exactly one row holds one cell that is a range of two dates and another cell sharing a word with the claim
#   (its name: "Fixture window").
#
# An end without a year takes the other end's; with neither, a common year, and an end before its start falls in the
# next year ("5 December - 10 January").
# ======================================================================================================================

_SPAN_WORDS = re.compile(r"\b(?:time\s*frames?|periods?|windows?|spans?|lasts?|lasted|lasting|long|duration|runs?|"
                         r"ran|open\s+for)\b", re.I)
_SEPARATORS = (" - ", " – ", " — ", "–", "—", " to ", " until ", " through ", " till ")
_WEEKDAY = re.compile(r"^(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+", re.I)
_HAS_YEAR = re.compile(r"\b(?:1[89]|20)\d{2}\b")
_COMMON_YEAR = 2001  # not a leap year: "28 February - 1 March" is one day
_COMMON_WORDS = {"the", "and", "for", "was", "were", "are", "than", "that", "this", "with", "time", "frame", "over",
                 "under", "more", "less", "period", "window", "days", "weeks", "months", "years", "long", "lasted"}
_OP_WORDS = {">": "more than", ">=": "at least", "<": "less than", "<=": "at most", "=": "exactly"}


def _end(text: str, year: str | None) -> dt.date | None:
    text = _WEEKDAY.sub("", " ".join(text.split()).strip(" ,.")).strip()
    read = parse_date(text) or (parse_date(f"{text} {year}") if year else None)
    return read[0] if read is not None else None


def range_days(cell: str) -> float | None:
    """The days from the first date a cell writes to the second ("Monday 5 October - Wednesday 16 December" -> 72),
    or None when the cell is no range of two dates."""
    text = " ".join(str(cell).split())
    for sep in _SEPARATORS:
        if sep.strip() and sep in text:
            first, _, second = text.partition(sep)
            years = _HAS_YEAR.findall(first), _HAS_YEAR.findall(second)
            year = (years[0] or years[1] or [str(_COMMON_YEAR)])[-1]
            start = _end(first, (years[1] or [year])[-1] if not years[0] else None)
            end = _end(second, year if not years[1] else None)
            if start is None or end is None:
                continue
            if end < start and not (years[0] and years[1]):
                end = end.replace(year=end.year + 1)
            if end < start:
                return None
            return float((end - start).days)
    return None


def _span_holds(days: float, op: str, stated: float) -> bool:
    if op in ORDER_OPS:
        return ORDER_OPS[op](days, stated)
    return abs(days - stated) <= 1  # whether both ends count is not said


def range_duration_check(claim: str, table: Table) -> TrendCheck | None:
    """The claim's stated span against the one named row's range of dates (section comment), or None."""
    stated = stated_days(claim)
    if stated is None or not _SPAN_WORDS.search(claim):
        return None
    asked = {w for w in text_words(claim).split() if len(w) >= 3 and w not in _COMMON_WORDS}
    found = []
    for r, row in enumerate(table.rows, start=1):
        ranges = [(c, d) for c, cell in enumerate(row, start=1) if (d := range_days(cell)) is not None]
        if len(ranges) != 1:
            continue
        naming = [c for c, cell in enumerate(row, start=1) if c != ranges[0][0]
                  and asked & set(text_words(str(cell)).split())]
        if naming:
            found.append((r, ranges[0], naming[0]))
    if len(found) != 1:
        return None
    r, (c, days), name_c = found[0]
    op, stated_d = stated
    holds = _span_holds(days, op, stated_d)
    name = " ".join(str(table.rows[r - 1][name_c - 1]).split())
    span = " ".join(str(table.rows[r - 1][c - 1]).split())
    reason = (f"{name} runs {span}: {format_value(days)} days; the claim needs {_OP_WORDS[op]} "
              f"{format_value(round(stated_d, 1))} days, so the table {'supports' if holds else 'refutes'} the "
              "claim.")
    return TrendCheck("SUPPORTS" if holds else "REFUTES", [(r, name_c), (r, c)], reason)
