"""Hostile and careless CSV, TSV and text uploads beyond the first 68 cases (#79): each a right load checked cell by
cell (and its assumptions named in the notes), or a refusal that names what is wrong.

The kinds: encodings (a stray byte in a UTF-8 file, mixed halves, BOMs, code pages), numbers in other locales
(decimal commas, thousands points, apostrophes, spaces, no-break spaces, accounting negatives, percentages,
currencies) and forms that only look like numbers (dates, phone numbers), structure (titles, units rows, comment
lines, repeated headers, footers, trailing delimiters, CR and CRLF line ends), and cost (blank lines, quote storms).
"""

from __future__ import annotations

from tests.hostile_uploads import (MAX_ROWS, Case, Check, Loaded, all_of, cells, columns_are, has_cell,
                                   note_mentions, text_has)


def rows_are(expected: list[list[str]]) -> Check:
    return lambda t: None if t.rows == expected else f"rows {t.rows[:6]} != {expected[:6]}"


def title_is(expected: str) -> Check:
    return lambda t: None if t.title == expected else f"title {t.title!r} != {expected!r}"


def row_count(n: int) -> Check:
    return lambda t: None if len(t.rows) == n else f"{len(t.rows)} rows, not {n}"


def no_cell_has(text: str) -> Check:
    def check(t: Loaded) -> str | None:
        bad = [c for c in [*t.columns, *cells(t)] if text in c]
        return f"{text!r} in {bad[:3]}" if bad else None
    return check


def no_note_mentions(word: str) -> Check:
    return lambda t: None if not any(word in n for n in t.notes) else f"a note about {word!r}: {t.notes}"


def any_of(*checks: Check) -> Check:
    def check(t: Loaded) -> str | None:
        problems = [c(t) for c in checks]
        return None if any(p is None for p in problems) else " and ".join(p for p in problems if p)
    return check


def _utf8_with_stray_byte() -> bytes:
    """2,000 UTF-8 rows, one of them with a Latin-1 'ü' (the byte 0xFC) pasted in."""
    lines = ["Stadt,Fälle"] + [f"Zürich {i},{i}" for i in range(2000)]
    data = "\n".join(lines).encode("utf-8") + b"\n"
    return data.replace("Zürich 1234,".encode(), b"Z\xfcrich 1234,")


def _mixed_halves() -> bytes:
    utf8 = "".join(f"São Paulo {i},{i}\n" for i in range(200)).encode("utf-8")
    latin = "".join(f"Brasília {i},{i}\n" for i in range(200, 260)).encode("cp1252")
    return b"City,Cases\n" + utf8 + latin


