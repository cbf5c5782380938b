"""Table ingestion shared by chat uploads and the table benchmarks.

Every format (CSV, TSV, XLSX, JSON, Markdown, an HTML page's first table) is first read into a raw grid of strings and
then goes through ONE normaliser (:func:`table_from_grid`) that fixes what real files get
wrong — a missing header, blank rows and columns, duplicate or multi-row headers, ragged
rows — and writes down in ``Table.notes`` what it fixed, so the user sees it.

Coordinates are 1-based positions in the data grid (``R<r>C<c>``, header excluded); the same
numbers the evidence ledger uses for cell ids, so a cited cell points at exactly one cell.

Spreadsheet formulas are never executed: openpyxl reads the value Excel cached when it last
saved the file (``data_only=True``); a formula without a cached value is shown as its text,
marked as not computed.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, Field

from tools._registry import ToolError

FORMATS = ("csv", "tsv", "xlsx", "json", "markdown", "html")
_SUFFIX_FORMAT = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "csv", ".xlsx": "xlsx", ".xlsm": "xlsx",
                  ".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}
NOT_COMPUTED = " (formula, not computed)"


class TableError(ToolError):
    """A table that cannot be read; the message is for the user."""


# -- numbers -------------------------------------------------------------------------------
# Markup some datasets put into cells (SciTab: "[BOLD] 0.93").
_MARKUP = re.compile(r"\[(?:BOLD|ITALIC|EMPTY|UNDERLINE|SMALL)\]\s*", re.I)
_NUMBER = re.compile(r"""^
    (?P<open>\()?\s*
    (?P<sign>[+-])?\s*
    [$€£¥]?\s*
    (?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d*)?|\.\d+)
    (?:[eE](?P<exp>[+-]?\d+))?
    \s*%?
    \s*(?P<close>\))?
    \s*[*†‡§]*                      # significance stars, daggers
    \s*(?:±\s*\S+)?                  # "12.3 ± 0.4"
    \s*(?:[(\[][^)\]]*[)\]])?        # a trailing "(0.075)" standard error or "[1.2, 3.4]" interval
    \s*$""", re.X)


def parse_number(text: Any) -> float | None:
    """The number a cell shows, ignoring decorations; ``None`` if it is not a number.

    ``"0.215***(0.075)"`` -> 0.215, ``"1,234"`` -> 1234, ``"12%"`` -> 12, ``"−3.2"`` -> -3.2,
    ``"[BOLD] 0.93"`` -> 0.93. A number wholly in parentheses, ``"(1.5)"``, is read the
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
    s = s.replace("\u2212", "-").replace("\u2013", "-").replace("\u2012", "-").replace("\u00a0", "")
    s = s.replace("\u2009", "").replace("\u202f", "")
    m = _NUMBER.match(s)
    if not m:
        return None
    if bool(m.group("open")) != bool(m.group("close")):
        return None
    value = float(m.group("num").replace(",", ""))
    if m.group("exp"):
        value *= 10.0 ** int(m.group("exp"))
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

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @property
    def n_cols(self) -> int:
        return len(self.columns)

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
            text += f" (sheet {self.sheet!r} of {', '.join(self.sheet_names)})"
        text += "\n\n" + self.to_markdown(max_rows=n, with_title=False)
        if self.notes:
            text += "\n\nNotes: " + "; ".join(self.notes)
        return text


def _row_label_col(columns: list[str], rows: list[list[str]]) -> int | None:
    first_textual = None
    for c in range(len(columns)):
        values = [row[c] for row in rows if row[c].strip()]
        if not values:
            continue
        numeric = sum(parse_number(v) is not None for v in values)
        if numeric > len(values) / 2:
            continue
        if first_textual is None:
            first_textual = c + 1
        if len(set(values)) >= 0.8 * len(values):
            return c + 1
    return first_textual


# -- normalising a raw grid --------------------------------------------------------------------
def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return " ".join(str(value).split())


