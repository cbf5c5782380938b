"""CSV and TSV uploads that used to be read silently wrong (#79): encodings, numbers in other locales, the lines
around a table, and what reading them costs. The corpus (tests/hostile_cases_delimited.py) runs whole uploads; these
tests pin each rule, and the ways to read a file the other way (``decimal=``, the CLI's --decimal, the UI button).
"""

from __future__ import annotations

import time

import pytest

from kb.table_csv import _read_csv, _sniff_delimiter
from kb.table_model import parse_number
from kb.table_numbers import NumberMarks, read_numbers, readings
from kb.tables import TableError, load_table
from kb.text_decoding import decode_text, decode_upload
from tests.ui_button_probe import run_probe


# -- encodings -------------------------------------------------------------------------------------------------------
def test_one_stray_latin1_byte_keeps_a_utf8_file_utf8_and_is_marked():
    rows = "".join(f"Zürich {i},{i}\n" for i in range(2000)).encode()
    data = b"City,Cases\n" + rows.replace(b"Z\xc3\xbcrich 77,", b"Z\xfcrich 77,")
    decoded = decode_upload(data)
    assert decoded.encoding is None
    assert "Zürich 76,76" in decoded.text and "Z\ufffdrich 77,77" in decoded.text and "Ã" not in decoded.text
    assert len(decoded.notes) == 1 and "1 byte on line 79" in decoded.notes[0]
    table = load_table(data, name="cities.csv")
    assert table.rows[77] == ["Z\ufffdrich 77", "77"] and table.rows[0] == ["Zürich 0", "0"]
    assert any("1 byte on line 79" in n for n in table.notes)


def test_mixed_encodings_count_every_replaced_byte_and_name_the_lines():
    data = "a,b\nSão,1\n".encode() + "Brasília,2\nGoiânia,3\n".encode("cp1252") + "Belém,4\n".encode()
    decoded = decode_upload(data)
    assert decoded.text.splitlines() == ["a,b", "São,1", "Bras\ufffdlia,2", "Goi\ufffdnia,3", "Belém,4"]
    assert "2 bytes on lines 3, 4" in decoded.notes[0]


@pytest.mark.parametrize("text, encoding", [
    ("Stadt,Fälle\n" + "".join(f"Zürich {i},{i}\n" for i in range(300)), "cp1252"),
    ("City,Pop\nSão Paulo,12\nBrasília,3\n", "latin-1"),
    ("Miasto,Ludność\nŁódź,670\nGdańsk,470\nKraków,780\n", "cp1250"),
    ("Город,Население\nМосква,12\nКазань,1\n", "cp1251"),
])
def test_single_byte_files_still_decode_whole(text, encoding):
    decoded = decode_upload(text.encode(encoding))
    assert decoded.text == text and decoded.encoding is not None
    assert not any("\ufffd" in n or "UTF-8 except" in n for n in decoded.notes)


def test_a_guessed_code_page_names_what_the_other_one_would_read():
    decoded = decode_upload("Město;Obyvatel\nPlzeň;175219\nČeské Budějovice;94229\n".encode("cp1250"))
    assert decoded.text.startswith("Město") or "“Plzeň”" in decoded.notes[0]


def test_byte_order_marks_are_never_part_of_the_first_name():
    assert decode_text("\ufeff\ufeffYear,Cases\n".encode())[0] == "Year,Cases\n"
    assert load_table("\ufeffYear,Cases\n2010,63\n".encode("utf-16-le"), name="u.csv").columns == ["Year", "Cases"]


# -- numbers ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("body, expected", [
    ("1234", [("1234", None, None)]),
    ("1,234", [("1", "234", ","), ("1234", None, None)]),  # ambiguous: both readings
    ("248.960", [("248", "960", "."), ("248960", None, None)]),
    ("0,500", [("0", "500", ",")]),  # no thousands group starts with 0
    ("1234,567", [("1234", "567", ",")]),
    ("891,1", [("891", "1", ",")]),
    ("3.645.000", [("3645000", None, ",")]),
    ("1,234,567", [("1234567", None, ".")]),
    ("1.234,5", [("1234", "5", ",")]),
    ("1,234.5", [("1234", "5", ".")]),
    ("1'553'423", [("1553423", None, None)]),
    ("68 042 591", [("68042591", None, None)]),
    ("1\u00a0234,5", [("1234", "5", ",")]),
    ("12\u202f345", [("12345", None, None)]),
    ("3,34,06,061", [("33406061", None, ".")]),
    ("01.03.2021", []), ("1.2.3", []), ("030 123 456", []), ("12 34", []), ("1 234'567", []),
])
def test_a_body_reads_every_way_it_can(body, expected):
    assert [(r.whole, r.decimals, r.decimal) for r in readings(body)] == expected


