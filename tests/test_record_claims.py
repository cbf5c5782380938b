"""Claims about a one-record table (tools/_settle_rules.py): a field the claim states with a value the record does
not hold refutes it, in code. Found on PubHealthTab's tuning split, on book records whose roles a claim swapped."""

from __future__ import annotations

import pytest

from kb.tables import Table, load_table
from tests.ruled_claims import ruled_without_model
from tools._settle_rules import record_check, record_fields

BOOK = Table(name="book", title="", columns=["Field", "Value"], rows=[
    ["Title", "Field Guide to Coastal Birds"], ["Author", "Maria Ostrova, Jan de Vries"], ["Edition", "2"],
    ["Publisher", "Harbour Press, 2014"], ["ISBN", "9780000000000"], ["Length", "312 pages"],
    ["Subjects", "Nature / Birdwatching Guides"]])


@pytest.mark.parametrize("claim, field, said", [
    ("Field Guide to Coastal Birds was written by Harbour Press.", "Author", "Harbour Press is its Publisher"),
    ("The guide was published by Maria Ostrova.", "Publisher", "not Maria Ostrova"),
    ("Field Guide to Coastal Birds was published in 2012.", "Publisher", "not 2012"),
    ("In 2011, Harbour Press published a guide to coastal birds.", "Publisher", "not 2011"),
    ("The guide is over 400 pages long.", "Length", "not over 400 pages"),
    ("The guide runs to about 250 pages.", "Length", "not about 250 pages"),
    ("Tom Reed wrote the field guide.", "Author", "not Tom Reed"),
    ("The author of Field Guide to Coastal Birds is Tom Reed.", "Author", "not Tom Reed"),
    ("Tom Reed and Maria Ostrova wrote the field guide.", "Author", "not Tom Reed"),
    ("Seabird Books was the publisher of the guide.", "Publisher", "not Seabird Books"),
])
def test_a_field_given_a_value_the_record_does_not_hold_refutes_the_claim(claim, field, said):
    check = record_check(claim, BOOK)
    assert check is not None and check.verdict == "REFUTES"
    assert said in check.reason
    row = [r[0] for r in BOOK.rows].index(field) + 1
    assert (row, 1) in check.cells and (row, 2) in check.cells  # the field's name and value are cited


@pytest.mark.parametrize("claim", [
    "Field Guide to Coastal Birds was written by Maria Ostrova.",
    "Jan de Vries and Maria Ostrova wrote the field guide.",
    "The guide was published by Harbour Press in 2014.",
    "In 2014, Harbour Press published a guide to coastal birds.",
    "Field Guide to Coastal Birds published in 2014 is about birdwatching.",  # the title as subject, not publisher
    "The guide has 312 pages.",
    "The guide is over 300 pages long.",
    "The guide runs to about 310 pages.",
    "The guide is about birdwatching.",  # no field the rule reads: left to the programs
    "The second edition of the guide came out in paperback.",
])
def test_a_claim_the_record_agrees_with_or_does_not_speak_to_is_left_to_the_programs(claim):
    assert record_check(claim, BOOK) is None


def test_one_json_object_is_a_record(tmp_path):
    """Found as a new user: a book's record exported as one JSON object was refused ("use a list of records")."""
    path = tmp_path / "book.json"
    path.write_text('{"Title": "The Quiet Epidemic", "Authors": "Lena Park, Omar Haddad", "Publisher": "Northbridge'
                    ' Press", "Published": "2019", "Pages": "288 pages"}')
    table = load_table(path)
    assert table.columns == ["Title", "Authors", "Publisher", "Published", "Pages"] and table.n_rows == 1
    # "publisher" names Publisher, not Published (a year)
    check = record_check("Omar Haddad is the publisher of The Quiet Epidemic.", table)
    assert check is not None and "its Publisher is 'Northbridge Press', not Omar Haddad (Omar Haddad is its " \
        "Authors" in check.reason
    assert "its Published is '2019', not 2021" in record_check("It was published in 2021 by Northbridge Press.",
                                                                table).reason
    assert record_check("The Quiet Epidemic was written by Lena Park and Omar Haddad.", table) is None


