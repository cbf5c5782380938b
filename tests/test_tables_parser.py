"""Table ingestion: every format, every kind of bad input, the number parser."""

from __future__ import annotations

import json
import time

import pytest

from kb.tables import NOT_COMPUTED, Table, TableError, load_table, parse_number, table_from_grid
from tools import ToolError


def test_table_error_is_a_tool_error():
    assert issubclass(TableError, ToolError)


# -- numbers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text, value", [
    ("0.215***(0.075)", 0.215), ("1,234", 1234.0), ("12%", 12.0), ("\u22123.2", -3.2), ("(1.5)", -1.5),
    ("[BOLD] 0.93", 0.93), ("+22%", 22.0), ("$1,234.50", 1234.5), ("1.2e-3", 0.0012), ("12.3 ± 0.4", 12.3),
    ("-7", -7.0), (".5", 0.5), ("2011", 2011.0), (" 42 ", 42.0), ("3.1*", 3.1),
    # Markdown emphasis on a best result (found as a new user: "**84.9 ± 0.3**" compared as text, and a
    # claim that the bold row beats another was refuted)
    ("**84.9 ± 0.3**", 84.9), ("__7__", 7.0), ("_84.2_", 84.2), ("0.5**", 0.5),
])
def test_parse_number_reads_decorated_numbers(text, value):
    assert parse_number(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["D4", "", "n/a", "0 - 1", "2007-2011", "abc 12", "(1.5", "sept 20", None, "1.2.3",
                                  "**", "** 3 **"])
def test_parse_number_rejects_non_numbers(text):
    assert parse_number(text) is None


# -- formats ---------------------------------------------------------------------------------
def test_csv_basic_with_coordinates(tmp_path, tmp_settings):
    p = tmp_path / "measles.csv"
    p.write_text("Province,Year,Cases\nQuebec,2011,678\nOntario,2008,53\n")
    t = load_table(p, settings=tmp_settings)
    assert t.name == "measles" and t.title == "measles"
    assert t.columns == ["Province", "Year", "Cases"]
    assert t.cell(1, 3) == "678" and t.cell(2, 1) == "Ontario"
    assert t.row_label_col == 1
    md = t.to_markdown()
    assert "| row | C1 Province | C2 Year | C3 Cases |" in md and "| R1 | Quebec | 2011 | 678 |" in md
    with pytest.raises(IndexError):
        t.cell(3, 1)


def test_tsv_and_semicolon_delimiters_are_detected(tmp_settings):
    tsv = load_table(b"a\tb\n1\t2\n3\t4\n", name="x.tsv", settings=tmp_settings)
    assert tsv.columns == ["a", "b"] and tsv.rows == [["1", "2"], ["3", "4"]]
    semi = load_table(b"name;score\nann;1,5\nbob;2,5\n", name="x.csv", settings=tmp_settings)
    assert semi.columns == ["name", "score"] and semi.cell(2, 2) == "2.5"  # decimal commas, read as such
    assert any("delimiter" in n for n in semi.notes)


def test_json_records_and_columns(tmp_settings):
    records = json.dumps([{"Year": 2010, "Cases": 82}, {"Year": 2011, "Cases": 678, "Strain": "D4"}]).encode()
    t = load_table(records, name="r.json", settings=tmp_settings)
    assert t.columns == ["Year", "Cases", "Strain"] and t.rows[1] == ["2011", "678", "D4"] and t.rows[0][2] == ""
    cols = json.dumps({"Year": [2010, 2011], "Cases": [82, 678]}).encode()
    t2 = load_table(cols, name="c.json", settings=tmp_settings)
    assert t2.columns == ["Year", "Cases"] and t2.rows == [["2010", "82"], ["2011", "678"]]
    split = json.dumps({"title": "Outbreaks", "columns": ["A", "B"], "data": [[1, 2]]}).encode()
    t3 = load_table(split, name="s.json", settings=tmp_settings)
    assert t3.title == "Outbreaks" and t3.rows == [["1", "2"]]


