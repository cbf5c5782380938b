"""CSV and TSV: text in, a raw grid out, with the delimiter sniffed, the lines around the table (titles, comments,
repeated headers, a source line) set apart, and every assumption noted."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from dataclasses import dataclass, field

from kb.errors import TableError
from kb.table_limits import too_many_cells
from kb.table_model import parse_number
from kb.table_numbers import is_number_text

_DELIMITERS = (",", "\t", ";", "|")
# The sniff reads at most this much: csv.Sniffer's regular expressions took ~30 s of CPU on 64 KB of `,"x`, so the
# delimiter is chosen here by parsing a bounded sample with each candidate, which costs linear time.
SNIFF_CHARS = 32_000
SNIFF_LINES = 50


def _sniff_delimiter(text: str) -> str:
    """The candidate that splits the sample's rows most consistently into the same number of fields (two or more)
    whose text holds no other candidate (a decimal comma in "1,5;2,5" is a number's, not a delimiter's); ties go to
    the more common delimiter (, then TAB, ; and |)."""
    sample = text[:SNIFF_CHARS]
    if len(text) > SNIFF_CHARS and "\n" in sample:
        sample = sample[:sample.rindex("\n")]  # whole lines only
    best, best_score = ",", 0.0
    for delim in _DELIMITERS:
        others = [d for d in _DELIMITERS if d != delim]
        rows = []
        try:
            for row in csv.reader(io.StringIO(sample, newline=""), delimiter=delim):
                if any(cell.strip() for cell in row):
                    rows.append(row)
                if len(rows) >= SNIFF_LINES:
                    break
        except csv.Error:
            pass
        if not rows:
            continue
        width, count = Counter(len(r) for r in rows).most_common(1)[0]
        if width < 2:
            continue
        fields = [cell for row in rows for cell in row]
        clean = sum(not any(d in cell for d in others) or is_number_text(cell) for cell in fields)
        score = count / len(rows) * clean / len(fields)
        if score > best_score + 1e-9:
            best, best_score = delim, score
    return best


# Cells up to this size load (prompts clip them); a larger one is almost always a broken quote.
MAX_CELL_CHARS = 1_000_000
_SEP_HINT = re.compile(r"^sep=(.)\r?$")
EXTRA_ROWS = 10  # title, header and units lines beyond the row limit


@dataclass
class CsvGrid:
    """The table's rows (blank ones left out), what was noted, the title lines found above it, the delimiter."""

    grid: list[list[str]]
    notes: list[str] = field(default_factory=list)
    title: str | None = None
    delimiter: str = ","


def _read_csv(text: str, delimiter: str | None, max_rows: int, max_cells: int | None = None) -> CsvGrid:
    notes = []
    if "\x00" in text[:10_000]:
        raise TableError("The file contains binary data (NUL bytes); it is not a CSV/TSV table.")
    first_line, _, rest = text.partition("\n")
    hint = _SEP_HINT.match(first_line.strip("\ufeff"))
    if hint and delimiter is None:
        # Excel's "sep=;" first line names the delimiter; it is not a header.
        delimiter, text = hint.group(1), rest
        notes.append(f"used the delimiter {delimiter!r} named by the file's first line (sep=)")
    delim = delimiter or _sniff_delimiter(text)
    if delimiter is None and delim != ",":
        notes.append(f"detected the delimiter {_shown(delim)}")
    rows, lines, blank = _rows(text, delim, max_rows, max_cells)
    if hint and delimiter == hint.group(1):  # the rows start on the file's second line
        lines = [line + 1 for line in lines]
    if blank:
        notes.append(f"dropped {blank:,} blank row{'s' * (blank != 1)}")
    rows, lines, title, more = _set_apart(rows, lines, delim)
    notes += more
    notes += _other_delimiter_notes(rows, lines, delim)
    return CsvGrid(rows, notes, title, delim)


def _shown(delim: str) -> str:
    return "TAB" if delim == "\t" else repr(delim)


