"""A table question that offers its own answers by its form (tools.lang.choice)."""

from __future__ import annotations

import json

import pytest

from kb.tables import Table
from tests.fake_openai import Reply
from tools.lang.choice import option_rows, table_choice

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


@pytest.mark.parametrize("question, options, computed, header, expected", [
    ("Was DORADO's efficacy more or less than 85%?", ["more", "less"], "88.1", "Efficacy (%)", 1),
    ("were there more or less than 15 points scored in week 7?", ["more", "less"], "13", "Points", 2),
    ("Are there fewer or more than 4,500 participants?", ["fewer", "more"], "2,875", "Participants", 1),
    ("was the team that had the most laps above or below 250?", ["above", "below"], "248", "Laps", 2),
    # The stated number is the subject: "159 is above" the computed 150.
    ("is 159 above or below the amount of laps that townsend bell completed?", ["above", "below"], "150", "Laps", 1),
    # Places and ranks: above and higher are the smaller number.
    ("in season 1996/97 was the place above or below 10th?", ["above", "below"], "12th", "Place", 2),
    ("Did they finish higher or lower than 5?", ["higher", "lower"], "3", "Pos.", 1),
    ("Did they score higher or lower than 5?", ["higher", "lower"], "3", "Score", 2),
])
def test_two_comparing_words_are_settled_by_the_stated_number(question, options, computed, header, expected):
    from tools._question_rules import comparing_option

    settled = comparing_option(question, options, computed, header)
    assert settled is not None and settled[0] == expected
    assert options[expected - 1] in settled[1]


@pytest.mark.parametrize("question, options, computed", [
    ("Was DORADO's efficacy more or less than 88.1%?", ["more", "less"], "88.1"),  # equal: neither word
    ("Is DORADO older or younger than 5 years?", ["older", "younger"], "3"),  # the column decides: not read here
    ("Was DORADO's efficacy more or less than ARIES-2's?", ["more", "less"], "88.1"),  # no number stated
    ("Was DORADO's efficacy more or less than 85%?", ["more", "less"], "DORADO"),  # not a number computed
    ("Did DORADO or ARIES-2 enrol more than 85?", ["DORADO", "ARIES-2"], "88"),  # not two comparing words
    # A number before the words names a row, and a year after them names one too.
    ("was the percentage in 1960 more or less than the previous year?", ["more", "less"], "41.2"),
    ("was 2008's score above or below 2013?", ["above", "below"], "12"),
])
def test_no_comparison_where_the_question_or_the_result_does_not_settle_it(question, options, computed):
    from tools._question_rules import comparing_option

    assert comparing_option(question, options, computed) is None


async def test_more_or_less_than_a_stated_number_is_answered_by_the_computed_value(tmp_settings, fake_llm_server):
    """Found as a new user: "Was DORADO's efficacy more or less than 85%?" was computed as 88.1, which matches
    neither "more" nor "less", so the model's own reading chose. The comparison with 85 is code's."""
    from tests.test_table_program import llm_for
    from tools.table_qa import answer_question

    table = Table(name="trials", title="Trials", columns=["Trial", "Efficacy (%)"],
                  rows=[["ARIES-2", "71.5"], ["DORADO", "88.1"], ["ERIDANUS", "49.7"]])
    value = {"fn": "value", "column": "efficacy", "answer_column": "efficacy",
             "filters": [{"column": "trial", "op": "=", "value": "DORADO"}]}
    with fake_llm_server(programs_only(["trial", "efficacy"], value)) as srv:
        res = await answer_question(llm_for(tmp_settings, srv), table, "Was DORADO's efficacy more or less than "
                                    "85%?", samples=3, use_filter=False)
    assert res.options == ["more", "less"]
    assert res.answer == "more" and res.option == 1 and res.decided_by == "program"
    assert (2, 2) in res.cells and "88.1 is more than 85%." in res.reason



def test_a_difference_over_the_row_compared_with_a_stated_number_reads_its_value():
    """Found as a new user: "Was DORADO's efficacy more or less than 85%?" was written by all five samples as the
    difference between two rows' efficacies over DORADO's one row, which cannot run."""
    from tools._cells import TypedTable
    from tools._question_rules import read_compared_value
    from tools._table_ops import execute
    from tools._table_ops_model import Program

    typed = TypedTable.build(Table(name="trials", title="", columns=["Trial", "Efficacy (%)"],
                                   rows=[["ARIES-2", "71.5"], ["DORADO", "88.1"]]))
    difference = Program.model_validate({"fn": "difference", "column": "efficacy", "answer_column": "efficacy",
                                         "filters": [{"column": "trial", "op": "=", "value": "DORADO"}]})
    read = read_compared_value(difference, "Was DORADO's efficacy more or less than 85%?")
    assert read.fn == "value" and execute(read, typed).result == "88.1"
    # Two rows compared with each other keep their difference.
    assert read_compared_value(difference, "Was DORADO's efficacy more or less than ARIES-2's?") == difference
