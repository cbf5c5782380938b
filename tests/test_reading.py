"""The reading of a message (tools.lang.reading): numbers with their bounds, rough words and magnitudes,
superlatives with their sense and place, and a main-verb negation, each worked by hand."""

from __future__ import annotations

import pytest

from tools.lang.reading import MainNegation, StatedNumber, Superlative, best_is_largest, extreme_directions, \
    is_superlative, ordinal_extreme, read, read_against


def test_numbers_carry_the_bound_the_rough_word_and_the_magnitude_written_with_them():
    r = read("Fewer than three hospitals have more than 400 beds, about 30 thousand staff and 12.5% vacancies.")
    assert [(n.text, n.value, n.bound, n.rough, n.scaled, n.percent) for n in r.numbers] == [
        ("three", 3.0, "<", False, None, False), ("400", 400.0, ">", False, None, False),
        ("30", 30.0, None, True, 30000.0, False), ("12.5", 12.5, None, False, None, True)]
    assert r.bounds() == {3.0: "<", 400.0: ">"}
    assert r.rough_values() == {30.0, 30000.0}


@pytest.mark.parametrize("text, bounds", [
    ("No more than 3 trials enrolled at least 1,000 patients.", {3.0: "<=", 1000.0: ">="}),  # longest phrase first
    ("Coverage was over 2019 to 2022 levels.", {}),  # the start of a span bounds nothing
    ("Sites with over 40 and under 40 nurses", {}),  # one number bounded both ways: no bound
    ("The framework is up to 4.93x faster.", {4.93: "<="}),  # the whole number, not "4" (the old reader's)
    ("It has three wards.", {}),  # a number word is read only after a bound
])
def test_bounds(text, bounds):
    assert read(text).bounds() == bounds


def test_a_number_inside_a_word_or_a_name_is_no_number_of_its_own():
    assert [n.text for n in read("COVID-19 cases rose by 12 in H5N1 wards.").numbers] == ["12"]
    assert [n.value for n in read("v2.1 of the form, -3 points").numbers] == [-3.0]


@pytest.mark.parametrize("text, expected", [
    ("Nigeria had the most deaths.", [("most", "max", 1)]),
    ("Most trials lasted 30 weeks.", []),  # "most" without "the" is no extreme
    ("Which ward has the second-highest occupancy?", [("highest", "max", 2)]),
    ("the third lowest score", [("lowest", "min", 3)]),
    ("the lowest-calorie food", [("lowest", "min", 1)]),
    ("the best time", [("best", "", 1)]),  # its sense depends on the column
    ("the 2nd-largest and (third smallest) top10", [("largest", "max", 2), ("smallest", "min", 3), ("top", "", 1)]),
])
def test_superlatives(text, expected):
    assert [(s.word, s.sense, s.place) for s in read(text).extremes()] == expected


def test_a_superlative_keeps_its_span_its_token_and_whether_it_makes_an_extreme():
    text = "At least 3 of the second-lowest-calorie foods"
    assert read(text).superlatives == (
        Superlative("least", "min", 1, "least", 3, 8, extreme=False),  # "at least": no extreme
        Superlative("lowest", "min", 2, "second-lowest-calorie", 25, 31))


@pytest.mark.parametrize("text, superlative, ups, downs, place", [
    ("Which drug had the second most patients?", True, {"most"}, set(), 2),
    ("Most trials lasted at least 30 weeks.", True, set(), set(), 1),  # a bare "most", "least": no direction
    ("the second-highest and the lowest-calorie food", True, set(), set(), 2),  # words of their own only
    ("the highest occupancy", True, {"highest"}, set(), 1),
    ("the right-most column", False, set(), set(), 1),
])
def test_the_superlative_helpers_read_the_reading(text, superlative, ups, downs, place):
    assert is_superlative(text) is superlative
    assert extreme_directions(text) == (ups, downs)
    assert ordinal_extreme(text) == place


def test_best_is_largest_unless_less_is_better():
    assert best_is_largest("the best-selling drug", "Sales") is True
    assert best_is_largest("the best time", "Time (s)") is False
    assert best_is_largest("the best and the worst", "Sales") is None


def test_a_plain_main_verb_negation_is_read_with_the_claim_without_it():
    r = read("Yemen did not have the most deaths.")
    assert r.negation == MainNegation("did not", 6, 13, "Yemen did have the most deaths.")
    assert read("Yemen didn't have the most deaths.").negation.positive == "Yemen did have the most deaths."


@pytest.mark.parametrize("text", [
    "the only country that do not receive a medal",  # a relative clause
    "No trial did not report deaths.",  # another negative word
    "\"I Don't Like Mondays\" was a hit.",  # a title
    "Yemen had the most deaths.",  # no negation
])
def test_no_main_negation(text):
    assert read(text).negation is None


def test_one_parse_per_text_shared_by_every_reader():
    text = "Drug A reduced deaths by roughly 26%."
    assert read(text) is read(text)
    assert read(text).numbers == (StatedNumber("26", 26.0, 33, 35, percent=True, rough=True),)


