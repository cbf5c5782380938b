"""Claims of a change "from A to B" between two columns (a column per year) or two rows (tools/_claim_changes.py);
found as a new user over a table of malaria deaths by country and year."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tools._cells import TypedTable
from tools._claim_changes import read_change
from tools._table_ops import execute
from tools._table_ops_model import Program
from tools._table_program import run_sampled

DEATHS = Table(name="malaria", title="malaria", columns=["Country", "2018", "2019", "2020", "2021"], rows=[
    ["Kenya", "12,400", "11,900", "13,100", "12,800"], ["Uganda", "21,300", "20,100", "22,900", "21,700"],
    ["Ghana", "11,800", "12,300", "12,900", "11,200"], ["Malawi", "6,100", "5,900", "6,400", "6,300"]])
MONTHS = Table(name="visits", title="visits", columns=["Month", "Visits", "Staff"], rows=[
    ["January", "410", "12"], ["February", "380", "12"], ["March", "455", "14"]])
# what the model wrote for "Deaths in Kenya rose from 2019 to 2020" (4 of 5 did not run or voted on nothing)
WRITTEN = {"filters": [{"column": "country", "op": "=", "value": "Kenya"}], "fn": "value", "column": "c5_2021",
           "answer_column": "country", "check": {"op": ">", "against": "value", "value": "11,900"}}


def check(table: Table, claim: str, written: dict = WRITTEN) -> tuple[Program, bool | None]:
    typed = TypedTable.build(table)
    prog = read_change(Program.model_validate(written), typed, claim)
    return prog, execute(prog, typed).truth


@pytest.mark.parametrize("claim, truth", [
    ("Deaths in Kenya rose from 2019 to 2020.", True),
    ("Deaths in Ghana fell between 2020 and 2021.", True),
    ("Malawi saw an increase in deaths from 2018 to 2019.", False),  # 6,100 -> 5,900
    ("Uganda's deaths declined from 2020 to 2021", True),
    ("Deaths in Kenya increased between the years 2020 and 2021.", False),
])
def test_a_change_between_two_year_columns_compares_them_in_the_named_row(claim, truth):
    prog, got = check(DEATHS, claim)
    assert prog.check.against == "column" and len(prog.filters) == 1 and got is truth


def test_a_change_between_two_named_rows_compares_the_named_column():
    written = {"fn": "sum", "column": "staff", "answer_column": "month",
               "check": {"op": ">", "against": "value", "value": "410"}}
    prog, truth = check(MONTHS, "Visits rose from January to March.", written)
    assert (prog.column, prog.check.against, prog.check.value, truth) == ("visits", "row", "January", True)
    assert check(MONTHS, "Visits fell from January to February", written)[1] is True


@pytest.mark.parametrize("claim", [
    "Deaths in Kenya did not rise from 2019 to 2020.",  # negated: left to the model's reading
    "Deaths rose from 2019 to 2020.",  # no row named
    "Deaths in Kenya and Ghana rose from 2019 to 2020.",  # two rows
    "Deaths in Kenya rose from 2019 to 2024.",  # no such column
    "Kenya had more deaths than Ghana in 2020.",  # no change
])
def test_other_claims_are_left_as_written(claim):
    assert check(DEATHS, claim)[0] == Program.model_validate(WRITTEN)


def test_the_change_votes_end_to_end():
    ran = run_sampled(WRITTEN, TypedTable.build(DEATHS), "claim", "Is it true that deaths in Kenya rose from 2019 "
                                                                   "to 2020?")
    assert ran.execution is not None and ran.execution.truth is True, ran.error
    assert "2019" in ran.execution.check_text


def test_the_reason_states_the_comparison_of_a_rewritten_only_program():
    """Found as a new user: the model's "only" rewritten into "2021 < 2020 of the same row" gave the reason
    "2021 is 6,300 (rows: Malawi), so the table supports the claim", without the 2020 it was compared with."""
    from tools._table_program import ProgramOutcome, decide, write_reason

    claim = "Malawi's deaths fell from 2020 to 2021."
    only = {"filters": [{"column": "country", "op": "=", "value": "Malawi"}], "fn": "only", "column": "c5_2021",
            "answer_column": "country", "check": {"op": "<", "against": "value", "value": "6,400"}}
    typed = TypedTable.build(DEATHS)
    sampled = run_sampled(only, typed, "claim", claim)
    outcome = ProgramOutcome(kind="claim")
    decide(outcome, [sampled], typed, "claim", claim)
    [run] = outcome.runs
    assert run.fn == "value" and run.raw["fn"] == "only"
    reason = write_reason("claim", run, sampled.execution, typed, "SUPPORTS")
    assert "the claim needs it < Malawi's 2020 6,400" in reason, reason


# Found as a new user: the one measure in two year columns, and a claim with the verb but no "from … to".
CASES = Table(name="measles", title="measles", columns=[
    "County", "Population", "MMR coverage (%)", "Measles cases 2023", "Measles cases 2024"], rows=[
    ["Ashford", "182,400", "94.1", "3", "0"], ["Belmont", "67,950", "88.7", "12", "27"],
    ["Carver", "241,300", "91.5", "5", "9"], ["Dunmore", "39,800", "85.2", "18", "41"],
    ["Elmwood", "125,600", "96.3", "0", "1"], ["Fairview", "88,100", "90.0", "7", "4"]])
# what the model wrote for "Measles cases rose in every county with MMR coverage above 90%" (it supported the claim)
ABOVE_90 = {"filters": [{"column": "mmr_coverage", "op": ">", "value": "90"}], "fn": "every",
            "column": "measles_cases_2023", "answer_column": "county",
            "check": {"op": ">=", "against": "value", "value": "0"}}


@pytest.mark.parametrize("claim, truth", [
    ("Measles cases rose in every county with MMR coverage above 90%.", False),  # Ashford 3 -> 0, Fairview 7 -> 4
    ("Cases fell in each county with coverage above 90%.", False),
    ("Measles cases fell in Fairview.", True),
    ("Measles cases increased in Ashford.", False),
    ("In Dunmore, measles cases went up.", True),
])
def test_a_change_without_from_to_compares_the_two_year_columns_of_the_measure(claim, truth):
    prog, got = check(CASES, claim, ABOVE_90)
    assert (prog.column, prog.check.against, prog.check.value) == ("measles_cases_2024", "column",
                                                                   "measles_cases_2023")
    assert got is truth


@pytest.mark.parametrize("claim", [
    "Measles cases did not rise in Ashford.",  # negated
    "Measles cases rose by 15 in Belmont.",  # states an amount
    "Belmont's growth in measles cases was the largest.",  # a noun, not the verb
    "Measles cases rose in counties with low coverage.",  # neither one row nor every
])
def test_other_bare_changes_are_left_as_written(claim):
    assert check(CASES, claim, ABOVE_90)[0] == Program.model_validate(ABOVE_90)


def test_a_bare_change_needs_one_measure_in_exactly_two_years():
    # four year columns: which two the claim means is not settled by its form
    assert check(DEATHS, "Deaths in Kenya rose.")[0] == Program.model_validate(WRITTEN)
    two_measures = Table(name="t", title="t", columns=["County", "Cases 2023", "Cases 2024", "Deaths 2023",
                                                       "Deaths 2024"], rows=[["A", "1", "2", "5", "3"]])
    written = {"filters": [{"column": "county", "op": "=", "value": "A"}], "fn": "value", "column": "cases_2023",
               "answer_column": "county", "check": {"op": ">", "against": "value", "value": "0"}}
    prog, truth = check(two_measures, "Deaths fell in A.", written)
    assert (prog.column, prog.check.value, truth) == ("deaths_2024", "deaths_2023", True)
    assert check(two_measures, "They rose in A.", written)[0] == Program.model_validate(written)  # which measure?


@pytest.mark.parametrize("claim, truth", [
    ("Did cases fall in Ashford?", True),
    ("Has the number of measles cases increased in Ashford?", False),
    ("Ashford had more measles cases in 2024 than in 2023.", False),
    ("Belmont had more measles cases in 2024 than in 2023.", True),
    ("Ashford had fewer cases in 2024 than in 2023.", True),
])
def test_asked_changes_and_year_comparisons_compare_the_two_year_columns(claim, truth):
    written = {"filters": [{"column": "county", "op": "=", "value": claim.split(" in ")[-1].split()[0]
                            if claim.startswith(("Did", "Has")) else claim.split()[0]}],
               "fn": "value", "column": "measles_cases_2023", "answer_column": "county",
               "check": {"op": ">", "against": "value", "value": "0"}}
    prog, got = check(CASES, claim, written)
    assert (prog.column, prog.check.against, prog.check.value) == ("measles_cases_2024", "column",
                                                                   "measles_cases_2023")
    assert got is truth


def test_a_negated_year_comparison_is_left_as_written():
    written = {"filters": [{"column": "county", "op": "=", "value": "Ashford"}], "fn": "value",
               "column": "measles_cases_2023", "answer_column": "county",
               "check": {"op": ">", "against": "value", "value": "0"}}
    claim = "Ashford did not have more cases in 2024 than in 2023."
    assert check(CASES, claim, written)[0] == Program.model_validate(written)


def test_quarters_order_like_years():
    """Found as a new user with an XLSX of antibiotic use per ward, "DDD per 100 bed-days Q1" and "… Q2": "Did
    antibiotic use fall in the ICU?" was supported by "the ward with the smallest Q2 use is ICU"."""
    use = Table(name="abx", title="abx", columns=["Ward", "Beds", "DDD per 100 bed-days Q1", "DDD per 100 bed-days Q2"],
                rows=[["ICU", "16", "142.5", "131.0"], ["Oncology", "28", "94.7", "101.3"]])
    written = {"filters": [{"column": "ward", "op": "=", "value": "ICU"}], "fn": "value", "column": "beds",
               "answer_column": "ward", "check": {"op": ">", "against": "value", "value": "0"}}
    prog, truth = check(use, "Did antibiotic use fall in the ICU?", written)
    assert (prog.column, prog.check.value, truth) == ("ddd_per_100_bed_days_q2", "ddd_per_100_bed_days_q1", True)
    prog, truth = check(use, "The ICU used more antibiotics in Q2 than in Q1.", written)
    assert (prog.check.op, truth) == (">", False)
    mixed = Table(name="t", title="t", columns=["Ward", "Beds", "Cases Q1", "Cases 2024"],
                  rows=[["ICU", "16", "3", "1"]])
    assert check(mixed, "Cases fell in the ICU.", written)[0] == Program.model_validate(written)  # no order


