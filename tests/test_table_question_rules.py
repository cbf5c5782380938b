"""Rules that the form of a table question settles (issue 13): the kind of answer asked for, one column asked
for several values, totals rows, and the first or last of several rows."""

from __future__ import annotations

import functools
import json

import pytest

from kb.tables import Table
from tests.test_table_program import is_program, llm_for, scripted
from tools._cells import TypedTable
from tools._grounding import expected_answer, fits, position_asked
from tools._question_rules import one_of_several, read_as_asked
from tools._table_ops import execute
from tools._table_ops_model import Program, ProgramError, RowFilter, RowGroups
from tools._table_program import one_form_per_number, run_sampled, solve
from tools._table_shape import describe, total_rows

LEAGUE = Table(name="league", title="Stadiums", columns=["Stadium", "City", "Capacity", "Opened"], rows=[
    ["Provident Stadium", "Barrington", "27,000", "1999"],
    ["Ayr Park", "Farmington", "8,500", "2004"],
    ["Glebe Oval", "Rochester", "12,250", "1987"],
    ["Mill Field", "Rochester", "3,100", "2011"],
    ["Quay Arena", "Dover", "15,000", "1999"],
    ["Total", "", "65,850", ""],
])


def typed() -> TypedTable:
    return TypedTable.build(LEAGUE)


def prog(**kw) -> Program:
    kw.setdefault("answer_column", "stadium")
    return Program.model_validate(kw)


@pytest.mark.parametrize("question, kind", [
    ("how many stadiums opened in 1999?", "number"),
    ("How much did it cost?", "number"),
    ("what is the total number of points earned by kelly mcormick?", "number"),
    ("what's the difference between cairo and giza", "number"),
    ("in how many cities is there a stadium?", "number"),
    ("number of stadiums in Rochester", "number"),
    ("which stadium has the most capacity?", "name"),
    ("Who finished first?", "name"),
    ("name the prabandham with the most number of pasurams", "name"),
    ("in which country was it held?", "name"),
    ("other than Ayr Park, which stadium opened after 2000?", "name"),
    ("Which of the stadiums opened most recently?", "name"),
    ("Which of them holds the most people?", "name"),
    ("which one of these stadiums is in Dover?", "name"),
    ("which of the years had the most openings?", None),
    ("Which was the first stadium to open?", "name"),
    ("which is the oldest stadium in Rochester?", "name"),
    ("which was the first year with two openings?", None),
    ("which year had the most games?", None),
    ("what year did it open?", None),
    ("which is larger, Ayr Park or Mill Field?", None),
    ("what was the score of the final?", None),
    ("when was Glebe Oval opened?", None),
])
def test_the_question_form_says_what_kind_of_answer_it_wants(question, kind):
    assert expected_answer(question) == kind


@pytest.mark.parametrize("answer, kind, ok", [
    ("27,000", "number", True), ("5 games", "number", True), ("12%", "number", True),
    ("Provident Stadium", "number", False),
    ("Provident Stadium", "name", True), ("27,000", "name", False), ("3, 5", "name", False),
    ("Orion, 85", "name", True), ("76ers", "name", True), ("anything", None, True),
])
def test_an_answer_fits_the_kind_asked_for(answer, kind, ok):
    assert fits(answer, kind) is ok


def test_a_which_question_reads_max_with_a_name_answer_column_as_the_row_that_has_it():
    raw = prog(fn="max", column="capacity", answer_column="stadium")
    asked = read_as_asked(raw, typed(), "name")
    assert asked.fn == "argmax"
    assert execute(asked, typed()).result == "Provident Stadium"
    # Not for a number question, not when the answer column is the read column or holds numbers.
    assert read_as_asked(raw, typed(), "number").fn == "max"
    assert read_as_asked(raw, typed(), None).fn == "max"
    assert read_as_asked(prog(fn="min", column="capacity", answer_column="capacity"), typed(), "name").fn == "min"
    assert read_as_asked(prog(fn="min", column="capacity", answer_column="opened"), typed(), "name").fn == "min"


def test_one_column_asked_for_several_values_selects_any_of_them_for_questions_only():
    three = [{"column": "city", "op": "=", "value": v} for v in ("Barrington", "Farmington", "Rochester")]
    ex = execute(prog(filters=three, fn="count", column="stadium"), typed(), union_same_column=True)
    assert ex.result == 4 and ex.selected == [1, 2, 3, 4]
    assert any("is one of 'Barrington', 'Farmington', 'Rochester': 4 of 5 rows" in s for s in ex.steps)
    both = [three[0], three[1], {"column": "opened", "op": ">", "value": "2000"}]  # the OR group AND the rest
    assert execute(prog(filters=both, fn="value", column="stadium"), typed(), union_same_column=True).result \
        == "Ayr Park"
    with pytest.raises(ProgramError, match="two different values"):  # a claim's contradiction stays refused
        execute(prog(filters=three, fn="count", column="stadium"), typed())
    # and is described as the executor reads it (found as a new user: "drug is one of 'Erlotinib', 'Afatinib'" was
    # shown beside "did not run: two filters ask one column for two different values")
    said = describe(prog(filters=three[:2], fn="count", column="stadium"), typed(), any_of=False)
    assert said.startswith("rows where City = 'Barrington' and City = 'Farmington' →"), said


def test_a_totals_row_is_left_out_unless_a_filter_names_it():
    assert total_rows(typed()) == [6]
    top = execute(prog(fn="argmax", column="capacity"), typed())
    assert top.result == "Provident Stadium" and any("totals row (R6) left out" in s for s in top.steps)
    assert execute(prog(fn="count", column="stadium"), typed()).result == 5
    assert execute(prog(fn="sum", column="capacity"), typed()).result == 65850
    named = execute(prog(filters=[{"column": "stadium", "op": "=", "value": "Total"}], fn="value",
                         column="capacity"), typed())
    assert named.result == "65,850" and named.decisive_rows == [6]
    # "!=" does not name it: every row but Ayr Park, still without the totals row.
    assert execute(prog(filters=[{"column": "stadium", "op": "!=", "value": "Ayr Park"}], fn="count",
                        column="stadium"), typed()).result == 4
    # "only": the totals row does not count as another row meeting the condition.
    only = execute(prog(filters=[{"column": "stadium", "op": "=", "value": "Provident Stadium"}], fn="only",
                        column="capacity", check={"op": ">", "against": "value", "value": "20000"}), typed())
    assert only.truth is True


def test_a_table_of_totals_only_keeps_its_rows():
    sums = TypedTable.build(Table(name="t", title="t", columns=["Kind", "N"], rows=[["Total", "3"], ["Totals", "4"]]))
    assert execute(prog(fn="sum", column="n", answer_column="kind"), sums).result == 7


async def test_programs_computing_the_wrong_kind_of_answer_do_not_vote(tmp_settings, fake_llm_server):
    max_only = {"filters": [], "fn": "max", "column": "capacity", "answer_column": "capacity"}
    argmax = {"filters": [], "fn": "argmax", "column": "capacity", "answer_column": "stadium"}
    with fake_llm_server(scripted(["stadium", "capacity"], [max_only, max_only, max_only, argmax, argmax])) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), LEAGUE, "question", "Which stadium has the most capacity?",
                              n=5)
    assert outcome.winner == "Provident Stadium" and outcome.votes == {"Provident Stadium": 2}
    assert outcome.confidence == 0.4  # 2 of the 5 samples agree: the user sees how thin the vote was
    dropped = [r for r in outcome.runs if not r.ran]
    assert len(dropped) == 3 and all("asks for a name, not a number" in r.error for r in dropped)
    assert len([r for r in srv.requests if is_program(r)]) == 1

    # When no program gives the kind asked for, they all vote as before.
    with fake_llm_server(scripted(["stadium", "capacity"], [max_only] * 3)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), LEAGUE, "question", "Which stadium has the most capacity?",
                              n=3)
    assert outcome.winner == "27,000" and outcome.votes == {"27,000": 3}


@pytest.mark.parametrize("question, position", [
    ("what is the last stadium on this chart?", "last"), ("Which stadium was the first to open in Rochester?", "first"),
    ("which stadium opened first and which last?", None), ("how many stadiums are there?", None),
    ("what were the first three stadiums to open?", None), ("name the last 2 stadiums", None),
])
def test_first_or_last_is_read_from_the_question(question, position):
    assert position_asked(question) == position