def test_json_object_holding_one_list_of_records_with_nested_objects(tmp_settings):
    """Found as a new user: an export shaped {"study": …, "sites": [{…, "pi": {"name": …}}]} was refused."""
    export = json.dumps({"study": "REACH-2", "version": 3, "sites": [
        {"site": "Leeds", "enrolled": 84, "pi": {"name": "Dr Shah", "since": 2019}},
        {"site": "Lyon", "enrolled": 61, "pi": {"name": "Dr Morel"}}]}).encode()
    t = load_table(export, name="sites.json", settings=tmp_settings)
    assert t.title == "sites (study: REACH-2; version: 3)"
    assert t.columns == ["site", "enrolled", "pi name", "pi since"]
    assert t.rows == [["Leeds", "84", "Dr Shah", "2019"], ["Lyon", "61", "Dr Morel", ""]]
    # two lists of records: which one is the table is not for the reader to guess
    two = json.dumps({"sites": [{"a": 1}], "arms": [{"b": 2}]}).encode()
    with pytest.raises(TableError, match="cannot read as a table"):
        load_table(two, name="two.json", settings=tmp_settings)


def test_markdown_table_with_caption(tmp_settings):
    md = ("Table 1: Measles outbreaks\n\n| Province | Year | Cases |\n|---|:---:|--:|\n"
          "| Quebec | 2011 | 678 |\n| Ontario | 2008 | 53 |\n\nSome text after.\n")
    t = load_table(md.encode(), name="m.md", settings=tmp_settings)
    assert t.title == "Table 1: Measles outbreaks"
    assert t.columns == ["Province", "Year", "Cases"] and t.n_rows == 2 and t.cell(2, 3) == "53"


def _xlsx_bytes(build) -> bytes:
    import io

    from openpyxl import Workbook

    wb = Workbook()
    build(wb)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _two_sheets(second: str = "Deaths"):
    """A workbook builder: sheet "Cases" (Province, Year, Cases) and sheet ``second`` (Province, Deaths)."""
    def build(wb):
        ws = wb.active
        ws.title = "Cases"
        ws.append(["Province", "Year", "Cases"])
        ws.append(["Quebec", 2011, 678])
        other = wb.create_sheet(second)
        other.append(["Province", "Deaths"])
        other.append(["Quebec", 0])

    return build


def test_xlsx_first_sheet_sheet_names_and_choice(tmp_settings):
    data = _xlsx_bytes(_two_sheets())
    t = load_table(data, name="book.xlsx", settings=tmp_settings)
    assert t.sheet == "Cases" and t.sheet_names == ["Cases", "Deaths"]
    assert t.rows == [["Quebec", "2011", "678"]]
    t2 = load_table(data, name="book.xlsx", settings=tmp_settings, sheet="Deaths")
    assert t2.columns == ["Province", "Deaths"] and t2.name != t.name
    with pytest.raises(TableError, match="no sheet 'Nope'.*Cases, Deaths"):
        load_table(data, name="book.xlsx", settings=tmp_settings, sheet="Nope")


def test_xlsx_formula_is_never_executed(tmp_settings):
    def build(wb):
        ws = wb.active
        ws.append(["Item", "Amount"])
        ws.append(["a", 2])
        ws.append(["b", 3])
        ws.append(["total", "=SUM(B2:B3)"])  # openpyxl stores no cached value for it

    t = load_table(_xlsx_bytes(build), name="f.xlsx", settings=tmp_settings)
    assert t.cell(3, 2) == "=SUM(B2:B3)" + NOT_COMPUTED  # shown as text, not computed to 5
    assert any("not computed" in n and "never run" in n for n in t.notes)
    assert any(n.startswith("1 formula cell had no saved value and is shown as") for n in t.notes)