def _rows(text: str, delim: str, max_rows: int, max_cells: int | None) -> tuple[list[list[str]], list[int], int]:
    """The non-blank rows, the line each starts on, and how many blank rows there were. Blank rows (blank lines,
    lines of bare delimiters) are neither kept nor counted toward the row limit, which is applied while reading."""
    csv.field_size_limit(MAX_CELL_CHARS)
    grid, lines, n_cells, blank = [], [], 0, 0
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
    last = 0
    try:
        for row in reader:
            start, last = last + 1, reader.line_num
            if not row or not "".join(row).strip():
                blank += 1
                continue
            grid.append(row)
            lines.append(start)
            n_cells += len(row)
            if max_cells is not None and n_cells > max_cells:
                raise too_many_cells(max_cells)
            if len(grid) > max_rows + EXTRA_ROWS:
                raise TableError(f"The table has more than {max_rows:,} rows; the limit is {max_rows:,} "
                                 "(EVIDENTIA_TABLE_MAX_ROWS).")
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise TableError(f"A cell near line {reader.line_num} is larger than {MAX_CELL_CHARS:,} characters; "
                             "split it or check for a quote that is never closed.") from exc
        raise TableError(f"The CSV file is malformed near line {reader.line_num}: {exc}. "
                         "Check for an unclosed quote or a stray quote character.") from exc
    return grid, lines, blank


# -- the lines around a table ----------------------------------------------------------------------------------------
MAX_TITLE_LINES = 3
MAX_FOOTER_LINES = 3
_FOOTER_START = re.compile(r"^\s*(?:source|sources|note|notes|quelle|fuente|\*|†|©|data\b|remark)", re.I)


def _filled(row: list[str]) -> int:
    return sum(1 for cell in row if cell.strip())


def _looks_like_data(row: list[str]) -> bool:
    values = [v for v in row if v.strip()]
    return bool(values) and sum(parse_number(v) is not None for v in values) >= len(values) / 2


def _prose_split(row: list[str], beside: list[str]) -> bool:
    """A line of prose that the delimiter cut ("Hospital antibiotic use, Q1-Q2 2025"): every field after the first
    starts with a space, as text after a comma does, while the neighbouring table row's fields do not."""
    return (len(row) >= 2 and all(cell[:1] == " " and cell.strip() for cell in row[1:])
            and not any(cell[:1] == " " for cell in beside[1:]))


def _line_text(row: list[str], delim: str) -> str:
    return delim.join(row).strip().strip(delim).strip()


def _is_title(row: list[str], header: list[str], width: int) -> bool:
    first = row[0].strip()
    if not first or parse_number(first) is not None or first.startswith("#"):
        return False
    if _filled(row) == 1:
        return len(row) < width or width >= 3 or " " in first
    return _prose_split(row, header)


def _could_be_header(row: list[str]) -> bool:
    return _filled(row) >= 2 and not _looks_like_data(row)


def _title_lines(rows: list[list[str]], width: int) -> int:
    """How many lines above the column names are a title: the most (up to three) that each read as one, over a
    row that reads as column names."""
    best = 0
    for k in range(1, min(MAX_TITLE_LINES, len(rows) - 1) + 1):
        if _could_be_header(rows[k]) and all(_is_title(rows[i], rows[k], width) for i in range(k)):
            best = k
    return best


def _is_comment(row: list[str], following: list[str], width: int) -> bool:
    """A "# exported by …" line: a '#' opens it and it is not the header's shape (a header may name a column
    "#" or "# of cases")."""
    first = row[0].lstrip()
    return (first.startswith("#") and len(first) > 1
            and (len(row) != width or _filled(row) == 1 or _prose_split(row, following)))


def _is_footer(row: list[str], body_row: list[str], width: int) -> bool:
    first = row[0].strip()
    if not first or parse_number(first) is not None:
        return False
    if _filled(row) == 1 and len(row) < width:
        return bool(_FOOTER_START.match(first)) or ":" in first or len(first.split()) >= 4
    return _prose_split(row, body_row) and (bool(_FOOTER_START.match(first)) or ":" in first)