def _read(rows, **marks):
    return read_numbers([list(r) for r in rows], NumberMarks(**marks))


def test_one_unambiguous_cell_decides_the_file():
    read = _read([["Ort", "Einwohner", "Anteil"], ["Kiel", "248.960", "0,5"], ["Lübeck", "218.095", "3"]],
                 delimiter=";")
    assert read.rows[1:] == [["Kiel", "248,960", "0.5"], ["Lübeck", "218,095", "3"]] and read.decimal == ","
    assert not any("assumed" in n for n in read.notes)
    point = _read([["a", "b"], ["1.234", "0.5"]], delimiter=";")  # a point elsewhere decides the other way
    assert point.rows[1] == ["1.234", "0.5"] and point.decimal is None


def test_ambiguous_cells_follow_the_delimiter_and_the_notes_say_so():
    semi = _read([["Produkt", "Preis"], ["Käse", "1,234"]], delimiter=";")
    assert semi.rows[1] == ["Käse", "1.234"] and semi.decimal == ","
    assert any("assumed decimal commas" in n and "“Preis”" in n and "decimal points" in n for n in semi.notes)
    comma = _read([["Item", "Amount"], ["A", "1,234"]], delimiter=",")
    assert comma.rows[1] == ["A", "1,234"] and parse_number(comma.rows[1][1]) == 1234 and comma.decimal == "."
    assert any("assumed decimal points" in n and "1,234 was read as 1234" in n for n in comma.notes)


@pytest.mark.parametrize("decimal, expected, unread", [
    (",", ["1.234", "2.5", "1,234,567"], 1),  # "1,234,567" is no number with decimal commas: left, and said
    (".", ["1,234", "2,5", "1,234,567"], 1),  # "2,5" is no number with decimal points
])
def test_the_person_can_choose_the_decimal_mark(decimal, expected, unread):
    read = _read([["x"], ["1,234"], ["2,5"], ["1,234,567"]], decimal=decimal)
    assert [r[0] for r in read.rows[1:]] == expected and read.decimal == decimal
    assert sum("as asked" in n for n in read.notes) == unread


def test_columns_with_different_marks_are_each_read_their_own_way_and_said():
    read = _read([["Land", "Anteil", "Kurs"], ["DE", "0,5", "1.25"], ["FR", "1,75", "1.5"]], delimiter=";")
    assert read.rows[1:] == [["DE", "0.5", "1.25"], ["FR", "1.75", "1.5"]]
    assert any("“Anteil”" in n and "“Kurs”" in n for n in read.notes)
    both = _read([["Anteil", "Kurs", "Menge"], ["0,5", "1.25", "1,234"]], delimiter=",")
    assert both.rows[1] == ["0.5", "1.25", "1,234"]
    assert any(n.startswith("assumed decimal points in column “Menge”: the file writes both decimal marks")
               for n in both.notes)
    mixed = _read([["a", "b"], ["x", "1,5"], ["y", "2.5"]])
    assert mixed.rows[1:] == [["x", "1,5"], ["y", "2.5"]] and any("mix decimal commas and points" in n
                                                                  for n in mixed.notes)


@pytest.mark.parametrize("cell, converted", [
    ("1'553'423", "1,553,423"), ("1’250.50", "1250.50"), ("68 042 591", "68,042,591"),
    ("12\u202f345", "12,345"), ("(1.234,50)", "(1234.50)"), ("12,5 %", "12.5 %"), ("3,50 €", "3.50 €"),
    ("−3,5", "−3.5"), ("CHF 1'234.50", "CHF 1234.50"), ("1.234.567,89", "1,234,567.89"),
])
def test_locale_numbers_become_numbers_every_reader_parses(cell, converted):
    read = _read([["x", "y"], ["a", cell], ["b", "0,5" if "," in cell else "0.5"]], delimiter=";")
    assert read.rows[1][1] == converted
    assert parse_number(converted) is not None


@pytest.mark.parametrize("cell", ["030 123 456", "+49 151 234 567", "01.03.2021", "03.2021", "2021-03-01", "1.5e-3",
                                  "12:30", "A-12", "1,2,3"])
