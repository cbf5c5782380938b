"""Markdown pipe tables: text in, one table's raw grid, header and caption out, the file's other tables offered.

The file is read line by line and each table's rows are counted as they come, so a file past the row limit is
refused there, not after every line was split (#79: 900,000 rows took seconds and hundreds of MB). A table is a
run of lines with unescaped pipes: one that starts with "|", or with two pipes, or a header line whose next line
is the delimiter row ("a | b" over "--- | ---", pipes at the ends being optional). Fenced code blocks are not
tables. With several tables, the first with a data row is read and the notes name the others, which are offered
as a workbook's sheets are (``kb.table_parts``).
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import Iterator

from kb.errors import TableError
from kb.table_parts import (ChosenTable, choice_note, describe_part, offered, over_rows, part_label, pick_part,
                            stopped_note, too_many_rows)

# A delimiter row: cells of one or more hyphens, with a colon at either end for alignment ("|:-:|---:|").
_MD_SEPARATOR = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_PIPE = re.compile(r"(?<!\\)\|")
_FENCE = re.compile(r"^\s*(```|~~~)")


def _split_md_row(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells = _PIPE.split(line)
    return [c.strip().replace("\\|", "|") for c in cells]


@dataclass
class _MarkdownTable:
    caption: str | None
    lines: list[str] = field(default_factory=list)
    over_limit: TableError | None = None

    def split(self) -> tuple[list[str] | None, list[list[str]]]:
        """(header or None, body rows): a header is the line above a delimiter row."""
        if len(self.lines) >= 2 and _MD_SEPARATOR.match(self.lines[1]):
            header, body = _split_md_row(self.lines[0]), self.lines[2:]
        else:
            header, body = None, self.lines
        return header, [_split_md_row(ln) for ln in body if not _MD_SEPARATOR.match(ln)]

    def first_cells(self) -> list[str]:
        return _split_md_row(self.lines[0]) if self.lines else []

    @property
    def has_data_row(self) -> bool:
        header, body = self.split()
        return bool(body) and (header is not None or len(body) >= 2)


def _lines(text: str) -> Iterator[str]:
    """The text's lines, one at a time (universal newlines), without a list of them all."""
    for line in io.StringIO(text, newline=None):
        yield line.rstrip("\n")


def _caption_of(line: str) -> str:
    return line.strip().lstrip("#").strip().strip("*_").strip()


def _starts_table(stripped: str) -> bool:
    return stripped.startswith("|") or (len(_PIPE.findall(stripped)) >= 2 and not stripped.startswith("#"))


def _scan(text: str, max_rows: int | None) -> list[_MarkdownTable]:
    """The file's tables in order, stopping at one that passes the row limit (it is the last, marked)."""
    tables: list[_MarkdownTable] = []
    table: _MarkdownTable | None = None
    caption: str | None = None  # the last line of text before a table: its caption
    held: str | None = None  # a line with one pipe, a header if a delimiter row follows
    fenced = False
    for line in _lines(text):
        stripped = line.strip()
        if _FENCE.match(line):
            fenced = not fenced
        if table is not None:
            if stripped and _PIPE.search(stripped) and not fenced:
                table.lines.append(line)
                if max_rows is not None and len(table.lines) > max_rows + 12:  # + header and delimiter rows
                    table.over_limit = too_many_rows(max_rows)
                    return tables
                continue
            table = None
        if held is not None:
            if _MD_SEPARATOR.match(stripped) and "|" in stripped and not fenced:
                table = _MarkdownTable(caption, [held, line])
                tables.append(table)
                held = caption = None
                continue
            caption, held = _caption_of(held), None
        if not stripped or fenced or _FENCE.match(line):
            continue
        if _starts_table(stripped):
            table = _MarkdownTable(caption, [line])
            tables.append(table)
            caption = None
        elif _PIPE.search(stripped) and not stripped.startswith("#"):
            held = line
        else:
            caption = _caption_of(line)
    return tables


def _read_markdown(text: str, sheet: str | int | None = None, *, max_rows: int | None = None) -> ChosenTable:
    tables = _scan(text, max_rows)
    if not tables:
        raise TableError("No Markdown table (lines of cells separated by |) was found in the file.")
    labels = [part_label(i + 1, describe_part(t.caption, t.first_cells())) for i, t in enumerate(tables)]
    default = next((i for i, t in enumerate(tables) if t.over_limit or t.has_data_row), 0)
    index = pick_part(labels, sheet, default, "file")
    table = tables[index]
    if table.over_limit is not None:
        raise table.over_limit
    header, grid = table.split()
    notes = []
    if len(tables) > 1:
        notes.append(choice_note(labels, index, "file"))
    stopped = next((i for i, t in enumerate(tables) if t.over_limit), None)
    if stopped is not None:
        notes.append(stopped_note(stopped + 1, over_rows(max_rows or 0), "file"))
    several = len(tables) > 1
    return ChosenTable(grid, header, table.caption or None, notes, offered(labels, index) if several else [],
                       labels[index] if several else None, index + 1, index == default)
