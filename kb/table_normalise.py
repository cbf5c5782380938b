"""One normaliser for every format: a raw grid of cells in, a :class:`Table` out.

It fixes what real files get wrong (a missing header, blank rows and columns, duplicate or multi-row
headers, ragged rows) and writes down in ``Table.notes`` what it fixed, so the user sees it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from typing import Any

from kb.errors import TableError
from kb.instructions import instructing_cells
from kb.table_model import NOT_COMPUTED, Table, _is_year, parse_number
from kb.table_numbers import NumberMarks, convert_decimal_commas, read_numbers


def _limits(settings: Any) -> tuple[int, int]:
    if settings is None:
        return 200_000, 200
    return int(settings.table_max_rows), int(settings.table_max_cols)


# Terminal escape sequences and other control characters: in a cell they could recolour or rewrite a
# terminal that prints it, and they mean nothing in a table.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_TAG = re.compile(r"<[^>]{0,200}>")
MAX_TITLE_CHARS = 200


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float):
        # Excel's 15 significant digits: a saved 0.7284999999999999 is the 0.7285 the sheet shows.
        return format(value, ".15g")
    if isinstance(value, dt.datetime):
        # A spreadsheet's date is a datetime at midnight: "2021-11-03", not "2021-11-03 00:00:00" (found as a new
        # user; the dates then read as text, with no order for "reported most recently").
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ", timespec="minutes")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return " ".join(_CONTROL.sub("", _ANSI.sub("", str(value))).split())


def clean_title(title: str | None, fallback: str) -> str:
    """One line of plain text: a title goes into prompts, so no newlines, markup or control characters."""
    text = " ".join(_CONTROL.sub(" ", _TAG.sub(" ", _ANSI.sub("", title or ""))).split())
    if len(text) > MAX_TITLE_CHARS:
        text = text[:MAX_TITLE_CHARS - 1].rstrip() + "…"
    return text or fallback


def _looks_like_data(row: list[str]) -> bool:
    """A first row that reads as data (numbers) rather than column names."""
    values = [v for v in row if v.strip()]
    if not values:
        return False
    numbers = [parse_number(v) for v in values]
    numeric = [x for x in numbers if x is not None]
    # Years as headers ("Country, 2007, 2008") are names, not data.
    return len(numeric) >= len(values) / 2 and not all(_is_year(x) for x in numeric)


def _filled(row: list[str]) -> int:
    return sum(1 for v in row if v.strip())


def _numeric_columns(body: list[list[str]], width: int) -> set[int]:
    out = set()
    for c in range(width):
        values = [row[c] for row in body if row[c].strip()]
        if values and sum(parse_number(v) is not None for v in values) >= 0.6 * len(values):
            out.add(c)
    return out


def _second_header_row(grid: list[list[str]]) -> bool:
    """Whether row 1 continues the header in row 0 (e.g. "LR" spanning "P R F1")."""
    if len(grid) < 3:
        return False
    top, second, body = grid[0], grid[1], grid[2:]
    numeric_cols = _numeric_columns(body, len(top))
    if not numeric_cols:
        return False
    if any(parse_number(second[c]) is not None for c in numeric_cols):
        return False
    if not any(second[c].strip() for c in numeric_cols):
        return False
    filled = [v for v in top if v.strip()]
    spans = len(filled) < len(top) or len(set(filled)) < len(filled)
    return spans


# Units written in a row of their own under the column names ("", "mg", "%"). Only these words count: a data row of
# short codes ("A", "yes") must stay a row.
_UNIT_WORDS = {
    "%", "‰", "pct", "percent", "mg", "g", "kg", "t", "µg", "μg", "ug", "mcg", "ng", "l", "ml", "dl", "µl", "cl",
    "mol", "mmol", "µmol", "nmol", "m", "cm", "mm", "km", "µm", "nm", "m2", "m²", "km2", "km²", "ha", "m3", "m³",
    "s", "sec", "min", "h", "hr", "hrs", "hours", "day", "days", "wk", "weeks", "mo", "months", "yr",
    "yrs", "years", "°c", "°f", "°", "k", "kcal", "kj", "w", "kw", "mw", "gw", "kwh", "mwh", "gwh", "twh", "v",
    "kv", "ma", "hz", "khz", "mhz", "pa", "kpa", "hpa", "mmhg", "bar", "mbar", "eur", "usd", "gbp", "chf",
    "jpy", "€", "$", "£", "¥", "bn", "mn", "mio", "mrd", "million", "millions", "billion", "billions", "thousand",
    "thousands", "k€", "m€", "n", "no.", "count", "persons", "people", "cases", "deaths", "iu", "mg/dl",
    "kg/m²", "kg/m2", "bpm", "db", "ppm", "ppb", "fold",
}
_UNIT_FRAME = re.compile(r"^[(\[]\s*(?P<inner>[^()\[\]]{1,24})\s*[)\]]$")
_LABEL_WORDS = {"unit", "units", "einheit", "unité", "unidad", "unità"}


def _unit_text(cell: str) -> str:
    """ "[°C]" -> "°C", "(mg)" -> "mg", "mg" -> "mg"."""
    text = cell.strip()
    framed = _UNIT_FRAME.match(text)
    return framed.group("inner").strip() if framed else text


def _is_unit(cell: str) -> bool:
    text = cell.strip()
    if not text or len(text) > 26 or parse_number(text) is not None:
        return False
    if _UNIT_FRAME.match(text):
        return True  # "(mg)", "[°C]": written as a unit
    parts = re.split(r"\s*(?:/|·|\bper\b)\s*", text.lower())
    return all(p in _UNIT_WORDS or re.fullmatch(r"10\^?\d+|1000|100,?000", p) for p in parts if p) and any(parts)


def _units_row(row: list[str], body: list[list[str]]) -> bool:
    """Whether ``row``, under the column names, gives their units: every filled cell a unit, at least one over a
    column of numbers, and the row-naming cells empty (or "Unit")."""
    filled = [c for c, v in enumerate(row) if v.strip()]
    labels = {c for c in filled if row[c].strip().lower() in _LABEL_WORDS}
    with_units = [c for c in filled if c not in labels]
    if not with_units or not all(_is_unit(row[c]) for c in with_units):
        return False
    if not body:  # a header and its units only: the units must be unmistakable
        return not row[0].strip()
    numeric = _numeric_columns(body[:UNITS_SAMPLE_ROWS], len(row))
    if labels & numeric:
        return False
    return any(c in numeric for c in with_units) and all(c in numeric or _UNIT_FRAME.match(row[c].strip())
                                                         for c in with_units)


UNITS_SAMPLE_ROWS = 200  # enough rows to tell a column of numbers


def merge_header_rows(rows: list[list[str]]) -> list[str]:
    """Several header rows -> one name per column: the distinct texts from top to bottom, joined
    ("Location …" spanning "SNF" -> "Location … SNF"); a rowspan's repeated text is said once."""
    width = max((len(r) for r in rows), default=0)
    names = []
    for c in range(width):
        parts: list[str] = []
        for r in rows:
            v = r[c].strip() if c < len(r) else ""
            if v and v not in parts:
                parts.append(v)
        names.append(" ".join(parts))
    return names


