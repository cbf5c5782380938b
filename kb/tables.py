"""Table ingestion shared by chat uploads and the table benchmarks.

Every format (CSV, TSV, XLSX, JSON, Markdown, an HTML page's tables) is first read into a raw grid of
strings (``kb.table_csv``, ``kb.table_json``, ``kb.table_markdown``, ``kb.table_html``,
``kb.table_xlsx``) and then goes through ONE normaliser
(``kb.table_normalise.table_from_grid``) into a :class:`~kb.table_model.Table`. This module is the entry
point (:func:`load_table`) and re-exports what callers use.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

from kb.errors import TableError
from kb.table_html import DEFAULT_MAX_CELLS, _read_html, grid_from_html, split_html_header
from kb.table_model import _MARKUP, NOT_COMPUTED, Table, parse_number
from kb.table_limits import TableLimits, check_cells, size_over_limit
from kb.table_normalise import merge_header_rows, table_from_grid
from kb.table_csv import _read_csv
from kb.table_numbers import COMMA, POINT, NumberMarks
from kb.table_json import _read_json
from kb.table_markdown import _read_markdown
from kb.table_readers import FORMATS, _detect_format
from kb.table_xlsx import _read_xlsx
from kb.text_decoding import decode_upload

__all__ = ["FORMATS", "NOT_COMPUTED", "Table", "TableError", "_MARKUP", "grid_from_html", "load_table",
           "merge_header_rows", "parse_number", "safe_table_name", "split_html_header", "table_from_grid"]


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
               existing_names: Iterable[str] = (), decimal: str | None = None) -> Table:
    """Read a CSV, TSV, XLSX, JSON or Markdown table, or an HTML page's table, into a :class:`Table`.

    ``name`` is the original file name (it picks the format by suffix and names the table);
    ``sheet`` picks a workbook's sheet, or one of the tables of an HTML page or Markdown file, by name (label) or
    0-based number; by default the first visible sheet, or the first table that looks like data, is read.
    ``settings`` supplies ``table_max_bytes/rows/cols``. The size limit is checked before the
    file is read, so an oversized upload is refused at once. ``decimal`` is the decimal mark of a text table's
    numbers ("," or "."; None: read it from the cells, and say what was assumed).
    """
    if decimal not in (None, COMMA, POINT):
        raise TableError(f"The decimal mark must be ',' or '.', not {decimal!r}.")
    limits = TableLimits.from_settings(settings)
    max_bytes, max_rows, max_cols = limits.max_bytes, limits.max_rows, limits.max_cols
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
    if decimal and kind in ("xlsx", "json"):
        notes.append("the decimal mark asked for applies to text tables (CSV, TSV, Markdown, HTML); this file "
                     "stores its numbers as numbers")
    elif decimal:  # said, so a reading chosen by hand is never mistaken for the detected one
        notes.append(f"numbers read with decimal {'commas' if decimal == COMMA else 'points'}, as asked")
    if kind == "xlsx":
        book = _read_xlsx(data, sheet, limits)
        chosen, names = book.chosen, book.names
        if chosen != book.default:
            table_name = safe_table_name(f"{Path(file_name).stem} - {chosen}", existing_names)
        if len(names) > 1:
            notes.append(f"read sheet {chosen!r}; the workbook also has: "
                         + ", ".join(n for n in names if n != chosen))
        notes += book.notes
        return table_from_grid(book.grid, name=table_name, title=title or Path(file_name).stem, source=source,
                               settings=settings, notes=notes, sheet=chosen, sheet_names=names)
    decoded = decode_upload(data)
    text = decoded.text
    notes += decoded.notes
    if not text.strip():
        raise TableError(f"The file {file_name} is empty.")
    header = None
    caption = None
    part = None
    # Numbers in any notation, for text tables: a delimited file's cells are the file's own text; in Markdown and
    # HTML a reader may join a cell's blocks with spaces, so "12 345" there is only a number when the person says
    # which mark the file uses. Typed numbers (JSON, XLSX) keep the older rule.
    numbers = NumberMarks(decimal, None, spaced_thousands=False) if decimal and kind in ("markdown", "html") else None
    if kind == "json":
        grid, header, caption, more = _read_json(text, max_rows, limits.max_cells)
        notes += more
    elif kind in ("markdown", "html"):
        # A page or file of several tables: one is read, the others are offered as a workbook's sheets are.
        part = (_read_markdown(text, sheet, max_rows=max_rows) if kind == "markdown" else
                _read_html(text, sheet, max_rows=max_rows,
                           max_cells=min(DEFAULT_MAX_CELLS, max_rows * max_cols, limits.max_cells)))
        grid, header, caption = part.grid, part.header, part.caption
        notes += part.notes
        if not part.default:
            table_name = safe_table_name(f"{Path(file_name).stem} - table {part.number}", existing_names)
    else:
        read = _read_csv(text, "\t" if kind == "tsv" else None, max_rows, limits.max_cells)
        grid, caption, numbers = read.grid, read.title, NumberMarks(decimal, read.delimiter)
        notes += read.notes
    if not grid and not header:
        raise TableError(f"The file {file_name} has no rows.")
    check_cells(grid, limits.max_cells)
    table = table_from_grid(grid, name=table_name, header=header, title=title or caption or Path(file_name).stem,
                            source=source, settings=settings, notes=notes, numbers=numbers)
    if part is not None and part.labels:
        table.sheet, table.sheet_names, table.sheet_kind = part.chosen, part.labels, "table"
    return table


def _too_big(size: int, limit: int) -> TableError:
    return TableError(f"The file is {size_over_limit(size, limit)} for a table (EVIDENTIA_TABLE_MAX_BYTES). "
                      "Upload a smaller extract.")