def test_what_only_looks_like_a_number_is_left_alone(cell):
    read = _read([["x", "y"], ["a", cell], ["b", "1,5"]], delimiter=";")
    assert read.rows[1][1] == cell


def test_parse_number_reads_a_currency_after_the_number():
    assert parse_number("3.50 €") == 3.5 and parse_number("12 $") == 12 and parse_number("5 $5") is None


def test_load_table_passes_the_decimal_mark_and_refuses_another():
    data = "Produkt;Preis\nKäse;1,234\nBrot;2,345\n".encode()
    assert load_table(data, name="p.csv").rows[0] == ["Käse", "1.234"]
    as_points = load_table(data, name="p.csv", decimal=".")
    assert as_points.rows[0] == ["Käse", "1,234"] and as_points.decimal == "."
    with pytest.raises(TableError, match="decimal mark"):
        load_table(data, name="p.csv", decimal="comma")
    workbook_note = load_table(b'[{"a": 1.5}]', name="x.json", decimal=",").notes
    assert any("applies to text tables" in n for n in workbook_note)


# -- the lines around a table --------------------------------------------------------------------------------------
def test_a_repeated_header_and_title_are_dropped_with_their_lines():
    t = load_table(b"Cases by year\nYear,Cases\n2010,63\nCases by year\nYear,Cases\n2011,220\n", name="j.csv")
    assert t.title == "Cases by year" and t.columns == ["Year", "Cases"] and t.rows == [["2010", "63"], ["2011", "220"]]
    assert any("2 repeated header or title lines (lines 4, 5)" in n for n in t.notes)


def test_line_numbers_count_an_excel_sep_line():
    t = load_table(b"sep=;\nYear;Cases\n2010;63\nYear;Cases\n2011;220\n", name="s.csv")
    assert t.rows == [["2010", "63"], ["2011", "220"]] and any("(line 4)" in n for n in t.notes)


@pytest.mark.parametrize("data, title, columns", [
    (b"Hospital antibiotic use, Q1-Q2 2025\nWard,Beds,DDD\nA,10,5\n", "Hospital antibiotic use, Q1-Q2 2025",
     ["Ward", "Beds", "DDD"]),
    (b"Measles\nby year\nYear,Cases\n2010,63\n", "Measles — by year", ["Year", "Cases"]),
    (b"Measles cases by year\n\nYear,Cases\n2010,63\n", "Measles cases by year", ["Year", "Cases"]),
])
def test_title_lines_become_the_title(data, title, columns):
    t = load_table(data, name="t.csv")
    assert (t.title, t.columns) == (title, columns) and len(t.rows) == 1
    assert any(n.startswith("read the line") and "as the title" in n for n in t.notes)


def test_a_first_row_of_names_over_data_is_no_title():
    t = load_table(b"Name,\nann,5\nbob,6\n", name="n.csv")
    assert t.title == "n" and t.rows == [["ann", "5"], ["bob", "6"]]
    t = load_table(b"Year, Cases\n2010, 63\n", name="s.csv")
    assert t.columns == ["Year", "Cases"] and t.rows == [["2010", "63"]]


def test_a_units_row_joins_the_column_names():
    t = load_table(b"Drug,Dose,Share\nUnit,(mg),%\naspirin,100,12.5\n", name="u.csv")
    assert t.columns == ["Drug", "Dose (mg)", "Share (%)"] and t.rows == [["aspirin", "100", "12.5"]]
    assert any("units" in n for n in t.notes)
    kept = load_table(b"Drug,Dose,Grade\n,n/a,A\naspirin,100,B\n", name="k.csv")  # no units: a row
    assert kept.rows[0] == ["", "n/a", "A"]


def test_comment_and_source_lines_are_set_apart():
    t = load_table(b"# exported by X\nYear,Cases\n2010,63\n2011,220\nSource: WHO, 2012\n", name="c.csv")
    assert t.columns == ["Year", "Cases"] and t.rows == [["2010", "63"], ["2011", "220"]]
    assert any("comment line" in n for n in t.notes) and any("“Source: WHO, 2012”" in n for n in t.notes)
    rank = load_table(b"#,Name\n1,ann\n2,bob\n", name="r.csv")  # a column named "#" is no comment
    assert rank.columns == ["#", "Name"]