def _which(lines: list[int]) -> str:
    return f"line{'s' * (len(lines) != 1)} " + ", ".join(map(str, lines[:5])) + (" …" if len(lines) > 5 else "")


def _set_apart(rows: list[list[str]], lines: list[int], delim: str
               ) -> tuple[list[list[str]], list[int], str | None, list[str]]:
    """Comment lines and title lines above the table, lines that repeat the header or the title further down (two
    exports joined), and source lines under it: taken out of the rows, each noted."""
    notes: list[str] = []
    if not rows:
        return rows, lines, None, notes
    width = max(Counter(len(r) for r in rows).items(), key=lambda kv: (kv[1], kv[0]))[0]  # ties: the wider

    comments: list[str] = []
    while len(rows) > 1 and _is_comment(rows[0], rows[1], width):
        comments.append(_line_text(rows[0], delim))
        rows, lines = rows[1:], lines[1:]
    if comments:
        shown = "; ".join(f"“{c[:80]}”" for c in comments[:2]) + (" …" if len(comments) > 2 else "")
        notes.append(f"skipped {len(comments)} comment line{'s' * (len(comments) != 1)} (starting with #) above "
                     f"the table: {shown}")

    n_titles = _title_lines(rows, width)
    titles = [_line_text(row, delim) for row in rows[:n_titles]]
    rows, lines = rows[n_titles:], lines[n_titles:]
    title = " — ".join(titles) or None
    if titles:
        shown = " / ".join(titles)
        notes.append(f"read the line{'s' * (len(titles) != 1)} above the column names as the title: “{shown[:120]}”")

    header = [cell.strip() for cell in rows[0]]
    if _filled(header) >= 1 and not _looks_like_data(header) and len(rows) > 1:
        repeated = {tuple(_trimmed(header))} | {(t,) for t in titles}
        kept = [(row, line) for i, (row, line) in enumerate(zip(rows, lines))
                if i == 0 or tuple(_trimmed(row)) not in repeated and _line_text(row, delim) not in titles]
        kept_lines = {ln for _, ln in kept}
        dropped = [line for line in lines if line not in kept_lines]
        if dropped:
            rows, lines = [r for r, _ in kept], [ln for _, ln in kept]
            notes.append(f"dropped {len(dropped)} repeated header or title line{'s' * (len(dropped) != 1)} "
                         f"({_which(dropped)}): the column names or the title again further down, as in joined "
                         "exports or long tables")

    footers: list[str] = []
    while len(rows) > 2 and len(footers) < MAX_FOOTER_LINES and _is_footer(rows[-1], rows[-2], width):
        footers.insert(0, _line_text(rows[-1], delim))
        rows, lines = rows[:-1], lines[:-1]
    if footers:
        notes.append(f"read the line{'s' * (len(footers) != 1)} under the table as a note, not a row: "
                     + "; ".join(f"“{f[:160]}”" for f in footers))
    return rows, lines, title, notes


def _trimmed(row: list[str]) -> list[str]:
    cells = [cell.strip() for cell in row]
    while cells and not cells[-1]:
        cells.pop()
    return cells


def _other_delimiter_notes(grid: list[list[str]], lines: list[int], delim: str) -> list[str]:
    """Rows that seem to use another delimiter than the rest: said, so the reader can fix the file."""
    if len(grid) < 2:
        return []
    width = Counter(len(r) for r in grid if r).most_common(1)[0][0]
    if width < 2:
        return []
    odd = []
    for i, row in zip(lines, grid):
        if len(row) < width:
            joined = delim.join(row)
            other = next((d for d in (";", ",", "\t", "|") if d != delim and joined.count(d) >= width - len(row)), None)
            if other:
                odd.append((i, other))
    if not odd:
        return []
    other = Counter(d for _, d in odd).most_common(1)[0][0]
    lines = ", ".join(str(i) for i, _ in odd[:5]) + (" …" if len(odd) > 5 else "")
    return [f"{len(odd)} row{'s' * (len(odd) != 1)} (line {lines}) seem to use {_shown(other)} "
            f"instead of {_shown(delim)}; their values were left in one cell — check the file"]
