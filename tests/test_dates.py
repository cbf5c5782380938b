"""Columns of dates have an order, and bounded cells ("<0.001") compare as bounds (found as a new user on a table
of studies: "Which of the studies was published most recently?" took the longest follow-up, and "How many studies
reported a statistically significant result?" counted all six)."""

from __future__ import annotations

import datetime as dt

import pytest
from pydantic import ValidationError

from kb.tables import Table
from tests.test_table_program import is_program, llm_for, scripted
from tools._cells import DAY, MONTH, YEAR, TypedTable, compare, compare_dates, iso_month_match, parse_date
from tools._claim_counts import quantity_count_blocker
from tools._question_dates import read_stated_year
from tools._settle_rules import add_significance_filter
from tools._table_grammar import typed_program_schema
from tools._table_ops import execute
from tools._table_ops_model import Program, ProgramError
from tools._table_program import run_sampled, solve
from tools._table_shape import describe

STUDIES = Table(name="studies", title="Trials", columns=["Study", "Published", "Participants", "P value"], rows=[
    ["ALPHA-1", "2019-03-14", "1,204", "<0.001"],
    ["BETA", "2020-11-02", "856", "0.54"],
    ["CARDIO-X", "2021-06-30", "2,310", "0.005"],
    ["DELTA-HF", "2018-01-20", "640", "0.65"],
    ["ZETA", "2023-02-08", "512", "0.38"],
])


def typed() -> TypedTable:
    return TypedTable.build(STUDIES)


def prog(**kw) -> Program:
    kw.setdefault("filters", [])
    kw.setdefault("answer_column", "study")
    return Program.model_validate(kw)


@pytest.mark.parametrize("text, day, grain", [
    ("2019-03-14", dt.date(2019, 3, 14), DAY),
    ("March 14, 2019", dt.date(2019, 3, 14), DAY),
    ("14 March 2019", dt.date(2019, 3, 14), DAY),
    ("march 14 , 2019", dt.date(2019, 3, 14), DAY),  # TabFact's spacing
    ("Sept. 3, 2001", dt.date(2001, 9, 3), DAY),
    ("4th of July 1990", dt.date(1990, 7, 4), DAY),
    ("June 2021", dt.date(2021, 6, 1), MONTH),
    ("2024-03", dt.date(2024, 3, 1), MONTH),
])
def test_dates_are_read_with_their_grain(text, day, grain):
    assert parse_date(text) == (day, grain)


@pytest.mark.parametrize("text", ["2019", "1906–07", "03/04/2019", "2019-02-30", "Smarch 3, 2019", "july 4", ""])
def test_what_is_not_an_unambiguous_dated_cell_is_none(text):
    # a bare year is a number; day-month order with slashes differs by country; "july 4" has no year
    assert parse_date(text) is None


def test_a_year_alone_is_a_date_only_where_a_filter_writes_it():
    assert parse_date("2020", year_alone=True) == (dt.date(2020, 1, 1), YEAR)


@pytest.mark.parametrize("cell, op, value, expected", [
    ("2021-06-30", ">", "2020", True),  # a later year
    ("2020-11-02", ">", "2020", False),  # the same year is not after it
    ("2020-11-02", ">=", "2020", True),
    ("2021-06-30", ">", "June 2021", False),  # the same month
    ("2021-06-30", "<", "2021-07-01", True),
    ("2021-06-30", "=", "June 2021", True),
    ("Smarch", ">", "2020", None),
])
def test_dates_compare_at_the_grain_the_value_is_written_in(cell, op, value, expected):
    assert compare_dates(cell, op, value) is expected


def test_a_column_of_dates_is_typed_and_shown_as_dates():
    t = typed()
    published = t.column("published")
    assert published.holds_dates and not published.numeric
    assert not t.column("study").holds_dates and not t.column("participants").holds_dates
    assert any(line.startswith("published (date;") for line in t.schema_lines())
    # a column with mostly other text is no date column
    mixed = TypedTable.build(Table(name="m", title="m", columns=["When"], rows=[["2019-03-14"], ["soon"], ["later"]]))
    assert not mixed.column("when").holds_dates


