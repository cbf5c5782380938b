"""An HTML page's tables as grids: header rows, caption, and row/column spans expanded; one table chosen.

A page holds many tables: navigation bars, layout grids, the data. All are read in one pass (tables nested in a
cell too, as tables of their own); the first one that looks like data is chosen, the others are offered as a
workbook's sheets are (``kb.table_parts``), and the notes say which was read (#79). A cell keeps its block
boundaries: list items, paragraphs and a nested table's cells are separated ("12; 34", not "1234"), and a
``<br>`` between two numbers too. Cells and rows whose end tags are left out (valid HTML) end where the next one
starts. Rows are counted as they are read, so a page past the row limit is refused without building its grid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

from kb.errors import TableError
from kb.table_limits import too_many_cells
from kb.table_normalise import _looks_like_data, merge_header_rows
from kb.table_parts import (ChosenTable, choice_note, describe_part, offered, over_rows, part_label, pick_part,
                            stopped_note, too_many_rows)

# Tags that start a new block of text: in a cell, what is on either side of one is kept apart.
_BLOCKS = frozenset("""p div li ul ol dl dt dd h1 h2 h3 h4 h5 h6 blockquote pre hr section article header footer nav
    aside figure figcaption address details summary main form fieldset legend table caption thead tbody tfoot tr
    td th""".split())
_SKIPPED = ("script", "style", "template", "noscript")
_MAX_NESTING = 8  # tables nested deeper are read as the text of the innermost one's cell
_BLOCK, _BREAK = object(), object()  # markers in a cell's pieces of text


def _cell_text(pieces: list) -> str:
    """A cell's text, its blocks joined by "; " (by a space after a sentence's end) and its ``<br>`` lines by a
    space, or by "; " between two numbers: "10<br>20" must not read as 10 20 or 1020."""
    parts: list[tuple[str, object]] = []  # (text of a block, the marker before it)
    marker, current = None, []
    for piece in pieces:
        if piece is _BLOCK or piece is _BREAK:
            text = " ".join("".join(current).split())
            if text:
                parts.append((text, marker))
                marker = piece
            elif piece is _BLOCK or marker is None:  # a block's boundary outweighs a line break
                marker = piece
            current = []
        else:
            current.append(piece)
    text = " ".join("".join(current).split())
    if text:
        parts.append((text, marker))
    out = ""
    for text, before in parts:
        if not out:
            out = text
        elif before is _BLOCK and out[-1] not in ".;:!?,":
            out += "; " + text
        elif before is _BREAK and out[-1].isdigit() and text[0].isdigit():
            out += "; " + text
        else:
            out += " " + text
    return out


@dataclass
class _HTMLTable:
    """One <table> as it is read: rows of (text, colspan, rowspan) cells, and what marks its header."""

    rows: list[tuple[bool, list[tuple[str, int, int]]]] = field(default_factory=list)  # (in <thead>, cells)
    data_rows: set[int] = field(default_factory=set)  # rows with at least one <td>
    row_headed: set[int] = field(default_factory=set)  # rows whose first cell is a <th>: a row header
    caption: list[str] | None = None
    in_caption: bool = False
    in_thead: bool = False
    row_open: bool = False
    cell: list | None = None  # the open cell's pieces of text
    span: tuple[int, int] = (1, 1)
    sup: int | None = None  # where the open <sup>'s text starts in the cell
    filled_rows: int = 0  # rows with some text: what the row limit counts
    widest: int = 0  # most cells with text in one row
    linked_only: bool = True  # every cell's text is a link: a navigation bar
    holds_data: bool = False  # a nested table that looks like data: this one is layout
    over_limit: TableError | None = None  # read only up to the row or cell limit: why it cannot be read
    over: str = ""  # the limit it passed, for the notes ("more than 5,000 rows (…)")

    def close_cell(self) -> None:
        if self.cell is None:
            return
        self.end_sup()
        self.rows[-1][1].append((_cell_text(self.cell), *self.span))
        self.cell = None

    def end_sup(self) -> None:
        if self.cell is not None and self.sup is not None:
            before = [p for p in self.cell[:self.sup] if isinstance(p, str)]
            text = "".join(p for p in self.cell[self.sup:] if isinstance(p, str))
            self.cell[self.sup:] = [_superscript(before, text)]
        self.sup = None

    def close_row(self) -> int:
        """Ends the open row; 1 when it has text (it counts toward the row limit), else 0."""
        self.close_cell()
        if not self.row_open:
            return 0
        self.row_open = False
        cells = self.rows[-1][1]
        if not cells:  # <tr></tr>: nothing to place
            self.rows.pop()
            return 0
        filled = len([text for text, _, _ in cells if text])
        self.widest = max(self.widest, filled)
        self.filled_rows += filled > 0
        return int(filled > 0)

    def open_row(self) -> None:
        self.close_row()
        self.rows.append((self.in_thead, []))
        self.row_open = True
        self.in_caption = False

    def text(self) -> str:
        """The whole table as one cell's text (a table nested in a cell)."""
        self.close_row()
        return "; ".join(t for _, cells in self.rows for t, _, _ in cells if t)

    def first_cells(self) -> list[str]:
        return next(([t for t, _, _ in cells] for _, cells in self.rows if any(t for t, _, _ in cells)), [])

    @property
    def looks_like_data(self) -> bool:
        """A header and a data row, in two or more columns, not only links, no data table nested inside."""
        return self.filled_rows >= 2 and self.widest >= 2 and not self.linked_only and not self.holds_data


