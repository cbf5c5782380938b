"""XLSX workbooks to a raw grid, with their expansion bounded before openpyxl reads them.

Spreadsheet formulas are never executed: openpyxl reads the value Excel cached when it last
saved the file (``data_only=True``); a formula without a cached value is shown as its text,
marked as not computed.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from dataclasses import dataclass, field

from kb.errors import TableError
from kb.table_limits import TableLimits, too_many_cells
from kb.table_model import NOT_COMPUTED


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


def _open_workbook(data: bytes):
    """The workbook, opened once in read-only mode (sheets are streamed later, never held whole)."""
    from openpyxl.reader.excel import ExcelReader

    class ChartTolerantReader(ExcelReader):
        def read_chartsheet(self, sheet, rel):
            # openpyxl 3.1 adds the chart sheet, then fails on one without a drawing part ("'list' object has no
            # attribute 'find'"): the workbook is valid (held-out upload, #79), and a chart sheet is skipped anyway.
            try:
                super().read_chartsheet(sheet, rel)
            except AttributeError as exc:
                if "find" not in str(exc):
                    raise

    try:
        reader = ChartTolerantReader(io.BytesIO(data), read_only=True, data_only=True)
        reader.read()
        return reader.wb
    except _XLSX_READ_ERRORS as exc:
        if isinstance(exc, (zipfile.BadZipFile, OSError)):
            raise TableError("The file is not a readable .xlsx workbook (old .xls files: save as .xlsx or CSV).") \
                from exc
        raise _xlsx_damaged(exc) from exc


def _cells_parser(wb, ws):
    """A streaming parser of ``ws``'s XML that yields each row's cells as they are written in the file, each with
    the value Excel cached AND the formula text, if any: one pass, where openpyxl alone gives one or the other.

    openpyxl's own row iteration pads every row to the widest cell (a row holding only an empty ``XFD`` cell
    became 16,384 Nones, and 2,000 such rows took 10 s from a 14 KB file), so the rows are placed here instead,
    after the column limit is checked. This uses openpyxl's sheet parser, the one its read-only sheets use.
    """
    from openpyxl.worksheet._reader import FORMULA_TAG, WorkSheetParser

    class ValueAndFormulaParser(WorkSheetParser):
        hidden_rows: list[int]

        def parse_cell(self, element):
            cell = super().parse_cell(element)  # data_only: the cached value, the formula not run
            formula = element.find(FORMULA_TAG)
            cell["formula"] = None if formula is None else "=" + (formula.text or "?")
            return cell

        def parse_row(self, row):
            index, cells = super().parse_row(row)
            if row.get("hidden") in ("1", "true"):  # hidden by hand or by a filter: said in the notes
                self.hidden_rows.append(index)
            self.row_dimensions.clear()  # not used here; a sheet styling every row would keep them all
            return index, cells

    source = ws._get_source()
    parser = ValueAndFormulaParser(source, ws._shared_strings, data_only=True, epoch=wb.epoch,
                                   date_formats=wb._date_formats, timedelta_formats=wb._timedelta_formats)
    parser.hidden_rows = []
    return source, parser


def _hidden_columns(parser) -> set[int]:
    """The 1-based columns the sheet's ``<cols>`` marks hidden (read before its rows, so known by the end)."""
    hidden: set[int] = set()
    for attrs in parser.column_dimensions.values():
        if attrs.get("hidden") in ("1", "true"):
            try:
                first, last = int(attrs.get("min", 0)), int(attrs.get("max", attrs.get("min", 0)))
            except ValueError:
                continue
            hidden.update(range(max(first, 1), min(last, 16_384) + 1))
    return hidden


def _number_format(wb, style_id: int) -> str:
    """The number format of the cell style ``style_id`` ("General" when the file names none)."""
    from openpyxl.styles.numbers import BUILTIN_FORMATS

    try:
        fmt_id = wb._cell_styles[style_id].numFmtId
    except (IndexError, AttributeError, TypeError):
        return "General"
    if fmt_id in BUILTIN_FORMATS:
        return BUILTIN_FORMATS[fmt_id]
    try:
        return wb._number_formats[fmt_id - 164]  # custom formats are numbered from 164
    except IndexError:
        return "General"


def _is_percent_format(fmt: str) -> bool:
    """Whether a number format shows its value as a percentage ("0.0%"; not a "%" inside quotes)."""
    positive = fmt.split(";", 1)[0]
    return "%" in re.sub(r'"[^"]*"|\\.', "", positive)