def test_a_list_answer_to_a_first_or_last_question_is_its_first_or_last_row():
    listed = execute(prog(filters=[{"column": "city", "op": "=", "value": "Rochester"}], fn="value",
                          column="stadium"), typed())
    assert listed.result == ["Glebe Oval", "Mill Field"]
    last = one_of_several(listed, "last")
    assert last.result == "Mill Field" and last.decisive_rows == [4] and last.cells and \
        {r for r, _ in last.cells} == {4} and "the last of the 2 rows" in last.steps[-1]
    assert one_of_several(listed, "first").result == "Glebe Oval"
    assert one_of_several(listed, None) is listed
    one = execute(prog(fn="argmax", column="capacity"), typed())
    assert one_of_several(one, "last") is one  # one row already: nothing to choose


async def test_a_last_question_answers_with_the_last_listed_row(tmp_settings, fake_llm_server):
    listing = {"filters": [{"column": "opened", "op": "=", "value": "1999"}], "fn": "value", "column": "stadium",
               "answer_column": "stadium"}
    with fake_llm_server(scripted(["stadium", "opened"], [listing] * 3)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), LEAGUE, "question",
                              "Which was the last stadium opened in 1999?", n=3)
    assert outcome.winner == "Quay Arena" and outcome.cells and {r for r, _ in outcome.cells} == {5}


@pytest.mark.parametrize("value, question, grounded", [
    ("8", "how many series had 8 episodes?", True),
    ("30", "how many symbols are extended to the 30th?", True),
    ("1962", "how many keelboats were built between 1958-1962?", True),
    ("1906", "in 1906, how many vehicles were in service?", True),
    ("1200", "which town had 1,200 people?", True),
    ("0", "which choke has the least constriction?", False),
    ("0.001", "which choke has the least constriction?", False),
    ("Win", "for each winning game, what was their score?", True),
    ("Dan Pohl", "what was dan pohl's first round score?", True),
    ("Japan", "what is the total number of athletes from japan?", True),
    ("Loss", "for each winning game, what was their score?", False),
    ("United States (USA)", "what country is the only one from the united states with 20 golds?", True),
    ("Kr", "how many other symbols than kr are there?", True),
    ("2", "what were the total number of players selected in the second round?", True),
    ("3", "which three teams won?", True),
    ("", "anything", False),
    ("0", "how many townships have no water area?", True),  # "no" states the zero
    ("0", "how many games had none?", True),
    ("0", "what is the no. of games?", False),  # a number's label, not a zero
    ("0", "how many racers did not start?", False),
])
def test_a_filter_value_is_grounded_when_the_question_states_it(value, question, grounded):
    from tools._grounding import value_grounded

    assert value_grounded(value, question) is grounded


def test_grounding_ranks_programs_by_the_question_values_their_filters_use():
    from tools._grounding import grounding

    q = "how many stadiums opened in 1999?"
    none = prog(fn="count", column="stadium")
    stated = prog(filters=[{"column": "opened", "op": "=", "value": "1999"}], fn="count", column="stadium")
    invented = prog(filters=[{"column": "capacity", "op": ">", "value": "10000"}], fn="count", column="stadium")
    both = prog(filters=[{"column": "opened", "op": "=", "value": "1999"},
                         {"column": "capacity", "op": ">", "value": "10000"}], fn="count", column="stadium")
    assert grounding(stated, q) > grounding(none, q) > grounding(invented, q)
    assert grounding(both, q) < grounding(none, q)  # one invented filter is worse than none


async def test_programs_that_read_less_of_the_question_do_not_vote(tmp_settings, fake_llm_server):
    all_rows = {"filters": [], "fn": "count", "column": "stadium", "answer_column": "stadium"}
    in_1999 = {**all_rows, "filters": [{"column": "opened", "op": "=", "value": "1999"}]}
    with fake_llm_server(scripted(["stadium", "opened"], [all_rows, all_rows, all_rows, in_1999, in_1999])) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), LEAGUE, "question", "How many stadiums opened in 1999?", n=5)
    # Three programs that ignore "1999" would have outvoted the two that read it.
    assert outcome.winner == "2" and outcome.votes == {"2": 2} and outcome.confidence == 0.4
    dropped = [r for r in outcome.runs if not r.ran]
    assert len(dropped) == 3 and all("another program also filters on a value the question states" in r.error
                                     for r in dropped)

    # An invented filter value loses to a program with none; programs grounded alike all vote.
    invented = {"filters": [{"column": "capacity", "op": ">", "value": "5000"}], "fn": "argmin",
                "column": "capacity", "answer_column": "stadium"}
    plain = {**invented, "filters": []}
    with fake_llm_server(scripted(["stadium", "capacity"], [invented, invented, plain])) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), LEAGUE, "question", "Which stadium is the smallest?", n=3)
    assert outcome.votes == {"Mill Field": 1} and "'5000' is not in the question" in outcome.runs[0].error
    # A filter every row meets ("Capacity > 0") invents nothing: its programs vote with the plain one.
    every_row = {**invented, "filters": [{"column": "capacity", "op": ">", "value": "0"}]}
    with fake_llm_server(scripted(["stadium", "capacity"], [every_row, every_row, plain])) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), LEAGUE, "question", "Which stadium is the smallest?", n=3)
    assert outcome.votes == {"Mill Field": 3}
    with fake_llm_server(scripted(["stadium", "capacity"], [plain, plain, plain])) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), LEAGUE, "question", "Which stadium is the smallest?", n=3)
    assert outcome.votes == {"Mill Field": 3} and all(r.ran for r in outcome.runs)


HOSPITALS = Table(name="infections", title="", columns=["Hospital", "Region", "Beds", "Infections (2024)"], rows=[
    ["St. Luke's", "North", "420", "38"], ["Mercy General", "South", "610", "71"],
    ["Lakeside Medical", "South", "380", "29"]])


async def test_a_stated_filter_that_changes_no_row_does_not_hold_the_others(tmp_settings, fake_llm_server):
    """Found as a new user: after "Which hospital has the most beds?", "How many infections did it have?" is noted
    "('it' is Mercy General (Region: South))"; four programs selecting the row by name were held because the fifth
    also filtered on the region, selecting the same row: right answer, 20% confidence."""
    by_name = {"filters": [{"column": "hospital", "op": "=", "value": "Mercy General"}], "fn": "value",
               "column": "infections_2024", "answer_column": "hospital"}
    and_region = {**by_name, "filters": by_name["filters"] + [{"column": "region", "op": "=", "value": "South"}]}
    only_region = {**by_name, "fn": "sum", "filters": [{"column": "region", "op": "=", "value": "South"}]}
    question = "How many infections did it have? ('it' is Mercy General (Region: South))"
    with fake_llm_server(scripted(["hospital", "infections_2024"], [by_name] * 4 + [and_region])) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), HOSPITALS, "question", question, n=5)
    assert outcome.votes == {"71": 5} and outcome.confidence == 1.0
    # A program with fewer stated filters that selects other rows is still held (here: both southern hospitals).
    with fake_llm_server(scripted(["hospital", "infections_2024"], [only_region] * 3 + [and_region] * 2)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), HOSPITALS, "question", question, n=5)
    assert outcome.votes == {"71": 2} and sum(not r.ran for r in outcome.runs) == 3


RACES = Table(name="races", title="Grand Prix winners", columns=["Year", "Driver", "Team", "Laps"], rows=[
    ["1961", "Jim Clark", "Lotus", "70"],
    ["1962", "Graham Hill", "BRM", "72"],
    ["1963", "Jim Clark", "Lotus", "68"],
    ["1964", "John Surtees", "Ferrari", "75"],
    ["1965", "Jim Clark", "Lotus", "71"],
])


def races() -> TypedTable:
    return TypedTable.build(RACES)


def test_most_common_names_the_value_in_most_rows_and_cites_them():
    ex = execute(prog(fn="most_common", column="driver", answer_column="driver"), races())
    assert ex.result == "Jim Clark" and ex.result_text == "Jim Clark (3 rows)" and ex.decisive_rows == [1, 3, 5]
    assert {c for _, c in ex.cells} == {2}
    tie = execute(prog(filters=[{"column": "year", "op": "<", "value": "1963"}], fn="most_common", column="team",
                       answer_column="team"), races())
    assert tie.result == ["Lotus", "BRM"]  # a tie lists every value, in table order


def test_next_and_previous_row_follow_the_table_order():
    hill = [{"column": "driver", "op": "=", "value": "Graham Hill"}]
    after = execute(prog(filters=hill, fn="next_row", column="year", answer_column="driver"), races())
    assert after.result == "1963" and after.decisive_rows == [2, 3]
    before = execute(prog(filters=hill, fn="previous_row", column="driver", answer_column="driver"), races())
    assert before.result == "Jim Clark" and (1, 2) in before.cells
    with pytest.raises(ProgramError, match="select one row, got 3"):
        execute(prog(filters=[{"column": "driver", "op": "=", "value": "Jim Clark"}], fn="next_row",
                     column="year", answer_column="driver"), races())
    with pytest.raises(ProgramError, match="last row"):
        execute(prog(filters=[{"column": "year", "op": "=", "value": "1965"}], fn="next_row", column="driver",
                     answer_column="driver"), races())


