"""CSV and TSV: text in, a raw grid out, with the delimiter sniffed and every assumption noted."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter

from kb.errors import TableError
from kb.table_limits import too_many_cells


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


# Cells up to this size load (prompts clip them); a larger one is almost always a broken quote.
MAX_CELL_CHARS = 1_000_000
_SEP_HINT = re.compile(r"^sep=(.)\r?$")


def _read_csv(text: str, delimiter: str | None, max_rows: int,
              max_cells: int | None = None) -> tuple[list[list[str]], list[str]]:
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
        notes.append(f"detected the delimiter {'TAB' if delim == chr(9) else repr(delim)}")
    csv.field_size_limit(MAX_CELL_CHARS)
    grid, n_cells = [], 0
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
    try:
        for row in reader:
            grid.append(row)
            n_cells += len(row)
            if max_cells is not None and n_cells > max_cells:
                raise too_many_cells(max_cells)
            if len(grid) > max_rows + 10:  # + header rows and blank lines
                raise TableError(f"The table has more than {max_rows:,} rows; the limit is {max_rows:,} "
                                 "(EVIDENTIA_TABLE_MAX_ROWS).")
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise TableError(f"A cell near line {reader.line_num} is larger than {MAX_CELL_CHARS:,} characters; "
                             "split it or check for a quote that is never closed.") from exc
        raise TableError(f"The CSV file is malformed near line {reader.line_num}: {exc}. "
                         "Check for an unclosed quote or a stray quote character.") from exc
    notes += _other_delimiter_notes(grid, delim)
    return grid, notes


def _other_delimiter_notes(grid: list[list[str]], delim: str) -> list[str]:
    """Rows that seem to use another delimiter than the rest: said, so the reader can fix the file."""
    if len(grid) < 2:
        return []
    width = Counter(len(r) for r in grid if r).most_common(1)[0][0]
    if width < 2:
        return []
    odd = []
    for i, row in enumerate(grid, start=1):
        if len(row) < width:
            joined = delim.join(row)
            other = next((d for d in (";", ",", "\t", "|") if d != delim and joined.count(d) >= width - len(row)), None)
            if other:
                odd.append((i, other))
    if not odd:
        return []
    other = Counter(d for _, d in odd).most_common(1)[0][0]
    lines = ", ".join(str(i) for i, _ in odd[:5]) + (" …" if len(odd) > 5 else "")
    return [f"{len(odd)} row{'s' * (len(odd) != 1)} (line {lines}) seem to use {'TAB' if other == chr(9) else repr(other)} "
            f"instead of {'TAB' if delim == chr(9) else repr(delim)}; their values were left in one cell — check the file"]