def _looks_like_data(row: list[str]) -> bool:
    """A first row that reads as data (numbers) rather than column names."""
    values = [v for v in row if v.strip()]
    if not values:
        return False
    numbers = [parse_number(v) for v in values]
    numeric = [x for x in numbers if x is not None]
    # Years as headers ("Country, 2007, 2008") are names, not data.
    return len(numeric) >= len(values) / 2 and not all(_is_year(x) for x in numeric)


def _numeric_columns(body: list[list[str]], width: int) -> set[int]:
    out = set()
    for c in range(width):
        values = [row[c] for row in body if row[c].strip()]
        if values and sum(parse_number(v) is not None for v in values) >= 0.6 * len(values):
            out.add(c)
    return out


def _second_header_row(grid: list[list[str]]) -> bool:
    """Whether row 1 continues the header in row 0 (e.g. "LR" spanning "P R F1")."""
    if len(grid) < 3:
        return False
    top, second, body = grid[0], grid[1], grid[2:]
    numeric_cols = _numeric_columns(body, len(top))
    if not numeric_cols:
        return False
    if any(parse_number(second[c]) is not None for c in numeric_cols):
        return False
    if not any(second[c].strip() for c in numeric_cols):
        return False
    filled = [v for v in top if v.strip()]
    spans = len(filled) < len(top) or len(set(filled)) < len(filled)
    return spans


class _HTMLTableReader(HTMLParser):
    """Collects the first <table>'s rows as (in_thead, [(text, colspan, rowspan), ...])."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[tuple[bool, list[tuple[str, int, int]]]] = []
        self.data_rows: set[int] = set()  # rows with at least one <td>
        self.caption: list[str] | None = None
        self.tables = 0  # top-level tables in the document
        self._depth = 0  # nested tables are read as the text of their cell
        self._in_thead = False
        self._row_open = False
        self._cell: list[str] | None = None
        self._span = (1, 1)
        self.done = False

    @staticmethod
    def _int(value: str | None) -> int:
        try:
            return max(1, min(int(value or 1), 1000))  # a bogus span must not blow up the grid
        except ValueError:
            return 1

    def handle_starttag(self, tag, attrs):
        if tag == "table" and self._depth == 0:
            self.tables += 1
        if self.done:
            return
        if tag == "table":
            self._depth += 1
        elif self._depth == 1 and tag == "caption" and self.caption is None:
            self.caption = []
        elif self._depth == 1 and tag == "thead":
            self._in_thead = True
        elif self._depth == 1 and tag == "tr":
            self.rows.append((self._in_thead, []))
            self._row_open = True
        elif self._depth == 1 and tag in ("td", "th"):
            if not self._row_open:  # a cell outside any <tr>: browsers start a row for it, so do we
                self.rows.append((self._in_thead, []))
                self._row_open = True
            a = dict(attrs)
            if tag == "td":
                self.data_rows.add(len(self.rows) - 1)
            self._cell, self._span = [], (self._int(a.get("colspan")), self._int(a.get("rowspan")))
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag):
        if self.done:
            return
        if tag == "table":
            self._depth -= 1
            self.done = self._depth == 0
        elif self._depth == 1 and tag == "thead":
            self._in_thead = False
        elif self._depth == 1 and tag == "tr":
            self._row_open = False
        elif self._depth == 1 and tag in ("td", "th") and self._cell is not None:
            self.rows[-1][1].append((" ".join("".join(self._cell).split()), *self._span))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)
        elif self.caption is not None and self._depth == 1 and not self.rows:
            self.caption.append(data)


def grid_from_html(html: str) -> tuple[list[list[str]], int]:
    """The first HTML table as a rectangular grid, and how many of its top rows are header rows
    (inside <thead>, or made of <th> cells only).

    colspan and rowspan are expanded by repeating the spanning cell's text in every grid position
    it covers, so each cell keeps the coordinates a reader would give it.
    """
    grid, head_rows, _ = _read_html_table(html)
    return grid, head_rows


def split_html_header(grid: list[list[str]], head_rows: int) -> tuple[list[str] | None, list[list[str]], int]:
    """(column names or None, body rows, header rows merged). Header rows that read as data (some
    pages put figures in <thead>) stay in the body; None means the page marks no header."""
    k = 0
    while k < head_rows and not _looks_like_data(grid[k]):
        k += 1
    return (merge_header_rows(grid[:k]) if k else None), grid[k:], k


def _read_html(text: str) -> tuple[list[list[str]], list[str] | None, str | None, list[str]]:
    grid, head_rows, reader = _read_html_table(text)
    if not reader.tables:
        raise TableError("The HTML file has no <table>.")
    header, body, merged = split_html_header(grid, head_rows)
    notes = []
    if merged > 1:
        notes.append(f"merged {merged} header rows into one row of column names")
    if reader.tables > 1:
        notes.append(f"read the first of the page's {reader.tables} tables")
    caption = " ".join("".join(reader.caption).split()) if reader.caption else None
    return body, header, caption or None, notes


def _read_html_table(html: str) -> tuple[list[list[str]], int, _HTMLTableReader]:
    reader = _HTMLTableReader()
    reader.feed(html)
    reader.close()
    grid: list[list[str]] = []
    pending: dict[tuple[int, int], str] = {}  # (row, col) -> text carried down by a rowspan
    for r, (_, cells) in enumerate(reader.rows):
        row: list[str] = []
        col = 0
        for text, colspan, rowspan in cells:
            while (r, col) in pending:  # a cell above spans down into this position
                row.append(pending.pop((r, col)))
                col += 1
            for c in range(col, col + colspan):
                row.append(text)
                for dr in range(1, rowspan):
                    pending[(r + dr, c)] = text
            col += colspan
        for c in sorted(k[1] for k in pending if k[0] == r):  # spans reaching past this row's own cells
            row.extend([""] * (c - col))
            row.append(pending.pop((r, c)))
            col = c + 1
        grid.append(row)
    width = max((len(x) for x in grid), default=0)
    grid = [x + [""] * (width - len(x)) for x in grid]
    head_rows = 0
    for i, (in_thead, cells) in enumerate(reader.rows):
        if not (in_thead or (cells and i not in reader.data_rows)):
            break
        head_rows += 1
    return grid, head_rows, reader


def merge_header_rows(rows: list[list[str]]) -> list[str]:
    """Several header rows -> one name per column: the distinct texts from top to bottom, joined
    ("Location …" spanning "SNF" -> "Location … SNF"); a rowspan's repeated text is said once."""
    width = max((len(r) for r in rows), default=0)
    names = []
    for c in range(width):
        parts: list[str] = []
        for r in rows:
            v = r[c].strip() if c < len(r) else ""
            if v and v not in parts:
                parts.append(v)
        names.append(" ".join(parts))
    return names


