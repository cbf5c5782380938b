"""Format readers: bytes or text in, a raw grid (plus header, caption and notes) out.

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
import unicodedata
import zipfile
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

from kb.errors import TableError
from kb.table_model import NOT_COMPUTED

FORMATS = ("csv", "tsv", "xlsx", "json", "markdown", "html")
_SUFFIX_FORMAT = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "csv", ".xlsx": "xlsx", ".xlsm": "xlsx",
                  ".json": "json", ".md": "markdown", ".markdown": "markdown", ".html": "html", ".htm": "html"}


# Single-byte encodings of Latin-script text are confused with each other by charset detection, more so
# on small files: the same bytes read "São Paulo" in Latin-1 and "Săo Paulo" in cp1250, and a cp1252 "€3"
# came back as cp775's "Ć3". So the Latin readings are compared by what real text does not contain.
_LATIN_CANDIDATES = ("cp1252", "cp1250")


def _utf16_without_bom(data: bytes) -> str | None:
    """UTF-16 text without a byte-order mark: every other byte of ASCII text is NUL."""
    sample = data[:4096]
    if len(sample) < 4 or len(sample) % 2:
        return None
    even, odd = sample[0::2], sample[1::2]
    for zeros, other, codec in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
        if zeros.count(0) >= 0.9 * len(zeros) and other.count(0) <= 0.05 * len(other):
            return codec
    return None


def _implausible(text: str) -> int:
    """Signs that a Latin decoding is wrong: a symbol glued to a letter ("£ód"), a capital inside a
    lowercase word ("odŸ"), control characters."""
    events = 0
    for i, ch in enumerate(text):
        if ord(ch) <= 127:
            continue
        cat = unicodedata.category(ch)
        prev = text[i - 1] if i else " "
        nxt = text[i + 1] if i + 1 < len(text) else " "
        if cat[0] == "S" and (prev.isalpha() or nxt.isalpha()):
            events += 1
        elif cat == "Lu" and prev.isalpha() and prev.islower():
            events += 1
        elif cat == "Cc":
            events += 2
    return events


def _latin_reading(data: bytes, guess: str) -> str:
    """Among the guess and the common Latin code pages, the reading with the fewest implausible signs."""
    try:
        guessed = data.decode(guess)
    except (UnicodeDecodeError, LookupError):
        guessed = None
    if guessed is not None:
        letters = [ch for ch in guessed if ord(ch) > 127 and ch.isalpha()]
        latin = sum(unicodedata.name(ch, "").startswith("LATIN") for ch in letters)
        if letters and latin < len(letters) / 2:
            return guess  # a Cyrillic, Greek… reading: not a Latin code page question
    scored = []
    for rank, enc in enumerate(_LATIN_CANDIDATES + (guess,)):
        try:
            scored.append((_implausible(data[:200_000].decode(enc)), rank, enc))
        except (UnicodeDecodeError, LookupError):
            continue
    return min(scored)[2] if scored else guess


def _decode(data: bytes) -> tuple[str, str | None]:
    """Text and the detected encoding (``None`` when it was plain UTF-8)."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", "replace"), None
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace"), "utf-16"
    codec = _utf16_without_bom(data)
    if codec:
        return data.decode(codec, "replace"), codec
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data[:1_000_000]).best()
    if best is None or best.encoding is None:
        raise TableError("The file is not text in any encoding I recognise; is it really a table?")
    encoding = _latin_reading(data, best.encoding)
    try:
        return data.decode(encoding), encoding
    except (UnicodeDecodeError, LookupError) as exc:
        raise TableError(f"The file could not be decoded as {encoding}.") from exc


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


def _read_csv(text: str, delimiter: str | None, max_rows: int) -> tuple[list[list[str]], list[str]]:
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
    grid = []
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
    try:
        for row in reader:
            grid.append(row)
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


# A workbook is a zip of XML: its size on disk says little about what it expands to. These bound the
# expansion before openpyxl reads a byte of it (a 63 KB file held a 60,000,000-character cell; a 4 MB
# one expanded to 1.2 GB of sheet XML).
XLSX_MAX_RATIO = 100  # real sheet XML compresses 5-20x; a member over this is a bomb
XLSX_RATIO_MIN_BYTES = 1024 * 1024  # tiny members may compress absurdly well (runs of spaces)
_XLSX_READ_ERRORS = (zipfile.BadZipFile, zipfile.LargeZipFile, KeyError, OSError, ValueError, SyntaxError,
                     IndexError, TypeError, AttributeError, EOFError, zlib.error)