def test_the_grammar_orders_dates_but_does_not_add_them():
    schema = typed_program_schema(typed(), with_check=False)
    schema.model_validate({"filters": [], "fn": "argmax", "column": "published", "answer_column": "study"})
    schema.model_validate({"filters": [], "fn": "max", "column": "published", "answer_column": "study"})
    schema.model_validate({"filters": [{"column": "published", "op": ">", "value": "2020"}], "fn": "count",
                           "column": "study", "answer_column": "study"})
    for bad in ({"filters": [], "fn": "sum", "column": "published", "answer_column": "study"},
                {"filters": [{"column": "published", "op": ">", "value": "soon"}], "fn": "count", "column": "study",
                 "answer_column": "study"}):
        with pytest.raises(ValidationError):
            schema.model_validate(bad)
    claims = typed_program_schema(typed(), with_check=True)
    claims.model_validate({"filters": [], "fn": "argmax", "column": "published", "answer_column": "study",
                           "check": {"op": "=", "against": "value", "value": "ZETA"}})


def test_the_latest_and_earliest_rows_and_dates_as_the_cells_write_them():
    t = typed()
    latest = execute(prog(fn="argmax", column="published"), t)
    assert latest.result == "ZETA" and latest.result_text == "ZETA (2023-02-08)" and latest.decisive_rows == [5]
    assert execute(prog(fn="argmin", column="published"), t).result == "DELTA-HF"
    assert execute(prog(fn="max", column="published"), t).result == "2023-02-08"
    assert describe(prog(fn="argmax", column="published"), t).endswith("Study of the row with the latest Published")
    assert describe(prog(fn="min", column="published"), t).endswith("the earliest Published")
    assert execute(prog(fn="argmax", column="published", options={"nth": 2}), t).result == "CARDIO-X"
    with pytest.raises(ProgramError, match="holds dates"):
        execute(prog(fn="avg", column="published"), t)


def test_filters_on_dates_compare_in_time():
    after = execute(prog(filters=[{"column": "published", "op": ">", "value": "2020"}], fn="count", column="study"),
                    typed())
    assert after.result == 2 and after.decisive_rows == [3, 5]
    before = execute(prog(filters=[{"column": "published", "op": "<", "value": "November 2020"}], fn="value",
                          column="study"), typed())
    assert before.result == ["ALPHA-1", "DELTA-HF"]


@pytest.mark.parametrize("cell, op, value, expected", [
    ("<0.001", "<", "0.05", True),
    ("<0.001", ">=", "0.05", False),
    ("<0.05", "<", "0.05", True),
    ("<0.05", "<", "0.01", False),  # unknown: it could be 0.02
    ("≤0.05", "<", "0.05", False),  # unknown: it could be 0.05
    ("> 100", ">", "50", True),
    ("<0.001", "=", "0.001", False),
])
def test_bounded_cells_compare_where_the_bound_settles_it(cell, op, value, expected):
    assert compare(cell, None, op, value) is expected


@pytest.mark.parametrize("question, selected", [
    ("How many of the studies reported a statistically significant result?", [1, 3]),
    ("Which studies were significant at the 1% level?", [1, 3]),
    ("Which studies were not statistically significant?", [2, 4, 5]),
    ("Which studies had non-significant results?", [2, 4, 5]),
])
def test_significance_in_a_question_filters_on_the_p_value(question, selected):
    program = add_significance_filter(prog(fn="count", column="study"), typed(), question)
    assert execute(program, typed()).selected == selected


def test_the_significance_filter_leaves_programs_that_read_the_p_value_and_tables_without_one():
    on_p = prog(filters=[{"column": "p_value", "op": "<", "value": "0.01"}], fn="count", column="study")
    question = "How many studies were significant?"
    assert add_significance_filter(on_p, typed(), question) == on_p
    p_itself = prog(fn="value", column="p_value", filters=[{"column": "study", "op": "=", "value": "BETA"}])
    assert add_significance_filter(p_itself, typed(), "What was the p-value of the significant BETA?") == p_itself
    plain = prog(fn="count", column="study")
    assert add_significance_filter(plain, typed(), "How many studies were published?") == plain
    no_p = TypedTable.build(Table(name="t", title="t", columns=["Study", "N"], rows=[["A", "1"], ["B", "2"]]))
    assert add_significance_filter(plain, no_p, question) == plain


