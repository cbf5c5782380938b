"""A question about the change between two columns of numbers (tools._claim_changes, Program.minus_column)."""

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_changes import read_column_change, spanned_columns
from tools._table_ops import execute
from tools._table_ops_model import Program

COVERAGE = Table(name="coverage", title="", columns=["Country", "WHO region", "2022 (%)", "2023 (%)"], rows=[
    ["Kenya", "Africa", "89", "86"], ["Nigeria", "Africa", "60", "63"], ["India", "South-East Asia", "93", "93"],
    ["Brazil", "Americas", "80", "87"], ["Ethiopia", "Africa", "54", "60"]])
TYPED = TypedTable.build(COVERAGE)
KENYA = Program.model_validate({"filters": [{"column": "country", "op": "=", "value": "Kenya"}], "fn": "value",
                                "column": "c_2023", "answer_column": "country"})


def test_the_two_columns_a_question_spans():
    ids = {c.name: c.ident for c in TYPED.columns}
    assert spanned_columns(TYPED, "How much did coverage in Kenya change between 2022 and 2023?") == (
        ids["2022 (%)"], ids["2023 (%)"])
    assert spanned_columns(TYPED, "Which country rose the most from 2022 to 2023?") == (
        ids["2022 (%)"], ids["2023 (%)"])
    assert spanned_columns(TYPED, "What was Kenya's coverage in 2023?") is None
    assert spanned_columns(TYPED, "How many countries are between Kenya and India?") is None  # rows, not columns


def kenya() -> Program:
    ids = {c.name: c.ident for c in TYPED.columns}
    return KENYA.model_copy(update={"column": ids["2023 (%)"],
                                    "filters": [KENYA.filters[0].model_copy(update={"column": ids["Country"]})],
                                    "answer_column": ids["Country"]})


def test_how_much_a_named_row_changed_is_the_second_column_minus_the_first():
    """Found as a new user: the fallback answered "2023" from India's and Nigeria's rows, shown as verified."""
    read = read_column_change(kenya(), TYPED, "How much did coverage in Kenya change between 2022 and 2023?")
    execution = execute(read, TYPED)
    assert execution.result == -3
    assert "86 − 89 = -3" in execution.result_text
    assert {c for _, c in execution.cells} >= {3, 4}  # both years cited


@pytest.mark.parametrize("question, answer", [
    ("Which country rose the most from 2022 to 2023?", "Brazil"),
    ("Which country fell the most between 2022 and 2023?", "Kenya"),
    # found as a new user: "the largest drop" named no verb, and the programs compared one year alone
    ("Which country had the largest drop in coverage between 2022 and 2023?", "Kenya"),
    ("Which country had the biggest increase from 2022 to 2023?", "Brazil"),
    ("What country saw the greatest decline between 2022 and 2023?", "Kenya"),
])
def test_the_row_that_changed_most(question, answer):
    execution = execute(read_column_change(kenya(), TYPED, question), TYPED)
    assert execution.result == answer


@pytest.mark.parametrize("question", [
    "What was Kenya's coverage in 2023?",  # no span
    "Was Kenya's coverage between 80 and 90?",  # numbers, not columns
    "Which country had the largest coverage between 2022 and 2023?",  # no change asked
])
def test_other_questions_are_left_as_written(question):
    assert read_column_change(kenya(), TYPED, question) == kenya()


def test_how_much_needs_the_row_named():
    unnamed = kenya().model_copy(update={"filters": []})
    assert read_column_change(unnamed, TYPED, "How much did coverage change between 2022 and 2023?") == unnamed


@pytest.mark.parametrize("claim, verdict", [
    ("Every African country's coverage rose from 2022 to 2023.", "REFUTES"),  # Kenya fell, 89 -> 86
    ("All African countries' coverage rose from 2022 to 2023.", "REFUTES"),
    ("Every country in the Americas saw its coverage rise from 2022 to 2023.", "SUPPORTS"),
])
def test_a_claim_that_every_selected_row_changed_one_way(claim, verdict):
    """Found as a new user: "Every African country improved its coverage from 2022 to 2023." was supported by "the
    number of African rows with 2022 (%) != 0 > 0"."""
    from tools._table_program import ProgramOutcome, decide, run_sampled

    ids = {c.name: c.ident for c in TYPED.columns}
    region = "Africa" if "African" in claim else "Americas"
    written = Program.model_validate({
        "filters": [{"column": ids["WHO region"], "op": "=", "value": region},
                    {"column": ids["2022 (%)"], "op": "!=", "value": "0"}],
        "fn": "count", "column": ids["Country"], "answer_column": ids["Country"],
        "check": {"op": ">", "against": "value", "value": "0"}})
    sampled = [run_sampled(written.model_dump(), TYPED, "claim", claim) for _ in range(3)]
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, sampled, TYPED, "claim", claim)
    assert outcome.winner == verdict, [r.error or r.program for r in outcome.runs]
    assert "2023 (%) > 2022 (%)" in outcome.runs[0].program


def test_the_largest_drop_keeps_its_direction_through_the_question_rules():
    """Found as a new user: "the largest drop" read as a change, then "largest" turned it into the largest rise."""
    from tools._table_program import run_sampled

    written = {"filters": [], "fn": "argmax", "column": "c_2023", "answer_column": "country"}
    ran = run_sampled(written, TYPED, "question", "Which country had the largest drop in coverage between 2022 and "
                                                  "2023?")
    assert ran.program.fn == "argmin" and ran.program.options.subtracts and ran.execution.result == "Kenya"


