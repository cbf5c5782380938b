"""A table question whose programs read an empty cell is answered as such, not with an empty answer."""

from __future__ import annotations

from kb.tables import Table
from tests.test_table_choice import programs_only


async def test_an_empty_cell_read_is_answered_as_no_value(tmp_settings, fake_llm_server):
    """Found as a new user: "What was the efficacy of FORNAX?", whose cell is empty, was answered with nothing,
    shown as "****" and "Efficacy (%) is  (rows: FORNAX).", and verified."""
    from tests.test_table_program import llm_for
    from tools.table_qa import NO_VALUE, answer_question

    table = Table(name="trials", title="Trials", columns=["Trial", "Efficacy (%)"],
                  rows=[["ARIES-2", "71.5"], ["FORNAX", ""], ["ERIDANUS", "49.7"]])
    value = {"fn": "value", "column": "efficacy", "answer_column": "efficacy",
             "filters": [{"column": "trial", "op": "=", "value": "FORNAX"}]}
    with fake_llm_server(programs_only(["trial", "efficacy"], value)) as srv:
        res = await answer_question(llm_for(tmp_settings, srv), table, "What was the efficacy of FORNAX?",
                                    samples=3, use_filter=False)
    assert res.answer == NO_VALUE and res.decided_by == "program"
    assert res.reason == "The table gives no value here: Efficacy (%) of FORNAX is empty."
    assert (2, 2) in res.cells  # the empty cell is cited, so the user can see it
    assert res.programs.vote_text() == "3 of 3 programs ran; votes (empty): 3"