def test_difference_is_between_exactly_two_selected_rows():
    two = [{"column": "year", "op": "=", "value": "1962"}, {"column": "year", "op": "=", "value": "1964"}]
    ex = execute(prog(filters=two, fn="difference", column="laps", answer_column="driver"), races(),
                 union_same_column=True)
    assert ex.result == 3 and ex.result_text == "3" and ex.decisive_rows == [2, 4]
    assert {(2, 4), (4, 4)} <= set(ex.cells)
    with pytest.raises(ProgramError, match="exactly two selected rows"):
        execute(prog(fn="difference", column="laps", answer_column="driver"), races())


def test_the_sequence_operations_are_offered_to_questions_only():
    from tools._table_grammar import typed_program_schema

    question = json.dumps(typed_program_schema(races(), False).model_json_schema())
    claim = json.dumps(typed_program_schema(races(), True).model_json_schema())
    for fn in ("most_common", "next_row", "previous_row", "difference"):
        assert f'"{fn}"' in question and f'"{fn}"' not in claim


@pytest.mark.parametrize("question, asked", [
    ("was only nominated for best actor in a supporting role at satellite awards in 2008?", True),
    ("Did Jim Clark win in 1963?", True), ("Is there a race with more than 74 laps?", True),
    ("did sweden or spain win first?", False), ("were the 2007 world championships in japan or finland?", False),
    ("did he have a single make it onto the charts in 1979, yes or no?", True),
    ("how many races did jim clark win?", False), ("which driver won in 1962?", False),
])
def test_a_yes_no_question_is_read_from_its_form(question, asked):
    from tools._grounding import yes_no_asked

    assert yes_no_asked(question) is asked


async def test_a_yes_no_question_is_answered_by_whether_a_row_meets_its_filters(tmp_settings, fake_llm_server):
    in_1963 = {"filters": [{"column": "driver", "op": "=", "value": "Jim Clark"},
                           {"column": "year", "op": "=", "value": "1963"}], "fn": "value", "column": "team",
               "answer_column": "driver"}
    in_1962 = {**in_1963, "filters": [in_1963["filters"][0], {"column": "year", "op": "=", "value": "1962"}]}
    with fake_llm_server(scripted(["driver", "year"], [in_1963] * 3)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), RACES, "question", "Did Jim Clark win in 1963?", n=3)
    assert outcome.winner == "yes" and outcome.cells and {r for r, _ in outcome.cells} == {3}
    assert outcome.reason.startswith("1 row meets the question's conditions: yes")
    with fake_llm_server(scripted(["driver", "year"], [in_1962] * 3)) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), RACES, "question", "Did Jim Clark win in 1962?", n=3)
    assert outcome.winner == "no"  # no row meets the filters: a count of 0, not a failed program


def test_a_column_the_question_names_beats_one_it_does_not():
    from tools._grounding import column_named, grounding

    assert column_named("TOPS design code", "what is the last tops design code on this chart?")
    assert not column_named("Route availability", "what is the last tops design code on this chart?")
    q = "which stadium has the largest capacity?"
    by_capacity = prog(fn="argmax", column="capacity", answer_column="stadium")
    by_opening = prog(fn="argmax", column="opened", answer_column="city")
    assert grounding(by_capacity, q, typed()) > grounding(by_opening, q, typed())
    assert column_named("Attendance", "how many people attended the game?")
    assert not column_named("Attendance", "how many people attacked the fort?")
    # A count reads no column: it loses to a program that reads one the question names.
    assert grounding(prog(fn="count", column="opened"), q, typed()) < grounding(by_capacity, q, typed())


def test_a_last_on_the_chart_question_reads_the_named_column_in_table_order():
    from tools._question_rules import read_position

    q = "what is the last stadium on this chart?"
    by_capacity = read_position(prog(fn="argmax", column="capacity", answer_column="stadium"), typed(), q)
    assert by_capacity.fn == "value" and by_capacity.column == "stadium"
    assert one_of_several(execute(by_capacity, typed()), "last").result == "Quay Arena"
    # A measure the question names stays a measure; no position asked, nothing changes.
    kept = prog(fn="argmax", column="capacity", answer_column="stadium")
    assert read_position(kept, typed(), "which stadium was the last with the largest capacity?") == kept
    assert read_position(kept, typed(), "which stadium is the biggest?") == kept


def test_a_choice_between_two_named_rows_compares_exactly_those_rows():
    from tools._grounding import alternatives
    from tools._question_rules import read_choice

    q = "which had a larger capacity, ayr park or mill field?"
    assert alternatives(q, typed()) == ("stadium", ["Ayr Park", "Mill Field"])
    # Found as a new user: part of each cell ("Harbour View or Northgate?"); three of five programs kept one row.
    assert alternatives("which is larger, ayr or the mill?", typed()) == ("stadium", ["Ayr Park", "Mill Field"])
    one_sided = prog(filters=[{"column": "stadium", "op": "=", "value": "Ayr Park"}], fn="argmax",
                     column="capacity", answer_column="stadium")
    assert execute(one_sided, typed()).result == "Ayr Park"  # the max over one row is that row, whatever it holds
    read = read_choice(one_sided, typed(), q)
    assert [f.value for f in read.filters] == ["Ayr Park", "Mill Field"] and read.fn == "argmax"
    assert execute(read, typed(), union_same_column=True).result == "Ayr Park"
    smaller = read_choice(prog(fn="min", column="capacity"), typed(), "which is smaller, Mill Field or Ayr Park?")
    assert execute(smaller, typed(), union_same_column=True).result == "Mill Field"
    assert alternatives("which stadium opened first, in 1999 or 2004?", typed()) is None  # numbers: no text cells
    assert alternatives("which stadium in rochester is the largest?", typed()) is None  # no "or"
    assert read_choice(prog(fn="count", column="stadium"), typed(), q).fn == "count"  # only extremes are read so


def test_a_column_of_years_is_not_added_up():
    assert typed().column("opened").holds_years and not typed().column("capacity").holds_years
    with pytest.raises(ProgramError, match="holds years"):
        execute(prog(fn="sum", column="opened"), typed())
    assert execute(prog(fn="max", column="opened"), typed()).result == 2011  # an extreme of years is a year


def test_a_most_times_question_counts_rows_per_name():
    from tools._grounding import column_named
    from tools._question_counts import read_frequency

    # Found as a new user: "Who won the most times?" was answered by the winner of the row with the most laps.
    by_laps = prog(fn="argmax", column="laps", answer_column="driver")
    read = read_frequency(by_laps, races(), "Who won the most times?")
    assert read.fn == "most_common" and read.column == "driver"
    assert execute(read, races()).result == "Jim Clark"
    assert column_named("Driver", "which driver won most often?") and column_named("Winner", "who won the most?")
    # A measure the question names, or no frequency asked, stays as written.
    assert read_frequency(by_laps, races(), "Who drove the most laps most often?") == by_laps
    assert read_frequency(by_laps, races(), "Who won the race with the most laps?") == by_laps


def test_the_most_of_the_rows_themselves_counts_rows_per_name():
    from tools._question_counts import most_rows_asked, read_frequency

    # Found as a new user: "Which drug was tested in the most trials?" over a table of trials was answered by the
    # drug of the trial with the most participants (3 of 5 programs).
    trials = TypedTable.build(Table(name="trials", title="", columns=["Trial", "Drug", "Participants"], rows=[
        ["ARIES-2", "Velmorin", "1240"], ["BOREAS", "Calditrex", "310"], ["CYGNUS-1", "Velmorin", "205"],
        ["DORADO", "Nexapril", "2875"]]))
    largest = prog(fn="argmax", column="participants", answer_column="drug")
    read = read_frequency(largest, trials, "Which drug was tested in the most trials?")
    assert read.fn == "most_common" and read.column == "drug"
    assert execute(read, trials).result == "Velmorin"
    # The rows' kind is read from the row-label column too: the table's name need not say it.
    assert most_rows_asked("Which drug had the most trials?", TypedTable.build(Table(
        name="upload-3", title="", columns=["Trial", "Drug"], rows=[["A", "x"], ["B", "y"]])))
    # The most of something else, or a measure the question names, stays as written.
    assert read_frequency(largest, trials, "Which drug had the most participants?") == largest
    assert not most_rows_asked("Which drug was tested on the most patients?", trials)
    assert read_frequency(prog(fn="argmax", column="laps", answer_column="driver"), races(),
                          "Who drove the most laps?").fn == "argmax"