def table_from_grid(grid: list[list[Any]], *, name: str, header: list[Any] | None = None,
                    title: str | None = None, source: str = "", settings: Any = None,
                    notes: list[str] | None = None, sheet: str | None = None,
                    sheet_names: list[str] | None = None, detect_header: bool = True) -> Table:
    """Normalise a raw grid (and an optional explicit header) into a :class:`Table`.

    With ``header=None`` the first row is the header unless it looks like data (then names
    ``Column 1``… are generated); a second header row spanning the first is merged.
    """
    notes = list(notes or [])
    max_rows, max_cols = _limits(settings)
    rows = [[_cell_text(v) for v in row] for row in grid]
    head = [_cell_text(v) for v in header] if header is not None else None

    # Ragged rows: pad to the widest row (and header) so every cell has a column.
    width = max([len(r) for r in rows] + [len(head) if head else 0] + [0])
    ragged = sum(1 for r in rows if len(r) != width)
    if ragged and rows:
        notes.append(f"padded {ragged} short row{'s' * (ragged != 1)} with empty cells")
    rows = [r + [""] * (width - len(r)) for r in rows]
    if head is not None:
        head = head + [""] * (width - len(head))

    # Blank rows and columns carry nothing and only confuse coordinates.
    kept = [r for r in rows if any(v.strip() for v in r)]
    if len(kept) < len(rows):
        dropped = len(rows) - len(kept)
        notes.append(f"dropped {dropped} blank row{'s' * (dropped != 1)}")
    rows = kept
    if head is None and not rows:
        raise TableError("The table is empty: no cells with content were found.")

    if head is None:
        if detect_header and _looks_like_data(rows[0]):
            head = [""] * width
            notes.append("the first row looks like data, so column names were generated (Column 1, Column 2, …)")
        else:
            head, rows = rows[0], rows[1:]
            if detect_header and _second_header_row([head] + rows):
                spanned, last = [], ""
                for v in head:  # a spanning top cell names every column under it
                    last = v or last
                    spanned.append(last)
                head = merge_header_rows([spanned, rows[0]])  # "Year" over "Year" stays "Year"
                rows = rows[1:]
                notes.append("merged a two-row header into one row of column names")

    keep_cols = [c for c in range(width) if head[c].strip() or any(r[c].strip() for r in rows)]
    if len(keep_cols) < width:
        dropped = width - len(keep_cols)
        notes.append(f"dropped {dropped} blank column{'s' * (dropped != 1)}")
        head = [head[c] for c in keep_cols]
        rows = [[r[c] for c in keep_cols] for r in rows]
    if not head:
        raise TableError("The table is empty: no cells with content were found.")
    if len(head) > max_cols:
        raise TableError(f"The table has {len(head)} columns; the limit is {max_cols} "
                         "(EVIDENTIA_TABLE_MAX_COLS).")
    if len(rows) > max_rows:
        raise TableError(f"The table has {len(rows):,} rows; the limit is {max_rows:,} "
                         "(EVIDENTIA_TABLE_MAX_ROWS).")

    generated = [i for i, h in enumerate(head) if not h.strip()]
    for i in generated:
        head[i] = f"Column {i + 1}"
    if generated and not any("generated" in n for n in notes):
        notes.append(f"generated names for {len(generated)} unnamed column{'s' * (len(generated) != 1)}")
    seen: Counter = Counter(h.lower() for h in head)
    if any(n > 1 for n in seen.values()):
        counts: Counter = Counter()
        renamed = []
        for i, h in enumerate(head):
            if seen[h.lower()] > 1:
                counts[h.lower()] += 1
                if counts[h.lower()] > 1:
                    head[i] = f"{h} ({counts[h.lower()]})"
                    renamed.append(head[i])
        notes.append("renamed duplicate column names: " + ", ".join(renamed))

    return Table(name=name, title=(title or "").strip() or name, columns=head, rows=rows, notes=notes,
                 source=source, sheet=sheet, sheet_names=sheet_names or [])


