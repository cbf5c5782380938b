"""A claim check that a rule settles in code: run it against a fake server that fails if the model is asked."""

from __future__ import annotations

from kb.tables import Table
from tests.test_table_program import llm_for
from tools.verify_claim import ClaimCheck, check_claim


async def ruled_without_model(settings, fake_llm_server, table: Table, claim: str) -> ClaimCheck:
    """``check_claim`` on ``claim``, asserting that no model request was made and a rule decided."""
    def no_model(req):
        raise AssertionError("the model was asked")

    with fake_llm_server(no_model) as srv:
        check = await check_claim(llm_for(settings, srv), table, claim)
    assert not srv.requests and check.decided_by.startswith("rule:"), check
    return check