def _as_percent(value: float, fmt: str) -> str:
    """0.7285 under the format "0.0%" as the sheet shows it: "72.8%", the figure its reader sees and quotes.

    Found as a new user: a Coverage column formatted "0.0%" was read as 0.7285, and "above 80%" compared 80
    with it."""
    decimals = re.search(r"\.(0+)", fmt.split(";", 1)[0])
    return f"{value * 100:.{len(decimals.group(1)) if decimals else 0}f}%"


def _pick_sheet(names: list[str], sheet: str | int | None, charts: list[str]) -> str:
    """The sheet ``sheet`` names (a name, or a 0-based number among the sheets that hold cells)."""
    if isinstance(sheet, int) or (isinstance(sheet, str) and sheet.isdigit() and sheet not in names):
        idx = int(sheet)
        if not 0 <= idx < len(names):
            raise TableError(f"The workbook has {len(names)} sheets ({', '.join(names)}); there is no sheet {idx}.")
        return names[idx]
    if sheet in names:
        return sheet
    if sheet in charts:
        raise TableError(f"Sheet {sheet!r} is a chart, not a table; the workbook's sheets with cells are: "
                         f"{', '.join(names)}.")
    raise TableError(f"The workbook has no sheet {sheet!r}; its sheets are: {', '.join(names)}.")


@dataclass
class SheetRead:
    """One sheet's non-blank rows, and what the notes must say about how they were read."""

    grid: list[list]
    cached: int = 0  # formula cells read as the value last saved
    uncomputed: int = 0  # formula cells with no saved value
    hidden_rows: list[int] = field(default_factory=list)  # sheet row numbers (1-based) hidden, with cells
    hidden_cols: list[int] = field(default_factory=list)  # sheet columns (1-based) hidden, with cells


@dataclass
class WorkbookRead:
    grid: list[list]
    notes: list[str]
    chosen: str  # the sheet read
    names: list[str]  # the sheets that hold cells (chart sheets left out), hidden ones included
    default: str  # the sheet read when none is asked for: the first visible one


def _sheet_grid(wb, name: str, max_rows: int, max_cols: int, max_cells: int) -> SheetRead:
    """The sheet's non-blank rows (formulas never run), how many formula cells had cached values or not, and
    which of its rows and columns with cells are hidden.

    Only the cells that are in the file are read: a declared ``<dimension>`` (even A1:XFD1048576), missing
    rows and far-right empty cells cost nothing.
    """
    out = SheetRead(grid=[])
    grid = out.grid
    n_cells = 0
    filled_cols: set[int] = set()
    percent_formats: dict[int, str | None] = {}  # by cell style: its percent format, None for any other
    source, parser = _cells_parser(wb, wb[name])
    with source:
        for row_index, cells in parser.parse():
            present = {}
            for cell in cells:
                value, formula = cell["value"], cell["formula"]
                if formula is not None:
                    if value is None:
                        out.uncomputed += 1
                        value = f"{formula}{NOT_COMPUTED}"
                    else:
                        out.cached += 1
                if value is None or value == "":
                    continue
                if cell["data_type"] == "n" and isinstance(value, (int, float)):
                    style = cell["style_id"]
                    if style not in percent_formats:
                        fmt = _number_format(wb, style)
                        percent_formats[style] = fmt if _is_percent_format(fmt) else None
                    if percent_formats[style] is not None:
                        value = _as_percent(value, percent_formats[style])
                if cell["column"] > max_cols:
                    raise TableError(f"Sheet {name!r} has more than {max_cols} columns; the limit is {max_cols} "
                                     "(EVIDENTIA_TABLE_MAX_COLS).")
                present[cell["column"]] = value
            if not present:
                continue  # a blank row (the normaliser would drop it); it must not count against the row limit
            if parser.hidden_rows and parser.hidden_rows[-1] == row_index:
                out.hidden_rows.append(row_index)
            filled_cols.update(present)
            row = [None] * max(present)
            for column, value in present.items():
                row[column - 1] = value
            grid.append(row)
            n_cells += len(row)
            if n_cells > max_cells:
                raise too_many_cells(max_cells)
            if len(grid) > max_rows + 10:
                raise TableError(f"Sheet {name!r} has more than {max_rows:,} rows; the limit is {max_rows:,} "
                                 "(EVIDENTIA_TABLE_MAX_ROWS).")
    out.hidden_cols = sorted(_hidden_columns(parser) & filled_cols)
    return out


def _listed(items: list[str], most: int = 10) -> str:
    return ", ".join(items[:most]) + (f" and {len(items) - most} more" if len(items) > most else "")


