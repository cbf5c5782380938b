"""Format readers: bytes or text in, a raw grid (plus header, caption and notes) out.

Spreadsheet formulas are never executed: openpyxl reads the value Excel cached when it last
saved the file (``data_only=True``); a formula without a cached value is shown as its text,
marked as not computed.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from kb.errors import TableError
from kb.table_model import NOT_COMPUTED

FORMATS = ("csv", "tsv", "xlsx", "json", "markdown", "html")
_SUFFIX_FORMAT = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "csv", ".xlsx": "xlsx", ".xlsm": "xlsx",
                  ".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


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
