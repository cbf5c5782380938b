"""Hostile and careless XLSX, JSON, HTML and Markdown uploads beyond the first 68 cases (#79): each a right load checked cell by
cell (and its assumptions named in the notes), or a refusal that names what is wrong."""

from __future__ import annotations

import io
import json
from typing import Callable

from tests.hostile_uploads import MAX_BYTES, MAX_ROWS, Case, Check, all_of, cells, columns_are


# --- checks ------------------------------------------------------------------------------------------
def rows_are(expected: list[list[str]]) -> Check:
    return lambda t: None if t.rows == expected else f"rows {t.rows[:6]} != {expected}"


def note_says(text: str) -> Check:
    """A note holds ``text`` word for word: the assumption is named, with what it was about."""
    return lambda t: None if any(text in n for n in t.notes) else f"no note saying {text!r}: {t.notes}"


def no_note_about(text: str) -> Check:
    return lambda t: None if not any(text in n for n in t.notes) else f"a note about {text!r}: {t.notes}"


def sheet_is(label: str) -> Check:
    return lambda t: None if t.sheet == label else f"read {t.sheet!r}, not {label!r}"


def no_cell(value: str) -> Check:
    return lambda t: None if value not in cells(t) else f"a cell {value!r}: {cells(t)[:8]}"


def title_is(title: str) -> Check:
    return lambda t: None if t.title == title else f"title {t.title!r} != {title!r}"


# --- builders ----------------------------------------------------------------------------------------
def _book(build: Callable) -> bytes:
    import openpyxl

    wb = openpyxl.Workbook()
    build(wb)
    buf = io.BytesIO()
    wb.save(buf)
    return buf.getvalue()


def _fill(ws, rows: list[list]) -> None:
    for row in rows:
        ws.append(row)


CASES = [["Year", "Cases"], [2010, 63], [2011, 220]]
OLD = [["Year", "Cases"], [1990, 1], [1991, 2]]


def _hidden_first(state: str) -> Callable:
    def build(wb):
        old = wb.active
        old.title = "Old"
        _fill(old, OLD)
        old.sheet_state = state
        _fill(wb.create_sheet("Data"), CASES)
    return build


def _hidden_middle(wb):
    wb.active.title = "Cases"
    _fill(wb.active, CASES)
    lookup = wb.create_sheet("Lookup")
    _fill(lookup, [["Code", "Name"], ["QC", "Quebec"]])
    lookup.sheet_state = "hidden"
    _fill(wb.create_sheet("Deaths"), [["Year", "Deaths"], [2010, 0]])


def _only_hidden_has_cells(wb):
    wb.active.title = "Cover"
    data = wb.create_sheet("Data")
    _fill(data, CASES)
    data.sheet_state = "hidden"


def _hidden_rows(wb):
    ws = wb.active
    ws.title = "Data"
    _fill(ws, [["Year", "Cases"], [2010, 63], [2011, 220], [2012, 90], [2013, 55]])
    ws.row_dimensions[3].hidden = True
    ws.row_dimensions[5].hidden = True


def _hidden_blank_row(wb):
    ws = wb.active
    ws.title = "Data"
    _fill(ws, [["Year", "Cases"], [2010, 63], [], [2011, 220]])
    ws.row_dimensions[3].hidden = True  # hidden and empty: nothing to say


def _hidden_header_row(wb):
    ws = wb.active
    ws.title = "Data"
    _fill(ws, CASES)
    ws.row_dimensions[1].hidden = True


def _hidden_columns(wb):
    ws = wb.active
    ws.title = "Data"
    _fill(ws, [["Region", "Helper", "Factor", "Cases"], ["North", 1, 0.5, 63], ["South", 2, 0.25, 220]])
    ws.column_dimensions.group("B", "C", hidden=True)


def _chart_first(wb):
    from openpyxl.chart import BarChart, Reference

    ws = wb.active
    ws.title = "Data"
    _fill(ws, CASES)
    sheet = wb.create_chartsheet("Chart", 0)
    chart = BarChart()
    chart.add_data(Reference(ws, min_col=2, min_row=1, max_row=3), titles_from_data=True)
    sheet.add_chart(chart)


def _empty_chart_first(wb):
    """A chart sheet with no chart in it (no drawing part): valid, and openpyxl 3.1 itself fails to read it back."""
    ws = wb.active
    ws.title = "Data"
    _fill(ws, CASES)
    wb.create_chartsheet("Chart", 0)