class _StopReading(Exception):
    """A table passed the row or cell limit: nothing after it is read."""


class _HTMLTableReader(HTMLParser):
    """Reads every <table> of a page (in the order they start), each with its own rows, header marks and caption."""

    def __init__(self, max_rows: int | None = None, max_cells: int | None = None):
        super().__init__(convert_charrefs=True)
        self.tables: list[_HTMLTable] = []
        self.max_rows, self.max_cells = max_rows, max_cells
        self._stack: list[_HTMLTable] = []  # the tables open around this point, innermost last
        self._untracked = 0  # tables nested deeper than _MAX_NESTING, open
        self._skip = 0  # inside <script>/<style>: code, not cell text
        self._links = 0  # inside <a>
        self._cells = 0

    @staticmethod
    def _int(value: str | None) -> int:
        try:
            return max(1, min(int(value or 1), 1000))  # a bogus span must not blow up the grid
        except ValueError:
            return 1

    def _mark(self, marker: object) -> None:
        top = self._stack[-1] if self._stack else None
        if top is not None and top.cell is not None:
            top.cell.append(marker)
        elif top is not None and top.in_caption and top.caption is not None:
            top.caption.append(" ")

    def _count_row(self, table: _HTMLTable, filled: int) -> None:
        if filled and self.max_rows is not None and table.filled_rows > self.max_rows + 10:
            table.over_limit, table.over = too_many_rows(self.max_rows), over_rows(self.max_rows)
            raise _StopReading

    def handle_starttag(self, tag, attrs):
        if tag in _SKIPPED:
            self._skip += 1
            return
        if self._skip:
            return
        if tag == "a":
            self._links += 1
            return
        if tag == "table" and not self._untracked and len(self._stack) < _MAX_NESTING:
            table = _HTMLTable()
            self.tables.append(table)
            self._stack.append(table)
            return
        if tag == "table":
            self._untracked += 1
        if self._untracked or not self._stack:
            if tag in _BLOCKS or tag == "br":
                self._mark(_BLOCK if tag in _BLOCKS else _BREAK)
            return
        top = self._stack[-1]
        if tag == "caption" and top.caption is None and not top.rows:
            top.caption, top.in_caption = [], True
        elif tag == "thead":
            self._count_row(top, top.close_row())
            top.in_thead = True
        elif tag in ("tbody", "tfoot"):
            self._count_row(top, top.close_row())
            top.in_thead = False
        elif tag == "tr":
            self._count_row(top, top.close_row())
            top.open_row()
        elif tag in ("td", "th"):
            top.close_cell()
            if not top.row_open:  # a cell outside any <tr>: browsers start a row for it, so do we
                top.open_row()
            a = dict(attrs)
            if tag == "td":
                top.data_rows.add(len(top.rows) - 1)
            elif not top.rows[-1][1]:
                top.row_headed.add(len(top.rows) - 1)
            top.cell, top.span = [], (self._int(a.get("colspan")), self._int(a.get("rowspan")))
            self._cells += 1
            if self.max_cells is not None and self._cells > self.max_cells:
                top.over_limit = too_many_cells(self.max_cells)
                top.over = f"more than {self.max_cells:,} cells (EVIDENTIA_TABLE_MAX_CELLS)"
                raise _StopReading
        elif tag == "br":
            self._mark(_BREAK)
        elif tag == "sup" and top.cell is not None and top.sup is None:
            top.sup = len(top.cell)
        elif tag in _BLOCKS:
            self._mark(_BLOCK)

    def handle_endtag(self, tag):
        if tag in _SKIPPED:
            self._skip = max(0, self._skip - 1)
            return
        if self._skip:
            return
        if tag == "a":
            self._links = max(0, self._links - 1)
            return
        if tag == "table" and self._untracked:
            self._untracked -= 1
            self._mark(_BLOCK)
            return
        if tag == "table" and self._stack:
            self._end_table()
            return
        if self._untracked or not self._stack:
            if tag in _BLOCKS:
                self._mark(_BLOCK)
            return
        top = self._stack[-1]
        if tag == "sup":
            top.end_sup()
        elif tag == "caption":
            top.in_caption = False
        elif tag == "thead":
            self._count_row(top, top.close_row())
            top.in_thead = False
        elif tag == "tr":
            self._count_row(top, top.close_row())
        elif tag in ("td", "th"):
            top.close_cell()
        elif tag in _BLOCKS:
            self._mark(_BLOCK)

    def _end_table(self) -> None:
        table = self._stack.pop()
        self._count_row(table, table.close_row())
        parent = self._stack[-1] if self._stack else None
        if parent is not None:
            parent.holds_data = parent.holds_data or table.looks_like_data or table.holds_data
            if parent.cell is not None:
                parent.cell += [_BLOCK, table.text(), _BLOCK]

    def handle_data(self, data):
        if self._skip or not self._stack:
            return
        top = self._stack[-1]
        if top.cell is not None:
            top.cell.append(data)
            if self._links == 0 and data.strip():
                top.linked_only = False
        elif top.in_caption and top.caption is not None:
            top.caption.append(data)

    def read(self, html: str) -> None:
        """Feeds the whole page, or up to the table that passes a limit; the tables left open end here."""
        try:
            self.feed(html)
            self.close()
            while self._stack:
                self._end_table()
        except _StopReading:
            # The tables open around the one over the limit are read only in part: none of them can be chosen.
            over = next(t for t in reversed(self.tables) if t.over_limit)
            for table in self._stack:
                if not table.over_limit:
                    table.over_limit, table.over = over.over_limit, f"a table inside it with {over.over}"
            self._stack = []


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
    reader = _HTMLTableReader()
    reader.read(html)
    if not reader.tables:
        return [], 0
    return _grid(reader.tables[0], max_cells)