def _limits(settings: Any) -> tuple[int, int]:
    if settings is None:
        return 200_000, 200
    return int(settings.table_max_rows), int(settings.table_max_cols)


# -- readers -----------------------------------------------------------------------------------
def _decode(data: bytes) -> tuple[str, str | None]:
    """Text and the detected encoding (``None`` when it was plain UTF-8)."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8"), None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16"), "utf-16"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data[:1_000_000]).best()
    if best is None or best.encoding is None:
        raise TableError("The file is not text in any encoding I recognise; is it really a table?")
    try:
        return data.decode(best.encoding), best.encoding
    except (UnicodeDecodeError, LookupError) as exc:
        raise TableError(f"The file could not be decoded as {best.encoding}.") from exc


def _sniff_delimiter(text: str) -> str:
    sample = "\n".join(text[:64_000].splitlines()[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        pass
    # Fallback: the candidate that appears the same number of times (>0) on most lines.
    lines = [ln for ln in sample.splitlines() if ln.strip()][:20]
    best, best_score = ",", 0
    for d in (",", "\t", ";", "|"):
        counts = Counter(ln.count(d) for ln in lines)
        count, freq = max(counts.items(), key=lambda kv: (kv[1], kv[0])) if counts else (0, 0)
        if count and freq > best_score:
            best, best_score = d, freq
    return best


def _read_csv(text: str, delimiter: str | None, max_rows: int) -> tuple[list[list[str]], list[str]]:
    notes = []
    if "\x00" in text[:10_000]:
        raise TableError("The file contains binary data (NUL bytes); it is not a CSV/TSV table.")
    delim = delimiter or _sniff_delimiter(text)
    if delimiter is None and delim != ",":
        notes.append(f"detected the delimiter {'TAB' if delim == chr(9) else repr(delim)}")
    grid = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
    try:
        for row in reader:
            grid.append(row)
            if len(grid) > max_rows + 10:  # + header rows and blank lines
                raise TableError(f"The table has more than {max_rows:,} rows; the limit is {max_rows:,} "
                                 "(EVIDENTIA_TABLE_MAX_ROWS).")
    except csv.Error as exc:
        raise TableError(f"The CSV file is malformed near line {reader.line_num}: {exc}. "
                         "Check for an unclosed quote or a stray quote character.") from exc
    return grid, notes


_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _split_md_row(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = re.split(r"(?<!\\)\|", line)
    return [c.strip().replace("\\|", "|") for c in cells]


def _read_markdown(text: str) -> tuple[list[list[str]], list[str] | None, str | None]:
    lines = text.splitlines()
    table_lines = [i for i, ln in enumerate(lines) if ln.strip().startswith("|") or
                   (ln.count("|") >= 2 and not ln.strip().startswith("#"))]
    if not table_lines:
        raise TableError("No Markdown table (lines of cells separated by |) was found in the file.")
    start = table_lines[0]
    block = []
    for ln in lines[start:]:
        if not ln.strip():
            if block:
                break
            continue
        if "|" not in ln:
            break
        block.append(ln)
    caption = None
    for ln in reversed(lines[:start]):
        if ln.strip():
            caption = ln.strip().lstrip("#").strip().strip("*_").strip()
            break
    header = None
    if len(block) >= 2 and _MD_SEPARATOR.match(block[1]):
        header = _split_md_row(block[0])
        body = block[2:]
    else:
        body = block
    grid = [_split_md_row(ln) for ln in body if not _MD_SEPARATOR.match(ln)]
    return grid, header, caption


def _read_json(text: str) -> tuple[list[list[Any]], list[str] | None, str | None]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TableError(f"The JSON file is not valid JSON ({exc.msg} at line {exc.lineno}).") from exc
    caption = None
    if isinstance(obj, dict):
        # {"title": ..., "columns": [...], "rows"/"data": [[...]]} (pandas "split" orient and alike)
        caption = next((obj[k] for k in ("caption", "title", "table_caption") if isinstance(obj.get(k), str)), None)
        cols = next((obj[k] for k in ("columns", "header", "table_column_names") if isinstance(obj.get(k), list)), None)
        data = next((obj[k] for k in ("rows", "data", "records", "table_content_values")
                     if isinstance(obj.get(k), list)), None)
        if data is not None and (cols is None or all(isinstance(r, list) for r in data)):
            if data and all(isinstance(r, dict) for r in data):
                return _records(data) + (caption,)
            return data, cols, caption
        values = list(obj.values())
        if values and all(isinstance(v, list) for v in values):  # columns: {"Year": [...], ...}
            length = max(len(v) for v in values)
            grid = [[v[i] if i < len(v) else "" for v in values] for i in range(length)]
            return grid, list(obj.keys()), None
        if values and all(isinstance(v, dict) for v in values):  # index orient: {row: {col: v}}
            grid, cols = _records([{"": k, **v} for k, v in obj.items()])
            return grid, cols, None
        raise TableError("The JSON holds an object I cannot read as a table: use a list of records "
                         "([{\"col\": value}, …]) or columns ({\"col\": [values]}).")
    if isinstance(obj, list):
        if not obj:
            raise TableError("The JSON file holds an empty list: no rows.")
        if all(isinstance(r, dict) for r in obj):
            return _records(obj) + (None,)
        if all(isinstance(r, list) for r in obj):
            return obj, None, None
    raise TableError("The JSON must be a list of records, a list of rows, or an object of columns.")


def _records(records: list[dict]) -> tuple[list[list[Any]], list[str]]:
    cols: dict[str, None] = {}
    for rec in records:
        for k in rec:
            cols.setdefault(str(k), None)
    names = list(cols)
    return [[rec.get(k, "") for k in names] for rec in records], names


def _read_xlsx(data: bytes, sheet: str | int | None, max_rows: int, max_cols: int):
    import zipfile

    try:
        from openpyxl import load_workbook
    except ImportError as exc:  # pragma: no cover - openpyxl is a dependency
        raise TableError("Reading .xlsx files needs openpyxl.") from exc
    try:
        values_wb = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        formulas_wb = load_workbook(io.BytesIO(data), read_only=True, data_only=False)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError) as exc:
        raise TableError("The file is not a readable .xlsx workbook (old .xls files: save as .xlsx or CSV).") from exc
    names = values_wb.sheetnames
    if sheet is None:
        chosen = names[0]
    elif isinstance(sheet, int) or (isinstance(sheet, str) and sheet.isdigit() and sheet not in names):
        idx = int(sheet)
        if not 0 <= idx < len(names):
            raise TableError(f"The workbook has {len(names)} sheets ({', '.join(names)}); there is no sheet {idx}.")
        chosen = names[idx]
    elif sheet in names:
        chosen = sheet
    else:
        raise TableError(f"The workbook has no sheet {sheet!r}; its sheets are: {', '.join(names)}.")
    values_ws, formulas_ws = values_wb[chosen], formulas_wb[chosen]
    grid, cached, uncomputed = [], 0, 0
    for vrow, frow in zip(values_ws.iter_rows(values_only=True), formulas_ws.iter_rows(values_only=True)):
        row = []
        for v, f in zip(vrow, frow):
            if isinstance(f, str) and f.startswith("="):
                if v is None:
                    uncomputed += 1
                    row.append(f"{f}{NOT_COMPUTED}")
                    continue
                cached += 1
            elif f is not None and type(f).__name__ == "ArrayFormula":
                if v is None:
                    uncomputed += 1
                    row.append(f"{getattr(f, 'text', '=?')}{NOT_COMPUTED}")
                    continue
                cached += 1
            row.append(v)
        while row and (row[-1] is None or row[-1] == ""):
            row.pop()
        if len(row) > max_cols:
            raise TableError(f"Sheet {chosen!r} has more than {max_cols} columns; the limit is {max_cols} "
                             "(EVIDENTIA_TABLE_MAX_COLS).")
        grid.append(row)
        if len(grid) > max_rows + 10:
            raise TableError(f"Sheet {chosen!r} has more than {max_rows:,} rows; the limit is {max_rows:,} "
                             "(EVIDENTIA_TABLE_MAX_ROWS).")
    values_wb.close()
    formulas_wb.close()
    notes = []
    if cached:
        notes.append(f"read {cached} formula cell{'s' * (cached != 1)} as the values last saved (formulas are never run)")
    if uncomputed:
        notes.append(f"{uncomputed} formula cell{'s' * (uncomputed != 1)} had no saved value and are shown as "
                     "formula text marked 'not computed' (formulas are never run)")
    return grid, notes, chosen, names


def _detect_format(name: str, fmt: str | None, head: bytes) -> str:
    if fmt:
        fmt = {"md": "markdown", "xls": "xlsx"}.get(fmt.lower(), fmt.lower())
        if fmt not in FORMATS:
            raise TableError(f"Unknown table format {fmt!r}; supported: {', '.join(FORMATS)}.")
        return fmt
    suffix = Path(name).suffix.lower()
    if suffix == ".xls":
        raise TableError("Old .xls workbooks are not supported; save the sheet as .xlsx or CSV.")
    if suffix in _SUFFIX_FORMAT:
        return _SUFFIX_FORMAT[suffix]
    if head.startswith(b"PK\x03\x04"):
        return "xlsx"
    stripped = head.lstrip()
    if stripped[:1] in (b"{", b"["):
        return "json"
    if stripped[:1] == b"|":
        return "markdown"
    if stripped[:1] == b"<" and re.search(rb"<(?:table|html|!doctype)", stripped[:512], re.IGNORECASE):
        return "html"
    return "csv"


def safe_table_name(name: str, existing: Iterable[str] = ()) -> str:
    """A short, unique name from a file name: ``"Sales 2024.xlsx"`` -> ``"Sales 2024"``."""
    stem = Path(str(name)).stem if name else "table"
    stem = re.sub(r"\s+", " ", re.sub(r"[^\w .\-()]+", "_", stem)).strip() or "table"
    taken = set(existing)
    candidate, i = stem, 2
    while candidate in taken:
        candidate, i = f"{stem} ({i})", i + 1
    return candidate


def load_table(path_or_bytes: str | Path | bytes, *, name: str | None = None, settings: Any = None,
               sheet: str | int | None = None, fmt: str | None = None, title: str | None = None,
               existing_names: Iterable[str] = ()) -> Table:
    """Read a CSV, TSV, XLSX, JSON or Markdown table, or an HTML page's first table, into a :class:`Table`.

    ``name`` is the original file name (it picks the format by suffix and names the table);
    ``settings`` supplies ``table_max_bytes/rows/cols``. The size limit is checked before the
    file is read, so an oversized upload is refused at once.
    """
    max_bytes = int(settings.table_max_bytes) if settings is not None else 50 * 1024 * 1024
    max_rows, max_cols = _limits(settings)
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        data = bytes(path_or_bytes)
        if len(data) > max_bytes:
            raise _too_big(len(data), max_bytes)
        file_name = name or "table"
    else:
        path = Path(path_or_bytes)
        if not path.is_file():
            raise TableError(f"No such table file: {path.name}.")
        size = path.stat().st_size
        if size > max_bytes:
            raise _too_big(size, max_bytes)
        file_name = name or path.name
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
        if len(data) > max_bytes:  # grew while we looked
            raise _too_big(len(data), max_bytes)
    if not data.strip():
        raise TableError(f"The file {file_name} is empty.")

    kind = _detect_format(file_name, fmt, data[:512])
    table_name = safe_table_name(file_name, existing_names)
    source = Path(str(file_name)).name
    notes: list[str] = []
    if kind == "xlsx":
        grid, notes, chosen, names = _read_xlsx(data, sheet, max_rows, max_cols)
        if sheet is not None and chosen != names[0]:
            table_name = safe_table_name(f"{Path(file_name).stem} - {chosen}", existing_names)
        if len(names) > 1:
            notes.append(f"read sheet {chosen!r}; the workbook also has: "
                         + ", ".join(n for n in names if n != chosen))
        return table_from_grid(grid, name=table_name, title=title or Path(file_name).stem, source=source,
                               settings=settings, notes=notes, sheet=chosen, sheet_names=names)
    text, encoding = _decode(data)
    if encoding:
        notes.append(f"decoded the file as {encoding}")
    if not text.strip():
        raise TableError(f"The file {file_name} is empty.")
    header = None
    caption = None
    if kind == "json":
        grid, header, caption = _read_json(text)
    elif kind == "markdown":
        grid, header, caption = _read_markdown(text)
    elif kind == "html":
        grid, header, caption, more = _read_html(text)
        notes += more
    else:
        grid, more = _read_csv(text, "\t" if kind == "tsv" else None, max_rows)
        notes += more
    if not grid and not header:
        raise TableError(f"The file {file_name} has no rows.")
    return table_from_grid(grid, name=table_name, header=header, title=title or caption or Path(file_name).stem,
                           source=source, settings=settings, notes=notes)


def _too_big(size: int, limit: int) -> TableError:
    return TableError(f"The file is {size / 1024**2:,.1f} MB; the table size limit is {limit / 1024**2:,.1f} MB "
                      "(EVIDENTIA_TABLE_MAX_BYTES). Upload a smaller extract.")
