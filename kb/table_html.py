"""An HTML page's first table as a grid: header rows, caption, and row/column spans expanded."""

from __future__ import annotations

from html.parser import HTMLParser

from kb.errors import TableError
from kb.table_normalise import _looks_like_data, merge_header_rows


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
