"""A claim comparing two named rows is computed from its words (tools._claim_compare): found as a new user over a
vaccines table, "Novavax's vaccine is stored at a colder temperature than Moderna's." was decided by sampled
programs that compared rows the claim never names or wrote tautologies."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.test_table_program import llm_for
from tools._cells import TypedTable
from tools._claim_compare import compared_rows, compared_rows_by_words
from tools._table_program import run_sampled, solve
from tools._table_shape import shape_for_programs

VACCINES = Table(name="vaccines", title="", columns=[
    "Vaccine", "Manufacturer", "Doses", "Efficacy (%)", "Storage temp (°C)", "Approved"], rows=[
    ["Comirnaty", "Pfizer-BioNTech", "2", "95", "-70", "2020"],
    ["Spikevax", "Moderna", "2", "94.1", "-20", "2020"],
    ["Vaxzevria", "AstraZeneca", "2", "70.4", "2 to 8", "2021"],
    ["Jcovden", "Janssen", "1", "66.9", "2 to 8", "2021"],
    ["Nuvaxovid", "Novavax", "2", "89.7", "2 to 8", "2022"]])


def typed_of(table: Table) -> TypedTable:
    return TypedTable.build(shape_for_programs(table).table)


@pytest.mark.parametrize("claim, truth, subject, other", [
    # rows named by another column than the row names ("Novavax" is Nuvaxovid's manufacturer); a range against a
    # single number, compared on bounds because they do not overlap
    ("Novavax's vaccine is stored at a colder temperature than Moderna's.", False, "Nuvaxovid", "Spikevax"),
    ("Is Novavax's vaccine stored at a colder temperature than Moderna's?", False, "Nuvaxovid", "Spikevax"),
    ("Moderna's vaccine is stored at a colder temperature than Novavax's.", True, "Spikevax", "Nuvaxovid"),
    ("Comirnaty has a higher efficacy than Jcovden.", True, "Comirnaty", "Jcovden"),
    ("Jcovden has a greater efficacy than Comirnaty", False, "Jcovden", "Comirnaty"),
    ("Jcovden needs fewer doses than Spikevax", True, "Jcovden", "Spikevax"),
    ("Nuvaxovid was approved later than Comirnaty.", True, "Nuvaxovid", "Comirnaty"),
    ("Nuvaxovid was approved earlier than Comirnaty.", False, "Nuvaxovid", "Comirnaty"),
])
def test_the_words_give_the_program_and_code_computes_it(claim, truth, subject, other):
    typed = typed_of(VACCINES)
    raw = compared_rows_by_words(typed, claim)
    assert raw is not None
    assert raw["filters"] == [{"column": "vaccine", "op": "=", "value": subject}]
    assert raw["check"]["against"] == "row" and raw["check"]["value"] == other
    ran = run_sampled(raw, typed, "claim", claim)
    assert ran.execution is not None, ran.error
    assert ran.execution.truth is truth


@pytest.mark.parametrize("claim, why", [
    ("Vaxzevria is stored at a colder temperature than Jcovden.", "the same range: neither is colder"),
    ("Novavax's vaccine is not stored at a colder temperature than Moderna's.", "negated"),
    ("Comirnaty has 5 more efficacy points than Jcovden.", "states a difference"),
    ("Comirnaty has a higher efficacy than Jcovden, at 95%.", "a number the table's named cells do not hold"),
    ("Comirnaty has higher efficacy and more doses than Jcovden.", "two columns named"),
    ("Comirnaty is older than Nuvaxovid.", "older has no direction on a year column"),
    ("Pfizer's vaccine has a higher efficacy than Moderna's.", "'Pfizer' is not a whole cell"),
    ("Comirnaty has a higher efficacy than the vaccines made in 2021.", "no single row after 'than'"),
    ("Comirnaty has a higher efficacy than most vaccines.", "no row after 'than'"),
    ("Comirnaty is stored colder than Spikevax.", "no column named"),
])
def test_no_program_unless_every_part_is_plain(claim, why):
    assert compared_rows_by_words(typed_of(VACCINES), claim) is None, why


def test_a_cell_two_rows_share_names_neither():
    typed = typed_of(Table(name="t", title="", columns=["Site", "Region", "Beds"], rows=[
        ["Northgate", "North", "300"], ["Riverside", "North", "250"], ["Southmead", "South", "410"]]))
    assert compared_rows_by_words(typed, "North has more beds than Southmead.") is None
    claim = "Riverside has more beds than Southmead."
    raw = compared_rows_by_words(typed, claim)
    assert raw is not None and run_sampled(raw, typed, "claim", claim).execution.truth is False


async def test_the_claim_is_checked_without_the_model(tmp_settings, fake_llm_server):
    def no_model(req):
        raise AssertionError("the model was asked")

    claim = "Novavax's vaccine is stored at a colder temperature than Moderna's."
    with fake_llm_server(no_model) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), VACCINES, "claim", claim)
    assert not srv.requests and outcome.by_form
    assert outcome.winner == "REFUTES" and outcome.confidence == 1.0
    assert "claim's form fixes the program" in outcome.vote_text()
    # the cells cited are the two rows' storage bounds, from Nuvaxovid's and Spikevax's rows
    assert {r for r, _ in outcome.cells} == {2, 5}
    assert "Spikevax" in outcome.reason and "-20" in outcome.reason


async def test_a_claim_its_form_does_not_settle_is_sampled(tmp_settings, fake_llm_server):
    from tests.test_table_program import scripted

    program = {"filters": [{"column": "vaccine", "op": "=", "value": "Comirnaty"}], "fn": "value",
               "column": "efficacy", "answer_column": "vaccine", "check": {"op": ">", "against": "value",
                                                                          "value": "90"}}
    with fake_llm_server(scripted(["vaccine", "efficacy"], [program] * 5)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), VACCINES, "claim", "Comirnaty's efficacy is above 90%.")
    assert srv.requests and not outcome.by_form and outcome.winner == "SUPPORTS"


def test_a_header_of_several_words_between_the_comparative_and_than():
    """Seen as a new user over an air-quality table: "fewer days above the WHO limit than" has five words between
    "fewer" and "than"."""
    typed = typed_of(Table(name="air", title="", columns=["City", "Country", "Days above WHO limit"], rows=[
        ["Paris", "France", "74"], ["London", "United Kingdom", "41"], ["Stockholm", "Sweden", "3"]]))
    claim = "Stockholm has fewer days above the WHO limit than Paris."
    raw = compared_rows_by_words(typed, claim)
    assert raw is not None and raw["check"] == {"op": "<", "against": "row", "value": "Paris"}
    assert run_sampled(raw, typed, "claim", claim).execution.truth is True


TRIALS = Table(name="trials", title="", columns=["Trial", "Drug", "Participants", "Median follow-up (months)"], rows=[
    ["ALPHA-1", "Rivaroxaban", "14264", "23.1"], ["BETA-2", "Apixaban", "18201", "21.8"],
    ["GAMMA-3", "Edoxaban", "21105", "33.6"], ["DELTA-4", "Dabigatran", "502", "6.0"]])


@pytest.mark.parametrize("claim, truth, compared", [
    # seen as a new user: the sampled programs compared GAMMA-3 with ALPHA-1 alone
    ("GAMMA-3 had a longer median follow-up than ALPHA-1 and BETA-2.", True, "ALPHA-1"),
    ("BETA-2 had a longer median follow-up than ALPHA-1 and DELTA-4.", False, "ALPHA-1"),
    ("DELTA-4 had fewer participants than ALPHA-1, BETA-2 and GAMMA-3.", True, "ALPHA-1"),
    ("ALPHA-1 had fewer participants than BETA-2 or DELTA-4.", False, "DELTA-4"),
])
def test_against_several_rows_the_most_demanding_one_is_compared(claim, truth, compared):
    typed = typed_of(TRIALS)
    words = compared_rows(typed, claim)
    assert words is not None and words.raw["check"]["value"] == compared
    assert "so the claim holds against all of them" in words.note and compared in words.note
    assert run_sampled(words.raw, typed, "claim", claim).execution.truth is truth


def test_several_rows_combined_are_a_sum_not_each():
    assert compared_rows(typed_of(TRIALS), "GAMMA-3 had more participants than ALPHA-1 and DELTA-4 combined.") is None


async def test_the_note_is_in_the_reason(tmp_settings, fake_llm_server):
    def no_model(req):
        raise AssertionError("the model was asked")

    with fake_llm_server(no_model) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), TRIALS, "claim",
                              "GAMMA-3 had a longer median follow-up than ALPHA-1 and BETA-2.")
    assert outcome.winner == "SUPPORTS" and outcome.by_form
    assert "ALPHA-1's is the largest of ALPHA-1's 23.1 and BETA-2's 21.8" in outcome.reason
    assert {(2, 1), (2, 4)} <= set(outcome.cells)  # BETA-2's name and value, which the note quotes, are cited


WAITS = Table(name="waits", title="", columns=["Month", "Referrals", "Cancelled operations"], rows=[
    ["2024-03", "4410", "335"], ["2024-04", "4275", "351"], ["2024-05", "4502", "298"], ["2024-06", "4190", "276"]])


@pytest.mark.parametrize("claim, truth", [
    # seen as a new user over a JSON table of months: one program of five voted, on a check the claim never states
    ("March had more referrals than April and June.", True),
    ("May had more cancelled operations than March.", False),
    ("In May, referrals were higher than in Mar.", True),
])
def test_months_name_rows_of_iso_months(claim, truth):
    typed = typed_of(WAITS)
    raw = compared_rows_by_words(typed, claim)
    assert raw is not None
    assert run_sampled(raw, typed, "claim", claim).execution.truth is truth


def test_may_the_verb_names_no_month():
    assert compared_rows_by_words(typed_of(WAITS), "Referrals may be higher in March than in April.") is None


@pytest.mark.parametrize("claim, truth, check", [
    # seen as a new user: refuted by the model's judgement (4502 against 3980 is 13% higher), unverified, 319 s
    ("Referrals in May were more than 1% higher than in March.", True, "> 1.01 × 2024-03's Referrals 4410"),
    ("Referrals in May were more than 5% higher than in March.", False, "> 1.05 × 2024-03's Referrals 4410"),
    ("Cancelled operations in June were more than 20% lower than in April.", True, "< 0.8 × 2024-04's"),
    ("Referrals in May were about 2% higher than in March.", True, "= 1.02 × 2024-03's Referrals 4410"),
])
def test_a_stated_percentage_scales_the_other_row(claim, truth, check):
    typed = typed_of(WAITS)
    raw = compared_rows_by_words(typed, claim)
    assert raw is not None
    ran = run_sampled(raw, typed, "claim", claim)
    assert ran.execution.truth is truth and ran.execution.check_text.startswith(check), ran.execution.check_text


def test_a_difference_in_units_is_left_to_the_programs():
    assert compared_rows_by_words(typed_of(WAITS), "May had 90 more referrals than March.") is None


async def test_the_claim_check_cites_every_row_its_reason_quotes(tmp_settings, fake_llm_server):
    from tests.test_table_program import BagOfWordsEmbedder
    from tools.verify_claim import check_claim

    def no_model(req):
        raise AssertionError("the model was asked")

    with fake_llm_server(no_model) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), TRIALS,
                                  "GAMMA-3 had a longer median follow-up than ALPHA-1 and BETA-2.",
                                  embedder=BagOfWordsEmbedder())
    assert check.label == "SUPPORTS" and check.decided_by == "program"
    assert {(1, 4), (2, 4), (3, 4)} <= set(check.cells)
    assert "(rows: GAMMA-3)" in check.reason


FOOD = Table(name="food", title="", columns=["Food", "Category", "Fibre (g)"], rows=[
    ["Lentils", "Legume", "7.9"], ["Chickpeas", "Legume", "7.6"], ["Oats", "Grain", "10.6"],
    ["Almonds", "Nut", "12.5"]])
LEGUMES_SUM = {"filters": [{"column": "category", "op": "=", "value": "Legume"}], "fn": "sum", "column": "fibre_g",
               "answer_column": "food", "check": {"op": ">", "against": "row", "value": "Oats"}}


@pytest.mark.parametrize("claim, op, fn, truth", [
    # seen as a new user over a nutrition CSV: the sum (15.5) against Oats's 10.6 supported it, 2 votes to 1
    ("Both legumes have more fibre than oats.", ">", "min", False),
    ("Each legume has less fibre than oats.", "<", "max", True),
    ("All legumes have more fibre than 7.5 g.", ">", "min", True),
    ("The legumes combined have more fibre than oats.", ">", "sum", True),  # a sum, as it says
    ("The legumes have more than a tenth of all the fibre.", ">", "sum", True),  # a share of the total
    ("On average, all legumes have more fibre than oats.", ">", "avg", False),
])
def test_each_row_above_is_the_smallest_above(claim, op, fn, truth):
    raw = {**LEGUMES_SUM, "fn": "avg" if "average" in claim else "sum",
           "check": {**LEGUMES_SUM["check"], "op": op}}
    if "7.5" in claim:
        raw["check"] = {"op": op, "against": "value", "value": "7.5"}
    ran = run_sampled(raw, typed_of(FOOD), "claim", claim)
    assert ran.program.fn == fn and ran.execution is not None, ran.error
    assert ran.execution.truth is truth


COSTS = Table(name="costs", title="", columns=["Drug", "Monthly cost (USD)", "Generic available"], rows=[
    ["Semaglutide", "936", "No"], ["Sitagliptin", "548", "Yes"], ["Metformin", "12", "Yes"],
    ["Empagliflozin", "611", "No"]])


@pytest.mark.parametrize("claim, written", [
    ("Sitagliptin compared to empagliflozin is more expensive.", "Sitagliptin is more expensive than empagliflozin"),
    ("Compared with metformin, sitagliptin is cheaper.", "sitagliptin is cheaper than metformin"),
    ("Is sitagliptin cheaper compared to semaglutide?", "Is sitagliptin cheaper than semaglutide"),
    ("Sitagliptin, compared with metformin, costs more.", "Sitagliptin costs more than metformin"),
    ("In comparison to X, Y had higher sales.", "Y had higher sales than X"),
    ("Sitagliptin is cheaper than metformin compared to last year.", None),  # says "than" already: as written
    ("Sitagliptin is cheap.", None),
])
def test_compared_to_is_read_as_than(claim, written):
    from tools._claim_compare import than_form

    assert than_form(claim) == (written or claim)


@pytest.mark.parametrize("claim, truth, subject, other", [
    # found as a new user: "Compared with metformin, sitagliptin is cheaper" was supported by programs that checked
    # metformin's price below sitagliptin's; PubHealthTab's tuning split has "WTI Crude compared to Brent Crude …
    # was more expensive"
    ("Compared with metformin, sitagliptin is cheaper.", False, "Sitagliptin", "Metformin"),
    ("Sitagliptin compared to empagliflozin is more expensive.", False, "Sitagliptin", "Empagliflozin"),
    ("Semaglutide is pricier than metformin.", True, "Semaglutide", "Metformin"),
    ("Metformin is less expensive compared to semaglutide", True, "Metformin", "Semaglutide"),
    ("Empagliflozin costs more than sitagliptin.", True, "Empagliflozin", "Sitagliptin"),
])
def test_prices_compared_in_their_own_words_read_the_price_column(claim, truth, subject, other):
    typed = typed_of(COSTS)
    raw = compared_rows_by_words(typed, claim)
    assert raw is not None and raw["column"] == "monthly_cost_usd"
    assert (raw["filters"][0]["value"], raw["check"]["value"]) == (subject, other)
    assert run_sampled(raw, typed, "claim", claim).execution.truth is truth


def test_a_price_word_without_a_price_column_names_no_column():
    assert compared_rows_by_words(typed_of(VACCINES), "Comirnaty is more expensive than Jcovden.") is None


def test_the_replay_decides_a_claim_by_its_form_as_the_live_path_does():
    """A claim the live path decides by its words (no sample drawn) is replayed the same way; before, its logged
    runs were voted again, and a log whose claim was settled by form replayed as no vote at all."""
    from tools.program_replay import replay_runs

    wrong = {"filters": [{"column": "drug", "op": "=", "value": "Metformin"}], "fn": "value",
             "column": "monthly_cost_usd", "answer_column": "drug",
             "check": {"op": "<", "against": "row", "value": "Sitagliptin"}}
    outcome = replay_runs(COSTS, "Compared with metformin, sitagliptin is cheaper.", [{"raw": wrong}] * 5, "claim")
    assert outcome.by_form and outcome.votes == {"REFUTES": 1}
    assert replay_runs(COSTS, "Compared with metformin, sitagliptin is cheaper.", [], "claim").votes == {"REFUTES": 1}