def _chart_between(wb):
    _chart_first(wb)
    _fill(wb.create_sheet("Deaths"), [["Year", "Deaths"], [2010, 0]])


def _everything(wb):
    """A chart sheet, a hidden sheet, then the data with a hidden row and a hidden column."""
    _chart_first(wb)
    old = wb.create_sheet("Old", 1)
    _fill(old, OLD)
    old.sheet_state = "hidden"
    ws = wb["Data"]
    ws.row_dimensions[2].hidden = True
    ws.column_dimensions["B"].hidden = True


def _json(obj) -> bytes:
    return json.dumps(obj).encode()


def _page(*tables: str, head: str = "") -> bytes:
    return ("<!DOCTYPE html><html><head><title>Report</title></head><body>" + head + "".join(tables)
            + "</body></html>").encode()


NAV = ('<table class="nav"><tr><td><a href="/">Home</a></td><td><a href="/data">Data</a></td>'
       '<td><a href="/about">About</a></td></tr></table>')
DATA = "<table><tr><th>Year</th><th>Cases</th></tr><tr><td>2010</td><td>63</td></tr><tr><td>2011</td><td>220</td></tr></table>"
DEATHS = "<table><caption>Deaths</caption><tr><th>Year</th><th>Deaths</th></tr><tr><td>2010</td><td>0</td></tr></table>"