def table_from_grid(grid: list[list[Any]], *, name: str, header: list[Any] | None = None,
                    title: str | None = None, source: str = "", settings: Any = None,
                    notes: list[str] | None = None, sheet: str | None = None,
                    sheet_names: list[str] | None = None, detect_header: bool = True,
                    numbers: NumberMarks | None = None) -> Table:
    """Normalise a raw grid (and an optional explicit header) into a :class:`Table`.

    With ``header=None`` the first row is the header unless it looks like data (then names
    ``Column 1``… are generated); a second header row spanning the first is merged, and a row of units under
    it ("", "mg", "%") is attached to the names ("Dose (mg)").

    ``numbers`` reads numbers in any common notation with those marks (:func:`kb.table_numbers.read_numbers`,
    for uploaded text tables); without it, the older decimal-comma rule applies (benchmarks, documents).
    """
    notes = list(notes or [])
    max_rows, max_cols = _limits(settings)
    rows = [[_cell_text(v) for v in row] for row in grid]
    head = [_cell_text(v) for v in header] if header is not None else None

    # Ragged rows: pad to the widest row (and header) so every cell has a column.
    width = max([len(r) for r in rows] + [len(head) if head else 0] + [0])
    rows = [r + [""] * (width - len(r)) for r in rows]
    # Said once the rows are known: a blank row or a title line padded here is dropped below, and is no short row
    # of the table (found as a new user: "padded 2 short rows" for an XLSX's title line and the blank row under it).
    short = [len(r) != width for r in grid]  # kept in step with ``rows`` until the note is written
    if head is not None:
        head = head + [""] * (width - len(head))

    # Blank rows and columns carry nothing and only confuse coordinates.
    kept = [r for r in rows if any(v.strip() for v in r)]
    short = [flag for r, flag in zip(rows, short) if any(v.strip() for v in r)]
    if len(kept) < len(rows):
        dropped = len(rows) - len(kept)
        notes.append(f"dropped {dropped} blank row{'s' * (dropped != 1)}")
    rows = kept
    # Before the header is chosen: a first row of "891,1"-style numbers is data, which only the converted form shows.
    decimal = None
    if numbers is not None:
        read = read_numbers(rows, numbers)
        rows, decimal = read.rows, read.decimal
        notes += read.notes
    else:
        rows, converted = convert_decimal_commas(rows)
        if converted:
            notes.append(f"read {converted} number{'s' * (converted != 1)} written with decimal commas (891,1 as "
                         "891.1, 3.645.000 as 3,645,000); cells show them in that form")
    if head is None and not rows:
        raise TableError("The table is empty: no cells with content were found.")

    if head is None and detect_header:
        # A spreadsheet's title line above the column names ("Hospital antibiotic use, Q1-Q2 2025" in A1, then a
        # blank row): one filled cell over a wider row. Found as a new user with an XLSX: it was merged into every
        # column name ("Hospital antibiotic use, Q1-Q2 2025 Beds"), so no question's words matched a header.
        while len(rows) >= 2 and width >= 3 and _filled(rows[0]) == 1 and _filled(rows[1]) >= 3 \
                and rows[0][0].strip():
            line = rows.pop(0)[0].strip()
            short.pop(0)
            title = title if title and title != name else line
            notes.append(f"read the line above the column names as the title: “{clean_title(line, '')[:80]}”")
    ragged = sum(short)
    if ragged:
        notes.append(f"padded {ragged} short row{'s' * (ragged != 1)} with empty cells")
    if head is None:
        if detect_header and _looks_like_data(rows[0]):
            head = [""] * width
            notes.append("the first row looks like data, so column names were generated (Column 1, Column 2, …)")
        else:
            head, rows = rows[0], rows[1:]
            if detect_header and _second_header_row([head] + rows):
                spanned, last = [], ""
                for v in head:  # a spanning top cell names every column under it
                    last = v or last
                    spanned.append(last)
                head = merge_header_rows([spanned, rows[0]])  # "Year" over "Year" stays "Year"
                rows = rows[1:]
                notes.append("merged a two-row header into one row of column names")
            elif detect_header and rows and _units_row(rows[0], rows[1:]):
                units = rows.pop(0)
                units = ["" if u.strip().lower() in _LABEL_WORDS else u for u in units]
                head = [f"{h} ({_unit_text(u)})" if u.strip() and h.strip() else h or _unit_text(u)
                        for h, u in zip(head, units)]
                named = [h for h, u in zip(head, units) if u.strip()]
                notes.append("read the row under the column names as their units: " + ", ".join(named))

    keep_cols = [c for c in range(width) if head[c].strip() or any(r[c].strip() for r in rows)]
    if len(keep_cols) < width:
        dropped = width - len(keep_cols)
        notes.append(f"dropped {dropped} blank column{'s' * (dropped != 1)}")
        head = [head[c] for c in keep_cols]
        rows = [[r[c] for c in keep_cols] for r in rows]
    if not head:
        raise TableError("The table is empty: no cells with content were found.")
    if len(head) > max_cols:
        raise TableError(f"The table has {len(head)} columns; the limit is {max_cols} "
                         "(EVIDENTIA_TABLE_MAX_COLS).")
    if len(rows) > max_rows:
        raise TableError(f"The table has {len(rows):,} rows; the limit is {max_rows:,} "
                         "(EVIDENTIA_TABLE_MAX_ROWS).")

    generated = [i for i, h in enumerate(head) if not h.strip()]
    for i in generated:
        head[i] = f"Column {i + 1}"
    if generated and not any("generated" in n for n in notes):
        notes.append(f"generated names for {len(generated)} unnamed column{'s' * (len(generated) != 1)}")
    seen: Counter = Counter(h.lower() for h in head)
    if any(n > 1 for n in seen.values()):
        counts: Counter = Counter()
        renamed = []
        for i, h in enumerate(head):
            if seen[h.lower()] > 1:
                counts[h.lower()] += 1
                if counts[h.lower()] > 1:
                    head[i] = f"{h} ({counts[h.lower()]})"
                    renamed.append(head[i])
        notes.append("renamed duplicate column names: " + ", ".join(renamed))

    rows, marked = _mark_formula_text(rows)
    if marked:
        notes.append(f"{marked} cell{'s' * (marked != 1)} hold{'s' * (marked == 1)} formula text, shown marked "
                     "'not computed' (formulas are never run)")
    instructing = instructing_cells(rows)
    if instructing:  # kept as data (programs compare them like any cell); the person uploading should know
        where = ", ".join(f"R{r}C{c}" for r, c in instructing[:3]) + (" …" if len(instructing) > 3 else "")
        notes.append(f"{len(instructing)} cell{'s' * (len(instructing) != 1)} ({where}) "
                     f"{'are' if len(instructing) != 1 else 'is'} written as instructions to an AI system; "
                     "read as data only, never followed")
    return Table(name=name, title=clean_title(title, name), columns=head, rows=rows, notes=notes,
                 source=source, sheet=sheet, sheet_names=sheet_names or [], decimal=decimal)


# Text a spreadsheet would run: "=1000+2000", "=HYPERLINK(…)", and "+cmd|' /C calc'!A0" or "@SUM(1+1)" (the other
# characters that open a formula, when what follows is no number and calls or references something).
_FORMULA_TEXT = re.compile(r"^=.|^[+@-](?=.*[(|!])")


def _mark_formula_text(rows: list[list[str]]) -> tuple[list[list[str]], int]:
    """Formula-looking text in a CSV, JSON or HTML cell, marked as XLSX formulas without a saved value are.

    Found as a new user: a JSON cell "=1000+2000" was the answer to "How many nurses work in Central?", shown
    bare; marked, the reply says the table holds a formula that was not computed, and the cell cannot be pasted
    into a spreadsheet as a live formula.
    """
    marked = 0
    out = []
    for row in rows:
        new = []
        for cell in row:
            if _FORMULA_TEXT.match(cell) and parse_number(cell) is None and not cell.endswith(NOT_COMPUTED):
                cell += NOT_COMPUTED
                marked += 1
            new.append(cell)
        out.append(new)
    return out, marked

