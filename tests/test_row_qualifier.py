"""A question about some of the table's rows, answered over all of them, says so (tools._question_counts).

Found as a new user: "What is the average PM2.5 across the European cities?" over a seven-city table with no
continent column was answered 39.36, the mean of all seven, by five programs of five, and shown as verified."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from kb.tables import Table
from tests.test_loop import Recorder, Router, frame, make_assistant, patched_tools  # noqa: F401
from tests.test_table_program import llm_for, scripted
from tools._cells import TypedTable
from tools.registry import REGISTRY, Tool
from tools._question_counts import qualifier_note, row_qualifier
from tools._table_shape import shape_for_programs
from tools.table_qa import Output as QAOutput, answer_question

AIR = Table(name="air", title="Annual air quality, selected cities (2023)", columns=[
    "City", "Country", "PM2.5 (µg/m³)", "NO₂ (µg/m³)", "Population (millions)"], rows=[
    ["Delhi", "India", "92.7", "38", "32.9"],
    ["Lahore", "Pakistan", "99.5", "31", "13.5"],
    ["Paris", "France", "13.2", "31", "11.2"],
    ["London", "United Kingdom", "9.3", "33", "9.6"],
    ["Stockholm", "Sweden", "4.6", "12", "1.7"]])


@pytest.mark.parametrize("question, found", [
    ("What is the average PM2.5 across the European cities?", ("European", "cities")),
    ("Which European city has the highest NO2?", ("European", "city")),
    ("What is the mean PM2.5 of the Swedish cities?", ("Swedish", "cities")),  # "Sweden" is no "Swedish"
    ("What is the total population of Asian cities?", ("Asian", "cities")),
    ("What is the average PM2.5 across the cities?", None),
    ("Which city has the highest PM2.5?", None),
    ("Which of the listed cities has the lowest NO2?", None),            # the table's own rows
    ("What is the total population of the three cities?", None),        # a count
    ("Which of the most polluted cities is largest?", None),            # a superlative
    ("What is the PM2.5 of the Paris cities?", None),                   # the table writes "Paris"
    ("what is the average pm2.5 across the european cities?", None),    # lower case: not a proper adjective
    ("Delhi, cities: which has the lowest?", None),                     # not across a comma
])
def test_the_qualifier_is_found_only_before_the_rows_noun_and_unwritten(question, found):
    assert row_qualifier(AIR, question) == found


def test_the_note_says_over_how_many_rows_in_the_plural():
    note = qualifier_note(AIR, ("European", "city"), 5)
    assert "all 5 cities" in note and "“European”" in note and "not an answer for the European ones" in note


def test_a_qualifier_the_table_writes_by_its_stem_is_not_said_to_be_missing():
    """"Northern" over Region = "North": the table could pick those rows; the note must not say it cannot."""
    table = Table(name="hospitals", title="", columns=["Hospital", "Region", "Beds"],
                  rows=[["St. Mary", "North", "420"], ["Lakeview", "North", "185"], ["Mt. Hope", "East", "560"]])
    found = row_qualifier(table, "Which Northern hospital has the most beds?")
    assert found == ("Northern", "hospital")
    note = qualifier_note(table, found, 3)
    assert "nothing in the table reads" not in note and "no program picked those out" in note
    assert "all 3 hospitals" in note


def _typed() -> TypedTable:
    return TypedTable.build(shape_for_programs(AIR).table)


async def test_an_answer_over_all_rows_is_low_confidence_with_the_note(tmp_settings, fake_llm_server):
    typed = _typed()
    pm = typed.columns[2].ident
    average = {"filters": [], "fn": "avg", "column": pm, "answer_column": pm}
    with fake_llm_server(scripted([pm], [average] * 5)) as srv:
        result = await answer_question(llm_for(tmp_settings, srv), AIR,
                                       "What is the average PM2.5 across the European cities?")
    assert result.decided_by == "program" and result.answer == "43.86"
    assert result.confidence == "low" and result.unpicked == "European"
    assert "nothing in the table reads “European”" in result.reason and "all 5 cities" in result.reason


async def test_rows_picked_by_the_models_own_knowledge_are_said_to_be(tmp_settings, fake_llm_server):
    """The programs picked rows out by what the model knows (Paris, London and Stockholm are in Europe): the
    answer stands, said to rest on the model's judgement of which rows count."""
    typed = _typed()
    pm, country = typed.columns[2].ident, typed.columns[1].ident
    europe = {"filters": [{"column": country, "op": "!=", "value": "India"},
                          {"column": country, "op": "!=", "value": "Pakistan"}],
              "fn": "avg", "column": pm, "answer_column": pm}
    with fake_llm_server(scripted([pm, country], [europe] * 5)) as srv:
        result = await answer_question(llm_for(tmp_settings, srv), AIR,
                                       "What is the average PM2.5 across the European cities?")
    assert result.answer.startswith("9.03")  # (13.2 + 9.3 + 4.6) / 3
    assert result.confidence == "low" and result.unpicked == "European"
    assert "chose the rows by “India”, “Pakistan”, which the question does not state" in result.reason