PRICES = Table(name="prices", title="Drug prices", columns=["Drug", "Price 2023 ($)", "Price 2024 ($)"], rows=[
    ["Insulin glargine", "98.50", "89.00"], ["Adalimumab", "2984.00", "3102.00"], ["Metformin", "4.20", "4.60"]])
RISING = Table(name="rising", title="Drug prices", columns=["Drug", "Price 2023 ($)", "Price 2024 ($)"], rows=[
    ["A", "5", "6"], ["B", "3", "4"]])


@pytest.mark.parametrize("table, claim, truth", [
    (PRICES, "Did any drug get cheaper?", True),  # insulin glargine, 98.50 -> 89.00
    (PRICES, "Did any drug become more expensive?", True),
    (RISING, "Did any drug get cheaper?", False),  # none did: refuted by finding none
    (PRICES, "Metformin got cheaper.", False),
])
def test_a_price_change_in_its_own_words_and_any_row(table, claim, truth):
    """Found as a new user: "Did any drug get cheaper?" was refuted by comparing one drug's 2024 price with
    another's."""
    typed = TypedTable.build(table)
    raw = {"filters": [], "fn": "value", "column": typed.columns[2].ident, "answer_column": "drug",
           "check": {"op": "=", "against": "row", "value": "Insulin glargine"}}
    ran = run_sampled(raw, typed, "claim", claim)
    assert ran.execution is not None and ran.execution.truth is truth, ran.error


@pytest.mark.parametrize("claim, truth, check", [
    ("Metformin's price rose by more than 10%.", False, "> 0.10"),  # +9.5%: supported by "4.60 > 4.20" before
    ("Metformin's price rose by more than 9%.", True, "> 0.09"),
    ("The price of insulin glargine fell by more than 5%.", True, "< -0.05"),  # -9.6%
    ("The price of insulin glargine fell by 3.", False, "= 3"),  # 98.50 - 89.00 = 9.5
    ("Adalimumab's price rose by less than 100.", False, "< 100"),  # 118
])
def test_a_stated_amount_of_change_is_checked(claim, truth, check):
    """Found as a new user: "Metformin's price rose by more than 10%" was supported by 4.60 > 4.20 (a 9.5% rise)."""
    typed = TypedTable.build(PRICES)
    raw = {"filters": [{"column": "drug", "op": "=", "value": "Metformin"}], "fn": "value", "column": "price_2024",
           "answer_column": "drug", "check": {"op": ">", "against": "row", "value": "Metformin"}}
    ran = run_sampled(raw, typed, "claim", claim)
    assert ran.execution is not None and ran.execution.truth is truth, ran.error
    assert ran.execution.check_text == check