def test_xlsx_cells_keep_their_columns_dates_and_gaps(tmp_settings):
    import datetime as dt

    def build(wb):
        ws = wb.active
        ws.append(["Site", "Note", "Visited"])
        ws["A2"], ws["C2"] = "Lab", dt.date(2020, 3, 1)  # B2 is missing from the file, not blank
        ws["B3"] = "only a note"

    t = load_table(_xlsx_bytes(build), name="gaps.xlsx", settings=tmp_settings)
    assert t.columns == ["Site", "Note", "Visited"]
    assert t.rows[0][0] == "Lab" and t.rows[0][1] == "" and t.rows[0][2] == "2020-03-01"
    assert t.rows[1][:2] == ["", "only a note"]


def test_xlsx_dates_percentages_and_floats_read_as_the_sheet_shows_them(tmp_settings):
    """Found as a new user: "2021-11-03 00:00:00" (a date read as text, with no order for "most recently") and a
    Coverage column formatted "0.0%" read as 0.7285, so "above 80%" compared 80 with it."""
    import datetime as dt

    def build(wb):
        ws = wb.active
        ws.append(["County", "Coverage", "Whole", "Reported", "Ratio", "Logged"])
        ws.append(["Alder", 0.72848, 0.5, dt.date(2021, 11, 3), 0.1 + 0.2, dt.datetime(2021, 11, 3, 14, 5, 9)])
        ws["B2"].number_format, ws["C2"].number_format = "0.0%", "0%"
        ws["D2"].number_format = "yyyy-mm-dd"
        ws["E2"].number_format = '"%"0.00'  # a "%" in quotes is text, not a percentage

    t = load_table(_xlsx_bytes(build), name="v.xlsx", settings=tmp_settings)
    assert t.rows[0] == ["Alder", "72.8%", "50%", "2021-11-03", "0.3", "2021-11-03 14:05"]


def test_xlsx_far_right_empty_cells_are_not_padded(tmp_settings, monkeypatch):
    """Rows holding only an empty cell in column XFD: openpyxl padded each to 16,384 cells (2,000 rows: 10 s).

    Checked by structure, not by a clock (timings belong in benchmarks): openpyxl's row iterations, which pad,
    must never run, and the far-right cells must not widen the table."""
    import io
    import zipfile

    from openpyxl.worksheet._read_only import ReadOnlyWorksheet
    from openpyxl.worksheet.worksheet import Worksheet

    def padding(*args, **kwargs):
        raise AssertionError("openpyxl's padding row iteration was used")

    for cls in (ReadOnlyWorksheet, Worksheet):
        monkeypatch.setattr(cls, "iter_rows", padding)
    monkeypatch.setattr(ReadOnlyWorksheet, "_cells_by_row", padding)

    base = _xlsx_bytes(_two_sheets())
    rows = (b'<row r="1"><c r="A1" t="inlineStr"><is><t>Year</t></is></c></row><row r="2"><c r="A2"><v>5</v></c></row>'
            + b"".join(b'<row r="%d"><c r="XFD%d"/></row>' % (i, i) for i in range(3, 20_000)))
    sheet = (b'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/'
             b'spreadsheetml/2006/main"><dimension ref="A1:XFD20000"/><sheetData>' + rows + b"</sheetData></worksheet>")
    src, out = zipfile.ZipFile(io.BytesIO(base)), io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            z.writestr(info.filename, sheet if info.filename == "xl/worksheets/sheet1.xml" else src.read(info.filename))
    t = load_table(out.getvalue(), name="sparse.xlsx", settings=tmp_settings)
    assert t.columns == ["Year"] and t.rows == [["5"]]


# -- messy content -------------------------------------------------------------------------
def test_missing_header_is_generated_and_reported(tmp_settings):
    t = load_table(b"Quebec,2011,678\nOntario,2008,53\n", name="nohead.csv", settings=tmp_settings)
    assert t.columns == ["Column 1", "Column 2", "Column 3"] and t.n_rows == 2
    assert any("generated" in n for n in t.notes)


