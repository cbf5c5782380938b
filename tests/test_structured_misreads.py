"""Workbook, JSON, HTML and Markdown uploads that were read silently wrong, or parsed whole before the row limit
refused them (#79). The hostile-upload corpus (tests/hostile_cases_structured.py) checks each kind through the
upload handler; these check the readers' choices, the ways to pick another sheet or table, and the cost with the
default limits."""

from __future__ import annotations

import io
import json
import time

import pytest

from assistant.settings import Settings
from kb.tables import TableError, grid_from_html, load_table, parse_number
from tests.ui_button_probe import run_probe


def _book(build) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    build(wb)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _hidden_chart_and_data(wb):
    from openpyxl.chart import BarChart, Reference

    secret = wb.active
    secret.title = "Secret"
    secret.append(["Code", "Value"])
    secret.append(["x", 1])
    secret.sheet_state = "hidden"
    data = wb.create_sheet("Data")
    for row in (["Year", "Cases"], [2010, 63], [2011, 220]):
        data.append(row)
    chart = wb.create_chartsheet("Chart", 1)
    bar = BarChart()
    bar.add_data(Reference(data, min_col=2, min_row=1, max_row=3), titles_from_data=True)
    chart.add_chart(bar)


# --- workbooks -----------------------------------------------------------------------------------------
def test_a_hidden_first_sheet_is_offered_but_the_visible_one_is_read(tmp_settings):
    data = _book(_hidden_chart_and_data)
    t = load_table(data, name="book.xlsx", settings=tmp_settings)
    assert (t.sheet, t.sheet_names, t.name) == ("Data", ["Secret", "Data"], "book")  # the chart sheet is no choice
    assert t.rows == [["2010", "63"], ["2011", "220"]]
    assert "sheet 'Secret' is hidden; not loaded" in t.notes
    assert "skipped the chart sheet 'Chart' (a chart, not a table)" in t.notes
    # The hidden sheet can still be asked for, by name or 0-based number, and the notes say it is hidden.
    for choice in ("Secret", 0, "0"):
        hidden = load_table(data, name="book.xlsx", settings=tmp_settings, sheet=choice)
        assert hidden.rows == [["x", "1"]] and hidden.name == "book - Secret"
        assert "sheet 'Secret' is hidden in the workbook; it was read because it was asked for" in hidden.notes
    with pytest.raises(TableError, match="'Chart' is a chart, not a table"):
        load_table(data, name="book.xlsx", settings=tmp_settings, sheet="Chart")


def test_hidden_rows_and_columns_are_kept_and_listed(tmp_settings):
    def build(wb):
        ws = wb.active
        ws.title = "Data"
        ws.append(["Site", "Cases", "Rate"])
        for i in range(2, 16):
            ws.append([f"r{i}", i, i * 10])
        for i in range(2, 15):  # 13 hidden rows: the note lists ten and counts the rest
            ws.row_dimensions[i].hidden = True
        ws.column_dimensions["C"].hidden = True

    t = load_table(_book(build), name="h.xlsx", settings=tmp_settings)
    assert t.n_rows == 14 and t.cell(14, 3) == "150"  # nothing dropped
    assert ("13 rows of sheet 'Data' are hidden in the workbook (sheet rows 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 and 3 more) "
            "and were read like the others") in t.notes
    assert "1 column of sheet 'Data' is hidden in the workbook (column C) and was read like the others" in t.notes


# --- JSON ----------------------------------------------------------------------------------------------
def test_repeated_keys_and_flattened_names_never_lose_a_value(tmp_settings):
    t = load_table(b'[{"pi name": "Shah", "pi": {"name": "Ode", "name": "Li"}, "n": 1, "n": 2}]', name="p.json",
                   settings=tmp_settings)
    assert t.columns == ["pi name", "pi.name", "pi name (2)", "n", "n (2)"]
    assert t.rows == [["Shah", "Ode", "Li", "1", "2"]]
    assert any("the key 'n' is repeated within 1 object" in n for n in t.notes)
    assert any("'pi.name', since 'pi name' is already a column" in n for n in t.notes)
    with pytest.raises(TableError, match="'data' twice"):
        load_table(b'{"data": [[1]], "data": [[2]]}', name="d.json", settings=tmp_settings)


