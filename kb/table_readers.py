"""Text format readers (CSV/TSV, Markdown, JSON) and format detection: text in, a raw grid out.

Workbooks are read by ``kb.table_xlsx``, HTML by ``kb.table_html``, and bytes become text in
``kb.text_decoding``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import Counter
from pathlib import Path
from typing import Any

from kb.errors import TableError
from kb.table_limits import too_many_cells

FORMATS = ("csv", "tsv", "xlsx", "json", "markdown", "html")
_SUFFIX_FORMAT = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "csv", ".xlsx": "xlsx", ".xlsm": "xlsx",
                  ".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


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


def _json_float(text: str) -> float | str:
    value = float(text)
    return value if math.isfinite(value) else text  # "1e309" stays as written, not "inf"


def _json_int(text: str) -> int | str:
    return int(text) if len(text) <= 4000 else text  # past Python's int-digit limit: keep the digits


def _read_json(text: str) -> tuple[list[list[Any]], list[str] | None, str | None]:
    try:
        obj = json.loads(text, parse_float=_json_float, parse_int=_json_int)
    except json.JSONDecodeError as exc:
        raise TableError(f"The JSON file is not valid JSON ({exc.msg} at line {exc.lineno}).") from exc
    except RecursionError as exc:
        raise TableError("The JSON is nested too deeply to be a table (thousands of levels).") from exc
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
        if values and all(isinstance(v, list) and not any(isinstance(x, dict) for x in v) for v in values):
            # columns: {"Year": [...], ...} (lists of records are not columns: below)
            length = max(len(v) for v in values)
            grid = [[v[i] if i < len(v) else "" for v in values] for i in range(length)]
            return grid, list(obj.keys()), None
        if values and all(isinstance(v, dict) for v in values):  # index orient: {row: {col: v}}
            grid, cols = _records([{"": k, **v} for k, v in obj.items()])
            return grid, cols, None
        # {"study": "REACH-2", "sites": [{…}, …]}: the one list of records is the table, the rest its caption.
        # Found as a new user: an export shaped like this was refused.
        lists = [(k, v) for k, v in obj.items() if isinstance(v, list) and v and all(isinstance(r, dict) for r in v)]
        if len(lists) == 1:
            key, records = lists[0]
            context = [f"{k}: {v}" for k, v in obj.items() if isinstance(v, (str, int, float)) and k != key][:3]
            grid, names = _records(records)
            return grid, names, caption or (f"{key} ({'; '.join(context)})" if context else str(key))
        if values and all(isinstance(v, (str, int, float, bool)) or v is None for v in values):
            # One record, {"Title": …, "Author": …, "Pages": …}: one row under its fields' names. Found as a new
            # user: a book's record exported as one object was refused.
            return [["" if v is None else v for v in values]], list(obj.keys()), caption
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


_NESTED_DEPTH = 3  # levels of nested objects spread into columns; deeper ones stay as written


def _flat(record: dict, prefix: str = "", depth: int = 0) -> dict:
    """A record with its nested objects spread into columns: {"pi": {"name": "Dr Shah"}} -> {"pi name": "Dr Shah"}.
    (pandas.json_normalize does this too, but turns a column's integers into floats wherever a record lacks it.)"""
    out: dict = {}
    for k, v in record.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and v and depth < _NESTED_DEPTH:
            out.update(_flat(v, f"{name} ", depth + 1))
        else:
            out[name] = v
    return out


def _records(records: list[dict]) -> tuple[list[list[Any]], list[str]]:
    records = [_flat(r) for r in records]
    cols: dict[str, None] = {}
    for rec in records:
        for k in rec:
            cols.setdefault(str(k), None)
    names = list(cols)
    return [[rec.get(k, "") for k in names] for rec in records], names


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
