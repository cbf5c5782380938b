"""A plain superlative question with no voting program is answered by the program its words give
(tools/_question_rules.py)."""

from __future__ import annotations

import pytest

from kb.tables import Table
from tests.test_table_choice import programs_only
from tools._cells import TypedTable
from tools._question_rules import extreme_by_words

HOSPITALS = Table(name="hospitals", title="hospitals", columns=[
    "Hospital", "City", "Beds", "Occupancy (%)", "Annual cost ($M)"], rows=[
    ["St. Mary's", "Leeds", "1,120", "87.5%", "$612.4"], ["Royal Infirmary", "Glasgow", "980", "91.2%", "$540.0"],
    ["Northgate General", "Leeds", "410", "78.0%", "$198.7"], ["Harbour View", "Cardiff", "655", "83.4%", "$301.2"],
    ["Westfield Clinic", "Glasgow", "220", "69.9%", "$95.3"], ["Queen Anne's", "Cardiff", "1015", "94.6%", "$588.9"]])


@pytest.mark.parametrize("question, fn, column, nth", [
    ("Which hospital has the second-highest occupancy?", "argmax", "occupancy", 2),
    ("Which hospital has the most beds?", "argmax", "beds", 1),
    ("Which hospital has the lowest annual cost?", "argmin", "annual_cost_m", 1),
    ("Who has the third fewest beds?", "argmin", "beds", 3),
])
def test_a_plain_superlative_question_gives_its_program(question, fn, column, nth):
    raw = extreme_by_words(TypedTable.build(HOSPITALS), question)
    assert raw == {"filters": [], "fn": fn, "column": column, "answer_column": "hospital", "options": {"nth": nth}}


def test_a_number_in_the_column_s_own_name_is_no_condition():
    """Seen as a new user over an air-quality table: "PM2.5" is the column, not a value to filter on."""
    air = Table(name="air", title="", columns=["City", "PM2.5 (µg/m³)", "NO₂ (µg/m³)"], rows=[
        ["Delhi", "92.7", "38"], ["Lahore", "99.5", "31"], ["Beijing", "34.3", "29"], ["Paris", "13.2", "31"]])
    raw = extreme_by_words(TypedTable.build(air), "Which city has the third-highest PM2.5 level?")
    assert raw == {"filters": [], "fn": "argmax", "column": "pm2_5_g_m3", "answer_column": "city",
                   "options": {"nth": 3}}
    assert extreme_by_words(TypedTable.build(air), "Which city has PM2.5 above 30 and the highest NO2?") is None


@pytest.mark.parametrize("question", [
    "Which Leeds hospital has the most beds?",  # a value of the table: a filter the words do not give
    "Which hospitals have the most beds in Glasgow?",
    "Which hospital has more than 500 beds?",  # no extreme, and a number
    "Which hospital has the most beds and the lowest cost?",  # both directions
    "Which city has the most beds?",  # asks for another column than the rows' names
    "What is the highest occupancy?",  # asks for a value
    "Which hospital has the highest rating?",  # names no column
])
def test_anything_more_than_a_plain_superlative_is_left_to_the_programs(question):
    assert extreme_by_words(TypedTable.build(HOSPITALS), question) is None


async def test_with_no_voting_program_the_question_s_words_decide(tmp_settings, fake_llm_server):
    """Found as a new user: with no sampled program deciding, the model's own answer named Northgate General, the
    second lowest, for "the second-highest occupancy". Here every sample filters on a value no row has."""
    from tests.test_table_program import llm_for
    from tools.table_qa import answer_question

    unstated = {"filters": [{"column": "occupancy", "op": ">", "value": "95"}], "fn": "argmax",
                "column": "occupancy", "answer_column": "hospital", "nth": 2}
    with fake_llm_server(programs_only(["hospital", "occupancy"], unstated)) as srv:  # never asks for a free answer
        res = await answer_question(llm_for(tmp_settings, srv), HOSPITALS,
                                    "Which hospital has the second-highest occupancy?", samples=3, use_filter=False)
    assert res.answer == "Royal Infirmary" and res.decided_by == "program", res.reason
    assert (2, 4) in res.cells and (2, 1) in res.cells
    assert res.programs.retried and len(res.programs.runs) == 4  # two batches of 3 would be 6: the retry replaced