def test_numbers_a_float_would_change_stay_as_written(tmp_settings):
    t = load_table(b'[{"a": 1e-400, "b": 0.1000000000000000055511, "c": 0.5, "d": 3.141592653589793}]',
                   name="n.json", settings=tmp_settings)
    assert t.rows == [["1e-400", "0.1000000000000000055511", "0.5", "3.141592653589793"]]
    assert any(n.startswith("kept 3 numbers as written (1e-400, ") for n in t.notes)
    assert parse_number("1e-400") is None and parse_number("1e-300") == 1e-300  # not 0: no number to compare


def test_a_million_records_are_refused_at_the_default_row_limit_without_a_full_parse(tmp_path, monkeypatch):
    """With the real default limits (200,000 rows, 50 MB): the refusal comes from counting rows while decoding.
    The file's end is not valid JSON, so a full parse would have said that instead; and far fewer values than a
    million are decoded."""
    from kb import table_json

    settings = Settings(_env_file=None, data_dir=tmp_path / "data")
    data = b"[" + b",".join(b'{"id": %d, "v": 1.5}' % i for i in range(1_000_000)) + b", {oops"
    assert len(data) < settings.table_max_bytes
    decoded = []
    value = table_json._Decoding.value
    monkeypatch.setattr(table_json._Decoding, "value", lambda self, pos: decoded.append(pos) or value(self, pos))
    t0 = time.perf_counter()
    with pytest.raises(TableError, match="more than 200,000 rows.*EVIDENTIA_TABLE_MAX_ROWS"):
        load_table(data, name="big.json", settings=settings)
    seconds = time.perf_counter() - t0
    assert len(decoded) <= settings.table_max_rows + 11
    assert seconds < 60, seconds  # about 1 s here; a generous bound for a busy machine


# --- HTML ----------------------------------------------------------------------------------------------
def test_cell_text_keeps_block_boundaries():
    grid, _ = grid_from_html(
        "<table><tr><td><table><tr><td>12</td><td>34</td></tr><tr><td>5</td></tr></table></td>"
        "<td><ul><li>10</li><li>20</li></ul></td><td><p>First.</p><p>Second</p></td><td>A<br>trial</td>"
        "<td>7<br>8</td><td><span>1</span><b>2</b></td></tr></table>")
    assert grid == [["12; 34; 5", "10; 20", "First. Second", "A trial", "7; 8", "12"]]  # inline markup stays joined


NAV = "<table><tr><td><a href='/'>Home</a></td><td><a href='/x'>Data</a></td></tr></table>"
CASES = "<table><tr><th>Year</th><th>Cases</th></tr><tr><td>2010</td><td>63</td></tr></table>"
DEATHS = "<table><caption>Deaths</caption><tr><th>Year</th><th>Deaths</th></tr><tr><td>2010</td><td>0</td></tr></table>"


def test_a_page_s_tables_are_offered_as_a_workbook_s_sheets_are(tmp_settings):
    from assistant.ui.uploads import describe, other_sheets

    page = (NAV + CASES + DEATHS).encode()
    t = load_table(page, name="report.html", settings=tmp_settings)
    labels = ["table 1 (Home, Data)", "table 2 (Year, Cases)", "table 3 (Deaths)"]
    assert (t.sheet, t.sheet_names, t.sheet_kind, t.name) == ("table 2 (Year, Cases)", labels, "table", "report")
    assert t.rows == [["2010", "63"]]
    assert ("read table 2 of 3 (Year, Cases); the page also has: table 1 (Home, Data), table 3 (Deaths)"
            in t.notes)
    assert other_sheets(t) == [labels[0], labels[2]]
    assert "from table 'table 2 (Year, Cases)'; other tables: table 1 (Home, Data), table 3 (Deaths)" in describe(t)
    # A label, "table N" (as labelled) or a 0-based number picks another; its name says which.
    for choice in (labels[2], "table 3", "Table 3", 2, "2"):
        deaths = load_table(page, name="report.html", settings=tmp_settings, sheet=choice)
        assert (deaths.sheet, deaths.title, deaths.name) == (labels[2], "Deaths", "report - table 3")
        assert deaths.rows == [["2010", "0"]]
    with pytest.raises(TableError, match="no table 'Cases'; its tables are: table 1"):
        load_table(page, name="report.html", settings=tmp_settings, sheet="Cases")
    with pytest.raises(TableError, match="3 tables; there is no table number 3"):
        load_table(page, name="report.html", settings=tmp_settings, sheet=3)
    # A page with one table offers nothing.
    single = load_table(CASES.encode(), name="one.html", settings=tmp_settings)
    assert (single.sheet, single.sheet_names) == (None, [])