def check_xlsx_expansion(data: bytes, max_expanded: int) -> None:
    """Refuse a workbook whose members would expand past ``max_expanded`` bytes or by a bomb's ratio."""
    try:
        members = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise TableError("The file is not a readable .xlsx workbook (old .xls files: save as .xlsx or CSV).") \
            from exc
    total = sum(m.file_size for m in members)
    if total > max_expanded:
        raise TableError(f"The workbook expands to {total / 1024**2:,.0f} MB of data; the limit is "
                         f"{max_expanded / 1024**2:,.0f} MB (10 x EVIDENTIA_TABLE_MAX_BYTES). Save the sheet you "
                         "need as its own file or as CSV.")
    for m in members:
        if m.file_size > XLSX_RATIO_MIN_BYTES and m.file_size > XLSX_MAX_RATIO * max(m.compress_size, 1):
            raise TableError(f"The workbook part {m.filename} expands {m.file_size // max(m.compress_size, 1):,}-fold "
                             "when unpacked, which real spreadsheets never do; it was not read.")


def _xlsx_damaged(exc: Exception) -> TableError:
    if isinstance(exc, ValueError) and "digits" in str(exc):
        return TableError("The workbook has a number with more than 4,300 digits, which cannot be read as a "
                          "number; store it as text.")
    return TableError("The workbook is damaged and could not be read (a part of it is missing or not valid XML). "
                      "Open and save it again in a spreadsheet program, or export the sheet as CSV.")


def _open_workbooks(data: bytes):
    from openpyxl import load_workbook

    try:
        values_wb = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
        # Formulas are not in the values workbook: a second, equally bounded read tells which cells had one.
        formulas_wb = load_workbook(io.BytesIO(data), read_only=True, data_only=False)
    except _XLSX_READ_ERRORS as exc:
        if isinstance(exc, (zipfile.BadZipFile, OSError)):
            raise TableError("The file is not a readable .xlsx workbook (old .xls files: save as .xlsx or CSV).") \
                from exc
        raise _xlsx_damaged(exc) from exc
    return values_wb, formulas_wb


def _pick_sheet(names: list[str], sheet: str | int | None) -> str:
    if sheet is None:
        return names[0]
    if isinstance(sheet, int) or (isinstance(sheet, str) and sheet.isdigit() and sheet not in names):
        idx = int(sheet)
        if not 0 <= idx < len(names):
            raise TableError(f"The workbook has {len(names)} sheets ({', '.join(names)}); there is no sheet {idx}.")
        return names[idx]
    if sheet in names:
        return sheet
    raise TableError(f"The workbook has no sheet {sheet!r}; its sheets are: {', '.join(names)}.")


def _sheet_grid(values_ws, formulas_ws, name: str, max_rows: int, max_cols: int):
    """The sheet's non-blank rows (formulas never run) and how many formula cells had cached values or not."""
    # A declared <dimension> (even A1:XFD1048576) would make openpyxl pad every row to it; read only the
    # cells that are there instead.
    values_ws.reset_dimensions()
    formulas_ws.reset_dimensions()
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
        if not row:
            continue  # a blank row (the normaliser would drop it); it must not count against the row limit
        if len(row) > max_cols:
            raise TableError(f"Sheet {name!r} has more than {max_cols} columns; the limit is {max_cols} "
                             "(EVIDENTIA_TABLE_MAX_COLS).")
        grid.append(row)
        if len(grid) > max_rows + 10:
            raise TableError(f"Sheet {name!r} has more than {max_rows:,} rows; the limit is {max_rows:,} "
                             "(EVIDENTIA_TABLE_MAX_ROWS).")
    return grid, cached, uncomputed


def _read_xlsx(data: bytes, sheet: str | int | None, max_rows: int, max_cols: int, max_expanded: int):
    check_xlsx_expansion(data, max_expanded)
    values_wb, formulas_wb = _open_workbooks(data)
    try:
        names = values_wb.sheetnames
        if not names:
            raise TableError("The workbook has no sheets.")
        chosen = _pick_sheet(names, sheet)
        notes = []
        try:
            grid, cached, uncomputed = _sheet_grid(values_wb[chosen], formulas_wb[chosen], chosen, max_rows, max_cols)
            if sheet is None and not grid:
                # An empty first sheet (a cover page left blank): read the first sheet that has cells.
                for other in names[1:]:
                    grid, cached, uncomputed = _sheet_grid(values_wb[other], formulas_wb[other], other, max_rows,
                                                           max_cols)
                    if grid:
                        notes.append(f"sheet {chosen!r} is empty, so sheet {other!r} was read")
                        chosen = other
                        break
        except TableError:
            raise
        except _XLSX_READ_ERRORS as exc:
            raise _xlsx_damaged(exc) from exc
    finally:
        values_wb.close()
        formulas_wb.close()
    if not grid:
        others = [n for n in names if n != chosen]
        raise TableError(f"Sheet {chosen!r} is empty" + (f"; the workbook's other sheets ({', '.join(others)}) are "
                                                          "empty too." if others and sheet is None else
                                                          f"; its other sheets are: {', '.join(others)}." if others
                                                          else "."))
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