def test_year_headers_are_kept_as_header(tmp_settings):
    t = load_table(b"Country,2007,2008\nCanada,1.5,2.5\n", name="years.csv", settings=tmp_settings)
    assert t.columns == ["Country", "2007", "2008"]


def test_blank_rows_and_columns_are_dropped(tmp_settings):
    data = b"A,,B\n1,,2\n,,\n3,,4\n\n"
    t = load_table(data, name="blank.csv", settings=tmp_settings)
    assert t.columns == ["A", "B"] and t.rows == [["1", "2"], ["3", "4"]]
    assert any("blank row" in n for n in t.notes) and any("blank column" in n for n in t.notes)


def test_duplicate_headers_are_renamed(tmp_settings):
    t = load_table(b"Name,Score,Score\nann,1,2\n", name="dup.csv", settings=tmp_settings)
    assert t.columns == ["Name", "Score", "Score (2)"]
    assert any("duplicate" in n for n in t.notes)


def test_multi_row_header_is_merged(tmp_settings):
    data = b"Model,LR,,,SVM,,\n,P,R,F1,P,R,F1\nBoW,0.93,0.91,0.92,0.94,0.92,0.93\nBoC,0.94,0.92,0.93,0.94,0.92,0.93\n"
    t = load_table(data, name="multi.csv", settings=tmp_settings)
    assert t.columns == ["Model", "LR P", "LR R", "LR F1", "SVM P", "SVM R", "SVM F1"]
    assert t.n_rows == 2 and t.cell(1, 4) == "0.92"
    assert any("two-row header" in n for n in t.notes)


def test_two_row_header_says_a_repeated_name_once(tmp_settings):
    # Spreadsheets export a rowspan ("Year" over two header rows) as the same text twice.
    data = b"Year,Cases,\nYear,Measles,Mumps\n2010,63,10\n2011,220,12\n"
    t = load_table(data, name="repeat.csv", settings=tmp_settings)
    assert t.columns == ["Year", "Cases Measles", "Cases Mumps"]
    assert t.cell(2, 2) == "220"


def test_a_title_line_above_the_column_names_becomes_the_title(tmp_settings):
    """Found as a new user with an XLSX whose A1 held a title and row 2 was blank: the title was merged into every
    column name ("Hospital antibiotic use, Q1-Q2 2025 Beds")."""
    def build(wb):
        ws = wb.active
        ws.append(["Hospital antibiotic use, Q1-Q2 2025"])
        ws.append([])
        ws.append(["Ward", "Beds", "DDD Q1", "DDD Q2"])
        ws.append(["ICU", 16, 142.5, 131.0])
        ws.append(["Surgery", 40, 77.0, 69.8])

    t = load_table(_xlsx_bytes(build), name="abx.xlsx", settings=tmp_settings)
    assert t.columns == ["Ward", "Beds", "DDD Q1", "DDD Q2"] and t.n_rows == 2
    assert t.title == "Hospital antibiotic use, Q1-Q2 2025"
    assert any(n.startswith("read the line above the column names as the title") for n in t.notes)
    assert not any(n.startswith("padded") for n in t.notes)  # the title line and the blank row are no short rows
    # a spanning group name over a two-row header is still a header, not a title
    spanned = load_table(b"Model,LR,,\n,P,R,F1\nBoW,0.93,0.91,0.92\n", name="m.csv", settings=tmp_settings)
    assert spanned.columns == ["Model", "LR P", "LR R", "LR F1"]


def test_ragged_rows_are_padded(tmp_settings):
    t = load_table(b"A,B,C\n1,2\n3,4,5,6\n", name="ragged.csv", settings=tmp_settings)
    assert t.n_cols == 4 and t.rows[0] == ["1", "2", "", ""] and t.columns[3] == "Column 4"
    assert any("padded" in n for n in t.notes)


def test_non_utf8_csv_is_decoded(tmp_settings):
    data = "Ville,Température\nMontréal,−3\nQuébec,-5\n".replace("−", "-").encode("cp1252")
    t = load_table(data, name="latin.csv", settings=tmp_settings)
    assert t.columns == ["Ville", "Température"] and t.cell(1, 1) == "Montréal"
    assert any("decoded" in n for n in t.notes)