def split_html_header(grid: list[list[str]], head_rows: int) -> tuple[list[str] | None, list[list[str]], int]:
    """(column names or None, body rows, header rows merged). Header rows that read as data (some
    pages put figures in <thead>) stay in the body; None means the page marks no header."""
    k = 0
    while k < head_rows and not _looks_like_data(grid[k]):
        k += 1
    return (merge_header_rows(grid[:k]) if k else None), grid[k:], k


def _read_html(text: str, sheet: str | int | None = None, *, max_rows: int | None = None,
               max_cells: int = DEFAULT_MAX_CELLS) -> ChosenTable:
    reader = _HTMLTableReader(max_rows=max_rows, max_cells=max_cells)
    reader.read(text)
    if not reader.tables:
        raise TableError("The HTML file has no <table>.")
    tables = [t for t in reader.tables if t.filled_rows or t.over_limit] or reader.tables[:1]
    stopped = next((i for i, t in enumerate(tables) if t.over_limit), None)
    labels = [part_label(i + 1, describe_part(_caption(t), t.first_cells())) for i, t in enumerate(tables)]
    default = next((i for i, t in enumerate(tables) if t.looks_like_data or t.over_limit), None)
    if default is None:
        default = next((i for i, t in enumerate(tables) if t.filled_rows >= 2 and not t.holds_data), 0)
    index = pick_part(labels, sheet, default, "page")
    table = tables[index]
    if table.over_limit is not None:
        raise table.over_limit
    grid, head_rows = _grid(table, max_cells)
    header, body, merged = split_html_header(grid, head_rows)
    notes = []
    if header is None and len(table.rows) >= 2 and all(
            i in table.row_headed and i in table.data_rows for i in range(len(table.rows))):
        # Every row is a <th> then <td>s: row headers ("Developed by | Novo Nordisk"), an infobox-like record with
        # no column names. Its first row is a field, not a header (found as a new user: "Trade names | Ozempic, …"
        # became the column names).
        header = [""] * max((len(r) for r in grid), default=0)
        notes.append("every row starts with its own header cell, so column names were generated")
    if merged > 1:
        notes.append(f"merged {merged} header rows into one row of column names")
    if len(tables) > 1:
        notes.append(choice_note(labels, index, "page"))
    if stopped is not None:
        notes.append(stopped_note(stopped + 1, tables[stopped].over, "page"))
    several = len(tables) > 1
    return ChosenTable(body, header, _caption(table), notes, offered(labels, index) if several else [],
                    labels[index] if several else None, index + 1, index == default)


def _caption(table: _HTMLTable) -> str | None:
    return " ".join("".join(table.caption).split()) or None if table.caption else None


def _grid(table: _HTMLTable, max_cells: int = DEFAULT_MAX_CELLS) -> tuple[list[list[str]], int]:
    n_rows = len(table.rows)
    # Each cell covers colspan x rowspan positions (a rowspan stops at the table's last row).
    cells = sum(cs * min(rs, n_rows - r) for r, (_, row) in enumerate(table.rows) for _, cs, rs in row)
    if cells > max_cells:
        if not any(cs > 1 or rs > 1 for _, row in table.rows for _, cs, rs in row):
            raise too_many_cells(max_cells)
        raise TableError(f"The HTML table's row and column spans make {cells:,} cells; the limit is {max_cells:,} "
                         "(EVIDENTIA_TABLE_MAX_CELLS). Is it really a data table?")
    grid: list[list[str]] = []
    pending: dict[int, dict[int, str]] = {}  # row -> {col: text carried down by a rowspan}
    for r, (_, cells_in_row) in enumerate(table.rows):
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
    for i, (in_thead, cells_in_row) in enumerate(table.rows):
        if not (in_thead or (cells_in_row and i not in table.data_rows)):
            break
        head_rows += 1
    return grid, head_rows