def structured_cases() -> list[Case]:
    cases: list[Case] = []
    add = cases.append
    loaded = [["2010", "63"], ["2011", "220"]]

    # XLSX: hidden sheets, hidden rows and columns, chart sheets (#79)
    add(Case("xlsx hidden first sheet", "hidden-first.xlsx", _book(_hidden_first("hidden")), "load",
             check=all_of(rows_are(loaded), sheet_is("Data"), note_says("sheet 'Old' is hidden; not loaded"))))
    add(Case("xlsx very hidden first sheet", "very-hidden.xlsx", _book(_hidden_first("veryHidden")), "load",
             check=all_of(rows_are(loaded), sheet_is("Data"), note_says("sheet 'Old' is hidden; not loaded"))))
    add(Case("xlsx hidden sheet between visible ones", "hidden-middle.xlsx", _book(_hidden_middle), "load",
             check=all_of(rows_are(loaded), sheet_is("Cases"), note_says("sheet 'Lookup' is hidden; not loaded"),
                          note_says("the workbook also has: Lookup, Deaths"))))
    add(Case("xlsx only a hidden sheet has cells", "hidden-only.xlsx", _book(_only_hidden_has_cells), "load",
             check=all_of(rows_are(loaded), sheet_is("Data"),
                          note_says("sheet 'Data' is hidden in the workbook; it was read because no visible sheet"))))
    add(Case("xlsx hidden rows are kept and named", "hidden-rows.xlsx", _book(_hidden_rows), "load",
             check=all_of(rows_are([["2010", "63"], ["2011", "220"], ["2012", "90"], ["2013", "55"]]),
                          note_says("2 rows of sheet 'Data' are hidden in the workbook (sheet rows 3, 5) and were "
                                    "read like the others"))))
    add(Case("xlsx hidden blank row says nothing", "hidden-blank.xlsx", _book(_hidden_blank_row), "load",
             check=all_of(rows_are(loaded), no_note_about("hidden"))))
    add(Case("xlsx hidden header row", "hidden-header.xlsx", _book(_hidden_header_row), "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are(loaded), note_says("(sheet row 1)"))))
    add(Case("xlsx hidden columns are kept and named", "hidden-cols.xlsx", _book(_hidden_columns), "load",
             check=all_of(columns_are(["Region", "Helper", "Factor", "Cases"]),
                          rows_are([["North", "1", "0.5", "63"], ["South", "2", "0.25", "220"]]),
                          note_says("2 columns of sheet 'Data' are hidden in the workbook (columns B, C) and were "
                                    "read like the others"))))
    add(Case("xlsx chart sheet first", "chart-first.xlsx", _book(_chart_first), "load",
             check=all_of(rows_are(loaded), sheet_is("Data"), note_says("skipped the chart sheet 'Chart'"))))
    add(Case("xlsx empty chart sheet first", "empty-chart.xlsx", _book(_empty_chart_first), "load",
             check=all_of(rows_are(loaded), sheet_is("Data"), note_says("skipped the chart sheet 'Chart'"))))
    add(Case("xlsx chart sheet between two sheets", "chart-between.xlsx", _book(_chart_between), "load",
             check=all_of(rows_are(loaded), sheet_is("Data"), note_says("the workbook also has: Deaths"),
                          note_says("skipped the chart sheet 'Chart'"))))
    add(Case("xlsx chart, hidden sheet, hidden row and column", "everything.xlsx", _book(_everything), "load",
             check=all_of(rows_are(loaded), sheet_is("Data"), note_says("skipped the chart sheet 'Chart'"),
                          note_says("sheet 'Old' is hidden; not loaded"), note_says("(sheet row 2)"),
                          note_says("(column B)"))))

    # JSON: flattened names, repeated keys, numbers a float cannot hold, row limits while decoding (#79)
    add(Case("json nested name meets a flat one", "pi.json",
             _json([{"site": "Lab", "pi name": "Dr Shah", "pi": {"name": "Dr Ode"}}]), "load",
             check=all_of(columns_are(["site", "pi name", "pi.name"]), rows_are([["Lab", "Dr Shah", "Dr Ode"]]),
                          note_says("the nested field pi → name is named 'pi.name', since 'pi name' is already"))))
    add(Case("json nested name first, flat one later", "pi2.json",
             _json([{"pi": {"name": "Dr Ode"}}, {"pi name": "Dr Shah"}]), "load",
             check=all_of(columns_are(["pi.name", "pi name"]), rows_are([["Dr Ode", ""], ["", "Dr Shah"]]),
                          note_says("'pi.name'"))))
    add(Case("json flattened name taken twice over", "abc.json",
             _json([{"a b c": 1, "a.b.c": 2, "a": {"b": {"c": 3}}}]), "load",
             check=all_of(columns_are(["a b c", "a.b.c", "a.b.c (2)"]), rows_are([["1", "2", "3"]]),
                          note_says("'a.b.c (2)'"))))
    add(Case("json repeated key", "repeat.json", b'[{"a": 1, "a": 2}, {"a": 3}]', "load",
             check=all_of(columns_are(["a", "a (2)"]), rows_are([["1", "2"], ["3", ""]]),
                          note_says("the key 'a' is repeated within 1 object; no value was dropped"))))
    add(Case("json repeated key in a nested object", "nested-repeat.json",
             b'[{"id": 1, "pi": {"name": "A", "name": "B"}}]', "load",
             check=all_of(columns_are(["id", "pi name", "pi name (2)"]), rows_are([["1", "A", "B"]]),
                          note_says("the key 'name' is repeated"))))
    add(Case("json repeated column in columns orient", "repeat-cols.json", b'{"x": [1, 2], "x": [3, 4]}', "load",
             check=all_of(columns_are(["x", "x (2)"]), rows_are([["1", "3"], ["2", "4"]]),
                          note_says("the key 'x' is repeated"))))
    add(Case("json repeated rows key", "repeat-rows.json", b'{"columns": ["a"], "rows": [[1]], "rows": [[2]]}',
             "refuse", says="'rows' twice"))
    add(Case("json 1e-400 kept as written", "tiny.json", b'[{"x": 1e-400, "y": 2}]', "load",
             check=all_of(rows_are([["1e-400", "2"]]), no_cell("0"), note_says("kept 1 number as written (1e-400)"))))
    add(Case("json digits a float would lose", "precise.json",
             b'[{"p": 0.1000000000000000055511, "q": 12345678901234567890.5, "r": 0.25, "s": 1.50}]', "load",
             check=all_of(rows_are([["0.1000000000000000055511", "12345678901234567890.5", "0.25", "1.5"]]),
                          note_says("kept 2 numbers as written (0.1000000000000000055511, 12345678901234567890.5)"))))
    add(Case("json ordinary floats say nothing", "floats.json", b'[{"x": 0.1, "y": 2.50, "z": 1E+2, "w": -3.75e-2}]',
             "load", check=all_of(rows_are([["0.1", "2.5", "100", "-0.0375"]]), no_note_about("as written"))))
    add(Case("json keys differing in case", "case.json", b'[{"Dose": 5, "dose": 6}]', "load",
             check=all_of(columns_are(["Dose", "dose (2)"]), rows_are([["5", "6"]]), note_says("renamed duplicate"))))
    add(Case("json a million numbers", "million.json", b"[" + b"0," * 999_999 + b"0]", "refuse", says="MAX_ROWS"))
    add(Case("json 250,000 records", "records.json",
             b"[" + b",".join([b'{"a":1}'] * 250_000) + b"]", "refuse", says="MAX_ROWS"))
    add(Case("json rows past the limit, then broken", "broken-tail.json",
             b"[" + b"[1]," * (MAX_ROWS + 100) + b"{oops", "refuse", says="MAX_ROWS"))  # refused before the tail is read
    add(Case("json one column of a million values", "column.json", b'{"x": [' + b"0," * 999_990 + b'0]}', "refuse",
             says="MAX_ROWS"))
    add(Case("json index orient with 150,000 keys", "index.json",
             b"{" + b",".join(b'"r%d":{}' % i for i in range(150_000)) + b"}", "refuse", says="MAX_ROWS"))

    # HTML: block boundaries in cells, the page's table chosen, omitted end tags, row limits while parsing (#79)
    add(Case("html table nested in a cell", "nested-cell.html", _page(
        "<table><tr><th>Site</th><th>Readings</th></tr><tr><td>A</td><td><table><tr><td>12</td><td>34</td></tr>"
        "</table></td></tr><tr><td>B</td><td>56</td></tr></table>"), "load",
        check=all_of(rows_are([["A", "12; 34"], ["B", "56"]]), no_cell("1234"))))
    add(Case("html list items in a cell", "list-cell.html", _page(
        "<table><tr><th>Drug</th><th>Doses (mg)</th></tr><tr><td>A</td><td><ul><li>10</li><li>20</li></ul></td></tr>"
        "<tr><td>B</td><td><ol><li>5</li></ol></td></tr></table>"), "load",
        check=all_of(rows_are([["A", "10; 20"], ["B", "5"]]), no_cell("1020"))))
    add(Case("html paragraphs and divs in a cell", "para-cell.html", _page(
        "<table><tr><th>Drug</th><th>Dose</th><th>Note</th></tr><tr><td>A</td><td><p>5</p><p>50</p></td>"
        "<td><div>Approved 2019.</div><div>Withdrawn 2021</div></td></tr></table>"), "load",
        check=all_of(rows_are([["A", "5; 50", "Approved 2019. Withdrawn 2021"]]), no_cell("550"))))
    add(Case("html line breaks in a cell", "br-cell.html", _page(
        "<table><tr><th>Site<br>name</th><th>Counts</th></tr><tr><td>North<br/>East</td><td>1<br>234</td></tr>"
        "</table>"), "load",
        check=all_of(columns_are(["Site name", "Counts"]), rows_are([["North East", "1; 234"]]), no_cell("1234"))))
    add(Case("html navigation table first", "nav.html", _page(NAV, DATA), "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are(loaded), sheet_is("table 2 (Year, Cases)"),
                          note_says("read table 2 of 2 (Year, Cases); the page also has: table 1 (Home, Data, About)"))))
    add(Case("html navigation of several rows of links", "nav-rows.html", _page(
        '<table><tr><td><a href="/a">News</a></td><td><a href="/b">Sport</a></td></tr>'
        '<tr><td><a href="/c">Health</a></td><td><a href="/d">Data</a></td></tr></table>', DATA), "load",
        check=all_of(rows_are(loaded), note_says("read table 2 of 2 (Year, Cases)"))))
    add(Case("html layout table around the data", "layout.html", _page(
        "<table><tr><td>Menu</td><td>" + DATA + "</td></tr><tr><td>Footer</td><td>© 2024</td></tr></table>"), "load",
        check=all_of(columns_are(["Year", "Cases"]), rows_are(loaded), note_says("read table 2 of 2 (Year, Cases)"))))
    add(Case("html header-only table before the data", "header-only.html", _page(
        "<table><tr><th>Contents</th><th>Page</th></tr></table>", DATA), "load",
        check=all_of(rows_are(loaded), note_says("read table 2 of 2"))))
    add(Case("html five tables, the data third", "five.html", _page(
        NAV, "<table></table>", "<table><tr><td>Logo</td></tr></table>", DATA, DEATHS), "load",
        check=all_of(rows_are(loaded), note_says("read table 3 of 4 (Year, Cases); the page also has: table 1 (Home, "
                                                 "Data, About), table 2 (Logo), table 4 (Deaths)"))))
    add(Case("html caption names the table read", "captioned.html", _page(NAV, DEATHS, DATA), "load",
             check=all_of(rows_are([["2010", "0"]]), title_is("Deaths"), sheet_is("table 2 (Deaths)"),
                          note_says("read table 2 of 3 (Deaths); the page also has: table 1 (Home, Data, About), "
                                    "table 3 (Year, Cases)"))))
    add(Case("html omitted cell and row end tags", "no-end-tags.html",
             b"<table><tr><th>Year<th>Cases<tr><td>2010<td>63<tr><td>2011<td>220</table>", "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are(loaded))))
    add(Case("html omitted end tags with thead and tbody", "no-end-tags2.html",
             b"<table><thead><tr><th>Year<th>Cases<tbody><tr><td>2010<td>63<tr><td>2011<td>220<tfoot><tr><td>All"
             b"<td>283</table>", "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are([*loaded, ["All", "283"]]))))
    add(Case("html 230,000 rows without end tags", "long.html", b"<table><tr><th>n" + b"<tr><td>1" * 230_000,
             "refuse", says="MAX_ROWS"))
    add(Case("html 90,000 rows", "long2.html",
             b"<table><tr><th>n</th></tr>" + b"<tr><td>1</td></tr>" * 90_000 + b"</table>", "refuse", says="MAX_ROWS"))
    add(Case("html empty rows do not count", "empty-rows.html",
             b"<table><tr><th>Year</th><th>Cases</th></tr>" + b"<tr></tr>" * 150_000
             + b"<tr><td>2010</td><td>63</td></tr><tr><td>2011</td><td>220</td></tr></table>", "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are(loaded))))
    add(Case("html data table, then one past the row limit", "then-long.html",
             _page(DATA, "<table>" + "<tr><td>1</td><td>2</td></tr>" * (MAX_ROWS + 50) + "</table>"), "load",
             check=all_of(rows_are(loaded), note_says("stopped reading the page at table 2"))))

    # Markdown: several tables, prose, escaped pipes, alignment rows, row limits while reading (#79)
    two = "# Cases\n\n| Year | Cases |\n|---|---|\n| 2010 | 63 |\n| 2011 | 220 |\n\n## Deaths\n\n| Year | Deaths |\n" \
          "|---|---|\n| 2010 | 0 |\n"
    add(Case("markdown two tables", "two.md", two.encode(), "load",
             check=all_of(rows_are(loaded), title_is("Cases"),
                          note_says("read table 1 of 2 (Cases); the file also has: table 2 (Deaths)"))))
    add(Case("markdown table after prose", "prose.md",
             b"We counted cases in 2010 | and 2011.\n\nThe table below has them.\n\n| Year | Cases |\n|---|---|\n"
             b"| 2010 | 63 |\n| 2011 | 220 |\n", "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are(loaded), title_is("The table below has them."))))
    add(Case("markdown escaped pipes", "pipes.md",
             b"| Rule | Cases |\n|---|---|\n| a \\| b | 63 |\n| `x \\| y` | 220 |\n", "load",
             check=all_of(columns_are(["Rule", "Cases"]), rows_are([["a | b", "63"], ["`x | y`", "220"]]))))
    add(Case("markdown one-dash alignment row", "align.md", b"| Year | Cases |\n|:-:|-:|\n| 2010 | 63 |\n| 2011 | 220 |\n",
             "load", check=all_of(columns_are(["Year", "Cases"]), rows_are(loaded), no_cell("-"))))
    add(Case("markdown without outer pipes", "bare.md",
             b"Measles\n\nYear | Cases\n--- | ---\n2010 | 63\n2011 | 220\n", "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are(loaded), title_is("Measles"))))
    add(Case("markdown table broken by a blank line", "gap.md",
             b"| Year | Cases |\n|---|---|\n| 2010 | 63 |\n\n| 2011 | 220 |\n", "load",
             check=all_of(rows_are([["2010", "63"]]), note_says("the file also has: table 2 (2011, 220)"))))
    add(Case("markdown example table in a code fence", "fence.md",
             b"```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\n\n| Year | Cases |\n|---|---|\n| 2010 | 63 |\n| 2011 | 220 |\n",
             "load", check=all_of(columns_are(["Year", "Cases"]), rows_are(loaded))))
    add(Case("markdown 500,000 rows", "long.md", b"| n |\n|---|\n" + b"|1|\n" * ((MAX_BYTES - 20) // 4), "refuse",
             says="MAX_ROWS"))
    return cases
