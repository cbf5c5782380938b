"""Claims of a trend over every period, settled in code (tools._settle_rules)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.test_table_program import BagOfWordsEmbedder, llm_for
from tools._settle_rules import trend_check
from tools.verify_claim import check_claim

SALES = Table(name="sales", title="sales", columns=["Month", "Revenue", "Costs", "Profit"], rows=[
    ["2024-01", "$1,200,000", "$950,000", "$250,000"],
    ["2024-02", "$1,150,000", "$980,000", "$170,000"],
    ["2024-03", "$1,380,000", "$1,010,000", "$370,000"],
    ["2024-04", "$1,420,000", "$1,450,000", "($30,000)"],
])
# Newest first, with a totals row: the years give the order, the totals row is no period.
CASES = Table(name="cases", title="cases", columns=["Year", "Region", "Cases", "Deaths"], rows=[
    ["2021", "North", "410", "12"], ["2020", "North", "380", "12"], ["2019", "North", "300", "15"],
    ["Total", "", "1090", "39"]])


@pytest.mark.parametrize("table,claim,verdict,rows", [
    (SALES, "Revenue grew every month in 2024", "REFUTES", [1, 2]),  # fell in February: found as a new user
    (SALES, "Costs increased every month", "SUPPORTS", [1, 2, 3, 4]),
    (SALES, "Costs rose steadily", "SUPPORTS", [1, 2, 3, 4]),
    (SALES, "Revenue did not grow every month", "SUPPORTS", [1, 2]),
    (SALES, "Profit fell each month", "REFUTES", [2, 3]),
    (CASES, "Cases rose every year", "SUPPORTS", [3, 2, 1]),  # time order, not the table's
    (CASES, "Deaths fell every year", "REFUTES", [2, 1]),  # 15 -> 12, then 12 stays 12 (2020 -> 2021)
])
def test_a_trend_claim_is_checked_step_by_step_in_time_order(table, claim, verdict, rows):
    check = trend_check(claim, table)
    assert check is not None and check.verdict == verdict
    assert [r for r, _ in check.cells][::2] == rows  # label and value cell per row, in time order
    if verdict == "REFUTES" and "not" not in claim:
        assert "from" in check.reason or "stayed" in check.reason


# Seasons across years, with a gap: found as a new user, the range was read as "in 2017" (one row) and left to a
# program that compared the range's two ends.
FLU = Table(name="flu", title="flu", columns=["Season", "Start", "Hospitalisations", "Deaths"], rows=[
    ["2016-17", "2016-10-02", "30,453", "1,234"], ["2017-18", "2017-10-01", "48,767", "2,841"],
    ["2018-19", "2018-09-30", "34,990", "1,902"], ["2019-20", "2019-09-29", "38,612", ""],
    ["2020-21", "2020-09-27", "1,675", "98"], ["2021-22", "2021-10-03", "9,416", "511"]])
YEARS = Table(name="y", title="y", columns=["Year", "Cases"], rows=[
    ["2014", "90"], ["2015", "80"], ["2016", "100"], ["2017", "120"], ["2018", "150"], ["2019", "140"]])


@pytest.mark.parametrize("table,claim,verdict,rows", [
    (FLU, "Hospitalisations fell every season after 2017-18 until 2020-21", "REFUTES", [3, 4]),
    (FLU, "Hospitalisations fell every season since 2019-20", "REFUTES", [5, 6]),
    (FLU, "Hospitalisations rose every season until 2017-18", None, None),  # two rows: too few to call a trend
    (YEARS, "Cases rose every year from 2015 to 2018", "SUPPORTS", [2, 3, 4, 5]),  # not from 2014 (90 -> 80)
    (YEARS, "Cases rose each year since 2015", "REFUTES", [5, 6]),
    (YEARS, "Cases rose every year between 2015 and 2018", "SUPPORTS", [2, 3, 4, 5]),
])
def test_periods_the_claim_writes_bound_the_run(table, claim, verdict, rows):
    check = trend_check(claim, table)
    if verdict is None:
        assert check is None
        return
    assert check is not None and check.verdict == verdict
    assert [r for r, _ in check.cells][::2] == rows


def test_the_reason_quotes_the_cells_that_break_the_run():
    check = trend_check("Revenue grew every month in 2024", SALES)
    assert check.reason == ("Revenue fell from $1,200,000 (2024-01) to $1,150,000 (2024-02); the claim says it rose "
                            "every time, so the table refutes the claim.")


@pytest.mark.parametrize("claim", [
    "Revenue grew in March",  # no 'every'
    "Sales grew every month",  # no column named
    "Revenue and costs grew every month",  # two columns
    "The year grew every year",  # a column of years is no measure
])
def test_claims_the_rule_does_not_read_are_left_to_the_programs(claim):
    assert trend_check(claim, SALES) is None


def test_without_a_time_column_the_table_order_is_used_and_said():
    t = Table(name="t", title="t", columns=["Stage", "Score"], rows=[["early", "1"], ["middle", "2"], ["late", "3"]])
    check = trend_check("The score increased at each stage steadily", t)
    assert check.verdict == "SUPPORTS" and "in the table's row order" in check.reason


async def test_the_rule_decides_without_asking_the_model(tmp_settings, fake_llm_server):
    def handler(req):
        raise AssertionError("the model was asked")

    with fake_llm_server(handler) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), SALES, "Revenue grew every month in 2024",
                                  embedder=BagOfWordsEmbedder())
    assert check.label == "REFUTES" and check.decided_by == "rule:trend-every-period"
    assert check.cells == [(1, 1), (1, 2), (2, 1), (2, 2)]


# A long table: a row per country and year (found as a new user, the three countries were taken as one series).
TB = Table(name="tb", title="tb", columns=["Country", "Year", "TB incidence per 100k"], rows=[
    ["Kenya", "2019", "267"], ["Kenya", "2020", "259"], ["Kenya", "2021", "251"],
    ["Uganda", "2019", "200"], ["Uganda", "2020", "196"], ["Uganda", "2021", "199"],
    ["Ghana", "2019", "143"], ["Ghana", "2020", "139"], ["Ghana", "2021", "135"]])


@pytest.mark.parametrize("claim, verdict, says", [
    ("TB incidence fell every year in Kenya.", "SUPPORTS", "267 (2019), 259 (2020), 251 (2021)"),  # was refuted
    ("TB incidence in Uganda fell every year.", "REFUTES", "rose from 196 (2020) to 199 (2021)"),
    # two periods of one country, compared (found as a new user: Uganda's 2021 was compared with Kenya's)
    ("TB incidence in Uganda rose from 2020 to 2021.", "SUPPORTS", "rose from 196 (2020) to 199 (2021)"),
    ("TB incidence in Ghana fell between 2019 and 2021.", "SUPPORTS", "fell from 143 (2019) to 135 (2021)"),
    ("TB incidence in Kenya did not fall from 2019 to 2020.", "REFUTES", "the claim says it did not fall"),
])
def test_a_long_table_s_trend_is_the_named_thing_s_rows(claim, verdict, says):
    check = trend_check(claim, TB)
    assert check is not None and check.verdict == verdict and says in check.reason, check


@pytest.mark.parametrize("claim", [
    "TB incidence fell every year.",  # three countries each year: no one series
    "TB incidence rose from 2020 to 2021.",
    "TB incidence in Kenya was 259 in 2020.",  # no change claimed
])
def test_a_long_table_without_one_named_thing_is_left_to_the_programs(claim):
    assert trend_check(claim, TB) is None


AGES = Table(name="ages", title="Coverage", columns=["Age group", "Population", "Vaccinated", "Coverage (%)"], rows=[
    ["18–24", "41200", "18950", "46.0"], ["25–49", "128400", "77040", "60.0"], ["50–64", "84300", "62380", "74.0"],
    ["65+", "73100", "64330", "88.0"]])


@pytest.mark.parametrize("claim, verdict", [
    ("Coverage rises with age.", "SUPPORTS"),
    ("Coverage increases across age groups.", "SUPPORTS"),
    ("Coverage falls with age.", "REFUTES"),
    ("Population rises with age.", "REFUTES"),  # 128,400 (25–49) to 84,300 (50–64)
    ("Coverage rises with income.", None),  # not the column of row labels: left to the programs
])
def test_a_trend_along_the_row_labels_is_checked_in_their_order(claim, verdict):
    """Found as a new user: "Coverage rises with age" was supported by "the average coverage > the 18–24 group's"."""
    check = trend_check(claim, AGES)
    assert (check.verdict if check else None) == verdict
    if check is not None:
        assert "in the table's row order" in check.reason


WAITS = Table(name="waits", title="", columns=["Month", "Referrals", "Seen within 18 weeks (%)", "Median wait (weeks)"],
              rows=[["2024-01", "4120", "71.2", "14.1"], ["2024-02", "3980", "72.5", "13.8"],
                    ["2024-03", "4410", "70.9", "14.6"], ["2024-04", "4275", "69.4", "15.2"],
                    ["2024-05", "4502", "68.8", "15.9"], ["2024-06", "4190", "70.1", "15.1"]])


@pytest.mark.parametrize("claim, verdict, first_row", [
    # seen as a new user: refuted by the model's judgement, whose reason said the share "increased"
    ("The share seen within 18 weeks fell every month from February to May.", "SUPPORTS", 2),
    ("The share seen within 18 weeks fell every month.", "REFUTES", 1),  # January to February rose
    ("Referrals rose every month from Feb to May.", "REFUTES", 3),  # March to April fell
    ("The median wait rose every month from February to May.", "SUPPORTS", 2),
])
def test_month_names_bound_a_run_of_iso_months_and_the_best_named_column_is_read(claim, verdict, first_row):
    check = trend_check(claim, WAITS)
    assert check is not None and check.verdict == verdict, check
    assert check.cells[0] == (first_row, 1)


def test_month_names_do_not_bound_a_run_over_several_years():
    two_years = Table(name="t", title="", columns=["Month", "Referrals"], rows=[
        ["2023-12", "10"], ["2024-01", "20"], ["2024-02", "30"], ["2024-12", "5"], ["2025-01", "6"]])
    check = trend_check("Referrals rose every month from December to February.", two_years)
    assert check is not None and check.verdict == "REFUTES"  # the whole run: December is two rows


FLU = Table(name="flu", title="flu", columns=["Week", "Region", "ILI visits", "Hospital admissions"], rows=[
    ["2025-W40", "North", "1204", "88"], ["2025-W41", "North", "1350", "97"], ["2025-W42", "North", "1622", "121"],
    ["2025-W43", "North", "1580", "134"], ["2025-W40", "South", "980", "61"], ["2025-W41", "South", "1105", "70"],
    ["2025-W42", "South", "1430", "92"], ["2025-W43", "South", "1712", "118"]])


@pytest.mark.parametrize("claim, verdict", [
    # found as a new user: refuted by the South's first week after the North's last, both regions taken as one run
    ("Hospital admissions in the North rose every week.", "SUPPORTS"),
    ("ILI visits in the South increased every week.", "SUPPORTS"),
    ("ILI visits in the North increased every week.", "REFUTES"),  # 1,622 then 1,580
    ("Hospital admissions rose every week.", None),  # a week twice: the claim names no region
])
def test_a_weekly_series_keeps_the_rows_of_the_region_it_names(claim, verdict):
    check = trend_check(claim, FLU)
    assert (check.verdict if check else None) == verdict
    if check:
        assert check.reason.startswith("In the rows of ") and "(2025-W4" in check.reason  # weeks name the rows


ADMISSIONS = Table(name="a", title="", columns=["Month", "Admissions", "Seen within 18 weeks (%)"], rows=[
    ["2024-01", "512", "71"], ["2024-02", "498", "70"], ["2024-03", "561", "69"]])


@pytest.mark.parametrize("claim, decided", [
    ("Admissions rose to 600 from January to March.", False),  # a value the claim states
    ("Admissions increased by about 10% from January to March.", False),  # a rough amount
    ("Admissions increased by 49 from January to March.", False),  # an absolute amount
    ("Admissions rose by more than 5% every month.", False),
    ("Admissions rose from January to March.", True),
    ("Admissions rose from 2024-01 to 2024-03.", True),  # the periods' own digits
    ("The share seen within 18 weeks fell every month.", True),  # a header's number names the column
])
def test_a_stated_amount_is_left_to_the_programs(claim, decided):
    assert (trend_check(claim, ADMISSIONS) is not None) is decided


@pytest.mark.parametrize("claim, verdict, says", [
    # found as a new user: 512 to 561 is 9.6%, and the direction alone supported the claim
    ("Admissions increased by more than 10% from January to March.", "REFUTES", "rose by 9.6% from 512 (2024-01)"),
    ("Admissions increased by more than 9% from January to March.", "SUPPORTS", "rose by 9.6%"),
    ("Admissions increased by 10% from January to March.", "SUPPORTS", "rose by 10%"),  # 9.5 to 10.5, as written
    ("Admissions fell by at least 2% from January to February.", "SUPPORTS", "fell by 2.7%"),
    ("Admissions fell by more than 5% from January to March.", "REFUTES", "rose by 9.6%"),  # the other way
])
def test_a_stated_percentage_change_between_two_periods_is_computed(claim, verdict, says):
    check = trend_check(claim, ADMISSIONS)
    assert check is not None and check.verdict == verdict and says in check.reason, check
