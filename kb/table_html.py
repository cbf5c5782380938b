"""An HTML page's first table as a grid: header rows, caption, and row/column spans expanded."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from kb.errors import TableError
from kb.table_limits import too_many_cells
from kb.table_normalise import _looks_like_data, merge_header_rows


class _HTMLTableReader(HTMLParser):
    """Collects the first <table>'s rows as (in_thead, [(text, colspan, rowspan), ...])."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[tuple[bool, list[tuple[str, int, int]]]] = []
        self.data_rows: set[int] = set()  # rows with at least one <td>
        self.row_headed: set[int] = set()  # rows whose first cell is a <th>: a row header ("Developed by")
        self.caption: list[str] | None = None
        self.tables = 0  # top-level tables in the document
        self._depth = 0  # nested tables are read as the text of their cell
        self._in_thead = False
        self._row_open = False
        self._cell: list[str] | None = None
        self._span = (1, 1)
        self._skip = 0  # inside <script>/<style>: code, not cell text
        self._sup: int | None = None  # where the open <sup>'s text starts in the cell
        self.done = False

    @staticmethod
    def _int(value: str | None) -> int:
        try:
            return max(1, min(int(value or 1), 1000))  # a bogus span must not blow up the grid
        except ValueError:
            return 1

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "template", "noscript"):
            self._skip += 1
            return
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
            elif not self.rows[-1][1]:
                self.row_headed.add(len(self.rows) - 1)
            self._cell, self._span = [], (self._int(a.get("colspan")), self._int(a.get("rowspan")))
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")
        elif tag == "sup" and self._cell is not None and self._sup is None:
            self._sup = len(self._cell)

    def handle_endtag(self, tag):
        if tag in ("script", "style", "template", "noscript"):
            self._skip = max(0, self._skip - 1)
            return
        if self.done:
            return
        if tag == "sup" and self._cell is not None and self._sup is not None:
            self._cell[self._sup:] = [_superscript(self._cell[:self._sup], "".join(self._cell[self._sup:]))]
            self._sup = None
        elif tag == "table":
            self._depth -= 1
            self.done = self._depth == 0
        elif self._depth == 1 and tag == "thead":
            self._in_thead = False
        elif self._depth == 1 and tag == "tr":
            self._row_open = False
        elif self._depth == 1 and tag in ("td", "th") and self._cell is not None:
            self.rows[-1][1].append((" ".join("".join(self._cell).split()), *self._span))
            self._cell, self._sup = None, None

    def handle_data(self, data):
        if self._skip:
            return
        if self._cell is not None:
            self._cell.append(data)
        elif self.caption is not None and self._depth == 1 and not self.rows:
            self.caption.append(data)


# A footnote mark: a letter ("East<sup>a</sup>"), a bracketed reference ("<sup>[3]</sup>", Wikipedia's) or a
# dagger. Asterisks are kept: in results tables they mark significance, which a claim may be about.
_FOOTNOTE_MARK = re.compile(r"^\s*(?:[A-Za-z]|\[[^\]]{1,12}\]|\([a-z\d]{1,3}\)|[†‡§¶#]+)\s*$")
_SUPERSCRIPT_DIGITS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


def _superscript(before: list[str], text: str) -> str:
    """What a <sup> contributes to its cell's text.

    Read as plain text, "East<sup>a</sup>" became the row label "Easta" and "451<sup>1</sup>" the number 4511.
    A footnote mark is dropped; digits after a digit are a footnote number, dropped too; other digits are an
    exponent ("km<sup>2</sup>"), written as superscript digits so that they do not join the word's text.
    """
    if _FOOTNOTE_MARK.match(text):
        return ""
    stripped = text.strip()
    if stripped.isdigit():
        preceding = "".join(before).rstrip()
        return "" if preceding[-1:].isdigit() else stripped.translate(_SUPERSCRIPT_DIGITS)
    return text


