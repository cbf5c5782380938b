"""A table question that offers its own answers by its form (tools._table_choice)."""

from __future__ import annotations

import json

import pytest

from kb.tables import Table
from tests.fake_openai import Reply
from tools._table_choice import option_rows, table_choice

MEDALS = Table(name="medals", title="Medal table", columns=["Rank", "Nation", "Gold", "Total", "First win"], rows=[
    ["1", "Spain (ESP)", "5", "9", "1998"],
    ["2", "Sweden (SWE)", "4", "12", "1994"],
    ["3", "Vietnam (VIE)", "2", "3", "2003"],
    ["4", "Indonesia (INA)", "1", "6", "2001"],
    ["5", "Lake Louise, Canada", "0", "1", "1994"],
])


@pytest.mark.parametrize("question, options, rows", [
    # Two things of the table: the options are its cells, and the programs range over their two rows.
    ("Did Sweden or Spain win first?", ("Sweden (SWE)", "Spain (ESP)"), (1, 2)),
    ("who earned more medals--vietnam or indonesia?", ("Vietnam (VIE)", "Indonesia (INA)"), (3, 4)),
    ("Which nation has more gold, the Sweden or the Spain?", ("Sweden (SWE)", "Spain (ESP)"), (1, 2)),
    # Opposite words: the two words are the answers; no rows.
    ("Has Spain won more or less medals than Sweden?", ("more", "less"), ()),
    ("Is Vietnam above or below Indonesia in the table?", ("above", "below"), ()),
    # A number that several rows hold names no single row.
    ("Was the first win in 1994 or 1998?", ("1994", "1998"), ()),
])
def test_a_question_that_offers_two_answers(question, options, rows):
    choice = table_choice(question, MEDALS)
    assert choice is not None and choice.options == options and choice.rows == rows


@pytest.mark.parametrize("question", [
    "How many nations won gold or silver?",  # an amount is asked: the answer is a number
    "What is the total of Spain or Sweden?",
    "Which nation is not Spain or Sweden?",  # the two are excluded, not offered
    "Which nations other than Spain or Sweden won gold?",
    "Which nation did not win first in either Spain or Sweden?",  # "either" after "not": excluded
    "Which nation won nothing in either Spain or Sweden?",
    "Did Norway or Denmark win first?",  # neither is in the table
    "Which nation won the most medals?",  # no "or"
    "Did Spain, Sweden or Vietnam or Indonesia win first?",  # more than one "or": not read
])
def test_no_choice_where_the_form_offers_none(question):
    assert table_choice(question, MEDALS) is None


def test_given_options_that_each_name_one_row_scope_the_programs():
    assert option_rows(["Vietnam", "Indonesia"], MEDALS) == (3, 4)
    assert option_rows(["Indonesia", "Vietnam"], MEDALS) == (4, 3)  # in the options' order
    assert option_rows(["Vietnam", "Norway"], MEDALS) == ()  # one names no row
    assert option_rows(["1994", "2003"], MEDALS) == ()  # 1994 names two rows
    assert option_rows(["Vietnam"], MEDALS) == ()


def programs_only(columns: list[str], program: dict):
    """A scripted server whose every program sample is ``program``; the model's own answer is never asked."""
    from tests.test_table_program import is_columns, is_program

    def handler(req):
        if is_columns(req):
            return Reply(content=json.dumps({"columns": columns}))
        if is_program(req):
            return Reply(content=json.dumps(program), more_choices=[json.dumps(program)] * 2)
        raise AssertionError("the model's own answer is not needed")

    return handler


async def test_the_answer_is_one_of_the_offered_things(tmp_settings, fake_llm_server):
    """Found on WikiTableQuestions' training split: "did sweden or spain win first?" was answered "Lake Louise,
    Canada". Now the programs range over the two named rows and the answer is the one they pick."""
    from tests.test_table_program import is_program, llm_for
    from tools.table_qa import answer_question

    first = {"fn": "argmin", "column": "first_win", "answer_column": "nation", "filters": []}
    with fake_llm_server(programs_only(["nation", "first_win"], first)) as srv:
        res = await answer_question(llm_for(tmp_settings, srv), MEDALS, "Did Sweden or Spain win first?",
                                    samples=3, use_filter=False)
    assert "the rows asked about (Spain (ESP), Sweden (SWE))" in res.programs.program
    # Over every row, the argmin of "First win" is a tie of Sweden and Lake Louise (1994); over the two
    # named rows it is Sweden alone.
    assert res.answer == "Sweden (SWE)" and res.decided_by == "program"
    assert res.options == ["Sweden (SWE)", "Spain (ESP)"] and res.option == 1
    assert {r for r, _ in res.cells} <= {1, 2}
    program_prompt = next(r for r in srv.requests if is_program(r))["messages"][-1]["content"]
    assert "Options: Sweden (SWE); Spain (ESP)" in program_prompt


async def test_a_program_that_answers_with_the_number_picks_the_option_of_its_row(tmp_settings, fake_llm_server):
    """Found on WTQ's training split: "Does Cadiz or Granada have a larger population?" was computed as the
    larger population ("1,928,962"), which matches neither name, so the model chose between the names (wrongly).
    The row that number comes from is one of the two named rows: that option is the answer."""
    from tests.test_table_program import llm_for
    from tools.table_qa import answer_question

    largest = {"fn": "max", "column": "total", "answer_column": "total", "filters": []}
    with fake_llm_server(programs_only(["nation", "total"], largest)) as srv:
        res = await answer_question(llm_for(tmp_settings, srv), MEDALS, "Does Vietnam or Indonesia have the larger "
                                    "total?", samples=3, use_filter=False)
    assert res.answer == "Indonesia (INA)" and res.option == 2 and res.decided_by == "program"
    # The other named row's value is cited beside the answer's, so the comparison can be checked.
    assert {(4, 4), (3, 2), (3, 4)} <= set(res.cells)
    assert res.reason.endswith("Beside it: Vietnam (VIE): Total 3.")