def test_a_long_page_is_refused_once_past_the_row_limit(tmp_path, monkeypatch):
    from kb import table_html

    settings = Settings(_env_file=None, data_dir=tmp_path / "data", table_max_rows=1_000)
    page = ("<table><tr><th>n</th></tr>" + "<tr><td>1</td></tr>" * 300_000 + "</table>").encode()
    tags = []
    start = table_html._HTMLTableReader.handle_starttag
    monkeypatch.setattr(table_html._HTMLTableReader, "handle_starttag",
                        lambda self, tag, attrs: tags.append(tag) or start(self, tag, attrs))
    with pytest.raises(TableError, match="more than 1,000 rows"):
        load_table(page, name="long.html", settings=settings)
    assert len(tags) < 2_100  # two start tags a row, to the limit and a little over; the page has 600,002


# --- Markdown ------------------------------------------------------------------------------------------
def test_a_markdown_file_s_tables_are_offered_too(tmp_settings):
    text = "# Cases\n\n| Year | Cases |\n|:-:|-:|\n| 2010 | 63 |\n\n# Deaths\n\n| Year | Deaths |\n|-|-|\n| 2010 | 0 |\n"
    t = load_table(text.encode(), name="notes.md", settings=tmp_settings)
    assert (t.sheet, t.sheet_names, t.rows) == ("table 1 (Cases)", ["table 1 (Cases)", "table 2 (Deaths)"], [["2010", "63"]])
    assert "read table 1 of 2 (Cases); the file also has: table 2 (Deaths)" in t.notes
    deaths = load_table(text.encode(), name="notes.md", settings=tmp_settings, sheet="table 2")
    assert (deaths.columns, deaths.rows, deaths.title) == (["Year", "Deaths"], [["2010", "0"]], "Deaths")


def test_a_long_markdown_table_is_refused_while_reading(tmp_path, monkeypatch):
    from kb import table_markdown

    settings = Settings(_env_file=None, data_dir=tmp_path / "data", table_max_rows=1_000)
    read = []
    lines = table_markdown._lines
    monkeypatch.setattr(table_markdown, "_lines", lambda text: (read.append(1) or ln for ln in lines(text)))
    with pytest.raises(TableError, match="more than 1,000 rows"):
        load_table(b"| n |\n|---|\n" + b"| 1 |\n" * 900_000, name="long.md", settings=settings)
    assert len(read) < 1_100  # of 900,002 lines


def test_a_table_before_an_over_limit_one_still_loads_and_says_where_reading_stopped(tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", table_max_rows=100)
    text = "| Year | Cases |\n|---|---|\n| 2010 | 63 |\n\n| n |\n|---|\n" + "| 1 |\n" * 500
    t = load_table(text.encode(), name="two.md", settings=settings)
    assert t.rows == [["2010", "63"]]
    assert any(n.startswith("stopped reading the file at table 2, which has more than 100 rows") for n in t.notes)
    with pytest.raises(TableError, match="more than 100 rows"):
        load_table(text.encode(), name="two.md", settings=settings, sheet="table 2")


# --- the upload message and its buttons ------------------------------------------------------------------
PROBE = r"""
page = Path(sys.argv[1])

async def main():
    await app.acknowledge_table(load_table(page, name="report.html"), page, "report.html")
    first = sent[-1]
    await app.on_choose_sheet(Action(first["payloads"][-1]))
    print("JSON" + json.dumps({"first": first, "loads": [ld["sheet"] for ld in loads], "last": sent[-1]["content"]}))

asyncio.run(main())
"""


def test_the_upload_message_offers_the_page_s_other_tables(tmp_path):
    page = tmp_path / "report.html"
    page.write_text(NAV + CASES + DEATHS)
    out = run_probe(PROBE, page, tmp_path)
    first = out["first"]
    assert ("Table **table 2 (Year, Cases)** is loaded; the page also has table 1 (Home, Data), table 3 (Deaths)"
            in first["content"])
    assert [label for label in first["labels"] if label.startswith("Use ")] == [
        "Use table “table 1 (Home, Data)”", "Use table “table 3 (Deaths)”"]
    assert out["loads"] == ["table 3 (Deaths)"] and "Table **table 3 (Deaths)** is loaded" in out["last"]
    assert json.dumps(first["payloads"]).count(str(page)) == 0