# Spans are expanded into a grid; their product is bounded before anything is built (four 1000x1000
# spans in 9 KB of HTML made 2,000,000 cells and took 57 s).
DEFAULT_MAX_CELLS = 1_000_000


def grid_from_html(html: str, max_cells: int = DEFAULT_MAX_CELLS) -> tuple[list[list[str]], int]:
    """The first HTML table as a rectangular grid, and how many of its top rows are header rows
    (inside <thead>, or made of <th> cells only).

    colspan and rowspan are expanded by repeating the spanning cell's text in every grid position
    it covers, so each cell keeps the coordinates a reader would give it.
    """
    grid, head_rows, _ = _read_html_table(html, max_cells)
    return grid, head_rows


def split_html_header(grid: list[list[str]], head_rows: int) -> tuple[list[str] | None, list[list[str]], int]:
    """(column names or None, body rows, header rows merged). Header rows that read as data (some
    pages put figures in <thead>) stay in the body; None means the page marks no header."""
    k = 0
    while k < head_rows and not _looks_like_data(grid[k]):
        k += 1
    return (merge_header_rows(grid[:k]) if k else None), grid[k:], k


def _read_html(text: str, max_cells: int = DEFAULT_MAX_CELLS) -> tuple[list[list[str]], list[str] | None,
                                                                       str | None, list[str]]:
    grid, head_rows, reader = _read_html_table(text, max_cells)
    if not reader.tables:
        raise TableError("The HTML file has no <table>.")
    header, body, merged = split_html_header(grid, head_rows)
    notes = []
    if header is None and len(reader.rows) >= 2 and all(
            i in reader.row_headed and i in reader.data_rows for i in range(len(reader.rows))):
        # Every row is a <th> then <td>s: row headers ("Developed by | Novo Nordisk"), an infobox-like record with
        # no column names. Its first row is a field, not a header (found as a new user: "Trade names | Ozempic, …"
        # became the column names).
        header = [""] * max((len(r) for r in grid), default=0)
        notes.append("every row starts with its own header cell, so column names were generated")
    if merged > 1:
        notes.append(f"merged {merged} header rows into one row of column names")
    if reader.tables > 1:
        notes.append(f"read the first of the page's {reader.tables} tables")
    caption = " ".join("".join(reader.caption).split()) if reader.caption else None
    return body, header, caption or None, notes


def _read_html_table(html: str, max_cells: int = DEFAULT_MAX_CELLS) -> tuple[list[list[str]], int,
                                                                              _HTMLTableReader]:
    reader = _HTMLTableReader()
    reader.feed(html)
    reader.close()
    n_rows = len(reader.rows)
    # Each cell covers colspan x rowspan positions (a rowspan stops at the table's last row).
    cells = sum(cs * min(rs, n_rows - r) for r, (_, row) in enumerate(reader.rows) for _, cs, rs in row)
    if cells > max_cells:
        if not any(cs > 1 or rs > 1 for _, row in reader.rows for _, cs, rs in row):
            raise too_many_cells(max_cells)
        raise TableError(f"The HTML table's row and column spans make {cells:,} cells; the limit is {max_cells:,} "
                         "(EVIDENTIA_TABLE_MAX_CELLS). Is it really a data table?")
    grid: list[list[str]] = []
    pending: dict[int, dict[int, str]] = {}  # row -> {col: text carried down by a rowspan}
    for r, (_, cells_in_row) in enumerate(reader.rows):
        below = pending.pop(r, {})
        row: list[str] = []
        col = 0
        for text, colspan, rowspan in cells_in_row:
            while col in below:  # a cell above spans down into this position
                row.append(below.pop(col))
                col += 1
            for c in range(col, col + colspan):
                row.append(text)
                for dr in range(1, min(rowspan, n_rows - r)):
                    pending.setdefault(r + dr, {})[c] = text
            col += colspan
        for c in sorted(below):  # spans reaching past this row's own cells
            row.extend([""] * (c - col))
            row.append(below[c])
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