async def test_a_program_ranking_another_column_than_the_one_asked_does_not_vote(tmp_settings, fake_llm_server):
    """Seen as a new user: "the second-highest occupancy" read as the second largest Avg. stay (right by chance
    there). Here the second most beds is Queen Anne's, the second-highest occupancy Royal Infirmary."""
    from tests.test_table_program import llm_for
    from tools.table_qa import answer_question

    beds = {"filters": [], "fn": "argmax", "column": "beds", "answer_column": "hospital", "nth": 2}
    with fake_llm_server(programs_only(["hospital", "beds"], beds)) as srv:
        res = await answer_question(llm_for(tmp_settings, srv), HOSPITALS,
                                    "Which hospital has the second-highest occupancy?", samples=3, use_filter=False)
    assert res.answer == "Royal Infirmary", res.reason
    assert all("ranks by Beds" in r.error for r in res.programs.runs[:3])
    # a question the words do not settle (it names no column) keeps every program's vote
    with fake_llm_server(programs_only(["hospital", "beds"], beds)) as srv:
        res = await answer_question(llm_for(tmp_settings, srv), HOSPITALS,
                                    "Which hospital is the second largest?", samples=3, use_filter=False)
    assert res.answer == "Queen Anne's" and all(r.ran for r in res.programs.runs), res.reason


async def test_a_program_that_ranks_nothing_does_not_vote(tmp_settings, fake_llm_server):
    """Seen as a new user over an air-quality table: "Which city has the third-highest PM2.5 level?" was answered
    with all seven cities by the one program that ran, "PM2.5 > 0 → City"."""
    from tests.test_table_program import llm_for
    from tools.table_qa import answer_question

    every_row = {"filters": [{"column": "occupancy", "op": ">", "value": "0"}], "fn": "value",
                 "column": "hospital", "answer_column": "hospital"}
    with fake_llm_server(programs_only(["hospital", "occupancy"], every_row)) as srv:
        res = await answer_question(llm_for(tmp_settings, srv), HOSPITALS,
                                    "Which hospital has the third-highest occupancy?", samples=3, use_filter=False)
    assert res.answer == "St. Mary's", res.reason  # 94.6, 91.2, then 87.5
    assert all("ranks no rows by Occupancy (%)" in r.error for r in res.programs.runs[:3])


@pytest.mark.parametrize("question", ["And which hospital has the fewest beds?",
                                      "so, which hospital has the fewest beds?", "Which hospital has the fewest beds?"])
async def test_a_follow_up_s_opening_word_does_not_hide_the_question(tmp_settings, fake_llm_server, question):
    """Seen as a new user: "And which city has the lowest NO2?" was answered "12" (the smallest value), not the
    city, since the rules that read "which <noun>" start at the question's first word."""
    from tests.test_table_program import llm_for
    from tools.table_qa import answer_question

    smallest = {"filters": [], "fn": "min", "column": "beds", "answer_column": "hospital"}
    with fake_llm_server(programs_only(["hospital", "beds"], smallest)) as srv:
        res = await answer_question(llm_for(tmp_settings, srv), HOSPITALS, question, samples=3, use_filter=False)
    assert res.answer == "Westfield Clinic", res.reason


def test_without_opener():
    from tools.lang.lexicon import without_opener

    assert without_opener("And which city has the lowest NO2?") == "which city has the lowest NO2?"
    assert without_opener("Okay, how many?") == "how many?"
    assert without_opener("Andorra has the most beds?") == "Andorra has the most beds?"
    assert without_opener("Which is higher?") == "Which is higher?"
