"""The table every reader produces, and how a cell's number is read.

Coordinates are 1-based positions in the data grid (``R<r>C<c>``, header excluded); the same
numbers the evidence ledger uses for cell ids, so a cited cell points at exactly one cell.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable

from pydantic import BaseModel, Field

NOT_COMPUTED = " (formula, not computed)"


# -- numbers -------------------------------------------------------------------------------
# Markup some datasets put into cells (SciTab: "[BOLD] 0.93").
_MARKUP = re.compile(r"\[(?:BOLD|ITALIC|EMPTY|UNDERLINE|SMALL)\]\s*", re.I)
# Markdown emphasis round a whole cell, as papers' best results are written in tables pasted from Markdown
# ("**93.1 ± 0.2**", "_84.2_"). Only a matching pair at both ends: trailing stars alone are significance.
_EMPHASIS = re.compile(r"^(\*\*|__|\*|_)(?=\S)(?P<body>.*?\S)\1$")
_NUMBER = re.compile(r"""^
    (?P<open>\()?\s*
    (?P<sign>[+-])?\s*
    (?:[$€£¥]|(?:CHF|EUR|USD|GBP)(?=[\s\d]))?\s*
    (?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d*)?|\.\d+)
    (?:[eE](?P<exp>[+-]?\d+))?
    \s*(?:%|[$€£¥](?![\d.])|(?:CHF|EUR|USD|GBP)\b)?  # "12 %", a currency after the number ("3.50 €")
    \s*(?P<close>\))?
    \s*[*†‡§]*                      # significance stars, daggers
    \s*(?:±\s*\S+)?                  # "12.3 ± 0.4"
    \s*(?:[(\[][^)\]]*[)\]])?        # a trailing "(0.075)" standard error or "[1.2, 3.4]" interval
    \s*$""", re.X)


def parse_number(text: Any) -> float | None:
    """The number a cell shows, ignoring decorations; ``None`` if it is not a number.

    ``"0.215***(0.075)"`` -> 0.215, ``"1,234"`` -> 1234, ``"12%"`` -> 12, ``"−3.2"`` -> -3.2,
    ``"[BOLD] 0.93"`` -> 0.93, ``"**93.1 ± 0.2**"`` -> 93.1. A number wholly in parentheses, ``"(1.5)"``, is read the
    accounting way, as -1.5.
    """
    if text is None:
        return None
    if isinstance(text, bool):
        return None
    if isinstance(text, (int, float)):
        return float(text) if math.isfinite(text) else None
    s = _MARKUP.sub("", str(text)).strip()
    if not s or len(s) > 60:
        return None
    emphasised = _EMPHASIS.match(s)
    if emphasised:
        s = emphasised.group("body").strip()
    s = s.replace("\u2212", "-").replace("\u2013", "-").replace("\u2012", "-").replace("\u00a0", "")
    s = s.replace("\u2009", "").replace("\u202f", "")
    m = _NUMBER.match(s)
    if not m:
        return None
    if bool(m.group("open")) != bool(m.group("close")):
        return None
    value = float(m.group("num").replace(",", ""))
    if m.group("exp"):
        try:
            value *= 10.0 ** int(m.group("exp"))
        except OverflowError:  # "1e309": beyond a float, so not a number we can compare
            return None
        if value == 0 and float(m.group("num").replace(",", "")) != 0:  # "1e-400": not 0, though a float says so
            return None
    if not math.isfinite(value):
        return None
    if m.group("sign") == "-":
        value = -value
    if m.group("open"):
        value = -abs(value)
    return value


def _is_year(value: float | None) -> bool:
    return value is not None and value.is_integer() and 1800 <= value <= 2100


# -- the table -------------------------------------------------------------------------------
class Table(BaseModel):
    """A rectangular table of display strings with 1-based data coordinates."""

    name: str = Field(description="Unique within a conversation; from the file name.")
    title: str = Field(description="The caption if there is one, else the file name.")
    columns: list[str]
    rows: list[list[str]]
    notes: list[str] = Field(default_factory=list, description="What ingestion fixed, for the user.")
    source: str = ""
    sheet: str | None = None
    sheet_names: list[str] = Field(default_factory=list)
    sheet_kind: str = Field(default="sheet", description="What ``sheet_names`` name: a workbook's sheets ('sheet') "
                            "or the tables of an HTML page or Markdown file ('table').")
    decimal: str | None = Field(default=None, description="The decimal mark ('.' or ',') that decided how some "
                                "cell's number was read; None when no cell depended on it. The other is worth offering.")

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @property
    def n_cols(self) -> int:
        return len(self.columns)

    def fingerprint(self) -> str:
        """A short hash of what a reader sees (column names and cells): the evaluations log it with each check, and
        the program bank records it so a table is never shown its own worked example."""
        import hashlib
        import json

        return hashlib.sha1(json.dumps([self.columns, self.rows], ensure_ascii=False).encode()).hexdigest()[:16]

    def cell(self, r: int, c: int) -> str:
        """The cell at 1-based data row ``r`` and column ``c`` (``R<r>C<c>``)."""
        if not (1 <= r <= self.n_rows and 1 <= c <= self.n_cols):
            raise IndexError(f"R{r}C{c} is outside the {self.n_rows}x{self.n_cols} table {self.name!r}")
        return self.rows[r - 1][c - 1]

    def column_values(self, c: int) -> list[str]:
        """All data cells of 1-based column ``c``."""
        return [row[c - 1] for row in self.rows]

    @property
    def row_label_col(self) -> int | None:
        """1-based index of the column that names the rows, or ``None``.

        The first column whose non-empty cells are mostly non-numeric and mostly unique; failing
        that, the first mostly non-numeric column (rows stay identifiable enough to read).
        """
        return _row_label_col(self.columns, self.rows)

    def row_label(self, r: int) -> str:
        c = self.row_label_col
        return self.cell(r, c) if c else ""

    def to_markdown(self, max_rows: int | None = 40, cols: Iterable[int] | None = None,
                    rows: Iterable[int] | None = None, max_cell_chars: int = 60,
                    max_chars: int | None = None, with_title: bool = True) -> str:
        """A Markdown table with coordinates: columns headed ``C<c> name``, rows led by ``R<r>``.

        ``cols``/``rows`` (1-based) select a collapsed view; coordinates stay those of the full
        table, so a model citing ``R12C3`` cites the real cell. ``max_chars`` stops adding rows
        once the text would pass that size (the last line then says how many were left out).
        """
        col_ids = list(cols) if cols is not None else list(range(1, self.n_cols + 1))
        row_ids = list(rows) if rows is not None else list(range(1, self.n_rows + 1))

        def clip(text: str) -> str:
            text = " ".join(str(text).split()).replace("|", "/")
            return text if len(text) <= max_cell_chars else text[: max_cell_chars - 1] + "…"

        lines = []
        if with_title and self.title:
            lines.append(f"Table: {clip(self.title) if len(self.title) > 200 else self.title}")
        lines.append("| row | " + " | ".join(f"C{c} {clip(self.columns[c - 1])}" for c in col_ids) + " |")
        lines.append("|---|" + "---|" * len(col_ids))
        size = sum(len(line) + 1 for line in lines)
        shown = 0
        limit = len(row_ids) if max_rows is None else min(max_rows, len(row_ids))
        for r in row_ids[:limit]:
            line = f"| R{r} | " + " | ".join(clip(self.rows[r - 1][c - 1]) for c in col_ids) + " |"
            if max_chars is not None and shown and size + len(line) + 1 > max_chars:
                break
            lines.append(line)
            size += len(line) + 1
            shown += 1
        if shown < len(row_ids):
            lines.append(f"(… {len(row_ids) - shown} more rows not shown)")
        return "\n".join(lines)

    def preview(self, n: int = 5) -> str:
        """A short Markdown preview plus the ingestion notes, for the upload message."""
        text = f"**{self.name}** — {self.n_rows} rows × {self.n_cols} columns"
        if self.sheet_names and len(self.sheet_names) > 1:
            text += f" ({self.sheet_kind} {self.sheet!r} of {', '.join(self.sheet_names)})"
        text += "\n\n" + self.to_markdown(max_rows=n, with_title=False)
        if self.notes:
            text += "\n\nNotes: " + "; ".join(self.notes)
        return text


# Clock times and durations ("2:04:00", "12:30") measure something; they do not name rows.
_CLOCK = re.compile(r"^\s*\d{1,3}(?::\d{2}){1,2}(?:\.\d+)?\s*$")


def _row_label_col(columns: list[str], rows: list[list[str]]) -> int | None:
    first_textual = None
    for c in range(len(columns)):
        values = [row[c] for row in rows if row[c].strip()]
        if not values:
            continue
        numeric = sum(parse_number(v) is not None or bool(_CLOCK.match(v)) for v in values)
        if numeric > len(values) / 2:
            continue
        if first_textual is None:
            first_textual = c + 1
        if len(set(values)) >= 0.8 * len(values):
            return c + 1
    return first_textual