async def test_rows_chosen_by_a_value_the_question_never_states_are_the_models_judgement(tmp_settings,
                                                                                        fake_llm_server):
    """Seen as a new user: "Which Asian city has the lowest NO2?" was answered by programs filtering Country =
    'China' (right by luck: Beijing), shown as verified. Which cities are Asian is the model's judgement."""
    typed = _typed()
    no2, country, city = typed.columns[3].ident, typed.columns[1].ident, typed.columns[0].ident
    china = {"filters": [{"column": country, "op": "=", "value": "China"}], "fn": "argmin", "column": no2,
             "answer_column": city}
    table = Table(name="air", title=AIR.title, columns=AIR.columns,
                  rows=AIR.rows + [["Beijing", "China", "34.3", "29", "21.8"]])
    with fake_llm_server(scripted([no2, country], [china] * 5)) as srv:
        result = await answer_question(llm_for(tmp_settings, srv), table, "Which Asian city has the lowest NO2?")
    assert result.answer == "Beijing" and result.confidence == "low" and result.unpicked == "Asian"
    assert "chose the rows by “China”, which the question does not state" in result.reason
    # a value the question states is its own choice: no note
    with fake_llm_server(scripted([no2, country], [china] * 5)) as srv:
        stated = await answer_question(llm_for(tmp_settings, srv), table,
                                       "Which Asian city in China has the lowest NO2?")
    assert stated.unpicked == "" and stated.confidence == "high"


class QAIn(BaseModel):
    question: str
    table: str | None = None


@pytest.mark.parametrize("unpicked, status", [("European", "unverified"), ("", "verified")])
async def test_the_loop_does_not_call_such_a_reply_verified(tmp_settings, fake_llm_server, patched_tools,
                                                            monkeypatch, unpicked, status):
    def answered(ctx, args):
        table = ctx.evidence.add_table("air", "City,PM2.5", source="air")
        cell = ctx.evidence.add_cell("air", 1, 3, "92.7", source="air")
        return QAOutput(answer="92.7", table="air", table_id=table.id, cells=[cell.id],
                        reason="Avg of PM2.5 is 92.7.", decided_by="program", unpicked_rows=unpicked)

    monkeypatch.setitem(REGISTRY, "table_qa", Tool(name="table_qa", description="qa", fn=answered,
                                                   input_model=QAIn, output_model=QAOutput))
    question = "What is the average PM2.5 across the European cities?"
    router = Router(intents=[frame(task="table_question", rewrite=question)])
    with fake_llm_server(router) as srv:
        bot, _ = make_assistant(tmp_settings, srv)
        bot.session.tables["air"] = AIR
        bot.session.active_table = "air"
        result = await bot.run_turn(question, Recorder())
    assert result.status == status