def test_grew_fastest_is_the_largest_relative_change():
    """Found as a new user: "Which region grew fastest from 2022 to 2023?" was answered North America, the largest
    2023 revenue; Asia-Pacific grew 28.4% (North America 10.3%, the larger +42.5 on 412.5)."""
    from tools._table_program import run_sampled

    t = TypedTable.build(Table(name="r", title="r", columns=["Region", "Revenue 2022", "Revenue 2023"], rows=[
        ["North America", "412.5", "455.0"], ["Europe", "298.1", "310.4"], ["Asia-Pacific", "187.9", "241.3"],
        ["Latin America", "64.2", "59.8"], ["Small", "10", "25"]]))
    largest = {"filters": [], "fn": "argmax", "column": "revenue_2023", "answer_column": "region"}
    fastest = run_sampled(largest, t, "question", "Which region grew fastest from 2022 to 2023?").execution
    assert fastest.result == "Small" and fastest.result_text == "Small ((25 − 10) / 10 = +150.0%)"
    most = run_sampled(largest, t, "question", "Which region grew the most from 2022 to 2023?").execution
    assert most.result == "Asia-Pacific"  # the largest change itself: +53.4
    falling = run_sampled(largest, t, "question", "Which region fell fastest between 2022 and 2023?").execution
    assert falling.result == "Latin America" and falling.result_text.endswith("= -6.9%)")
    with pytest.raises(ValueError, match="not both"):  # the only form with both is the relative change
        Program.model_validate({"fn": "max", "column": "revenue_2023", "minus_column": "revenue_2022",
                                "per_column": "revenue_2023", "answer_column": "region"})


# Found as a new user: one measure in two year columns, and questions that name the measure but not the years.
MEASLES = Table(name="measles", title="measles", columns=[
    "County", "Population", "MMR coverage (%)", "Measles cases 2023", "Measles cases 2024"], rows=[
    ["Ashford", "182,400", "94.1", "3", "0"], ["Belmont", "67,950", "88.7", "12", "27"],
    ["Carver", "241,300", "91.5", "5", "9"], ["Dunmore", "39,800", "85.2", "18", "41"],
    ["Elmwood", "125,600", "96.3", "0", "1"], ["Fairview", "88,100", "90.0", "7", "4"]])
# what the model wrote: the county with the most cases in 2024 (Dunmore, which happens to rise most too)
MOST_2024 = {"filters": [], "fn": "argmax", "column": "measles_cases_2024", "answer_column": "county"}


@pytest.mark.parametrize("question, answer", [
    ("Which county saw the biggest increase in measles cases?", "Dunmore (41 − 18 = 23)"),
    ("Which county's measles cases fell the most?", "Ashford, Fairview (-3)"),
])
def test_the_row_that_changed_most_between_the_two_years_of_a_measure(question, answer):
    typed = TypedTable.build(MEASLES)
    prog = read_column_change(Program.model_validate(MOST_2024), typed, question)
    assert (prog.column, prog.options.subtracts) == ("measles_cases_2024", "measles_cases_2023")
    assert execute(prog, typed).result_text == answer


@pytest.mark.parametrize("question", [
    "Which county had the most measles cases in 2024?",  # no change asked
    "How much did Belmont pay?",  # "how much" without a change
])
def test_questions_without_a_change_keep_the_year_columns_apart(question):
    typed = TypedTable.build(MEASLES)
    assert read_column_change(Program.model_validate(MOST_2024), typed, question) == Program.model_validate(MOST_2024)


def test_how_much_a_thing_changed_between_two_years_of_a_long_table():
    """Found as a new user over TB incidence by country and year (a row each): "How much did TB incidence in Kenya
    change between 2019 and 2021?" answered 8 (Kenya's 2020 and 2021); Kenya went from 267 to 251."""
    long = TypedTable.build(Table(name="tb", title="tb", columns=["Country", "Year", "TB incidence"], rows=[
        ["Kenya", "2019", "267"], ["Kenya", "2020", "259"], ["Kenya", "2021", "251"],
        ["Ghana", "2019", "143"], ["Ghana", "2020", "139"], ["Ghana", "2021", "135"]]))
    written = Program.model_validate({"filters": [{"column": "country", "op": "=", "value": "Kenya"},
                                                  {"column": "year", "op": ">", "value": "2019"}],
                                      "fn": "difference", "column": "tb_incidence", "answer_column": "country"})
    prog = read_column_change(written, long, "How much did TB incidence in Kenya change between 2019 and 2021?")
    ex = execute(prog, long, union_same_column=True)
    assert ex.result == 16.0 and sorted(ex.decisive_rows) == [1, 3]
    # not a change, or a year the table lacks: as written
    assert read_column_change(written, long, "How much TB was there in Kenya between 2019 and 2021?") == written
    assert read_column_change(written, long, "How much did TB incidence in Kenya change from 2015 to 2021?") == written


@pytest.mark.parametrize("question, fn, answer", [
    # found as a new user: all five programs answered the smallest value (196), not its year
    ("In which year was Uganda's TB incidence lowest?", "min", "2020 (196)"),
    ("What year had the highest TB incidence in Uganda?", "max", "2019 (200)"),
    ("What was Uganda's lowest TB incidence?", "min", "196"),  # a value asked: as written
])
def test_the_year_asked_is_the_year_of_the_extreme_row(question, fn, answer):
    from tools._table_program import run_sampled

    long = TypedTable.build(Table(name="tb", title="tb", columns=["Country", "Year", "TB incidence"], rows=[
        ["Uganda", "2019", "200"], ["Uganda", "2020", "196"], ["Uganda", "2021", "199"], ["Ghana", "2019", "143"]]))
    raw = {"filters": [{"column": "country", "op": "=", "value": "Uganda"}], "fn": fn, "column": "tb_incidence",
           "answer_column": "country"}
    ran = run_sampled(raw, long, "question", question)
    assert ran.execution is not None and ran.execution.result_text == answer, ran.error