TRIALS = Table(name="trials", title="Trials", columns=["Trial", "Date", "Series", "Celebrity"], rows=[
    ["1", "13 November 2006", "Jungle", "Jan"],
    ["2", "14 November 2006", "Jungle", "David"],
    ["3", "30 November 2006", "Desert", "Jan"],
    ["4", "1 December 2006", "Jungle", "Jan"],
    ["5", "2 December 2007", "Arctic", "Scott"],
])


tprog = functools.partial(prog, answer_column="trial")  # a program over TRIALS (its answer column given or not)


def test_a_day_copied_into_a_filter_the_question_states_as_a_month_becomes_the_month():
    from tools._question_dates import read_stated_part

    t = TypedTable.build(TRIALS)
    copied = tprog(filters=[{"column": "date", "op": "=", "value": "13 November 2006"}], fn="count", column="trial",
                  answer_column="trial")
    assert execute(copied, t).result == 1
    read = read_stated_part(copied, t, "how many trials were in november 2006?")
    assert [(f.op, f.value) for f in read.filters] == [("contains", "November 2006")]
    assert execute(read, t).result == 3
    # The whole cell stated, a part that is only a day, or words left out that are not a day: as written.
    assert read_stated_part(copied, t, "how many trials were on 13 november 2006?") == copied
    assert read_stated_part(copied, t, "how many trials were on the 13th?") == copied
    named = tprog(filters=[{"column": "celebrity", "op": "=", "value": "Jan Scott"}], fn="count", column="trial")
    assert read_stated_part(named, t, "how many trials had jan?") == named


def test_a_year_names_the_text_cells_it_is_a_word_of():
    t = TypedTable.build(TRIALS)
    assert not t.column("date").numeric
    in_2007 = tprog(filters=[{"column": "date", "op": "=", "value": "2007"}], fn="count", column="trial")
    assert execute(in_2007, t).result == 1  # no cell equals "2007"; "2 December 2007" holds it as a word


def test_a_which_had_more_choice_written_as_a_count_counts_each_ones_rows():
    from tools._question_rules import count_choice

    t = TypedTable.build(TRIALS)
    q = "which series had more trials, desert or arctic or jungle?"
    both = tprog(filters=[{"column": "series", "op": "=", "value": "Desert"}], fn="count", column="trial")
    read = count_choice(both, t, "which series had more trials, jungle or desert?")
    assert read.fn == "most_common" and read.column == "series"
    assert [f.value for f in read.filters] == ["Jungle", "Desert"]
    assert execute(read, t, union_same_column=True).result == "Jungle"
    # No "more <noun>", or a "how many": as written.
    assert count_choice(both, t, "which series is it, jungle or desert?") == both
    assert count_choice(both, t, "how many more trials had jungle than desert or arctic?") == both
    # Found as a new user: "more shows" read as the largest value of a column the question does not name.
    by_trial = tprog(filters=[{"column": "series", "op": "=", "value": "Desert"}], fn="argmax", column="trial",
                     answer_column="series")
    assert count_choice(by_trial, t, "which series had more shows, desert or jungle?").fn == "most_common"
    # "more trials" names Trial, but Trial numbers the rows (1, 2, 3, …): rows are what is counted.
    # A column of measures the question names decides instead (read_choice).
    counted = prog(fn="count", column="stadium")
    assert count_choice(counted, typed(), "which had more capacity, ayr park or mill field?") == counted
    assert count_choice(counted, typed(), "which had more games, ayr park or mill field?").fn == "most_common"
    assert count_choice(both, t, q).fn == "most_common"


def test_how_many_different_counts_the_different_values_of_the_named_column():
    from tools._question_rules import read_distinct

    t = TypedTable.build(TRIALS)
    rows = tprog(fn="count", column="trial")
    read = read_distinct(rows, t, "how many different series are listed?")
    assert read.fn == "count_distinct" and read.column == "series"
    ex = execute(read, t)
    assert ex.result == 3 and ex.decisive_rows == [1, 3, 5]  # the first row of each series
    assert read_distinct(rows, t, "how many series are listed?") == rows  # "different" is what asks for it
    assert read_distinct(rows, t, "how many different judges were there?") == rows  # no such column
    jan = tprog(filters=[{"column": "celebrity", "op": "=", "value": "Jan"}], fn="count_distinct", column="series")
    assert execute(jan, t).result == 2
    nobody = tprog(filters=[{"column": "celebrity", "op": "=", "value": "Nobody"}], fn="count_distinct",
                  column="series")
    assert execute(nobody, t).result == 0


def test_a_which_question_written_as_a_count_lists_the_rows_it_selects():
    from tools._question_rules import read_rows_asked

    t = TypedTable.build(TRIALS)
    counted = tprog(filters=[{"column": "celebrity", "op": "=", "value": "Jan"}], fn="count", column="trial",
                   answer_column="trial")
    read = read_rows_asked(counted, t, "which trials did jan take part in?")
    assert read.fn == "value" and execute(read, t).result == ["1", "3", "4"]
    # The answer column fixed by the filters gives the row labels instead ("Jan, Jan, Jan" says nothing).
    fixed = counted.model_copy(update={"answer_column": "celebrity"})
    assert read_rows_asked(fixed, t, "which trials had jan?").column == t.columns[t.label_col - 1].ident
    # How-many, yes/no and what-questions are not lists.
    for q in ("how many trials did jan take part in?", "did jan take part in a trial?",
              "what is the number of trials with jan?"):
        assert read_rows_asked(counted, t, q) == counted


CHART = Table(name="chart", title="Singles", columns=["Title", "Peak position", "Weeks"], rows=[
    ["Stand Up", "12", "4"],
    ["Wide Open Road", "3", "9"],
    ["Holy Water", "40", "2"],
])


def test_the_highest_position_is_the_smallest_number_of_a_rank_column():
    from tools._question_rules import read_rank_order

    t = TypedTable.build(CHART)
    largest = tprog(fn="argmax", column="peak_position", answer_column="title")
    read = read_rank_order(largest, t, "which track had the highest peak position?")
    assert read.fn == "argmin" and execute(read, t).result == "Wide Open Road"
    assert read_rank_order(tprog(fn="argmin", column="peak_position", answer_column="title"), t,
                           "which track had the lowest position?").fn == "argmax"
    # A column of measures, or a question that says neither (or both), is read as written.
    weeks = tprog(fn="argmax", column="weeks", answer_column="title")
    assert read_rank_order(weeks, t, "which track charted for the highest number of weeks?") == weeks
    assert read_rank_order(largest, t, "which track had the largest position number?") == largest
    assert read_rank_order(largest, t, "the highest or the lowest position?") == largest


def test_a_superlative_filtered_on_an_unasked_row_of_its_answer_column_drops_that_filter():
    from tools._question_rules import drop_named_row

    t = TypedTable.build(CHART)
    one_row = tprog(filters=[{"column": "title", "op": "=", "value": "Holy Water"}], fn="argmax", column="weeks",
                    answer_column="title")
    assert execute(one_row, t).result == "Holy Water"  # the most weeks over one row is that row
    read = drop_named_row(one_row, t, "which track charted for the most weeks?")
    assert read.filters == [] and execute(read, t).result == "Wide Open Road"
    # A row the question names stays: "of Holy Water and Stand Up" asks about them.
    assert drop_named_row(one_row, t, "did holy water chart for the most weeks?") == one_row


def test_a_month_the_question_states_filters_the_dates_the_program_left_unfiltered():
    from tools._question_dates import add_stated_date

    t = TypedTable.build(TRIALS)
    everything = tprog(fn="count", column="trial")
    read = add_stated_date(everything, t, "How many trials were in December?")
    assert [(f.column, f.op, f.value) for f in read.filters] == [("date", "contains", "December")]
    assert execute(read, t).result == 2
    assert execute(add_stated_date(everything, t, "how many trials were in November 2006?"), t).result == 3
    # "may" alone is the verb; a date already filtered, or none stated, leaves the program as written.
    assert add_stated_date(everything, t, "Which trials may have been in the jungle?") == everything
    dated = tprog(filters=[{"column": "date", "op": "contains", "value": "December"}], fn="count", column="trial")
    assert add_stated_date(dated, t, "How many trials were in December?") == dated
    assert add_stated_date(everything, t, "How many trials were there?") == everything
    # Found as a new user: "in May 2010" written as another day's date; a date the question does not state goes.
    other_day = tprog(filters=[{"column": "date", "op": "=", "value": "13 November 2006"}], fn="value",
                      column="series")
    read = add_stated_date(other_day, t, "Which series ran in December 2006?")
    assert [(f.op, f.value) for f in read.filters] == [("contains", "December 2006")]
    assert execute(read, t).result == "Jungle"
    stated_day = other_day.model_copy(update={"filters": [read.filters[0].model_copy(update={
        "op": "=", "value": "1 December 2006"})]})
    assert add_stated_date(stated_day, t, "Which series ran on 1 December 2006?") == stated_day


