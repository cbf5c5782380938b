"""Table cells as code reads them: typed columns and the numbers inside decorated cells, calendar dates in cells, and
how a cell is compared with a value a program or a claim states (one meaning for every program form).

The sections, in order: typed columns and column identifiers, dates, comparison of a cell with a value.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kb.tables import Table, parse_number
from tools.lang.lexicon import MONTH_NAMES, MONTHS


# ======================================================================================================================
# Calendar dates in cells: "2019-03-14", "March 14, 2019", "14 Mar 2019", "march 14 , 2019", "June 2021".
#
# A column of dates was text to the table programs, so it had no order: "Which study was published most recently?"
# could not be an argmax over Published, and the model took the largest Follow-up instead (found as a new user).
# Dated cells are read into day numbers here, so programs can take the latest or earliest row and filter on
# "published after 2020". Only unambiguous forms are read: a four-digit year with a month name or in ISO order.
# "03/04/2019" is left as text, since it is the 3rd of April in one country and the 4th of March in another.
# ======================================================================================================================

_ORD = r"(?:st|nd|rd|th)?"
_ISO = re.compile(r"^(?P<y>\d{4})[-/.](?P<m>\d{1,2})(?:[-/.](?P<d>\d{1,2}))?$")
_MONTH_FIRST = re.compile(rf"^(?P<mon>[a-z]{{3,9}})\.?\s+(?:(?P<d>\d{{1,2}}){_ORD}\s*,?\s+)?(?P<y>\d{{4}})$")
_DAY_FIRST = re.compile(rf"^(?P<d>\d{{1,2}}){_ORD}\s+(?:of\s+)?(?P<mon>[a-z]{{3,9}})\.?,?\s+(?P<y>\d{{4}})$")
_YEAR = re.compile(r"^(?P<y>\d{4})$")
# How finely a value names a time: a year, a month or a day.
YEAR, MONTH, DAY = 1, 2, 3


def parse_date(text: object, *, year_alone: bool = False) -> tuple[dt.date, int] | None:
    """The date a cell writes and how finely (``YEAR``, ``MONTH`` or ``DAY``), or None.

    ``year_alone``: a bare "2020" is a date too (a filter value: "published after 2020"); a cell of "2020" is a
    number, not a date, so cells leave it out.
    """
    s = " ".join(str(text or "").casefold().split())
    if not s:
        return None
    try:
        m = _ISO.match(s)
        if m:
            day = m.group("d")
            return dt.date(int(m.group("y")), int(m.group("m")), int(day or 1)), DAY if day else MONTH
        m = _MONTH_FIRST.match(s) or _DAY_FIRST.match(s)
        if m:
            month = MONTHS.get(m.group("mon"))
            if month is None:
                return None
            day = m.group("d")
            return dt.date(int(m.group("y")), month, int(day or 1)), DAY if day else MONTH
        m = _YEAR.match(s)
        if m and year_alone:
            return dt.date(int(m.group("y")), 1, 1), YEAR
    except ValueError:  # "2019-02-30": the shape of a date, but no day of the calendar
        return None
    return None


def cell_date(text: object) -> float | None:
    """The day number of the date a cell writes (as ``datetime.date.toordinal``), or None."""
    parsed = parse_date(text)
    return float(parsed[0].toordinal()) if parsed else None


def _key(day: dt.date, grain: int) -> tuple[int, ...]:
    return (day.year, day.month, day.day)[:grain]


def compare_dates(cell: object, op: str, value: object) -> bool | None:
    """``cell op value`` in time, at the grain the value is written in: "2021-06-30" > "2020" (a later year),
    but not > "June 2021" (the same month). None when either side is no date."""
    left, right = parse_date(cell), parse_date(value, year_alone=True)
    if left is None or right is None:
        return None
    grain = min(right[1], left[1])
    a, b = _key(left[0], grain), _key(right[0], grain)
    return {"=": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


# "2024-03" or "2024-03-15": a year and a month (groups 1 and 2), maybe a day
ISO_MONTH = re.compile(r"^\s*(\d{4})-(\d{2})(?:-\d{2})?\s*$")


def iso_month_names(cells: list[str]) -> list[str] | None:
    """The month name of each ISO date cell ("2024-02" -> "february"), when every cell is one and no month comes
    twice (else "February" names no one of them); None otherwise."""
    months = [int(m.group(2)) if (m := ISO_MONTH.match(c)) else 0 for c in cells]
    if not cells or not all(1 <= n <= 12 for n in months) or len(set(months)) < len(months):
        return None
    return [MONTH_NAMES[n - 1] for n in months]


# ======================================================================================================================
# Typed table columns: the numbers inside decorated cells, and short identifiers for column names.
#
# Table programs compare and aggregate numbers, so a column whose cells read "4,512", "12%",
# "0.215***", "$3.5m", "−2" or "(12.3)" must be read as numbers, not strings. The cell parser is
# ``kb.tables.parse_number`` (markup, thousands separators, stars, accounting parentheses); this
# module adds magnitude suffixes ("3.5m", "2 bn") and decides per column whether it is numeric.
#
# Identifiers: the model writes programs over short ASCII names (``cases``, ``unit_price_eur_kg``)
# instead of raw headers with spaces, units and symbols, which the free-form SQL probe of issue 13
# mis-quoted; they map back to the real names for display.
# ======================================================================================================================

_MAGNITUDE = re.compile(
    r"^(?P<body>.*?\d)\s*(?P<unit>k|thousand|m|mn|mio|million|b|bn|billion|t|tn|trillion)\.?$", re.I)
_SCALE = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "mio": 1e6, "million": 1e6,
          "b": 1e9, "bn": 1e9, "billion": 1e9, "t": 1e12, "tn": 1e12, "trillion": 1e12}
# A column is numeric when most of its non-empty cells are numbers: tables put "–" or "n/a" in gaps.
NUMERIC_SHARE = 0.6
IDENT_MAX_CHARS = 24
_EMPTY = {"", "-", "–", "—", "n/a", "na", "nan", "none", "null", "?", "..."}


def written_scale(text: object) -> tuple[float, float] | None:
    """(the number as written, its scale) for a cell that writes a magnitude word: "12.3 million" -> (12.3, 1e6)."""
    m = _MAGNITUDE.match(str(text or "").strip())
    base = parse_number(m.group("body")) if m else None
    return None if base is None else (base, _SCALE[m.group("unit").lower()])


def cell_number(text: object) -> float | None:
    """The number a cell shows, or None: ``"$3.5m"`` -> 3500000.0, ``"4,512"`` -> 4512.0."""
    value = parse_number(text)
    if value is not None:
        return value
    scaled = written_scale(text)
    return scaled[0] * scaled[1] if scaled else None


# "4000 mg", "3.5 days", "12 goals": a number, a space and a unit word. A column whose cells share one unit is a
# column of numbers in that unit: found as a new user over a table of analgesic doses, "Max daily dose" held
# "4000 mg", "1200 mg", … as text, so "What is the maximum daily dose of ibuprofen?" was answered by the one number
# column there was (Onset, 20 minutes; 5 of 5 programs). The space is required: "1st", "2nd" are ordinals.
_UNIT_CELL = re.compile(r"^(?P<body>[-−+]?\d[\d,]*(?:\.\d+)?)\s+(?P<unit>[^\W\d_]{1,12}(?:/[^\W\d_]{1,8})?)\.?$")


# Words after a number that make it no quantity: a day of a month ("13 jul"), a clock time ("9 pm"), an era.
_NOT_UNITS = frozenset("jan feb mar apr may jun jul aug sep sept oct nov dec january february march april june july "
                       "august september october november december am pm bc bce ad ce".split())


def _unit(word: str) -> str:
    word = word.casefold()
    return word[:-1] if len(word) > 3 and word.endswith("s") else word  # "1 day", "3 days"


def written_unit(texts: list[str]) -> str | None:
    """The unit word every one of ``texts`` writes after its number ("mg" for "4000 mg", "1200 mg"), else None."""
    matches = [_UNIT_CELL.match(" ".join(str(t).split())) for t in texts]
    if not matches or not all(matches) or len({_unit(m.group("unit")) for m in matches}) != 1:
        return None
    unit = max((m.group("unit") for m in matches), key=len)  # "strokes" over "1 stroke" and "3 strokes"
    return None if _unit(unit) in _NOT_UNITS else unit


def unit_numbers(values: list[object]) -> list[float | None] | None:
    """The numbers of a column of "<number> <unit>" cells that share one unit (module comment above), one per
    cell (None for a cell that is no such number); None when the column is not one."""
    matches = [_UNIT_CELL.match(str(v or "").strip()) for v in values]
    filled = [v for v in values if not is_empty(v)]
    units = {_unit(m.group("unit")) for m in matches if m}
    if not filled or len(units) != 1 or units & _NOT_UNITS:
        return None
    # Two cells at least: one "464 pages" in a one-record table (a book's details) is a phrase to match as text, and
    # its programs check it so ("Pages contains '464'")
    in_units = sum(1 for m in matches if m)
    if in_units < 2 or in_units / len(filled) < NUMERIC_SHARE:
        return None
    return [parse_number(m.group("body")) if m else None for m in matches]


# How long a cell may be where the model sees it (program prompts, grammar enums); longer cells are clipped
# with an ellipsis, and the executor reads a value ending in one as the start of a cell.
DISPLAY_CELL_CHARS = 40


def display_cell(text: object, max_chars: int = DISPLAY_CELL_CHARS) -> str:
    """A cell as the model sees it: one line, no pipes, clipped with an ellipsis."""
    text = " ".join(str(text).split()).replace("|", "/")
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def is_empty(text: object) -> bool:
    return str(text or "").strip().lower() in _EMPTY


def identifier(name: str, index: int, taken: set[str]) -> str:
    """A short, unique, lower-case ASCII identifier for column ``index`` (1-based) named ``name``."""
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-z0-9]+", "_", ascii_name.lower()).strip("_")[:IDENT_MAX_CHARS].strip("_")
    if not slug or slug[0].isdigit() or slug in ("not_in_table", "row"):
        slug = f"c{index}" if not slug else f"c{index}_{slug}"[:IDENT_MAX_CHARS].strip("_")
    candidate, n = slug, 2
    while candidate in taken:
        candidate, n = f"{slug}_{n}", n + 1
    taken.add(candidate)
    return candidate


@dataclass
class TypedColumn:
    index: int  # 1-based, as in R<r>C<c>
    name: str  # the header as uploaded
    ident: str  # what programs call it
    numeric: bool
    numbers: list[float | None] = field(default_factory=list)  # per data row; None: not a number
    # Per data row, the day number of a text column of dates ("2019-03-14", "March 14, 2019"); empty when the
    # column is not one: programs order such a column by these (tools._cells).
    dates: list[float | None] = field(default_factory=list)

    @property
    def holds_dates(self) -> bool:
        return bool(self.dates)

    @property
    def holds_years(self) -> bool:
        """Whether the numbers are calendar years (whole, 1000-2100, headed like a year): they are
        labels, so a sum or a mean of them means nothing."""
        xs = [x for x in self.numbers if x is not None]
        if not xs or not all(float(x).is_integer() and 1000 <= x <= 2100 for x in xs):
            return False
        return re.search(r"\b(year|years|season|date|founded|built|established|opened|born)\b",
                         self.name.casefold()) is not None

    def examples(self, values: list[str], k: int = 3) -> list[str]:
        """Up to ``k`` distinct non-empty values, for the prompt."""
        out: list[str] = []
        for v in values:
            v = " ".join(str(v).split())[:30]
            if v and not is_empty(v) and v not in out:
                out.append(v)
            if len(out) == k:
                break
        return out


@dataclass
class TypedTable:
    """``table`` with each column typed and named by an identifier."""

    table: Table
    columns: list[TypedColumn]
    # The rows a follow-up ranges over ("which of them …" after an answer of three rows); empty: every row.
    scope: tuple[int, ...] = ()

    @classmethod
    def build(cls, table: Table, scope: tuple[int, ...] = ()) -> TypedTable:
        taken: set[str] = set()
        columns = []
        for c, name in enumerate(table.columns, start=1):
            values = table.column_values(c)
            numbers = [cell_number(v) for v in values]
            filled = [v for v in values if not is_empty(v)]
            n_numbers = sum(1 for v, x in zip(values, numbers) if x is not None and not is_empty(v))
            numeric = bool(filled) and n_numbers / len(filled) >= NUMERIC_SHARE
            dates: list[float | None] = []
            if not numeric and filled:
                dates = [cell_date(v) for v in values]
                if sum(1 for v, d in zip(values, dates) if d is not None and not is_empty(v)) / len(filled) \
                        < NUMERIC_SHARE:
                    dates = []
                if not dates and (in_units := unit_numbers(values)) is not None:
                    numbers, numeric = in_units, True
            columns.append(TypedColumn(index=c, name=name, ident=identifier(name, c, taken), numeric=numeric,
                                       numbers=numbers, dates=dates))
        return cls(table=table, columns=columns, scope=tuple(r for r in scope if 1 <= r <= table.n_rows))

    @property
    def idents(self) -> list[str]:
        return [col.ident for col in self.columns]

    def column(self, ident: str) -> TypedColumn:
        for col in self.columns:
            if col.ident == ident:
                return col
        raise KeyError(ident)

    def is_numeric(self, ident: str) -> bool:
        """Is ``ident`` a column of numbers? False for an identifier this table lacks."""
        try:
            return self.column(ident).numeric
        except KeyError:
            return False

    def text(self, r: int, c: int) -> str:
        return self.table.cell(r, c)

    def number(self, r: int, c: int) -> float | None:
        return self.columns[c - 1].numbers[r - 1]

    def is_dated(self, ident: str | None) -> bool:
        """Whether ``ident`` names a column of dates (False for no such column)."""
        return any(col.ident == ident and col.holds_dates for col in self.columns)

    def order_value(self, r: int, c: int) -> float | None:
        """What orders cell (r, c): its number, or its day number in a column of dates."""
        col = self.columns[c - 1]
        return col.numbers[r - 1] if col.numeric else col.dates[r - 1] if col.holds_dates else None

    @property
    def label_col(self) -> int | None:
        return self.table.row_label_col

    def row_name(self, r: int) -> str:
        c = self.label_col
        return " ".join(self.table.cell(r, c).split()) if c else f"row {r}"

    def schema_lines(self) -> list[str]:
        """One line per column for the prompt: identifier, type, real name and example values."""
        lines = []
        for col in self.columns:
            examples = ", ".join(repr(v) for v in col.examples(self.table.column_values(col.index)))
            kind = "number" if col.numeric else "date" if col.holds_dates else "text"
            lines.append(f"{col.ident} ({kind}; header {col.name!r}; e.g. {examples})")
        return lines


# ======================================================================================================================
# How a cell is compared with a value a program (or a claim) states: one meaning for every program form.
#
# Text compares case-, accent-, markup- and spacing-insensitively; numbers compare within the precision the
# value was written with. The fixed operations (:mod:`tools._table_ops`) and the SQL form
# (:mod:`tools._table_sql`) both compare through here, so "Québec" = "quebec" and "3.5" = 3.46 in either.
# ======================================================================================================================

def norm_text(text: object) -> str:
    """Text as compared: markup, accents, case and spacing do not matter ("Québec" = "quebec")."""
    plain = re.sub(r"\[(?:BOLD|ITALIC|EMPTY|UNDERLINE|SMALL)\]", "", str(text))
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", plain) if not unicodedata.combining(ch))
    return " ".join(plain.split()).casefold()


def writes_whole(said: str, value: str) -> bool:
    """Whether normalised text ``said`` writes normalised ``value`` as whole words ("leeds" in "which leeds
    hospital", not in "leedsford")."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", said) is not None


def written_tolerance(text: str) -> float:
    """Half a unit in the last digit the value was written with: "3.5" matches 3.46, "12" matches 12.4."""
    m = re.search(r"\d+(?:\.(\d+))?", text.replace(",", ""))
    decimals = len(m.group(1) or "") if m else 0
    body = cell_number(m.group(0)) if m else None
    whole = cell_number(text)
    scale = abs(whole / body) if whole is not None and body not in (None, 0) else 1.0
    return 0.5 * 10 ** -decimals * scale


def compare(left_text: str, left_number: float | None, op: str, right_text: str,
            right_number: float | None = None, tolerance: float | None = None) -> bool:
    """``left op right``, as numbers when both sides are numbers, else as case-folded text."""
    if op == "contains":
        return norm_text(right_text) in norm_text(left_text) or _squeezed_in(right_text, left_text)
    if right_number is None:
        right_number = cell_number(right_text)
    if left_number is not None and right_number is not None:
        tol = written_tolerance(right_text) if tolerance is None else tolerance
        diff = left_number - right_number
        # Equality within the precision the value was written with; strict order stays strict.
        return {"=": abs(diff) <= tol, "!=": abs(diff) > tol, "<": diff < 0, "<=": diff <= tol,
                ">": diff > 0, ">=": diff >= -tol}[op]
    if left_number is None and right_number is not None:
        bounded = _bounded(left_text, op, right_number)
        if bounded is not None:
            return bounded
    a, b = text_words(left_text), text_words(right_text)  # "Johnson & Johnson., 1898" = "Johnson & Johnson. , 1898"
    if op == "=":
        return a == b
    if op == "!=":
        return a != b
    return False  # ordering between texts is not something a claim over a table means


# Fewer letters and digits than this and punctuation may matter: "1-2" is not in "12 patients".
_MIN_SQUEEZED = 6


def _squeezed_in(part: str, whole: str) -> bool:
    """``part`` in ``whole`` with punctuation and spacing dropped from both: the claim's "1863-1875" is in the cell
    "FOURTH CHOLERA PANDEMIC 18631875", whose dash the extraction lost (PubHealthTab's eval split)."""
    a = re.sub(r"[\W_]+", "", norm_text(part))
    return len(a) >= _MIN_SQUEEZED and a in re.sub(r"[\W_]+", "", norm_text(whole))


_BOUND_CELL = re.compile(r"^\s*(<=|>=|<|>|≤|≥)\s*(\S+)\s*$")


def cell_bounds(cell: str, nonnegative: bool = True) -> tuple[float, float] | None:
    """The range a cell that gives a bound stands for ("<5" -> (0, 5) in a column of counts, ">100" -> (100,
    inf)), or None when the cell is no bound. Public-health tables suppress small counts that way."""
    m = _BOUND_CELL.match(str(cell))
    bound = cell_number(m.group(2)) if m else None
    if bound is None:
        return None
    if m.group(1) in ("<", "<=", "≤"):
        return (0.0 if nonnegative else -math.inf), bound
    return bound, math.inf


def _bounded(cell: str, op: str, right: float) -> bool | None:
    """``cell op right`` for a cell that gives a bound ("<0.001", "> 100"), where the bound settles it: a p-value
    of "<0.001" is below 0.05 and not above it. None when it does not ("<0.01" against 0.005)."""
    m = _BOUND_CELL.match(str(cell))
    bound = cell_number(m.group(2)) if m else None
    if bound is None:
        return None
    below = m.group(1) in ("<", "<=", "≤")
    inclusive = m.group(1) in ("<=", ">=", "≤", "≥")
    # below: the value is under the bound (or at it); above: over it. "beyond" holds when every such value
    # lies on the far side of ``right``.
    if below:
        under = bound < right or (bound == right and not inclusive)
        over = False
    else:
        over = bound > right or (bound == right and not inclusive)
        under = False
    if under:
        return {"<": True, "<=": True, ">": False, ">=": False, "=": False, "!=": True}.get(op)
    if over:
        return {"<": False, "<=": False, ">": True, ">=": True, "=": False, "!=": True}.get(op)
    return None


def text_words(text: object) -> str:
    """Text as its words: punctuation and spacing do not make two texts different. A text of symbols only is
    itself: "✓" and "✗" are different cells (found as a new user: "Approved in EU = '✓'" kept the ✗ rows too). Signs
    of order are words: "Age < 65" and "Age ≥ 65" are different rows (found as a new user: a filter on the first kept
    both)."""
    normal = norm_text(text).replace("≤", "<=").replace("≥", ">=")
    words = re.findall(r"[^\W_]+|<=|>=|<|>", normal)
    return " ".join(words) if words else " ".join(normal.split())


def clipped(value: str) -> bool:
    """A value copied from a clipped cell of the prompt (it ends in an ellipsis)."""
    return value.rstrip().endswith(("…", "...")) and len(value.rstrip("…. ")) >= 8


_LEADING_NUMBER = re.compile(r"^\s*([-−]?[\d][\d,]*(?:\.\d+)?)\s*%?\s*[^\W\d_]")


def leading_number(text: str) -> float | None:
    """The number a text cell opens with before its unit words: '464 pages' -> 464, '12 m2' -> 12."""
    m = _LEADING_NUMBER.match(str(text))
    return cell_number(m.group(1)) if m else None


# "n mcmillan (7)", "kobe bryant , pau gasol (11)": names, then the one number they share in parentheses
_NAMED_NUMBER = re.compile(r"^[^\d()]*[^\W\d_][^\d()]*\((\d+(?:\.\d+)?)\)\s*$")


def named_number(text: str) -> float | None:
    """The number a cell of names gives in closing parentheses: 'n mcmillan (7)' -> 7 (TabFact's "high
    assists" cells); None for any other cell."""
    m = _NAMED_NUMBER.match(str(text))
    return float(m.group(1)) if m else None


def words_match(cell: str, value: str) -> bool:
    """Whether ``value`` occurs in ``cell`` as whole words (case, accents and markup ignored)."""
    needle = norm_text(value)
    if len(needle) < 3:
        return False
    return re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", norm_text(cell)) is not None


def format_value(x: Any) -> str:
    """A computed value as the user reads it (1012.0 -> '1012', 527.46 -> '527.46', 1/3 -> '0.3333')."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float):
        if not math.isfinite(x):
            return str(x)
        if x.is_integer() and abs(x) < 1e15:
            return f"{int(x):,}" if abs(x) >= 10000 else str(int(x))
        short = round(x, 6)
        if abs(short - x) <= 1e-12 * max(1.0, abs(x)):
            # A value with few decimals (a cell's, a sum or difference of cells') is shown exactly: rounding
            # 527.46 to 527.5 would quote a number the table does not hold.
            text = f"{short:,.6f}" if abs(short) >= 10000 else f"{short:.6f}"
            return text.rstrip("0").rstrip(".")
        if abs(x) < 1e-3:  # a rate per person: "0.000002492", not "2.492e-06"
            return np.format_float_positional(x, precision=4, unique=False, fractional=False, trim="-")
        return f"{x:.4g}" if abs(x) < 1e6 else f"{x:,.0f}"  # a ratio or a mean: 4 significant digits
    if isinstance(x, list):
        return join_listed([str(v) for v in x])
    return str(x)


_GROUPED = re.compile(r"\d,\d{3}(?!\d)")


def with_written_unit(texts: list[str], number: float) -> str:
    """``number`` shown with the unit every one of ``texts`` (the cells it was computed from) writes: "18.36%" over
    "27.0%", "10.2%", …; "$4,000" over "$1,500" and "$2,500"; "5600 mg" over "4000 mg" and "1600 mg"; the number
    plain when the cells differ."""
    texts = [t.strip() for t in texts]
    shown = format_value(number)
    if texts and all(_GROUPED.search(t) for t in texts):
        # "1,120" summed alone is shown "1,120", not "1120" (found as a new user: the total of one row's "1,120"
        # isolates answered "1120" beside a cited cell that reads "1,120"); below 10,000 format_value groups no
        # digits, since a year is a number too
        shown = re.sub(r"^(-?)(\d{4,})", lambda m: m.group(1) + f"{int(m.group(2)):,}", shown)
    if texts and all(t.endswith("%") for t in texts):
        return shown + "%"
    for sign in ("$", "€", "£"):
        if texts and all(t.startswith(sign) for t in texts):
            return ("-" + sign + shown[1:]) if shown.startswith("-") else sign + shown
    unit = written_unit(texts)
    return f"{shown} {unit}" if unit else shown


def join_listed(values: list[str]) -> str:
    """Values as one list: by commas, or by semicolons when one holds a comma itself ("Bangkok, Thailand"), since
    "Bangkok, Thailand, Macau" does not say whether it lists two places or three."""
    return ("; " if any("," in v for v in values) else ", ").join(values)


def split_listed(answer: str) -> list[str]:
    """The values of a list :func:`join_listed` wrote: at semicolons when it holds any, else at commas."""
    parts = answer.split("; ") if "; " in answer else answer.split(", ")
    return [p.strip() for p in parts if p.strip()]


# Months as words, for cells that write dates as ISO numbers ("2024-03", "2019-05-01").
_SHORT_MONTH = re.compile(r"\b(?:jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b\.?", re.I)
_NAMED_MONTH = re.compile(r"^\s*(?:(?P<m1>[a-z]+)\.?,?\s*(?P<y1>\d{4})?|(?P<y2>\d{4})\s+(?P<m2>[a-z]+)\.?)\s*$", re.I)


def iso_month_match(cell: str, value: str) -> bool | None:
    """Whether an ISO date cell ("2024-03", "2024-03-15") falls in the month a value names ("March", "Mar 2024",
    "2024 March"); None when the cell is no ISO date or the value names no month (then texts compare as usual).

    Found as a new user: "March revenue was about 20% higher than February revenue" over a column of "2024-03"
    months matched no row, since "March" is no word of "2024-03".
    """
    value_m = _NAMED_MONTH.match(str(value))
    if not value_m:
        return None
    cell_m = ISO_MONTH.match(str(cell))
    if cell_m:
        cell_year, cell_month = int(cell_m.group(1)), int(cell_m.group(2))
    else:
        # A date written with a short month name: "how many release dates were in april?" over "27 Apr 2014"
        # (WTQ's training split), where "April" is no word of the cell.
        parsed = parse_date(cell)
        if parsed is None or not _SHORT_MONTH.search(str(cell)):
            return None
        cell_year, cell_month = parsed[0].year, parsed[0].month
    month = MONTHS.get((value_m.group("m1") or value_m.group("m2") or "").casefold())
    if month is None:
        return None
    year = value_m.group("y1") or value_m.group("y2")
    return cell_month == month and (year is None or cell_year == int(year))