def test_table_from_grid_pubhealthtab_style_row_headers():
    t = table_from_grid([["Quebec", "2007", "94"], ["Ontario", "2008", "53"]],
                        header=["Province", "Year", "Number of cases"], name="m", title="Measles outbreaks")
    assert isinstance(t, Table) and t.title == "Measles outbreaks" and t.row_label(2) == "Ontario"


# -- bad input -------------------------------------------------------------------------------
def test_malformed_csv_gives_a_clear_message(tmp_settings):
    with pytest.raises(TableError, match="malformed"):
        load_table(b'a,b\n1,"unclosed\n2,3\n', name="bad.csv", settings=tmp_settings)


def test_empty_file(tmp_settings):
    with pytest.raises(TableError, match="empty"):
        load_table(b"  \n\n", name="empty.csv", settings=tmp_settings)
    with pytest.raises(TableError, match="empty|no rows"):
        load_table(b",,\n,,\n", name="commas.csv", settings=tmp_settings)


def test_binary_garbage_is_refused(tmp_settings):
    with pytest.raises(TableError):
        load_table(b"\x00\x01\x02" * 100, name="x.csv", settings=tmp_settings)
    with pytest.raises(TableError, match="xlsx"):
        load_table(b"PK\x03\x04 not really a zip", name="x.xlsx", settings=tmp_settings)


def test_invalid_json(tmp_settings):
    with pytest.raises(TableError, match="not valid JSON"):
        load_table(b"[{'a': 1}]", name="x.json", settings=tmp_settings)


def test_200_mb_file_is_refused_quickly_before_reading(tmp_path, tmp_settings):
    big = tmp_path / "huge.csv"
    with big.open("wb") as fh:  # a sparse 200 MB file: costs no disk, and reading it would be slow
        fh.seek(200 * 1024 * 1024 - 1)
        fh.write(b"\n")
    start = time.perf_counter()
    with pytest.raises(TableError, match=r"200\.0 MB.*limit is 50\.0 MB.*EVIDENTIA_TABLE_MAX_BYTES"):
        load_table(big, settings=tmp_settings)
    assert time.perf_counter() - start < 5  # generous: it must not read 200 MB


def test_size_row_and_column_limits(tmp_settings):
    small = tmp_settings.model_copy(update={"table_max_bytes": 10, "table_max_rows": 3, "table_max_cols": 2})
    with pytest.raises(TableError, match="limit is .* for a table"):
        load_table(b"a,b\n1,2\n3,4\n", name="x.csv", settings=small)
    roomy = small.model_copy(update={"table_max_bytes": 10_000})
    with pytest.raises(TableError, match="limit is 3 .*ROWS"):
        load_table(b"a,b\n" + b"1,2\n" * 5, name="x.csv", settings=roomy)
    with pytest.raises(TableError, match="3 columns; the limit is 2"):
        load_table(b"a,b,c\n1,2,3\n", name="x.csv", settings=roomy)


@pytest.mark.parametrize("fmt", ["csv", "xlsx", "json", "html"])
def test_cell_budget_applies_to_every_format(tmp_settings, fmt):
    """Rows and columns each within their limits, but too many cells together: refused, naming the setting."""
    limited = tmp_settings.model_copy(update={"table_max_cells": 50})
    rows = [["a", "b", "c", "d", "e"]] + [[str(i * 5 + j) for j in range(5)] for i in range(12)]  # 65 cells
    if fmt == "csv":
        data = "\n".join(",".join(r) for r in rows).encode()
    elif fmt == "xlsx":
        def build(wb):
            for r in rows:
                wb.active.append(r)
        data = _xlsx_bytes(build)
    elif fmt == "json":
        data = json.dumps(rows).encode()
    else:
        data = ("<table>" + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
                + "</table>").encode()
    with pytest.raises(TableError, match="more than 50 cells.*EVIDENTIA_TABLE_MAX_CELLS"):
        load_table(data, name=f"t.{fmt}", settings=limited)
    fits = load_table(data, name=f"t.{fmt}", settings=tmp_settings)
    assert fits.n_rows == 12 and fits.columns == ["a", "b", "c", "d", "e"]