async def test_a_which_of_question_over_dates_names_the_row(tmp_settings, fake_llm_server):
    # The model writes the latest date; the question asks which study, so the row's name is the answer.
    latest_date = {"filters": [], "fn": "max", "column": "published", "answer_column": "study"}
    with fake_llm_server(scripted(["published"], [latest_date, latest_date, latest_date])) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), STUDIES, "question",
                              "Which of the studies was published most recently?", n=3)
    assert outcome.winner == "ZETA" and {r for r, _ in outcome.cells} == {5}
    assert len([r for r in srv.requests if is_program(r)]) == 1


@pytest.mark.parametrize("value, text, read", [
    ("2020-01-01", "Every study published after 2020 enrolled fewer than 1,000 participants.", "2020"),
    ("2020-12-31", "How many studies were published before 2021?", "2020-12-31"),  # not the year it states
    ("2021-06-30", "Was anything published after 2021-06-30 in 2021?", "2021-06-30"),  # the date is written
    ("June 2021", "Which studies came out after 2021?", "2021"),
])
def test_a_date_filter_reads_a_stated_year_at_its_grain(value, text, read):
    program = prog(filters=[{"column": "published", "op": ">", "value": value}], fn="count", column="study")
    assert read_stated_year(program, typed(), text).filters[0].value == read


def test_a_year_filter_on_text_or_numbers_is_left_alone():
    program = prog(filters=[{"column": "study", "op": "=", "value": "2020-01-01"}], fn="count", column="study")
    assert read_stated_year(program, typed(), "after 2020") == program


@pytest.mark.parametrize("claim, value, blocked", [
    ("Every study published after 2020 enrolled fewer than 1,000 participants.", "1000", True),
    ("Two studies enrolled fewer than 1,000 participants.", "2", False),  # "2 studies" counts rows
    ("Fewer than 1,000 studies were published.", "1000", False),
])
def test_a_count_of_rows_against_an_amount_of_a_numeric_column_does_not_vote(claim, value, blocked):
    program = prog(fn="count", column="study", check={"op": "<", "against": "value", "value": value})
    assert bool(quantity_count_blocker(program, typed(), claim)) is blocked


async def test_a_claim_about_the_studies_after_a_year(tmp_settings, fake_llm_server):
    # The five programs the model wrote for this claim (as a new user saw it): a count against 1,000, two value
    # checks over several rows (read as "every", since the claim opens with it: tools._claim_grounding.
    # read_quantifier), and two "every" that read "after 2020" as a date.
    after = [{"column": "published", "op": ">", "value": "2020-01-01"}]
    count = {"filters": after, "fn": "count", "column": "study", "answer_column": "study",
             "check": {"op": "<", "against": "value", "value": "1000"}}
    value = {"filters": after, "fn": "value", "column": "participants", "answer_column": "study",
             "check": {"op": "<", "against": "value", "value": "1000"}}
    every = {"filters": after, "fn": "every", "column": "participants", "answer_column": "study",
             "check": {"op": "<", "against": "value", "value": "1000"}}
    with fake_llm_server(scripted(["published", "participants"], [count, value, every, value, every])) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), STUDIES, "claim",
                              "Every study published after 2020 enrolled fewer than 1,000 participants.", n=5)
    assert outcome.winner == "REFUTES" and outcome.votes == {"REFUTES": 4}
    assert any("an amount of Participants" in r.error for r in outcome.runs)
    assert {r for r, _ in outcome.cells} == {3}  # CARDIO-X, 2,310 participants, published 2021


def test_a_count_against_a_column_that_numbers_the_rows_still_votes():
    games = TypedTable.build(Table(name="g", title="g", columns=["Game", "Result", "Points"], rows=[
        ["1", "W", "101"], ["2", "L", "99"], ["3", "L", "87"], ["4", "W", "110"]]))
    program = Program.model_validate({"filters": [{"column": "result", "op": "=", "value": "L"}], "fn": "count",
                                      "column": "game", "answer_column": "game",
                                      "check": {"op": "=", "against": "value", "value": "2"}})
    assert quantity_count_blocker(program, games, "the team lose 2 game during this period") == ""
    assert quantity_count_blocker(program, games, "the team scored 2 points in its losses") != ""


@pytest.mark.parametrize("cell, value, expected", [
    ("27 Apr 2014", "April", True),
    ("27 Apr 2014", "May", False),
    ("Apr. 3, 2014", "April 2014", True),
    ("Apr 3, 2014", "April 2013", False),
    ("27 April 2014", "April", None),  # a full month name is a word of the cell: texts compare as before
    ("2024-03", "March", True),
    ("Approved", "April", None),
])
def test_a_month_names_dates_written_with_its_short_name(cell, value, expected):
    assert iso_month_match(cell, value) is expected