GLP1_TRIALS = Table(name="trials", title="GLP-1 trials", columns=[
    "Trial", "Drug", "Participants", "Duration (weeks)", "Dropouts", "Dropouts per 100", "Year"], rows=[
    ["SURPASS-1", "Tirzepatide", "478", "40", "31", "6.5", "2021"],
    ["AWARD-1", "Dulaglutide", "978", "52", "64", "6.5", "2014"],
    ["LEAD-3", "Liraglutide", "746", "52", "58", "7.8", "2009"],
    ["DURATION-1", "Exenatide", "295", "30", "19", "6.4", "2008"],
    ["EMPTY-0", "Placebo", "0", "12", "0", "0", "2001"],
])


@pytest.mark.parametrize("question, fn, per", [
    ("Which trial had the most dropouts relative to participants?", "argmax", "participants"),
    ("which trial had the fewest dropouts per participant?", "argmin", "participants"),
    ("What is the highest number of dropouts as a share of the participants in these trials?", "max", "participants"),
    ("Which trial had the most dropouts per week?", "argmax", "duration_weeks"),
    ("Which trial had the most dropouts?", "argmax", None),            # no ratio asked
    ("Which trial had the most dropouts per capita?", "argmax", None),  # no column is named by "capita"
    ("Which trial had the most dropouts per year?", "argmax", None),    # a column of years is no denominator
])
def test_a_ratio_asked_divides_by_the_column_it_names(question, fn, per):
    from tools._question_counts import read_ratio

    t = TypedTable.build(GLP1_TRIALS)
    out = read_ratio(Program.model_validate({"fn": fn, "column": "dropouts", "answer_column": "trial"}), t, question)
    assert out.options.divides_by == per


def test_a_ratio_runs_row_by_row_and_cites_both_columns():
    from tools._question_counts import read_ratio

    t = TypedTable.build(GLP1_TRIALS)
    program = read_ratio(Program.model_validate({"fn": "argmax", "column": "dropouts", "answer_column": "trial"}), t,
                         "Which trial had the most dropouts relative to participants?")
    ex = execute(program, t)
    # 58/746 = 0.0777 beats 64/978 = 0.0654 (the most dropouts) and 31/478 = 0.0649; 0 participants is skipped
    assert ex.result == "LEAD-3" and ex.result_text == "LEAD-3 (58 / 746 = 0.07775)" and ex.decisive_rows == [3]
    assert set(ex.cells) == {(3, 5), (3, 1), (3, 3)}
    from tools._table_shape import describe
    assert describe(program, t) == "all rows → Trial of the row with the largest Dropouts per Participants"
    # the measure already a ratio is left alone; a ratio cannot feed a count or a sum
    done = Program.model_validate({"fn": "argmax", "column": "dropouts_per_100", "answer_column": "trial"})
    assert read_ratio(done, t, "Which trial had the most dropouts per participant?").options.derive is None
    with pytest.raises(ProgramError, match="ratio"):
        execute(Program.model_validate({"fn": "sum", "column": "dropouts",
                                        "options": {"derive": {"kind": "ratio", "per_column": "participants"}}}), t)


def test_a_ratio_is_checked_against_the_other_rows_ratio():
    """Seen with the real model: "AWARD-1 had the most dropouts relative to its participants" compared the largest
    ratio (0.0654) with AWARD-1's raw dropouts (64): the right verdict for a wrong reason."""
    t = TypedTable.build(GLP1_TRIALS)
    program = Program.model_validate({"fn": "max", "column": "dropouts",
                                      "options": {"derive": {"kind": "ratio", "per_column": "participants"}},
                                      "check": {"op": "=", "against": "row", "value": "AWARD-1"}})
    ex = execute(program, t)
    assert ex.truth is False and ex.check_text == "= AWARD-1's Dropouts per Participants 0.06544"
    assert {(2, 3), (2, 5)} <= set(ex.cells)
    lead = program.model_copy(update={"check": program.check.model_copy(update={"value": "LEAD-3"})})
    assert execute(lead, t).truth is True
    # the same superlative over AWARD-1's own row (its drug) is true of any row: it does not run
    own = program.model_copy(update={"filters": [RowFilter(column="drug", op="=", value="Dulaglutide")]})
    with pytest.raises(ProgramError, match="keep only 'AWARD-1'"):
        execute(own, t)


def test_a_threshold_without_a_superlative_asks_for_every_row_over_it():
    """Found as a new user: "which regions have an occupancy above 85%?" was answered by the row with the largest
    occupancy among those above 85%, one region of two."""
    from tools._question_rules import read_threshold_list

    t = typed()
    extreme = prog(filters=[{"column": "capacity", "op": ">", "value": "10000"}], fn="argmax", column="capacity")
    read = read_threshold_list(extreme, t, "Which stadiums hold more than 10,000 people?")
    assert read.fn == "value" and execute(read, t).result == ["Provident Stadium", "Glebe Oval", "Quay Arena"]
    # A superlative or a first/last asks for one row; an extreme of a column no threshold bounds is left alone.
    for q in ("Which stadium over 10,000 seats is the largest?", "Which was the first stadium above 10,000?"):
        assert read_threshold_list(extreme, t, q) == extreme
    opened = prog(filters=[{"column": "capacity", "op": ">", "value": "10000"}], fn="argmax", column="opened")
    assert read_threshold_list(opened, t, "Which stadiums hold more than 10,000 people?") == opened


def test_which_plural_with_a_filter_and_no_superlative_lists_every_row_it_keeps():
    """Found as a new user: "Which hospitals have a stroke unit?" was answered by the one with the most beds."""
    from tools._question_rules import read_threshold_list

    hospitals = TypedTable.build(Table(name="h", title="Hospitals", columns=["Hospital", "Beds", "Stroke unit"], rows=[
        ["St. Anne's", "420", "Yes"], ["Riverside", "310", "No"], ["Royal Infirmary", "640", "Yes"]]))
    most_beds = prog(filters=[{"column": "stroke_unit", "op": "=", "value": "Yes"}], fn="argmax", column="beds",
                     answer_column="hospital")
    read = read_threshold_list(most_beds, hospitals, "Which hospitals have a stroke unit?")
    assert read.fn == "value" and execute(read, hospitals).result == ["St. Anne's", "Royal Infirmary"]
    for q in ("Which hospitals with a stroke unit have the most beds?", "Which hospital has a stroke unit?"):
        assert read_threshold_list(most_beds, hospitals, q) == most_beds  # a superlative, or one asked


STAFF = Table(name="staff", title="staff", columns=["Region", "Doctors", "Nurses"], rows=[
    ["North", "1210", "3480"], ["South", "1675", "4020"], ["Central", "980", "=1000+2000"]])


async def test_a_program_that_reads_the_named_row_is_not_outvoted_for_its_cell_being_text(tmp_settings,
                                                                                         fake_llm_server):
    """Found as a new user: "How many nurses work in Central?" (Central's cell: the formula text "=1000+2000")
    was answered by the sum over every row, once the programs reading Central's row were dropped for giving no
    number. Grounding is judged first: the sums ignore "Central", which the question states."""
    central = {"filters": [{"column": "region", "op": "=", "value": "Central"}], "fn": "value", "column": "nurses",
               "answer_column": "nurses"}
    # a sum over rows the question does not name (an unfiltered sum is now read over the row it states:
    # tools._values.add_stated_value)
    total = {"filters": [{"column": "doctors", "op": ">", "value": "0"}], "fn": "sum", "column": "nurses",
             "answer_column": "nurses"}
    with fake_llm_server(scripted(["region", "nurses"], [total, total, total, central, central])) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), STAFF, "question", "How many nurses work in Central?", n=5)
    assert outcome.winner == "=1000+2000"  # the cell as the table holds it, never evaluated
    assert all("does not vote" in r.error for r in outcome.runs if not r.ran) and outcome.votes == {"=1000+2000": 2}