def delimited_cases() -> list[Case]:
    cases: list[Case] = []
    add = cases.append

    # --- encodings ---------------------------------------------------------------------------------------------
    add(Case("utf-8 file of 2,000 rows with one stray latin-1 byte", "stray.csv", _utf8_with_stray_byte(), "load",
             check=all_of(has_cell("Zürich 0"), has_cell("Zürich 1999"), has_cell("Z\ufffdrich 1234"),
                          no_cell_has("Ã"), note_mentions("line 1236"), note_mentions("1 byte"))))
    add(Case("utf-8 and cp1252 halves joined", "halves.csv", _mixed_halves(), "load",
             check=all_of(has_cell("São Paulo 0"), has_cell("São Paulo 199"), has_cell("Bras\ufffdlia 200"),
                          no_cell_has("Ã"), note_mentions("60 bytes"), note_mentions("202, 203"))))
    add(Case("pure cp1252 file of 2,000 rows", "cp1252-long.csv",
             ("Stadt,Fälle\n" + "".join(f"Zürich {i},{i}\n" for i in range(2000))).encode("cp1252"), "load",
             check=all_of(has_cell("Zürich 0"), has_cell("Zürich 1999"), note_mentions("decoded the file as"),
                          no_note_mentions("replaced"))))
    add(Case("ascii file with one latin-1 byte", "one-byte.csv",
             b"City,Cases\n" + b"".join(b"Bern %d,%d\n" % (i, i) for i in range(300)) + b"Z\xfcrich,7\n", "load",
             check=all_of(has_cell("Zürich"), has_cell("Bern 299"), note_mentions("decoded the file as"))))
    add(Case("utf-8 bom, semicolons and decimal commas", "bom-semi.csv",
             "\ufeffStadt;Fläche\nKöln;405,02\nMünchen;310,7\n".encode("utf-8"), "load",
             check=all_of(columns_are(["Stadt", "Fläche"]), rows_are([["Köln", "405.02"], ["München", "310.7"]]),
                          note_mentions("decimal comma"))))
    add(Case("two byte-order marks", "bom2.csv", "\ufeff\ufeffYear,Cases\n2010,63\n".encode("utf-8"), "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are([["2010", "63"]]))))
    add(Case("utf-16le tsv with bom", "u16.tsv", "\ufeffOrt\tAnzahl\nGenève\t12\nLuzern\t8\n".encode("utf-16-le"),
             "load", check=all_of(columns_are(["Ort", "Anzahl"]), rows_are([["Genève", "12"], ["Luzern", "8"]]))))
    add(Case("cp1251 ukrainian", "ua.csv", "Місто;Населення\nКиїв;2952301\nЛьвів;717273\n".encode("cp1251"), "load",
             check=all_of(columns_are(["Місто", "Населення"]), rows_are([["Київ", "2952301"], ["Львів", "717273"]]))))
    add(Case("cp1250 czech: right or the other reading named", "cz.csv",
             "Město;Obyvatel\nPlzeň;175219\nČeské Budějovice;94229\nÚstí nad Labem;92716\n".encode("cp1250"), "load",
             check=all_of(has_cell("175219"), any_of(has_cell("Plzeň"), note_mentions("Plzeň")))))
    add(Case("utf-8 bom and a stray byte", "bom-stray.csv",
             b"\xef\xbb\xbfCity,Cases\n" + "".join(f"Köln {i},{i}\n" for i in range(50)).encode() + b"K\xf6ln 50,50\n",
             "load", check=all_of(columns_are(["City", "Cases"]), has_cell("Köln 49"), has_cell("K\ufffdln 50"),
                                  note_mentions("line 52"))))
    add(Case("cp1252 semicolon file with decimal commas", "cp1252-semi.csv",
             "Straße;Länge (km)\nHauptstraße;1.234,5\nGartenweg;0,8\n".encode("cp1252"), "load",
             check=all_of(columns_are(["Straße", "Länge (km)"]),
                          rows_are([["Hauptstraße", "1234.5"], ["Gartenweg", "0.8"]]), note_mentions("decimal comma"))))
    add(Case("text upload: utf-8 with one stray byte", "notes.txt",
             ("Zürich reported 12 cases. " * 400).encode("utf-8") + b"Z\xfcrich again.\n", "load", upload="text",
             check=all_of(text_has("Zürich reported 12 cases."), text_has("Z\ufffdrich again"),
                          lambda t: None if "Ã" not in cells(t)[0] else "decoded as cp1252")))
    add(Case("text upload with a bom and crlf", "crlf.txt", "\ufeffAspirin lowers fever.\r\nIt is cheap.\r\n"
             .encode("utf-8"), "load", upload="text", check=text_has("Aspirin lowers fever.")))

    # --- numbers in other locales --------------------------------------------------------------------------------
    add(Case("thousands points in a semicolon file with one 0,5 elsewhere", "kiel.csv",
             "Ort;Einwohner;Anteil\nKiel;248.960;0,5\nLübeck;218.095;3\n".encode("utf-8"), "load",
             check=all_of(rows_are([["Kiel", "248,960", "0.5"], ["Lübeck", "218,095", "3"]]),
                          note_mentions("decimal comma"))))
    add(Case("semicolon file of only ambiguous 1,234 prices", "preise.csv",
             "Produkt;Preis (€/kg)\nKäse;1,234\nBrot;2,345\n".encode("utf-8"), "load",
             check=all_of(rows_are([["Käse", "1.234"], ["Brot", "2.345"]]), note_mentions("assumed decimal commas"),
                          note_mentions("decimal points"))))
    add(Case("comma file of only ambiguous quoted 1,234", "amounts.csv", b'Item,Amount\nA,"1,234"\nB,"5,678"\n',
             "load", check=all_of(rows_are([["A", "1,234"], ["B", "5,678"]]), note_mentions("assumed decimal points"),
                                  note_mentions("decimal commas"))))
    add(Case("comma file of only ambiguous 1.234", "weights.csv", b"Item,Weight\nA,1.234\nB,5.678\n", "load",
             check=all_of(rows_are([["A", "1.234"], ["B", "5.678"]]), note_mentions("assumed decimal points"))))
    add(Case("1.234 beside an unambiguous 2.5 needs no assumption", "weights2.csv", b"Item,Weight\nA,1.234\nB,2.5\n",
             "load", check=all_of(rows_are([["A", "1.234"], ["B", "2.5"]]), no_note_mentions("assumed"))))
    add(Case("english thousands and decimals left alone", "en.csv",
             b'Country,Population,Share\nIndia,"1,428,627,663",0.5\nChina,"1,425,671,352",17.7\n', "load",
             check=all_of(rows_are([["India", "1,428,627,663", "0.5"], ["China", "1,425,671,352", "17.7"]]),
                          no_note_mentions("assumed"), no_note_mentions("decimal comma"))))
    add(Case("swiss apostrophe thousands", "kantone.csv",
             "Kanton,Einwohner\nZürich,1'553'423\nBern,1'043'132\n".encode("utf-8"), "load",
             check=all_of(rows_are([["Zürich", "1,553,423"], ["Bern", "1,043,132"]]), note_mentions("thousands"))))
    add(Case("typographic apostrophe thousands with decimals", "chf.csv",
             "Posten;Betrag\nMiete;1’250.50\nLohn;12’480.00\n".encode("utf-8"), "load",
             check=all_of(rows_are([["Miete", "1250.50"], ["Lohn", "12,480.00"]]), note_mentions("thousands"))))
    add(Case("space thousands in a french file", "pays.csv",
             "Pays;Population\nFrance;68 042 591\nBelgique;11 697 557\n".encode("utf-8"), "load",
             check=all_of(rows_are([["France", "68,042,591"], ["Belgique", "11,697,557"]]),
                          note_mentions("thousands"))))
    add(Case("no-break space thousands with decimal commas", "nbsp.csv",
             "Poste;Montant\nA;1\u00a0234\u00a0567,89\nB;12\u00a0345,6\n".encode("utf-8"), "load",
             check=all_of(rows_are([["A", "1,234,567.89"], ["B", "12,345.6"]]), note_mentions("decimal comma"))))
    add(Case("narrow no-break space thousands", "nnbsp.csv",
             "Poste;Montant\nA;12\u202f345\nB;678\u202f901\n".encode("utf-8"), "load",
             check=all_of(rows_are([["A", "12,345"], ["B", "678,901"]]), note_mentions("thousands"))))
    add(Case("german full form 1.234.567,89", "de.csv",
             "Konto;Saldo\nA;1.234.567,89\nB;-1.234\nC;0,5\n".encode("utf-8"), "load",
             check=all_of(rows_are([["A", "1,234,567.89"], ["B", "-1234"], ["C", "0.5"]]),
                          note_mentions("decimal comma"))))
    add(Case("accounting negatives with decimal commas", "bilanz.csv",
             "Posten;Betrag\nUmsatz;12.345,50\nVerlust;(1.234,50)\n".encode("utf-8"), "load",
             check=all_of(rows_are([["Umsatz", "12,345.50"], ["Verlust", "(1234.50)"]]))))
    add(Case("percentages written 12,5 %", "anteil.csv",
             "Partei;Anteil\nA;12,5 %\nB;7,25 %\n".encode("utf-8"), "load",
             check=all_of(rows_are([["A", "12.5 %"], ["B", "7.25 %"]]), note_mentions("decimal comma"))))
    add(Case("euro amounts after the number", "euro.csv", "Artikel;Preis\nTee;3,50 €\nKaffee;12,90 €\n".encode("utf-8"),
             "load", check=all_of(rows_are([["Tee", "3.50 €"], ["Kaffee", "12.90 €"]]),
                                  note_mentions("decimal comma"))))
    add(Case("unicode minus with decimal commas", "minus.csv", "Ort;Temperatur\nOslo;−3,5\nBergen;2,25\n".encode(),
             "load", check=rows_are([["Oslo", "−3.5"], ["Bergen", "2.25"]])))
    add(Case("indian lakh grouping", "india.csv", b'State,Population\nKerala,"3,34,06,061"\nGoa,"14,58,545"\n',
             "load", check=all_of(rows_are([["Kerala", "33,406,061"], ["Goa", "1,458,545"]]),
                                  note_mentions("thousands"))))
    add(Case("tsv with decimal commas", "werte.tsv", b"Ort\tWert\nA\t1,5\nB\t2,25\n", "load",
             check=all_of(rows_are([["A", "1.5"], ["B", "2.25"]]), note_mentions("decimal comma"))))
    add(Case("decimal commas quoted in a comma file", "quoted.csv", b'Name,Score\nann,"1,5"\nbob,"2,25"\n', "load",
             check=all_of(rows_are([["ann", "1.5"], ["bob", "2.25"]]), note_mentions("decimal comma"))))
    add(Case("each column with its own decimal mark", "mixed-marks.csv",
             "Land;Anteil;Kurs\nDE;0,5;1.25\nFR;1,75;1.5\n".encode(), "load",
             check=all_of(rows_are([["DE", "0.5", "1.25"], ["FR", "1.75", "1.5"]]), note_mentions("Kurs"))))
    add(Case("dates with points beside decimal commas", "daten.csv",
             "Datum;Monat;Wert\n01.03.2021;03.2021;1,5\n15.03.2021;04.2021;2,5\n".encode(), "load",
             check=all_of(rows_are([["01.03.2021", "03.2021", "1.5"], ["15.03.2021", "04.2021", "2.5"]]),
                          note_mentions("decimal comma"), no_note_mentions("Monat"))))
    add(Case("phone numbers with spaces stay text", "tel.csv",
             "Name;Telefon;Mobil\nA;030 123 456;+49 151 234 567\nB;089 987 654;+49 160 111 222\n".encode(), "load",
             check=rows_are([["A", "030 123 456", "+49 151 234 567"], ["B", "089 987 654", "+49 160 111 222"]])))
    add(Case("scientific notation and iso dates untouched", "sci.csv",
             b"Date,Rate\n2021-03-01,1.5e-3\n2021-03-02,2.25E+4\n", "load",
             check=rows_are([["2021-03-01", "1.5e-3"], ["2021-03-02", "2.25E+4"]])))
    add(Case("sep= hint with thousands points", "sephint.csv", "sep=;\nName;Wert\nA;1.234\nB;2.345\n".encode(),
             "load", check=all_of(rows_are([["A", "1234"], ["B", "2345"]]), note_mentions("assumed decimal commas"))))

    # --- structure -----------------------------------------------------------------------------------------------
    add(Case("header repeated mid-file (two exports joined)", "joined.csv",
             b"Year,Cases\n2010,63\n2011,220\nYear,Cases\n2012,90\n2013,55\n", "load",
             check=all_of(columns_are(["Year", "Cases"]),
                          rows_are([["2010", "63"], ["2011", "220"], ["2012", "90"], ["2013", "55"]]),
                          note_mentions("repeated"), note_mentions("line 4"))))
    add(Case("two exports joined, each with its title", "joined-titles.csv",
             b"Measles cases\nYear,Cases\n2010,63\n\nMeasles cases\nYear,Cases\n2011,220\n", "load",
             check=all_of(title_is("Measles cases"), columns_are(["Year", "Cases"]),
                          rows_are([["2010", "63"], ["2011", "220"]]), note_mentions("repeated"))))
    add(Case("unquoted title with a comma", "title-comma.csv",
             b"Hospital antibiotic use, Q1-Q2 2025\nWard,Beds,DDD\nA,10,5\nB,12,7\n", "load",
             check=all_of(title_is("Hospital antibiotic use, Q1-Q2 2025"), columns_are(["Ward", "Beds", "DDD"]),
                          rows_are([["A", "10", "5"], ["B", "12", "7"]]), note_mentions("title"))))
    add(Case("two title lines", "two-titles.csv",
             b"Hospital antibiotic use\nQ1-Q2 2025, all wards\nWard,Beds,DDD\nA,10,5\n", "load",
             check=all_of(title_is("Hospital antibiotic use — Q1-Q2 2025, all wards"),
                          columns_are(["Ward", "Beds", "DDD"]), rows_are([["A", "10", "5"]]), note_mentions("title"))))
    add(Case("title above a 2-column table", "title2.csv", b"Measles cases by year\nYear,Cases\n2010,63\n2011,220\n",
             "load", check=all_of(title_is("Measles cases by year"), columns_are(["Year", "Cases"]),
                                  rows_are([["2010", "63"], ["2011", "220"]]), note_mentions("title"))))
    add(Case("units row under the header", "units.csv", b"Drug,Dose,Share\n,mg,%\naspirin,100,12.5\nwarfarin,5,3\n",
             "load", check=all_of(columns_are(["Drug", "Dose (mg)", "Share (%)"]),
                                  rows_are([["aspirin", "100", "12.5"], ["warfarin", "5", "3"]]), note_mentions("units"))))
    add(Case("units row in brackets", "units-brackets.csv", "Site,Temperature,Rain\n,[°C],[mm]\nOslo,5.7,763\n".encode(),
             "load", check=all_of(columns_are(["Site", "Temperature (°C)", "Rain (mm)"]),
                                  rows_are([["Oslo", "5.7", "763"]]), note_mentions("units"))))
    add(Case("header and units row only", "units-only.csv", b"Drug,Dose,Share\n,mg,%\n", "either",
             check=all_of(columns_are(["Drug", "Dose (mg)", "Share (%)"]), row_count(0))))
    add(Case("a unit column is data, not a units row", "unit-col.csv",
             b"Drug,Dose,Unit\naspirin,100,mg\nwarfarin,5,mg\n", "load",
             check=all_of(columns_are(["Drug", "Dose", "Unit"]), rows_are([["aspirin", "100", "mg"],
                                                                          ["warfarin", "5", "mg"]]),
                          no_note_mentions("units"))))
    add(Case("comment lines at the top", "comments.csv", b"# exported 2024-01-01\n# source: WHO\nYear,Cases\n2010,63\n",
             "load", check=all_of(columns_are(["Year", "Cases"]), rows_are([["2010", "63"]]),
                                  note_mentions("comment"))))
    add(Case("a comment line holding a comma", "comment-comma.csv", b"# source: WHO, 2023\nYear,Cases\n2010,63\n",
             "load", check=all_of(columns_are(["Year", "Cases"]), rows_are([["2010", "63"]]),
                                  note_mentions("“# source: WHO, 2023”"))))
    add(Case("a column named # of cases is no comment", "hash-header.csv", b"# of cases,Year\n5,2010\n7,2011\n",
             "load", check=all_of(columns_are(["# of cases", "Year"]), rows_are([["5", "2010"], ["7", "2011"]]),
                                  no_note_mentions("comment"))))
    add(Case("repeated header quoted differently, with a trailing delimiter", "requoted.csv",
             b'"Year","Cases"\n2010,63\nYear,Cases,\n2011,220\n', "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are([["2010", "63"], ["2011", "220"]]),
                          note_mentions("line 3"))))
    add(Case("a source line under the table", "footer.csv", b"Year,Cases\n2010,63\n2011,220\nSource: WHO, 2012\n",
             "load", check=all_of(rows_are([["2010", "63"], ["2011", "220"]]), note_mentions("Source: WHO, 2012"))))
    add(Case("a totals row stays a row", "totals.csv", b"Region,Cases\nNorth,10\nSouth,20\nTotal,30\n", "load",
             check=rows_are([["North", "10"], ["South", "20"], ["Total", "30"]])))
    add(Case("rows that equal the first row of a table without header", "dups.csv", b"1,2\n1,2\n3,4\n", "load",
             check=all_of(columns_are(["Column 1", "Column 2"]), rows_are([["1", "2"], ["1", "2"], ["3", "4"]]))))
    add(Case("trailing delimiters", "trailing.csv", b"a,b,c,\n1,2,3,\n4,5,6,\n", "load",
             check=all_of(columns_are(["a", "b", "c"]), rows_are([["1", "2", "3"], ["4", "5", "6"]]))))
    add(Case("crlf line ends", "crlf.csv", b"Year,Cases\r\n2010,63\r\n2011,220\r\n", "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are([["2010", "63"], ["2011", "220"]]))))
    add(Case("cr-only line ends", "cr.csv", b"Year;Cases\r2010;63\r2011;220\r", "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are([["2010", "63"], ["2011", "220"]]))))
    add(Case("tab-separated .txt table", "table.txt", b"Year\tCases\n2010\t63\n2011\t220\n", "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are([["2010", "63"], ["2011", "220"]]))))
    add(Case("pipe-separated", "pipes.csv", b"Year|Cases\n2010|63\n2011|220\n", "load",
             check=all_of(columns_are(["Year", "Cases"]), rows_are([["2010", "63"], ["2011", "220"]]))))
    add(Case("semicolons with quoted semicolons and commas", "quoted-semi.csv",
             b'Name;Note;Wert\n"Smith; J.";"a, b";1,5\n"Doe; A.";"c";2,5\n', "load",
             check=rows_are([["Smith; J.", "a, b", "1.5"], ["Doe; A.", "c", "2.5"]])))
    add(Case("one-column file", "one.csv", b"Name\nann\nbob\n", "load",
             check=all_of(columns_are(["Name"]), rows_are([["ann"], ["bob"]]))))

    # --- cost ----------------------------------------------------------------------------------------------------
    add(Case("64 KB of ,\"x", "quotes.csv", b',"x' * 21_845, "refuse", says="quote"))
    add(Case("1 MB of ,\"x on 1,000 lines", "quotes-lines.csv", (b',"x' * 350 + b"\n") * 1000, "refuse",
             says="quote"))
    add(Case("thousands of blank lines", "blanks.csv", b"Year,Cases\n" + b"\n" * 20_000 + b"2010,63\n", "load",
             check=all_of(rows_are([["2010", "63"]]), note_mentions("blank"))))
    add(Case("a million blank lines", "blanks1m.csv", b"Year,Cases\n2010,63\n" + b"\r\n" * 900_000 + b"2011,220\n",
             "load", check=rows_are([["2010", "63"], ["2011", "220"]])))
    add(Case("rows of empty cells do not count toward the row limit", "empties.csv",
             b"a,b\n" + b"1,2\n,\n" * (MAX_ROWS - 100), "load", check=row_count(MAX_ROWS - 100)))
    add(Case("too many rows even without the blank ones", "long-blanks.csv", b"a,b\n" + b"1,2\n\n" * (MAX_ROWS + 50),
             "refuse", says="rows"))
    return cases