def test_a_question_about_a_month_counts_the_dates_in_it():
    releases = TypedTable.build(Table(name="r", title="r", columns=["Issue", "Release Date"], rows=[
        ["1", "27 Dec 2013"], ["2", "15 Jan 2014"], ["3", "2 Apr 2014"], ["4", "30 Apr 2014"], ["5", "4 Jun 2014"]]))
    copied_day = prog(filters=[{"column": "release_date", "op": "=", "value": "15 Jan 2014"}], fn="count",
                      column="issue", answer_column="issue")
    for program in (copied_day, prog(fn="count", column="issue", answer_column="issue")):
        done = run_sampled(program.model_dump(), releases, "question", "how many release dates were in april?")
        assert done.execution.result == 2 and done.execution.selected == [3, 4]


def test_a_name_question_over_the_earliest_date_names_the_row():
    # found as a new user: "Which was the first Alzheimer drug to be approved?" answered "6 Jan 2023"
    earliest = {"filters": [], "fn": "min", "column": "published", "answer_column": "published"}
    done = run_sampled(earliest, typed(), "question", "Which was the first study to be published?")
    assert done.program.fn == "argmin" and done.execution.result == "DELTA-HF"
    asked_date = run_sampled(earliest, typed(), "question", "When was the first study published?")
    assert asked_date.execution.result == "2018-01-20"


APPROVALS = Table(name="a", title="Approvals", columns=["Drug", "Approved", "Agency", "Indication"], rows=[
    ["Lecanemab", "6 Jan 2023", "FDA", "Alzheimer disease"],
    ["Donanemab", "2 Jul 2024", "FDA", "Alzheimer disease"],
    ["Tirzepatide", "13 May 2022", "FDA", "Type 2 diabetes"],
    ["Semaglutide", "5 Dec 2017", "FDA", "Type 2 diabetes"],
    ["Nirsevimab", "31 Oct 2022", "EMA", "RSV prevention"],
])


async def test_claim_programs_that_ignore_a_stated_date_do_not_vote(tmp_settings, fake_llm_server):
    # found as a new user: four programs checked every FDA drug and outvoted the one that kept "after 2022"
    claim = "Is it true that every drug the FDA approved after 2022 treats Alzheimer disease?"
    fda = {"column": "agency", "op": "=", "value": "FDA"}

    def every(*filters):
        return {"filters": list(filters), "fn": "every", "column": "indication", "answer_column": "drug",
                "check": {"op": "contains", "against": "value", "value": "Alzheimer disease"}}

    batch = [every(fda)] * 4 + [every(fda, {"column": "approved", "op": ">", "value": "2022"})]
    with fake_llm_server(scripted(["agency", "approved", "indication"], batch)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), APPROVALS, "claim", claim, n=5)
    assert outcome.winner == "SUPPORTS" and outcome.votes == {"SUPPORTS": 1}
    assert sum("the date the claim states (Approved)" in r.error for r in outcome.runs) == 4
    # without a program that keeps the date, the others vote as before
    with fake_llm_server(scripted(["agency", "indication"], [every(fda)] * 3)) as srv:
        plain = await solve(llm_for(tmp_settings, srv), APPROVALS, "claim", claim, n=3)
    assert plain.winner == "REFUTES"


@pytest.mark.parametrize("question, part", [
    ("How many shows were in April and in May 2010?", "May 2010"),  # a month with its year first
    ("How many shows were in Mar. 2010 or in April?", "April"),  # a month in full, else its year: not "Mar."
    ("What may have happened in 1066?", "1066"),  # "may" alone is the verb; older years are dates here
    ("How many shows were there?", ""),
])
def test_the_date_part_a_question_states_is_read_from_its_reading(question, part):
    from tools._question_dates import stated_date_part
    assert stated_date_part(question) == part


def test_a_month_named_in_the_text_is_found_where_it_is_written():
    from tools.lang.reading import names_month
    assert names_month("Referrals may be higher in March than in May", "may").start == 41
    assert names_month("Referrals may rise in mar", "march").text == "mar"
    assert names_month("Referrals may rise", "may") is None  # the verb