def test_an_infobox_of_row_headers_is_a_record(tmp_path):
    """Found as a new user with a drug's infobox saved as HTML (every row a <th> then a <td>): its first row
    ("Trade names | Ozempic, Wegovy, Rybelsus") became the column names, and "First approved" was no field for
    "approved"."""
    page = tmp_path / "semaglutide.html"
    page.write_text("<table>" + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in [
        ("Trade names", "Ozempic, Wegovy, Rybelsus"), ("Developed by", "Novo Nordisk"),
        ("First approved", "5 December 2017"), ("Half-life", "7 days")]) + "</table>")
    table = load_table(page)
    assert table.columns == ["Column 1", "Column 2"] and table.rows[0] == ["Trade names", "Ozempic, Wegovy, Rybelsus"]
    assert "not Eli Lilly" in record_check("Semaglutide was developed by Eli Lilly.", table).reason
    assert "its First approved is '5 December 2017', not 2019" in record_check("It was first approved in 2019.",
                                                                               table).reason
    assert "not 12 days" in record_check("Semaglutide has a half-life of 12 days.", table).reason
    assert record_check("Semaglutide was developed by Novo Nordisk and approved in 2017.", table) is None
    assert record_check("Semaglutide has a half-life of about 7 days.", table) is None
    # a number written to fewer places is the cell rounded: "7 days" for 7.4
    rounded = Table(name="r", title="", columns=["Field", "Value"], rows=[["Half-life", "7.4 days"],
                                                                         ["Developed by", "Novo Nordisk"],
                                                                         ["Population", "12.3 million"]])
    assert record_check("Its half-life is 7 days.", rounded) is None
    assert record_check("The population is 12 million.", rounded) is None
    assert "not 8 days" in record_check("Its half-life is 8 days.", rounded).reason


def test_only_a_record_is_read_as_one():
    many = Table(name="books", title="", columns=["Title", "Author", "Pages"], rows=[
        ["Field Guide to Coastal Birds", "Maria Ostrova", "312"], ["Tidal Flats", "Tom Reed", "208"]])
    assert record_fields(many) is None
    assert record_check("Tidal Flats was written by Maria Ostrova.", many) is None
    numbers = Table(name="n", title="", columns=["Year", "Cases"], rows=[["2019", "4"], ["2020", "7"], ["2021", "9"]])
    assert record_fields(numbers) is None  # its first column is numbers, not field names
    days = Table(name="fixtures", title="", columns=["Date", "Event"], rows=[
        ["Monday 7 September", "Entries open"], ["Friday 18 September", "Entries close"],
        ["Friday 2 October", "Leagues live"]])
    assert record_fields(days) is None  # a calendar's days are items of one kind, not fields
    stages = Table(name="stages", title="", columns=["Stage", "Description"], rows=[
        ["Stage I", "Local"], ["Stage II", "Regional"], ["Stage III", "Distant"]])
    assert record_fields(stages) is None


def test_one_row_under_the_fields_names(tmp_path):
    path = tmp_path / "book.csv"
    path.write_text("Title,Author,Publisher,Pages\nTidal Flats,Tom Reed,Seabird Books 2019,208 pages\n")
    table = load_table(path)
    check = record_check("Tidal Flats was written by Maria Ostrova", table)
    assert check is not None and check.verdict == "REFUTES" and check.cells == [(1, 2)]
    assert record_check("Tidal Flats was written by Tom Reed and has 208 pages", table) is None


LABEL = Table(name="label", title="", columns=["Field", "Value"], rows=[
    ["Drug name", "Metformin hydrochloride"], ["Manufacturer", "Sun Pharmaceutical Industries"],
    ["Strength", "500 mg"], ["Approved", "2004"], ["Pack size", "60 tablets"], ["Route", "Oral"]])


@pytest.mark.parametrize("claim, refuted", [
    ("The drug was approved in 2001.", "its Approved is '2004', not 2001"),  # found as a new user: 5 programs failed
    ("Metformin was approved on 3 May 2001.", "not 2001"),
    ("The tablets are manufactured by Teva and come in packs of 30 tablets.", "not Teva; its Pack size"),
    ("The drug was approved in 2004.", None),
    ("Each tablet holds 500.0 mg.", None),
    ("Each tablet holds 499.6 mg.", "not 499.6 mg"),
    # two amounts in two units: each against its own field (a name reused for both once crashed the second)
    ("Each 250 mg tablet comes in packs of 60 tablets.", "its Strength is '500 mg', not 250 mg"),
    ("Each 500 mg tablet comes in packs of 30 tablets.", "its Pack size is '60 tablets', not 30 tablets"),
    ("The drug was discovered in 1922.", None),  # no field for the verb: not the Approved year
    ("Metformin is made by Sun Pharmaceutical Industries and comes in 500 mg tablets.", None),
])
def test_a_drug_label_of_fields_and_values(claim, refuted):
    check = record_check(claim, LABEL)
    if refuted is None:
        assert check is None, check
    else:
        assert check is not None and refuted in check.reason, check


def test_a_long_run_of_capitalised_words_is_read_quickly():
    """A name pattern that can split a run of words two ways backtracks exponentially: an early version took
    6 s on a 20-word title under re.I. The record has a role field, so every pattern runs."""
    claim = " ".join(["Alpha Beta Gamma Delta Epsilon Zeta Eta Theta Iota Kappa"] * 6) + " is the Author of it"
    assert record_check(claim, BOOK) is not None


async def test_the_rule_decides_without_the_model(tmp_settings, fake_llm_server):
    check = await ruled_without_model(tmp_settings, fake_llm_server, BOOK,
                                      "The guide was written by Harbour Press and published by Maria Ostrova.")
    assert check.label == "REFUTES" and "Harbour Press is its Publisher" in check.reason
