"""Typed table columns: the numbers inside decorated cells, and short identifiers for column names.

Table programs compare and aggregate numbers, so a column whose cells read "4,512", "12%",
"0.215***", "$3.5m", "−2" or "(12.3)" must be read as numbers, not strings. The cell parser is
``kb.tables.parse_number`` (markup, thousands separators, stars, accounting parentheses); this
module adds magnitude suffixes ("3.5m", "2 bn") and decides per column whether it is numeric.

Identifiers: the model writes programs over short ASCII names (``cases``, ``unit_price_eur_kg``)
instead of raw headers with spaces, units and symbols, which the free-form SQL probe of issue 13
mis-quoted; they map back to the real names for display.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from kb.tables import Table, parse_number
from tools._dates import cell_date

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
    # column is not one: programs order such a column by these (tools._dates).
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