# -- cost --------------------------------------------------------------------------------------------------------------
def test_the_delimiter_sniff_is_bounded():
    t0 = time.process_time()
    assert _sniff_delimiter(',"x' * 21_845) == ","
    assert _sniff_delimiter(',"x' * 300_000) == ","
    assert time.process_time() - t0 < 1.0  # csv.Sniffer took ~30 s on the first
    assert _sniff_delimiter("Wert1;Wert2\n" + "1,5;2,5\n" * 10) == ";"  # decimal commas are no delimiter
    assert _sniff_delimiter("1,5;2,5\n" * 10) == ";"
    with pytest.raises(TableError, match="quote"):
        _read_csv(',"x' * 21_845, None, 5000)


def test_blank_rows_do_not_count_and_the_row_limit_stops_the_reading():
    read = _read_csv("a,b\n" + "1,2\n\n,\n" * 900, None, max_rows=1000)
    assert len(read.grid) == 901 and "dropped 1,800 blank rows" in read.notes
    # Over the limit, the reading stops there: the broken quote at the end is never reached.
    with pytest.raises(TableError, match="more than 1,000 rows"):
        _read_csv("a,b\n" + "1,2\n" * 1020 + '"never closed\n', None, max_rows=1000)


# -- the ways to choose the other reading -----------------------------------------------------------------------------
def test_add_table_file_and_the_cli_pass_the_decimal_mark(tmp_path):
    from assistant.cli.chat_cli import add_table_file as cli_add, split_decimal_option
    from assistant.settings import Settings
    from memory.store import Memory
    from tools.contracts import Session

    class Deps:
        settings = Settings(_env_file=None, data_dir=tmp_path)
        memory = Memory(tmp_path / "memory.db")

    path = tmp_path / "preise.csv"
    path.write_bytes("Produkt;Preis\nKäse;1,234\n".encode())
    session = Session("c1")
    first = cli_add(Deps, session, path)
    assert session.tables["preise"].rows == [["Käse", "1.234"]] and "--decimal point" in first
    again = cli_add(Deps, session, path, decimal="point")
    assert list(session.tables) == ["preise"] and session.tables["preise"].rows == [["Käse", "1,234"]]
    assert "--decimal comma" in again
    assert split_decimal_option(f"/table {path} --decimal point") == (f"/table {path}", "point")
    assert split_decimal_option(f"/table {path}") == (f"/table {path}", None)


def test_a_text_upload_says_which_bytes_were_not_utf8(tmp_path):
    from assistant.cli.chat_cli import add_text
    from assistant.settings import Settings
    from memory.store import Memory
    from tools.contracts import Session

    class Deps:
        settings = Settings(_env_file=None, data_dir=tmp_path)
        memory = Memory(tmp_path / "memory.db")

    path = tmp_path / "notes.txt"
    path.write_bytes(("Zürich reported 12 cases.\n" * 20).encode() + b"Z\xfcrich again.\n")
    shown = add_text(Deps, Session("c1"), path)
    assert "1 byte on line 21" in shown
    plain = tmp_path / "plain.txt"
    plain.write_text("Aspirin lowers fever.\n")
    assert "\n" not in add_text(Deps, Session("c2"), plain)  # nothing assumed, nothing said


UI_PROBE = r"""
path = Path(sys.argv[1])
path.write_bytes("Produkt;Preis\nKäse;1,234\n".encode())

async def main():
    await app.acknowledge_table(load_table(path, name="preise.csv"), path, "preise.csv")
    first = sent[-1]
    for forged in [{"upload": "/etc/os-release", "decimal": "."}, {"upload": first["payloads"][0]["upload"],
                   "decimal": "/etc"}, "not a dict"]:
        await app.on_choose_decimal(Action(forged))
    refusals = [m["content"] for m in sent[1:]]
    await app.on_choose_decimal(Action(first["payloads"][0]))
    print("JSON" + json.dumps({"first": first, "refusals": refusals, "loads": loads, "last": sent[-1]}))

asyncio.run(main())
"""


def test_the_ui_offers_the_other_decimal_mark_and_refuses_forged_clicks(tmp_path):
    out = run_probe(UI_PROBE, tmp_path / "preise.csv", tmp_path)
    assert out["first"]["labels"] == ["Read with decimal points"]
    assert set(out["first"]["payloads"][0]) == {"upload", "decimal"} and "/" not in out["first"]["payloads"][0]["upload"]
    assert "assumed decimal commas" in out["first"]["content"]
    assert len(out["refusals"]) == 3 and all(r.startswith("I could not read the file again:") for r in out["refusals"])
    assert [ld["decimal"] for ld in out["loads"]] == ["."]
    assert out["last"]["labels"] == ["Read with decimal commas"] and out["last"]["content"].startswith("Loaded")