def test_size_messages_never_show_two_equal_numbers():
    from kb.table_limits import size_over_limit

    assert size_over_limit(3 * 1024**2, 2 * 1024**2) == "3.0 MB; the limit is 2.0 MB"
    assert size_over_limit(1024**2 + 2048, 1024**2) == "1.002 MB; the limit is 1.000 MB"
    assert size_over_limit(1024**2 + 5, 1024**2) == "1,048,581 bytes; the limit is 1,048,576 bytes"


def test_unique_names(tmp_settings):
    t = load_table(b"a,b\n1,2\n", name="sales.csv", settings=tmp_settings, existing_names=["sales"])
    assert t.name == "sales (2)"


def test_loading_the_same_file_again_keeps_one_table(tmp_settings, tmp_path):
    """`evidentia ask --table X -c C` twice (or a second upload of the file) used to add "X (2)"; an edited
    file of the same name is another table."""
    from assistant.cli.chat_cli import add_table_file as cli_add
    from assistant.deps import Deps
    from tools.contracts import Session

    path = tmp_path / "sites.csv"
    path.write_text("Site,Dropouts\nPorto,5\nLyon,3\n")
    deps = Deps(tmp_settings)
    session = Session("c1")
    assert cli_add(deps, session, path).startswith("Loaded table sites")
    again = cli_add(deps, session, path)
    assert list(session.tables) == ["sites"] and "Already loaded as sites" in again
    assert [name for name, _ in deps.memory.tables("c1")] == ["sites"]
    assert session.tables["sites"].notes == []  # the note is for this reply, not kept on the shared table
    path.write_text("Site,Dropouts\nPorto,6\nLyon,3\n")
    cli_add(deps, session, path)
    assert list(session.tables) == ["sites", "sites (2)"]


def test_switching_sheet_replaces_the_table_under_its_name_and_in_memory(tmp_settings, tmp_path):
    """The upload path shared by the UI and the terminal: another sheet replaces the table, same name."""
    from assistant.cli.chat_cli import add_table_file as cli_add, parse_table_command
    from assistant.deps import Deps
    from tools.contracts import Session
    from assistant.ui.uploads import add_table_file, other_sheets

    path = tmp_path / "book.xlsx"
    path.write_bytes(_xlsx_bytes(_two_sheets("Deaths 2011")))
    deps = Deps(tmp_settings)
    session = Session("c1")
    first = add_table_file(deps, session, path)
    assert other_sheets(first) == ["Deaths 2011"] and first.columns == ["Province", "Year", "Cases"]
    second = add_table_file(deps, session, path, sheet="Deaths 2011", replace=first.name)
    assert list(session.tables) == [first.name] and second.name == first.name
    assert session.tables[first.name].columns == ["Province", "Deaths"] and other_sheets(second) == ["Cases"]
    saved = dict(deps.memory.tables("c1"))  # the stored copy (what a restart restores) is the new sheet
    assert list(saved) == [first.name] and '"Deaths"' in saved[first.name]
    # a sheet that does not exist leaves the loaded table as it was
    with pytest.raises(TableError, match="no sheet"):
        add_table_file(deps, session, path, sheet="Nope", replace=first.name)
    assert session.tables[first.name].columns == ["Province", "Deaths"]
    # the terminal command: quoted sheet names with spaces; the reply says how to switch
    assert parse_table_command(f'/table "{path}" "Deaths 2011"') == (path, "Deaths 2011")
    assert parse_table_command(f"/table {path}") == (path, None)
    reply = cli_add(deps, session, path, "Cases")
    assert list(session.tables) == [first.name] and "other sheets: Deaths 2011" in reply
    import click

    with pytest.raises(click.ClickException):
        parse_table_command("/table")


