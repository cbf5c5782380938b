"""A value claim about one row the program did not filter on: the claim names the row (tools._claim_compare).

Found on PubHealthTab's tuning split: "Septicemia has a 1.4% death rate" was sampled as "all rows → % ALL DEATHS;
check: result = 1.4%", which cannot run over fifteen different values, and the fallback judge refuted it."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.test_table_program import llm_for, scripted
from tests.test_tables_filter import BagOfWordsEmbedder
from tools._cells import TypedTable
from tools._claim_compare import read_named_value_row, rows_named
from tools._table_ops_model import Program
from tools._table_program import run_sampled
from tools._table_shape import shape_for_programs
from tools.verify_claim import check_claim

DEATHS = Table(name="deaths", title="Causes of death, USA, 2002", columns=[
    "FORMAL NAME", "INFORMAL NAME", "% ALL DEATHS"], rows=[
    ["(1) Diseases of the heart", "heart attack (mainly)", "28.5%"],
    ["(2) Malignant neoplasms", "cancer", "22.8%"],
    ["(3) Cerebrovascular disease", "stroke", "6.7%"],
    ["(9) Nephritis and Nephrosis", "kidney disease", "1.7%"],
    ["(10) Septicemia", "systemic infection", "1.4%"],
    ["(11) Intentional self-harm", "suicide", "1.3%"],
    ["(15) All other causes", "other", "17.4%"]])


def typed_of(table: Table) -> TypedTable:
    return TypedTable.build(shape_for_programs(table).table)


def value_program(typed: TypedTable, value: str, filters: list[dict] | None = None) -> dict:
    return {"filters": filters or [], "fn": "value", "column": typed.columns[2].ident,
            "check": {"op": "=", "against": "value", "value": value}}


@pytest.mark.parametrize("claim, value, truth, row", [
    ("Septicemia has a 1.4% death rate", "1.4%", True, "(10) Septicemia"),   # the name without its list number
    ("Septicemia has a 2.4% death rate", "2.4%", False, "(10) Septicemia"),
    ("Suicide accounts for 1.3% of all deaths.", "1.3%", True, "suicide"),    # named in another text column
    ("Stroke causes 7.6% of deaths", "7.6%", False, "stroke"),
])
def test_the_row_the_claim_names_is_filtered_on(claim, value, truth, row):
    typed = typed_of(DEATHS)
    raw = value_program(typed, value)
    bare = Program.model_validate(raw)
    read = read_named_value_row(bare, typed, claim)
    assert [f.value for f in read.filters] == [row]
    ran = run_sampled(raw, typed, "claim", claim)
    assert ran.execution is not None, ran.error
    assert ran.execution.truth is truth
    assert ran.execution.selected == [[r[0] for r in DEATHS.rows].index(
        next(r[0] for r in DEATHS.rows if row in r)) + 1]


@pytest.mark.parametrize("claim", [
    "Septicemia has a higher death rate than suicide",       # two rows named: a comparison, not this form
    "One of these causes has a 1.4% death rate",             # no row named
    "Diseases have a 1.4% death rate",                       # "diseases" is no whole cell
])
def test_a_claim_naming_no_single_row_keeps_the_program(claim):
    typed = typed_of(DEATHS)
    bare = Program.model_validate(value_program(typed, "1.4%"))
    assert read_named_value_row(bare, typed, claim) == bare


def test_a_program_already_on_one_row_or_on_the_named_cell_is_kept():
    typed = typed_of(DEATHS)
    on_one = Program.model_validate(value_program(typed, "1.4%", [
        {"column": typed.columns[1].ident, "op": "=", "value": "systemic infection"}]))
    assert read_named_value_row(on_one, typed, "Septicemia has a 1.4% death rate") == on_one
    # the check writes the row's own name ("… contains 'Lyme disease arthritis'"): a misread claim that a filter
    # on that row would refute, so it is left to fail as it did
    name_check = Program.model_validate({"filters": [], "fn": "value", "column": typed.columns[1].ident,
                                         "check": {"op": "contains", "against": "value", "value": "Septicemia"}})
    assert read_named_value_row(name_check, typed, "Septicemia is a systemic infection") == name_check


def _sum_program(typed: TypedTable, value: str) -> dict:
    return {**value_program(typed, value), "fn": "sum"}


@pytest.mark.parametrize("claim", ["Stroke causes 6.7% of deaths", "Stroke causes 6.7% of all deaths"])
def test_a_sum_over_every_row_reads_the_one_row_the_claim_names(claim):
    """Found as a new user: "Stroke caused roughly 30,000 deaths" refuted by the sum over six causes."""
    typed = typed_of(DEATHS)
    ran = run_sampled(_sum_program(typed, "6.7%"), typed, "claim", claim)
    assert ran.execution is not None and ran.execution.truth is True, ran.error
    assert [f.value for f in read_named_value_row(Program.model_validate(_sum_program(typed, "6.7%")), typed,
                                                  claim).filters] == ["stroke"]


@pytest.mark.parametrize("claim", [
    "Stroke and the other causes together account for 79.8% of deaths",  # a total asked
    "In total, the causes other than stroke make up 73.1%",
])
def test_a_sum_the_claim_asks_for_is_kept(claim):
    typed = typed_of(DEATHS)
    bare = Program.model_validate(_sum_program(typed, "79.8%"))
    assert read_named_value_row(bare, typed, claim) == bare


CAUSES = Table(name="causes", title="", columns=["Cause of death", "Deaths (2022)"], rows=[
    ["Ischaemic heart disease", "61,250"], ["Dementia", "65,967"], ["COPD", "27,300"], ["Lung cancer", "28,100"]])


def _extreme_against_row(fn: str, op: str, row: str) -> dict:
    return {"filters": [], "fn": fn, "column": "deaths_2022", "check": {"op": op, "against": "row", "value": row}}


@pytest.mark.parametrize("claim, raw, truth", [
    # the max over every row exceeds lung cancer's: true of the table, false of COPD
    ("COPD killed more people than lung cancer.", _extreme_against_row("max", ">", "Lung cancer"), False),
    ("Lung cancer killed more people than COPD.", _extreme_against_row("max", ">", "COPD"), True),
    ("COPD killed fewer people than lung cancer.", _extreme_against_row("min", "<", "Lung cancer"), True),
    ("COPD killed more people than lung cancer.", {**_extreme_against_row("max", ">", "Lung cancer"), "fn": "value"},
     False),
])
def test_a_check_against_another_row_reads_the_row_the_claim_is_about(claim, raw, truth):
    typed = typed_of(CAUSES)
    ran = run_sampled(raw, typed, "claim", claim)
    assert ran.execution is not None and ran.execution.truth is truth, ran.error


@pytest.mark.parametrize("claim", [
    "COPD had the most deaths, more than lung cancer.",  # a superlative: the max over every row is its reading
    "Some cause killed more people than lung cancer.",  # no row named but the compared one
])
def test_an_extreme_against_a_row_is_kept_for_superlatives_and_unnamed_rows(claim):
    typed = typed_of(CAUSES)
    bare = Program.model_validate(_extreme_against_row("max", ">", "Lung cancer"))
    assert read_named_value_row(bare, typed, claim) == bare


def test_a_name_two_rows_share_names_neither():
    table = Table(name="t", title="", columns=["Group", "Site", "Rate"], rows=[
        ["Adults", "North", "3%"], ["Adults", "South", "5%"], ["Children", "North", "2%"]])
    typed = typed_of(table)
    # "Adults" names two rows and "North" two: no single row; "Children" one
    assert rows_named(typed, "Adults in the North have a 3% rate", [1, 2, 3]) == {}
    assert rows_named(typed, "Children have a 2% rate", [1, 2, 3]) == {3: 1}


async def test_end_to_end_the_vote_reads_the_named_row(tmp_settings, fake_llm_server):
    """Three of five programs forget the row (as sampled on the tuning split); read with it, they decide the check,
    citing Septicemia's cells, with no fallback judge."""
    typed = typed_of(DEATHS)
    bare = {**value_program(typed, "1.4%"), "answer_column": typed.columns[2].ident}
    average = {**bare, "fn": "avg", "check": {"op": "=", "against": "value", "value": "1.4"}}
    cols = [typed.columns[0].ident, typed.columns[2].ident]
    with fake_llm_server(scripted(cols, [bare, bare, bare, average, bare])) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), DEATHS, "Septicemia has a 1.4% death rate",
                                  embedder=BagOfWordsEmbedder())
    assert check.label == "SUPPORTS" and check.decided_by == "program"
    assert check.programs.votes["SUPPORTS"] == 4
    assert (5, 3) in check.cells and (5, 1) in check.cells