def test_an_ordinal_superlative_takes_that_place_from_the_end():
    """ "the second largest" was read as the largest: the grammar has no place for the ordinal."""
    from tools._question_rules import read_ordinal
    from tools._table_shape import describe

    t = typed()
    largest = prog(fn="argmax", column="capacity")
    read = read_ordinal(largest, "Which stadium has the second largest capacity?")
    # 27,000 > 15,000 > 12,250 (Total excluded)
    assert read.options.nth == 2 and execute(read, t).result == "Quay Arena"
    assert "the second largest Capacity" in describe(read, t)
    third_smallest = read_ordinal(prog(fn="min", column="capacity"), "What is the 3rd-smallest capacity?")
    assert execute(third_smallest, t).result == 12250.0
    assert read_ordinal(largest, "Which stadium has the largest capacity?") == largest
    assert read_ordinal(largest, "Who came second?") == largest
    with pytest.raises(ProgramError, match="only 5 different values"):
        execute(read_ordinal(largest, "the ninth largest capacity"), t)


def test_a_claim_with_an_ordinal_superlative_checks_that_place():
    from tools._claim_grounding import read_superlative
    from tools._question_rules import read_ordinal

    t = typed()
    claim = "Quay Arena has the second largest capacity."
    written = Program.model_validate({"filters": [{"column": "stadium", "op": "=", "value": "Quay Arena"}],
                                      "fn": "max", "column": "capacity", "answer_column": "stadium",
                                      "check": {"op": "=", "against": "value", "value": "15000"}})
    read = read_ordinal(read_superlative(written, t, claim), claim)
    assert read.fn == "argmax" and read.options.nth == 2 and execute(read, t).truth is True
    wrong = "Glebe Oval has the second largest capacity."
    read = read_ordinal(read_superlative(written.model_copy(update={"filters": [
        RowFilter(column="stadium", op="=", value="Glebe Oval")]}), t, wrong), wrong)
    assert execute(read, t).truth is False


async def test_programs_that_find_no_number_where_the_question_points_outrank_one_that_ignores_it(
        tmp_settings, fake_llm_server):
    """Found as a new user: four programs summed Central's Nurses cell (a formula's text) and failed; the one sum
    over every row answered alone. A sum over a cell of text now answers with the cell as written; over an empty
    cell it still fails, and such a failure reads more of the question than the sum that ignores the row."""
    from tools._table_program import ProgramOutcome, decide, run_sampled

    t = TypedTable.build(Table(name="staff", title="staff", columns=STAFF.columns,
                               rows=STAFF.rows + [["East", "640", ""]]))
    total = {"filters": [], "fn": "sum", "column": "nurses", "answer_column": "nurses"}

    def region(name: str) -> dict:
        return {"filters": [{"column": "region", "op": "=", "value": name}], "fn": "sum", "column": "nurses",
                "answer_column": "nurses"}

    question = "How many nurses work in Central?"
    sampled = [run_sampled(p, t, "question", question) for p in (region("Central"), region("Central"), total)]
    outcome = ProgramOutcome(kind="question")
    decide(outcome, sampled, t, "question", question)
    assert outcome.winner == "=1000+2000" and "the cell as the table holds it" in outcome.reason + str(
        sampled[0].execution.steps)
    # Over one row's empty cell in the column the question names, the answer is that the table gives no value
    # (tools.table_qa.NO_VALUE); the sum over every row, which ignores "East", does not vote.
    question = "How many nurses work in East?"
    sampled = [run_sampled(p, t, "question", question) for p in (region("East"), region("East"), total)]
    assert [s.no_numbers for s in sampled] == [False, False, False]
    outcome = ProgramOutcome(kind="question")
    decide(outcome, sampled, t, "question", question)
    # (the unfiltered sum is read over the row the question states, East, since tools._values reads
    # aggregates too: all three give no value)
    assert outcome.winner == "" and [r.ran for r in outcome.runs] == [True, True, True]
    assert all(r.program.startswith("rows where Region = 'East'") for r in outcome.runs)
    # Over several rows' empty cells it still fails (the sum too, now read over the same rows).
    two_empty = TypedTable.build(Table(name="staff", title="staff", columns=STAFF.columns,
                                       rows=STAFF.rows + [["East", "640", ""], ["East", "120", ""]]))
    sampled = [run_sampled(p, two_empty, "question", question) for p in (region("East"), region("East"), total)]
    assert [s.no_numbers for s in sampled] == [True, True, True]
    outcome = ProgramOutcome(kind="question")
    decide(outcome, sampled, two_empty, "question", question)
    assert outcome.winner is None and not any(r.ran for r in outcome.runs)
    # A failure of another kind (a filter matching no row) does not outrank a program that ran.
    typo = region("Centre")
    sampled = [run_sampled(p, t, "question", question) for p in (typo, typo, total)]
    outcome = ProgramOutcome(kind="question")
    decide(outcome, sampled, t, "question", question)
    # the sum, read over East (the row the question states), answers that the table gives no value there; it was
    # 7500 (every row's) before aggregates were read over a stated cell's rows
    assert outcome.winner == "" and [r.ran for r in outcome.runs] == [False, False, True]


def test_an_extreme_runs_the_way_the_question_says():
    """Found as a new user: "which region has the second most ICU beds?" split between the second largest and the
    second smallest, and the model's fallback then named the largest."""
    from tools._question_rules import read_direction, read_ordinal

    t = typed()
    smallest = prog(fn="argmin", column="capacity")
    question = "Which stadium has the second most capacity?"
    read = read_ordinal(read_direction(smallest, t, question), question)
    assert (read.fn, read.options.nth) == ("argmax", 2) and execute(read, t).result == "Quay Arena"
    assert read_direction(prog(fn="max", column="capacity"), t, "What is the lowest capacity?").fn == "min"
    # Neither word, both, or a rank column: as written.
    for q in ("Which stadium is it?", "Which has the most capacity of the smallest cities?"):
        assert read_direction(smallest, t, q) == smallest
    chart = TypedTable.build(CHART)
    best = tprog(fn="argmin", column="peak_position", answer_column="title")
    assert read_direction(best, chart, "which track had the highest peak position?") == best


def test_the_largest_loss_is_the_most_negative_value_of_a_signed_column():
    """Found as a new user: "Which quarter had the largest loss?" over Net income with "(60)" and "(25)" was
    answered Q4, the largest profit (5 of 5 programs took the largest Net income)."""
    from tools._question_rules import read_direction

    t = TypedTable.build(Table(name="f", title="f", columns=["Quarter", "Net income ($k)", "Losses ($k)"], rows=[
        ["Q1", "(60)", "60"], ["Q2", "185", "0"], ["Q3", "(25)", "25"], ["Q4", "215", "0"]]))
    largest = prog(fn="argmax", column="net_income_k", answer_column="quarter")
    for q in ("Which quarter had the largest loss?", "Which quarter lost the most money?"):
        read = read_direction(largest, t, q)
        assert read.fn == "argmin" and execute(read, t).result == "Q1"
    assert read_direction(largest, t, "Which quarter had the largest net income?") == largest
    # a column of losses, or one with no negative value, keeps the question's direction
    losses = prog(fn="argmax", column="losses_k", answer_column="quarter")
    assert read_direction(losses, t, "Which quarter had the largest loss?") == losses
    unsigned = TypedTable.build(Table(name="g", title="g", columns=["Team", "Points"], rows=[["A", "3"], ["B", "9"]]))
    most = prog(fn="argmax", column="points", answer_column="team")
    assert read_direction(most, unsigned, "Which team lost the most points?") == most


@pytest.mark.parametrize("question, header, fn", [
    # found as a new user: "and the second best?" (average score) was written as the second smallest
    ("Which model has the second best average score?", "Avg.", "argmax"),
    ("Which model has the worst accuracy?", "Accuracy", "argmin"),
    ("Which runner had the best time?", "Time (s)", "argmin"),
    ("Which system has the worst word error rate?", "WER", "argmax"),
    ("Which model is best and which is worst?", "Avg.", None),  # both: as written
])
def test_best_and_worst_run_the_way_the_column_measures(question, header, fn):
    from tools._question_rules import read_direction

    t = TypedTable.build(Table(name="m", title="", columns=["Name", header], rows=[["A", "3"], ["B", "5"], ["C", "4"]]))
    ident = t.idents[1]
    for written in ("argmax", "argmin"):
        read = read_direction(prog(fn=written, column=ident, answer_column="name"), t, question)
        assert read.fn == (fn or written)


SEASONS = Table(name="seasons", title="seasons", columns=["Season", "Half", "Wins", "Losses"], rows=[
    ["1980", "", "93", "70"], ["1981", "first", "25", "22"], ["1981", "second", "34", "25"], ["1982", "", "80", "82"]])