def test_html_grid_expands_spans_and_finds_header_rows():
    from kb.tables import grid_from_html, merge_header_rows

    html = """<table><thead><tr><th rowspan="2">Study</th><th colspan="2">LCINS</th></tr>
      <tr><th>n</th><th>%</th></tr></thead>
      <tbody><tr><td>A<br/>trial</td><td rowspan="2">12</td><td>3.5</td></tr>
      <tr><td>B</td><td>4.0</td></tr>
      </tr><td>C</td><td>7</td><td>1.0</td>
      <tr><td><table><tr><td>nested</td></tr></table></td><td>8</td><td>x</td></tr></tbody></table>
      <table><tr><td>a second table is ignored</td></tr></table>"""
    grid, head_rows = grid_from_html(html)
    assert head_rows == 2
    assert grid[:2] == [["Study", "LCINS", "LCINS"], ["Study", "n", "%"]]
    assert grid[2] == ["A trial", "12", "3.5"]
    assert grid[3] == ["B", "12", "4.0"]  # the rowspan carries 12 down, and 4.0 lands in its own column
    assert grid[4] == ["C", "7", "1.0"]  # a row of cells outside any <tr>, as a browser shows it
    assert grid[5] == ["nested", "8", "x"] and len(grid) == 6
    wide, _ = grid_from_html('<table><tr><td colspan="99999">x</td><td rowspan="-3">y</td></tr></table>')
    assert len(wide[0]) == 1001 and wide[0][-1] == "y"  # a bogus span is capped, not obeyed
    assert merge_header_rows(grid[:head_rows]) == ["Study", "LCINS n", "LCINS %"]


def test_html_footnote_marks_do_not_join_cell_text():
    """Found as a new user: "East<sup>a</sup>" became the row label "Easta", and a footnote number after a
    value would have made 451 into 4511."""
    from kb.tables import grid_from_html

    html = """<table><tr><th>Region</th><th>Area (km<sup>2</sup>)</th><th>Score</th></tr>
      <tr><td>East<sup>a</sup></td><td>451<sup>1</sup></td><td>0.215<sup>***</sup></td></tr>
      <tr><td>West<sup>[3]</sup></td><td>12<sup> (b) </sup></td><td>7<sup>†</sup></td></tr></table>"""
    grid, _ = grid_from_html(html)
    assert grid == [["Region", "Area (km²)", "Score"], ["East", "451", "0.215***"], ["West", "12", "7"]]


def test_html_grid_counts_th_only_rows_as_header():
    from kb.tables import grid_from_html

    grid, head_rows = grid_from_html("<table><tr><th>Drug</th><th>Dose</th></tr><tr><th>A</th><td>5</td></tr></table>")
    assert head_rows == 1 and grid == [["Drug", "Dose"], ["A", "5"]]
    assert grid_from_html("<p>no table</p>") == ([], 0)


def test_html_page_upload_reads_its_first_table_with_spans_and_caption(tmp_settings):
    from kb.tables import TableError

    page = """<!DOCTYPE html><html><body><p>Measles in Canada</p>
    <table><caption>Measles outbreaks, 2011 &amp; 2014</caption>
      <thead><tr><th rowspan="2">Province</th><th colspan="2">Outbreak</th></tr>
             <tr><th>Year</th><th>Number of cases</th></tr></thead>
      <tbody><tr><td>Quebec</td><td>2011</td><td>776</td></tr>
             <tr><td>British Columbia</td><td>2014</td><td>470</td></tr></tbody></table>
    <table><tr><td>footer</td></tr></table></body></html>"""
    t = load_table(page.encode(), name="outbreaks.html", settings=tmp_settings)
    assert t.columns == ["Province", "Outbreak Year", "Outbreak Number of cases"]
    assert t.cell(1, 1) == "Quebec" and t.cell(2, 3) == "470" and t.n_rows == 2
    assert t.title == "Measles outbreaks, 2011 & 2014"
    assert any("merged 2 header rows" in n for n in t.notes)
    assert "read table 1 of 2 (Measles outbreaks, 2011 & 2014); the page also has: table 2 (footer)" in t.notes
    # Found by content as well as by suffix; a page without a table says so.
    assert load_table(page.encode(), name="upload", settings=tmp_settings).columns == t.columns
    with pytest.raises(TableError, match="no <table>"):
        load_table(b"<html><body><p>just text</p></body></html>", name="page.html", settings=tmp_settings)
    # No header markup: the usual detection applies (a numeric first row is data, names are generated).
    bare = load_table(b"<table><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td></tr></table>",
                      name="b.htm", settings=tmp_settings)
    assert bare.columns == ["Column 1", "Column 2"] and bare.n_rows == 2