def _hidden_notes(name: str, read: SheetRead) -> list[str]:
    """Hidden rows and columns are KEPT: their cells are in the file (a visible total may add them up), and
    dropping them would change what a claim is checked against without the user seeing why. Said, with where."""
    notes = []
    rows, cols = read.hidden_rows, read.hidden_cols
    if rows:
        notes.append(f"{len(rows)} row{'s' * (len(rows) != 1)} of sheet {name!r} "
                     f"{'are' if len(rows) != 1 else 'is'} hidden in the workbook (sheet row"
                     f"{'s' * (len(rows) != 1)} {_listed([str(r) for r in rows])}) and "
                     f"{'were' if len(rows) != 1 else 'was'} read like the others")
    if cols:
        from openpyxl.utils import get_column_letter

        notes.append(f"{len(cols)} column{'s' * (len(cols) != 1)} of sheet {name!r} "
                     f"{'are' if len(cols) != 1 else 'is'} hidden in the workbook (column"
                     f"{'s' * (len(cols) != 1)} {_listed([get_column_letter(c) for c in cols])}) and "
                     f"{'were' if len(cols) != 1 else 'was'} read like the others")
    return notes


def _read_xlsx(data: bytes, sheet: str | int | None, limits: TableLimits) -> WorkbookRead:
    """The sheet ``sheet`` names, or else the first visible sheet with cells.

    A hidden first sheet (lookup lists, an old version) was read instead of the visible one, and a chart sheet
    first made a valid workbook "damaged" (#79): chart sheets are skipped and hidden sheets are only read when
    asked for (or when every visible sheet is empty), each said in the notes.
    """
    from openpyxl.chartsheet import Chartsheet

    # Sheet XML is far bigger than the cells it holds: allow 10 bytes of XML per byte of upload limit.
    check_xlsx_expansion(data, max_expanded=10 * limits.max_bytes)
    max_rows, max_cols, max_cells = limits.max_rows, limits.max_cols, limits.max_cells
    wb = _open_workbook(data)
    notes: list[str] = []
    try:
        charts = [ws.title for ws in wb._sheets if isinstance(ws, Chartsheet)]
        names = [n for n in wb.sheetnames if n not in charts]
        hidden = [n for n in names if getattr(wb[n], "sheet_state", "visible") != "visible"]
        visible = [n for n in names if n not in hidden]
        if not names:
            raise TableError("The workbook has no sheets with cells" + (f" (only the chart sheet{'s' * (len(charts) > 1)} "
                                                                         f"{', '.join(charts)})." if charts else "."))
        default = (visible or names)[0]
        if charts:
            notes.append(f"skipped the chart sheet{'s' * (len(charts) != 1)} {', '.join(repr(c) for c in charts)} "
                         "(a chart, not a table)")
        chosen = default if sheet is None else _pick_sheet(names, sheet, charts)
        try:
            read = _sheet_grid(wb, chosen, max_rows, max_cols, max_cells)
            if sheet is None and not read.grid:
                # An empty first sheet (a cover page left blank): read the first visible sheet that has cells, and
                # only if none has, a hidden one.
                for other in [n for n in visible + hidden if n != chosen]:
                    read = _sheet_grid(wb, other, max_rows, max_cols, max_cells)
                    if read.grid:
                        notes.append(f"sheet {chosen!r} is empty, so sheet {other!r} was read")
                        chosen = other
                        break
        except TableError:
            raise
        except _XLSX_READ_ERRORS as exc:
            raise _xlsx_damaged(exc) from exc
    finally:
        wb.close()
    grid = read.grid
    if not grid:
        others = [n for n in names if n != chosen]
        raise TableError(f"Sheet {chosen!r} is empty" + (f"; the workbook's other sheets ({', '.join(others)}) are "
                                                          "empty too." if others and sheet is None else
                                                          f"; its other sheets are: {', '.join(others)}." if others
                                                          else "."))
    for name in hidden:
        if name == chosen:
            notes.append(f"sheet {name!r} is hidden in the workbook" + (
                "; it was read because it was asked for" if sheet is not None else
                "; it was read because no visible sheet has cells"))
        else:
            notes.append(f"sheet {name!r} is hidden; not loaded")
    notes += _hidden_notes(chosen, read)
    if read.cached:
        notes.append(f"read {read.cached} formula cell{'s' * (read.cached != 1)} as the values last saved "
                     "(formulas are never run)")
    if read.uncomputed:
        n = read.uncomputed
        notes.append(f"{n} formula cell{'s' * (n != 1)} had no saved value and {'is' if n == 1 else 'are'} shown "
                     "as formula text marked 'not computed' (formulas are never run)")
    return WorkbookRead(grid, notes, chosen, names, default)