def test_how_many_over_several_rows_is_their_total_not_the_smallest():
    """WTQ dev: "how many losses did the team have in 1981?" (a split season) was answered 22, one half's losses."""
    from tools._question_rules import read_total_asked

    t = TypedTable.build(SEASONS)
    smallest = prog(answer_column="losses", filters=[{"column": "season", "op": "=", "value": "1981"}], fn="min",
                    column="losses")
    read = read_total_asked(smallest, t, "how many losses did the team have in 1981?")
    assert read.fn == "sum" and execute(read, t).result == 47
    for asks_an_extreme in ("how many losses did the team have in its worst half of 1981?",
                            "how many losses did the team have on average in 1981?",
                            "how many losses at most did the team have in a half of 1981?",
                            "how many losses did the team have in the second best half?"):
        assert read_total_asked(smallest, t, asks_an_extreme) == smallest
    assert read_total_asked(smallest, t, "what were the fewest losses in 1981?") == smallest  # not how many
    years = prog(answer_column="season", filters=[{"column": "losses", "op": ">", "value": "60"}], fn="max",
                 column="season")
    assert read_total_asked(years, t, "how many seasons ago was the team last over 60 losses?") == years  # years


TRIAL_ARMS = Table(name="trial", title="trial", columns=["Treatment", "Patients", "Deaths", "Death rate (%)"], rows=[
    ["Placebo", "1,204", "187", "15.5"], ["Drug A", "1,198", "142", "11.9"], ["Drug B", "1,211", "171", "14.1"]])


def test_what_share_of_a_rows_members_is_its_ratio_of_the_two_columns():
    """Found as a new user: "What share of Drug A patients died?" answered 142, Drug A's deaths."""
    from tools._question_counts import read_share

    t = TypedTable.build(TRIAL_ARMS)
    deaths = prog(filters=[{"column": "treatment", "op": "=", "value": "Drug A"}], fn="value", column="deaths",
                  answer_column="deaths")
    for q in ("What share of Drug A patients died?", "what proportion of the patients on Drug A died?"):
        read = read_share(deaths, t, q)
        assert read.options.divides_by == "patients" and execute(read, t).result == pytest.approx(142 / 1198)
    assert read_share(deaths, t, "How many Drug A patients died?") == deaths  # a count, not a share
    everyone = prog(filters=[], fn="sum", column="deaths", answer_column="deaths")
    assert read_share(everyone, t, "What share of patients died?") == everyone  # a ratio of sums: not read so
    rate = prog(filters=[{"column": "treatment", "op": "=", "value": "Drug A"}], fn="value", column="death_rate",
                answer_column="death_rate")
    assert read_share(rate, t, "What share of Drug A patients died?") == rate  # already a rate


def test_a_share_whose_words_name_the_row_reads_that_row():
    """Found as a new user: "What share of Elm Ridge's population is fully vaccinated?" was answered with the
    average of every county's Fully vaccinated (no program filtered Elm Ridge), then as the ratio 0.5162."""
    from tools._question_counts import read_share

    t = TypedTable.build(Table(name="v", title="v", columns=["County", "Population", "Fully vaccinated"], rows=[
        ["Alder", "48210", "35120"], ["Elm Ridge", "9876", "5098"], ["Dunmore", "67402", "57991"]]))
    q = "What share of Elm Ridge's population is fully vaccinated?"
    for fn in ("value", "avg", "sum"):
        read = read_share(prog(filters=[], fn=fn, column="fully_vaccinated", answer_column="county"), t, q)
        assert read.options.divides_by == "population" and execute(read, t).result == pytest.approx(5098 / 9876)
    # no row named, or two: left as written
    alone = prog(filters=[], fn="avg", column="fully_vaccinated", answer_column="county")
    assert read_share(alone, t, "What share of the population is fully vaccinated?") == alone
    both = "What share of Alder's and Dunmore's population is fully vaccinated?"
    assert read_share(alone, t, both) == alone
    ran = run_sampled({"filters": [], "fn": "value", "column": "fully_vaccinated"}, t, "question", q)
    assert ran.execution.result == "51.6%" and "as a percentage: 0.5162 is 51.6%" in ran.execution.steps
    asked_as_proportion = q.replace("share", "proportion")
    ran = run_sampled({"filters": [], "fn": "value", "column": "fully_vaccinated"}, t, "question", asked_as_proportion)
    assert ran.execution.result == pytest.approx(5098 / 9876)  # a proportion stays a ratio


MONTHLY = Table(name="sales", title="sales", columns=["Month", "Revenue"], rows=[
    ["2024-01", "$1,200,000"], ["2024-02", "$1,150,000"], ["2024-03", "$1,380,000"], ["2024-04", "$1,420,000"],
    ["2024-05", "$1,510,000"], ["2024-06", "$1,490,000"]])


def test_a_stated_quarter_keeps_its_three_months():
    """Found as a new user: "total revenue in the first quarter of 2024" summed all six months."""
    from tools._question_dates import add_stated_quarter
    from tools._table_shape import describe

    t = TypedTable.build(MONTHLY)
    everything = prog(filters=[], fn="sum", column="revenue", answer_column="revenue")
    q1 = add_stated_quarter(everything, t, "What was the total revenue in the first quarter of 2024?")
    assert execute(q1, t, union_same_column=True).result == 3_730_000
    assert "Month is one of 'January 2024', 'February 2024', 'March 2024'" in describe(q1, t)
    q2 = add_stated_quarter(everything, t, "And in Q2?")
    assert [f.value for f in q2.filters] == ["April", "May", "June"]
    assert execute(q2, t, union_same_column=True).result == 4_420_000
    assert add_stated_quarter(everything, t, "What was the total revenue?") == everything
    other = prog(filters=[{"column": "revenue", "op": ">", "value": "1,300,000"}], fn="count", column="revenue",
                 answer_column="revenue")
    assert add_stated_quarter(other, t, "How many months of the first quarter had over 1,300,000?") == other


def test_a_last_question_is_not_answered_by_the_most_frequent_value():
    # WTQ's training split: "what is the last competition listed?" voted for the competition in most rows
    frequent = prog(fn="most_common", column="city")
    last = run_sampled(frequent.model_dump(), typed(), "question", "what is the last city listed on the table?")
    assert last.program.fn == "value" and last.execution.result == "Dover"
    asked = run_sampled(frequent.model_dump(), typed(), "question", "which city is listed the most?")
    assert asked.program.fn == "most_common"


def test_a_question_value_also_names_the_cells_that_list_it():
    served = Table(name="c", title="Commissioners", columns=["Name", "President served under"], rows=[
        ["Haynes", "Warren G. Harding"], ["Blair", "Warren G. Harding, Calvin Coolidge"], ["Doran", "Calvin Coolidge"],
        ["Lowman", "Calvin Coolidge; Herbert Hoover"], ["Woodcock", "Herbert Hoover"], ["Coolidge Jr", "Coolidgeville"]])
    program = prog(filters=[{"column": "president_served_under", "op": "=", "value": "Calvin Coolidge"}], fn="count",
                   column="name", answer_column="name")
    asked = execute(program, TypedTable.build(served), union_same_column=True)
    assert asked.selected == [2, 3, 4] and "with 2 that list it" in asked.steps[0]
    # a claim's '=' stays exact: "X served under Coolidge alone" is another statement
    assert execute(program, TypedTable.build(served)).selected == [3]


def test_a_value_asked_below_or_above_a_named_row_is_the_neighbouring_rows():
    from tools._question_rules import read_neighbour

    t = typed()
    echo = prog(filters=[{"column": "stadium", "op": "=", "value": "Ayr Park"}], fn="value", column="stadium")
    assert execute(echo, t).result == "Ayr Park"  # the question's own words
    below = read_neighbour(echo, t, "which stadium is listed below ayr park?")
    assert below.fn == "next_row" and execute(below, t).result == "Glebe Oval"
    above = read_neighbour(echo, t, "what stadium comes right before Ayr Park?")
    assert above.fn == "previous_row" and execute(above, t).result == "Provident Stadium"
    # Both directions, none, another column read, or a value the question does not state: as written.
    assert read_neighbour(echo, t, "which stadium is below Ayr Park but above Quay Arena?") == echo
    assert read_neighbour(echo, t, "which stadium is Ayr Park?") == echo
    city = prog(filters=[{"column": "stadium", "op": "=", "value": "Ayr Park"}], fn="value", column="city")
    assert read_neighbour(city, t, "which city is listed after ayr park?") == city
    assert read_neighbour(echo, t, "which stadium is listed after the oval?") == echo
    counted = echo.model_copy(update={"fn": "count"})
    assert read_neighbour(counted, t, "how many stadiums opened after Ayr Park?") == counted