def test_clock_times_do_not_name_the_rows():
    # Found as a new user: a marathon table's rows were named by their finishing times ("rows: 2:02:37").
    t = Table(name="m", title="m", columns=["Year", "Winner", "Time"], rows=[
        ["2018", "Eliud Kipchoge", "2:04:42"], ["2019", "Eliud Kipchoge", "2:02:37"], ["2020", "Shura Kitata", "2:05:41"]])
    assert t.row_label_col == 2


def test_formula_text_in_a_json_or_csv_cell_is_marked_not_computed(tmp_settings):
    """Found as a new user: a JSON cell "=1000+2000" answered "How many nurses work in Central?" bare."""
    t = load_table(b'[{"Region": "Central", "Nurses": "=1000+2000", "Note": "- see text", "Delta": "-5"}]',
                   name="staff.json", settings=tmp_settings)
    assert t.rows[0] == ["Central", "=1000+2000" + NOT_COMPUTED, "- see text", "-5"]
    assert any("formula text" in n for n in t.notes)


def test_decimal_comma_numbers_are_read_as_numbers_and_the_user_is_told(tmp_settings):
    """Found as a new user: a German CSV ('3.645.000', '891,1', '12,5%') loaded with no numeric column."""
    from tools._cells import TypedTable

    csv = "Stadt;Einwohner;Fläche (km²);Anteil\nBerlin;3.645.000;891,1;12,5%\nHamburg;1.841.000;755,2;7,3%\n" \
          "Bonn;331.000;141,1;1,234\n"
    t = load_table(csv.encode(), name="städte.csv", settings=tmp_settings)
    assert t.rows[0] == ["Berlin", "3,645,000", "891.1", "12.5%"]
    assert t.cell(3, 2) == "331,000" and t.cell(3, 4) == "1.234"  # the ambiguous forms follow the table
    assert any("decimal commas" in n and "891,1 as 891.1" in n for n in t.notes)
    typed = TypedTable.build(t)
    assert [typed.number(r, 3) for r in (1, 2, 3)] == [891.1, 755.2, 141.1]
    assert typed.number(1, 2) == 3645000.0
    # Without a header row, the first row of such numbers is data, not column names.
    bare = load_table("Berlin;3.645.000;891,1\nHamburg;1.841.000;755,2\n".encode(), name="b.csv",
                      settings=tmp_settings)
    assert bare.columns[0] == "Column 1" and bare.n_rows == 2


@pytest.mark.parametrize("rows", [
    [["a", "0.93"], ["b", "1,5"], ["c", "2,5"]],  # a decimal point anywhere keeps the table as it is
    [["a", "1,5"], ["b", "7"]],  # one lone comma form ("pages 1,5"?) is not enough
    [["a", "1,234"], ["b", "4,512"]],  # thousands separators: the decimal-point reading
    [["a", "1,234,567"], ["b", "2,5"]],
])
def test_decimal_point_tables_are_left_alone(rows):
    from kb.table_numbers import convert_decimal_commas

    assert convert_decimal_commas(rows) == (rows, 0)
