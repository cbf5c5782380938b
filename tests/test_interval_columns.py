"""Columns of intervals get their bounds as columns of numbers (tools._table_shape), cited as the interval."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.test_table_program import BagOfWordsEmbedder, llm_for, scripted
from tools._cells import TypedTable
from tools._table_ops_model import Check, Program, RowFilter
from tools._table_program import kept_scope
from tools._table_shape import describe, interval_bounds, shape_for_programs
from tools.verify_claim import check_claim

VACCINES = Table(name="vacc", title="vacc", columns=["Vaccine", "Efficacy (%)", "95% CI", "Trial size"], rows=[
    ["BNT162b2", "95.0", "90.3-97.6", "43548"], ["Ad26.COV2.S", "66.9", "59.0-73.4", "44325"],
    ["CoronaVac", "50.7", "35.7-62.2", "12396"]])
HAZARDS = Table(name="hr", title="hr", columns=["Subgroup", "Hazard ratio (95% CI)", "P value"], rows=[
    ["Overall", "0.81 (0.65–1.01)", "0.06"], ["Women", "0.72 (0.52–0.99)", "0.04"], ["Men", "0.90 (0.67–1.21)", "0.48"],
    ["Unknown", "", ""]])


@pytest.mark.parametrize("cell, bounds", [
    ("90.3-97.6", (90.3, 97.6)), ("0.81 (0.65–1.01)", (0.65, 1.01)), ("59.0 to 73.4", (59.0, 73.4)),
    ("[0.52, 0.99]", (0.52, 0.99)), ("1.2 (95% CI 0.9-1.6)", (0.9, 1.6)), ("−1.2–−0.4", (-1.2, -0.4)),
    ("-0.5 to 0.3", (-0.5, 0.3)), ("1,200-3,400", (1200, 3400)),
    ("2019-20", None), ("0.81", None), ("5 (3-2)", None), ("n/a", None),  # a season; an estimate; lower > upper
    # a range that writes its unit (found on PubHealthTab's tuning split: "37-54 pounds")
    ("37-54 pounds", (37, 54)), ("18.5–24.9 kg/m2", (18.5, 24.9)), ("5 to 11 years", (5, 11)),
    ("500-1000 mg/day", (500, 1000)), ("3-5 days.", (3, 5)), ("11%–15%", (11, 15)),
    ("1993 - 4 details", None), ("24 - 17 wins", None),  # not a unit of an amount
])
def test_interval_cells_give_their_bounds(cell, bounds):
    assert interval_bounds(cell) == bounds


def test_an_interval_column_gets_bound_columns_cited_as_its_own_cells():
    shaped = shape_for_programs(VACCINES)
    assert shaped.table.columns[4:] == ["95% CI lower bound", "95% CI upper bound"]
    assert [row[4:] for row in shaped.table.rows] == [["90.3", "97.6"], ["59", "73.4"], ["35.7", "62.2"]]
    assert shaped.original_cells([(2, 5), (2, 1)]) == [(2, 3), (2, 1)]  # a bound is its interval's cell
    assert shaped.rows_kept and kept_scope(shaped, (1, 3)) == (1, 3)  # a follow-up's rows are the same rows
    hr = shape_for_programs(HAZARDS)
    # named by the interval, not by the estimate: "the lowest hazard ratio" is the estimate's (found as a new user)
    assert hr.table.columns[3:] == ["95% CI lower bound", "95% CI upper bound"]
    two = Table(name="x", title="x", columns=["Arm", "HR (95% CI)", "OR (95% CI)"],
                rows=[["A", "0.8 (0.6-1.1)", "1.2 (0.9-1.5)"], ["B", "0.7 (0.5-0.9)", "1.1 (1.0-1.3)"]])
    assert shape_for_programs(two).table.columns[3:5] == ["HR (95% CI) lower bound", "HR (95% CI) upper bound"]
    assert hr.table.cell(2, 4) == "0.52" and hr.table.cell(2, 5) == "0.99" and hr.table.cell(4, 4) == ""


def test_only_a_header_that_names_an_interval_is_split():
    seasons = Table(name="s", title="s", columns=["Season", "Team", "Score range"],
                    rows=[["2019-20", "A", "3-7"], ["2020-21", "B", "2-9"]])
    assert shape_for_programs(seasons).table.columns[3:] == ["Score range lower bound", "Score range upper bound"]
    years = Table(name="y", title="y", columns=["Term", "Votes"], rows=[["1863-1875", "12"], ["1875-1880", "9"]])
    assert shape_for_programs(years).table is years


WEIGHT_GAIN = Table(name="gain", title="Weight gain in pregnancy", columns=["BMI before pregnancy", "You should gain"],
                    rows=[["Under 18.5", "28-40 pounds"], ["18.5-24.9", "25-35 pounds"], ["25.0-29.9", "15-25 pounds"],
                          ["30 and above", "11-20 pounds"]])


def test_a_range_that_writes_its_unit_is_split_whatever_its_header():
    """Found on PubHealthTab's tuning split: a "You should gain..." column writing "37-54 pounds" was text to a
    program, so "… is recommended to gain a minimum 50 lbs" could not be read from its lower bound."""
    shaped = shape_for_programs(WEIGHT_GAIN)
    assert shaped.table.columns[2:] == ["You should gain lower bound", "You should gain upper bound"]
    assert [row[2:] for row in shaped.table.rows] == [["28", "40"], ["25", "35"], ["15", "25"], ["11", "20"]]
    assert shaped.original_cells([(2, 3)]) == [(2, 2)]
    # the first column's BMI bands write no unit: they stay the rows' names
    assert "BMI before pregnancy lower bound" not in shaped.table.columns
    typed = TypedTable.build(shaped.table)
    assert typed.is_numeric(typed.idents[2]) and typed.is_numeric(typed.idents[3])


async def test_a_minimum_is_checked_on_the_lower_bound_of_a_range_with_a_unit(tmp_settings, fake_llm_server):
    typed = TypedTable.build(shape_for_programs(WEIGHT_GAIN).table)
    bmi, lower = typed.idents[0], typed.idents[2]
    at_least = {"filters": [{"column": bmi, "op": "=", "value": "18.5-24.9"}], "fn": "value", "column": lower,
                "answer_column": bmi, "check": {"op": ">=", "against": "value", "value": "30"}}
    claim = "Women with a BMI of 18.5-24.9 should gain a minimum of 30 pounds."
    with fake_llm_server(scripted([bmi, typed.idents[1]], [at_least] * 5)) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), WEIGHT_GAIN, claim, embedder=BagOfWordsEmbedder())
    assert check.label == "REFUTES" and check.decided_by == "program", check.reason
    assert check.cells == [(2, 1), (2, 2)]  # the row's name and its range, as uploaded
    assert "25" in check.reason


@pytest.mark.parametrize("cells", [
    ["1993 - 4 details", "1994 - 5 details", "1995 - 6 details"],  # TabFact's seasons
    ["24 - 17", "10 - 31", "21 - 21"],  # scores
    ["1863-1875", "1875-1880", "1880-1884"],  # terms of office
    ["5-10 pounds", "n/a", "unknown"],  # mostly no range
])
def test_ranges_without_a_unit_of_an_amount_stay_text(cells):
    table = Table(name="t", title="t", columns=["Name", "Span"], rows=[[f"R{i}", c] for i, c in enumerate(cells)])
    assert shape_for_programs(table).table.columns == ["Name", "Span"]


def test_a_column_of_single_numbers_and_ranges_gets_bounds_a_number_being_both():
    """Found as a new user: a vaccines table's "Storage temp (°C)" writes "-70", "-20" and "2 to 8", text to a
    program, so "Is Novavax's vaccine stored at a colder temperature than Moderna's?" could not be computed."""
    storage = Table(name="v", title="vaccines", columns=["Vaccine", "Storage temp (°C)", "Doses"], rows=[
        ["Comirnaty", "-70", "2"], ["Spikevax", "-20", "2"], ["Vaxzevria", "2 to 8", "2"], ["Nuvaxovid", "2–8", "2"],
        ["Other", "", "1"]])
    shaped = shape_for_programs(storage)
    assert shaped.table.columns[3:] == ["Storage temp (°C) lower bound", "Storage temp (°C) upper bound"]
    assert [row[3:] for row in shaped.table.rows] == [["-70", "-70"], ["-20", "-20"], ["2", "8"], ["2", "8"],
                                                      ["", ""]]
    assert shaped.original_cells([(1, 4)]) == [(1, 2)]  # a point's bound is its own cell
    typed = TypedTable.build(shaped.table)
    assert typed.is_numeric(typed.idents[3]) and typed.is_numeric(typed.idents[4])


def test_an_estimate_with_its_interval_gets_bounds_whatever_the_header():
    """Found as a new user: a trials table's "primary_outcome_hr" writes "0.74 (0.58-0.95)"; asked which confidence
    intervals excluded 1, the programs read the estimates."""
    trials = Table(name="t", title="trials", columns=["trial", "participants", "primary_outcome_hr"], rows=[
        ["SUSTAIN-6", "3297", "0.74 (0.58-0.95)"], ["EXSCEL", "14752", "0.91 (0.83-1.00)"],
        ["ELIXA", "6068", "1.02 (0.89–1.17)"]])
    shaped = shape_for_programs(trials)
    assert shaped.table.columns[3:] == ["primary_outcome_hr lower bound", "primary_outcome_hr upper bound"]
    assert [row[3:] for row in shaped.table.rows] == [["0.58", "0.95"], ["0.83", "1"], ["0.89", "1.17"]]
    # a closed interval holds its bound: EXSCEL's 0.83-1.00 does not exclude 1 (it was listed as excluding it)
    from tools._values import read_interval_question
    from tools._table_ops import execute

    typed = TypedTable.build(shaped.table)
    written = Program(filters=[], fn="argmax", column=typed.idents[4], answer_column="trial")
    for question, rows in (("Which trials had a confidence interval that excluded 1?", [1]),
                           ("Which trials' confidence intervals include 1?", [2, 3])):
        assert execute(read_interval_question(written, typed, question), typed).selected == rows, question
    # an estimate outside its brackets is something else: a score and its halves, a count and a range of years
    other = Table(name="o", title="o", columns=["team", "n", "score"], rows=[
        ["A", "1", "3 (1-1)"], ["B", "2", "7 (2-4)"], ["C", "3", "12 (1990-1995)"]])
    assert shape_for_programs(other).table.columns == ["team", "n", "score"]


@pytest.mark.parametrize("cells", [
    ["0.1192", "0.5710", "0.0037", "0.0002", "2.10-5", "0.0073", "0.0004", "4.10-5"],  # SciTab's exponents, 2 of 8
    ["-70", "2 to 8", "n/a"],  # one range, and a text
    ["3, 5", "4, 6", "2"],  # lists, not ranges
    ["2019-20", "2020-21", "2022"],  # seasons
])
def test_a_few_stray_ranges_in_numbers_stay_as_written(cells):
    table = Table(name="t", title="t", columns=["Name", "Value", "N"],
                  rows=[[f"R{i}", c, str(i)] for i, c in enumerate(cells)])
    assert shape_for_programs(table).table.columns == ["Name", "Value", "N"]


def test_a_number_under_an_interval_header_is_an_estimate_without_bounds():
    ci = Table(name="t", title="t", columns=["Arm", "HR (95% CI)", "N"],
               rows=[["A", "0.8 (0.6-1.1)", "120"], ["B", "0.7", "98"], ["C", "0.9 (0.7-1.2)", "87"]])
    assert [row[3:] for row in shape_for_programs(ci).table.rows] == [["0.6", "1.1"], ["", ""], ["0.7", "1.2"]]


async def test_a_claim_about_a_bound_is_checked_on_the_bound(tmp_settings, fake_llm_server):
    """Found as a new user: "The lower bound of the confidence interval for BNT162b2 was above 90%." could not be
    checked: the CI column is text to a program."""
    lower = {"filters": [{"column": "vaccine", "op": "=", "value": "BNT162b2"}], "fn": "value",
             "column": "c5_95_ci_lower_bound", "answer_column": "vaccine",
             "check": {"op": ">", "against": "value", "value": "90"}}
    claim = "The lower bound of the confidence interval for BNT162b2 was above 90%."
    with fake_llm_server(scripted(["vaccine", "c5_95_ci_lower_bound"], [lower] * 5)) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), VACCINES, claim, embedder=BagOfWordsEmbedder())
    assert check.label == "SUPPORTS" and check.decided_by == "program", check.reason
    assert check.cells == [(1, 1), (1, 3)]  # the vaccine and its interval, as uploaded
    assert "90.3" in check.reason


@pytest.mark.parametrize("claim, truth", [
    ("The confidence interval for men included 1.", True),  # 0.67-1.21
    ("The confidence interval for women included 1.", False),  # 0.52-0.99
    ("The CI for women excludes 1.", True),
    ("The 95% CI for men does not include 1.", False),
    ("The confidence interval for men crosses 0.5.", False),
])
def test_an_interval_includes_a_value_when_both_bounds_hold_it(claim, truth):
    """Found as a new user: "The confidence interval for men included 1." was supported by the upper bound >= 1 alone
    (2 of 5 programs), which an interval of 1.10-1.50 passes too."""
    from tools._table_program import run_sampled

    shaped = shape_for_programs(HAZARDS)
    typed = TypedTable.build(shaped.table)
    row = "Men" if "men" in claim.split() else "Women"
    upper_only = {"filters": [{"column": "subgroup", "op": "=", "value": row}], "fn": "value",
                  "column": "c5_95_ci_upper_bound", "answer_column": "subgroup",
                  "check": {"op": ">=", "against": "value", "value": "1"}}
    ran = run_sampled(upper_only, typed, "claim", claim)
    assert ran.execution is not None and ran.execution.truth is truth, ran.error
    assert ran.program.fn == "count" and len(ran.program.filters) == 3
    # the row and its interval are cited, whether its bounds hold the value or not
    assert set(shaped.original_cells(ran.execution.cells)) == {(3 if row == "Men" else 2, 1),
                                                               (3 if row == "Men" else 2, 2)}


def test_an_interval_claim_over_several_rows_or_no_value_is_left_alone():
    from tools._values import read_interval_inclusion

    typed = TypedTable.build(shape_for_programs(HAZARDS).table)
    every = Program(filters=[], fn="every", column="c5_95_ci_upper_bound",
                    check=Check(op=">=", value="1"))
    assert read_interval_inclusion(every, typed, "Every confidence interval included 1.") == every  # several rows
    one = Program(filters=[RowFilter(column="subgroup", op="=", value="Men")], fn="value",
                  column="c5_95_ci_upper_bound", check=Check(op=">=", value="1"))
    assert read_interval_inclusion(one, typed, "The hazard ratio for men included patients over 65.") == one


def test_rows_that_differ_by_a_sign_of_order_are_different_rows():
    """Found as a new user: "Did its confidence interval include 1?" about "Age < 65" filtered Subgroup = 'Age < 65'
    and kept "Age ≥ 65" too (both read "age 65" once the signs were dropped), so no program read one interval."""
    from tools._table_ops import execute

    ages = TypedTable.build(Table(name="a", title="a", columns=["Subgroup", "Events"], rows=[
        ["Age < 65", "121"], ["Age ≥ 65", "191"], ["Age >= 80", "40"]]))
    for value, rows in (("Age < 65", [1]), ("Age ≥ 65", [2]), ("Age >= 65", [2]), ("age<65", [1])):
        program = Program(filters=[RowFilter(column="subgroup", op="=", value=value)], fn="value", column="events")
        assert execute(program, ages).selected == rows, value


@pytest.mark.parametrize("question, fn, result", [
    ("Which subgroups' confidence intervals include 1?", "argmin", ["Overall", "Men"]),  # 0.65–1.01, 0.67–1.21
    ("How many subgroups have a CI that includes 1?", "count", 2.0),
    ("Which subgroup's CI contains 0.7?", "value", ["Overall", "Women", "Men"]),
])
def test_a_question_for_the_intervals_holding_a_value_lists_or_counts_their_rows(question, fn, result):
    from tools._values import read_interval_question
    from tools._table_ops import execute

    typed = TypedTable.build(shape_for_programs(HAZARDS).table)
    written = Program(filters=[], fn=fn, column="c5_95_ci_upper_bound", answer_column="subgroup")
    read = read_interval_question(written, typed, question)
    ex = execute(read, typed, union_same_column=True)
    assert ex.result == result, ex.result_text
    stated = question.rstrip("?").split()[-1]  # the number the question states
    estimate = written.model_copy(update={"filters": [RowFilter(column="hazard_ratio_95_ci", op=">", value=stated)]})
    assert read_interval_question(estimate, typed, question).filters == read.filters  # the model's try goes


@pytest.mark.parametrize("question, fn, result", [
    ("Which subgroups' intervals exclude 1?", "argmax", "Women"),  # 0.52–0.99; "Unknown" has no interval
    ("How many subgroups have a CI that does not include 1?", "count", 1.0),
    ("Which subgroups' confidence intervals exclude 0.6?", "value", ["Overall", "Men"]),  # 0.65–1.01, 0.67–1.21
])
def test_a_question_for_the_intervals_excluding_a_value_names_the_other_rows(question, fn, result):
    """Found as a new user: "Which trials had a confidence interval that excluded 1?" was answered with the trial
    whose upper bound is largest."""
    from tools._values import read_interval_question
    from tools._table_ops import execute

    typed = TypedTable.build(shape_for_programs(HAZARDS).table)
    written = Program(filters=[], fn=fn, column="c5_95_ci_upper_bound", answer_column="subgroup")
    read = read_interval_question(written, typed, question)
    ex = execute(read, typed, union_same_column=True)
    assert ex.result == result, ex.result_text
    written = {"1": "1.00", "0.6": "0.60"}[question.rstrip("?").split()[-1]]  # with the bounds' two decimals
    said = f"95% CI lower bound > {written} or 95% CI upper bound < {written}"
    assert said in ex.steps[0] and said in describe(read, typed), (ex.steps, describe(read, typed))


WOMEN_EXCLUDE = "Women's 95% CI is 0.52 to 0.99, which does not include 1"


@pytest.mark.parametrize("claim, row, note", [
    ("The confidence interval for women included 1.", "Women", WOMEN_EXCLUDE),
    ("The CI for women excludes 1.", "Women", WOMEN_EXCLUDE),
    ("The confidence interval for men included 1.", "Men", "Men's 95% CI is 0.67 to 1.21, which includes 1"),
])
def test_the_reason_of_an_interval_claim_names_the_interval(claim, row, note):
    """Found as a new user: the reason read "The number of rows is 0; the claim needs it >= 1", which says nothing
    about the interval it checked."""
    from tools._table_program import ProgramRun, run_sampled, write_reason
    from tools._table_shape import describe

    typed = TypedTable.build(shape_for_programs(HAZARDS).table)
    upper_only = {"filters": [{"column": "subgroup", "op": "=", "value": row}], "fn": "value",
                  "column": "c5_95_ci_upper_bound", "answer_column": "subgroup",
                  "check": {"op": ">=", "against": "value", "value": "1"}}
    ran = run_sampled(upper_only, typed, "claim", claim)
    verdict = "SUPPORTS" if ran.execution.truth else "REFUTES"
    reason = write_reason("claim", ProgramRun(program=describe(ran.program, typed), ran=True, fn=ran.program.fn),
                          ran.execution, typed, verdict)
    assert note in reason, reason
    assert "Overall" not in reason  # only the row the claim names