WARDS = Table(name="wards", title="wards", columns=["Clinic", "Region", "Beds"], rows=[
    ["St Mary", "North", "310"], ["Riverside", "East", "95"], ["Lakeside", "North", "60"], ["Total", "", "465"]])


def test_what_share_of_all_of_a_column_is_a_percentage_of_its_total():
    """Found as a new user: "What share of all beds does St Mary have?" answered 310, St Mary's beds."""
    from tools._question_counts import read_share_of_all

    t = TypedTable.build(WARDS)
    st_mary = prog(filters=[{"column": "clinic", "op": "=", "value": "St Mary"}], fn="value", column="beds",
                   answer_column="beds")
    for q in ("What share of all beds does St Mary have?", "what percentage of the total beds are at St Mary?"):
        read = read_share_of_all(st_mary, t, q)
        ex = execute(read, t)
        assert read.fn == "share" and ex.result == "66.7%" and ex.result_text == "66.7% (310 of 465)"  # no Total row
        assert (2, 3) in ex.cells and (3, 3) in ex.cells and (4, 3) not in ex.cells
    north = prog(filters=[{"column": "region", "op": "=", "value": "North"}], fn="sum", column="beds",
                 answer_column="beds")
    assert execute(read_share_of_all(north, t, "What share of the beds is in the North?"), t).result == "79.6%"
    mean = st_mary.model_copy(update={"fn": "avg"})
    assert read_share_of_all(mean, t, "What share of all beds does St Mary have?").fn == "share"
    assert read_share_of_all(st_mary, t, "How many beds does St Mary have?") == st_mary
    assert read_share_of_all(st_mary, t, "What share of all patients does St Mary treat?") == st_mary  # no such column
    everyone = prog(filters=[], fn="sum", column="beds", answer_column="beds")
    assert read_share_of_all(everyone, t, "What share of all beds are in clinics?") == everyone  # all of it


CLINICS = Table(name="clinics", title="clinics", columns=["Clinic", "Region", "Doctors", "Beds"], rows=[
    ["St Mary", "North", "42", "310"], ["Riverside", "East", "17", "95"], ["Hillcrest", "West", "23", "140"],
    ["Oakwood", "South", "31", "205"], ["Lakeside", "North", "12", "60"]])


@pytest.mark.parametrize("question, fn, answer", [
    ("Which region has the fewest beds in total?", "argmin", "East"),  # not North, Lakeside's region
    ("Which region has the most doctors combined?", "argmax", "North"),  # 54
    ("which region has the second highest number of beds in total?", "argmax", "South"),  # 370, then 205
])
def test_which_group_has_the_largest_total_sums_each_groups_rows(question, fn, answer):
    """Found as a new user: "Which region has the fewest beds in total?" answered North, 5 of 5 programs."""
    from tools._question_rules import read_group_total
    from tools.lang.reading import ordinal_extreme

    t = TypedTable.build(CLINICS)
    written = prog(filters=[], fn=fn, column="beds" if "beds" in question else "doctors", answer_column="region")
    read = read_group_total(written, t, question)
    read = read.model_copy(update={"options": read.options.replaced(nth=ordinal_extreme(question))})
    ex = execute(read, t)
    assert read.options.grouping == RowGroups(by="total") and ex.result == answer, ex.result_text
    if answer == "East":
        assert ex.result_text == "East (totals: North 370; South 205; West 140; East 95)" and ex.decisive_rows == [2]


def test_a_group_question_without_a_total_or_with_unique_groups_is_left_alone():
    from tools._question_rules import read_group_total

    t = TypedTable.build(CLINICS)
    written = prog(filters=[], fn="argmin", column="beds", answer_column="region")
    assert read_group_total(written, t, "Which region has the clinic with the fewest beds?") == written
    assert read_group_total(written, t, "Which region has the fewest beds overall?") == written  # whole table
    clinic = prog(filters=[], fn="argmin", column="beds", answer_column="clinic")
    assert read_group_total(clinic, t, "Which clinic has the fewest beds in total?") == clinic  # one row each
    totals = Table(name="m", title="m", columns=["Nation", "Group", "Total"], rows=[
        ["A", "x", "5"], ["B", "x", "7"], ["C", "y", "6"]])
    by_total = prog(filters=[], fn="argmax", column="total", answer_column="group")
    assert read_group_total(by_total, TypedTable.build(totals), "which group has the highest total?") == by_total


def test_one_number_written_two_ways_is_one_answer():
    assert one_form_per_number(["58", "58%", "58", "", "EURTAC", "2.0", "2"]) == ["58%", "58%", "58%", "", "EURTAC",
                                                                                   "2", "2"]
    assert one_form_per_number(["8500", "8500", "8,500", "9000"]) == ["8,500", "8,500", "8,500", "9000"]


async def test_a_minimum_and_the_cell_it_reads_vote_together(tmp_settings, fake_llm_server):
    # Found as a new user: "What was its response rate?" split 3 to 1 between "58" (a minimum over the row) and
    # "58%" (the cell), and answered "58". Here a 2-2 split between "8500" and "8,500" left no majority at all.
    row = [{"column": "stadium", "op": "=", "value": "Ayr Park"}]
    minimum = {"filters": row, "fn": "min", "column": "capacity", "answer_column": "capacity"}
    value = {"filters": row, "fn": "value", "column": "capacity", "answer_column": "capacity"}
    with fake_llm_server(scripted(["stadium", "capacity"], [minimum, value, minimum, value])) as srv:
        outcome = await solve(llm_for(tmp_settings, srv), LEAGUE, "question", "What is the capacity of Ayr Park?",
                              n=4)
    assert outcome.votes == {"8,500": 4} and outcome.winner == "8,500" and outcome.confidence == 1.0


def test_a_stated_range_of_periods_includes_both_ends():
    """Found as a new user: "How many units were sold between March and May?" was written Month > 'Mar 2024' and
    Month < 'May 2024' (April alone) by two of five programs, and the split fell to the model, which said "May"."""
    from tools._values import read_inclusive_range

    t = TypedTable.build(Table(name="s", title="s", columns=["Month", "Units sold", "Year"], rows=[
        ["Feb 2024", "905", "2024"], ["Mar 2024", "1034", "2024"], ["Apr 2024", "987", "2024"],
        ["May 2024", "1120", "2024"], ["Jun 2024", "1201", "2024"]]))
    strict = prog(filters=[{"column": "month", "op": ">", "value": "Mar 2024"},
                           {"column": "month", "op": "<", "value": "May 2024"}], fn="sum", column="units_sold",
                  answer_column="month")
    for q in ("How many units were sold between March and May?", "How many units were sold from March to May?"):
        read = read_inclusive_range(strict, t, q)
        assert [f.op for f in read.filters] == [">=", "<="] and execute(read, t).result == 3141
    # no range stated, bounds the question does not state, or a column of amounts: as written
    assert read_inclusive_range(strict, t, "How many units were sold after March and before May?") == strict
    assert read_inclusive_range(strict, t, "How many units were sold between spring and summer?") == strict
    amounts = prog(filters=[{"column": "units_sold", "op": ">", "value": "905"},
                            {"column": "units_sold", "op": "<", "value": "1120"}], fn="count", column="month",
                   answer_column="month")
    assert read_inclusive_range(amounts, t, "How many months sold between 905 and 1120 units?") == amounts


def test_a_share_of_the_measures_own_column_is_a_share_of_its_total():
    """Found as a new user: "What percentage of 2023 revenue came from Europe?" was answered 310.4 (the leading
    year kept the share rules from reading it), then 310.4 / 298.1 = 1.041, Revenue 2022 taken as the base."""
    t = TypedTable.build(Table(name="r", title="r", columns=["Region", "Revenue 2022 (USD m)", "Revenue 2023 (USD m)"],
                               rows=[["North America", "412.5", "455.0"], ["Europe", "298.1", "310.4"],
                                     ["Asia-Pacific", "187.9", "241.3"], ["Latin America", "64.2", "59.8"],
                                     ["Total", "962.7", "1066.5"]]))
    europe = {"filters": [{"column": "region", "op": "=", "value": "Europe"}], "fn": "sum",
              "column": "revenue_2023_usd_m"}
    ran = run_sampled(europe, t, "question", "What percentage of 2023 revenue came from Europe?")
    assert ran.execution.result == "29.1%" and ran.execution.result_text == "29.1% (310.4 of 1066.5)"