def test_years_months_quarters_and_weeks_carry_their_spans():
    text = "Sales in Mar. 2024 beat Q3 2019, the first quarter of 2024 and week 40 of 2025 (2025-W40)."
    r = read(text)
    assert [(y.text, y.start) for y in r.years] == [("2024", 14), ("2019", 27), ("2024", 54), ("2025", 74),
                                                    ("2025", 80)]
    assert all(text[y.start:y.end] == y.text for y in r.years)
    (march,) = r.months
    assert (march.text, march.month, march.dotted, march.year.value, text[march.start:march.phrase_end]) == \
        ("Mar", 3, True, 2024, "Mar. 2024")
    assert not march.full
    assert [(q.text, q.quarter, q.short, q.year.value if q.year else None) for q in r.quarters] == [
        ("Q3", 3, True, 2019), ("first quarter", 1, False, 2024)]
    assert [(w.text, w.week, w.year) for w in r.weeks] == [("week 40 of 2025", 40, 2025), ("2025-W40", 40, 2025)]


@pytest.mark.parametrize("text, years", [
    ("FY2019 and 12019 are no years; 2019-20 and Q1-2018 are", [2019, 2018]),
    ("1500 patients in 1066", [1500, 1066]),  # four digits from 1000: a reader that takes only modern ones filters
    ("In 2150 or 0999", []),
])
def test_years(text, years):
    assert [y.value for y in read(text).years] == years


def test_readers_take_the_years_from_the_earliest_year_unless_they_say():
    r = read("Fewer deaths in 1890 than in 1066.")
    assert [y.value for y in r.year_list()] == [1890]
    assert [y.value for y in r.year_list(since=1000)] == [1890, 1066]


def test_a_month_keeps_how_it_is_written():
    r = read("It may rise in May, 2014 or in Sept")
    assert [(m.text, m.month, m.full, m.year.value if m.year else None) for m in r.months] == [
        ("may", 5, True, None), ("May", 5, True, 2014), ("Sept", 9, False, None)]


def test_without_blanks_the_parts_given():
    r = read("Cases in 2019 and Q2 2020 rose")
    assert r.without(r.years) == "Cases in   and Q2   rose"
    assert r.without([*r.years, *r.quarters]) == "Cases in   and     rose"


def test_quantifiers_carry_their_kind_and_span():
    text = "No. 5 had no deaths, and at least  one site, most trials and the most deaths; neither did all of them."
    assert [(q.word, q.kind, text[q.start:q.end]) for q in read(text).quantifiers] == [
        ("no", "none", "no"),  # not "No.": a number's label
        ("at least one", "some", "at least  one"),
        ("most", "most", "most"),  # "the most" is a superlative, not a quantifier
        ("neither", "none", "neither"), ("all", "every", "all")]
    assert [q.word for q in read("Every site, each ward and both arms").quantified("every", "both")] == [
        "every", "each", "both"]


def _countries():
    from kb.tables import Table
    from tools._cells import TypedTable
    return TypedTable.build(Table(name="t", title="", columns=["Country", "Cases 2023", "Vaccine", "Month"], rows=[
        ["Trinidad and Tobago", "3", "Moderna", "2024-01"], ["Tobago", "4", "Pfizer", "2024-02"],
        ["Côte d'Ivoire", "5", "Moderna", "2024-03"]]))


def test_a_message_read_against_a_table_names_rows_cells_and_columns_where_it_writes_them():
    text = "Trinidad and Tobago had more cases than COTE D IVOIRE in March; Pfizer's Tobago did not."
    r = read_against(text, _countries())
    assert [(m.label, text[m.start:m.end]) for m in r.rows] == [  # the longest label first, in the text's order
        ("Trinidad and Tobago", "Trinidad and Tobago"), ("Côte d'Ivoire", "COTE D IVOIRE"), ("Tobago", "Tobago")]
    assert r.other_words == ("had", "more", "cases", "than", "in", "march", "pfizer", "s", "did", "not")
    assert [(m.row, m.cell, text[m.start:m.end], m.month) for m in r.cells] == [
        (1, "Trinidad and Tobago", "Trinidad and Tobago", False),
        (2, "Tobago", "Tobago", False),  # (a cell is matched as a whole string: not "Côte d'Ivoire" without its ')
        (2, "Pfizer", "Pfizer", False),  # "Moderna" is two rows'
        (3, "2024-03", "March", True)]
    assert [(m.header, m.words, [text[s:e] for s, e in m.spans]) for m in r.columns] == [
        ("Cases 2023", ("cases",), ["cases"])]


def test_a_reading_against_a_table_is_parsed_once_per_text_and_table():
    typed, other = _countries(), _countries()
    assert read_against("Tobago", typed) is read_against("Tobago", typed)
    assert read_against("Tobago", typed) is not read_against("Tobago", other)
