""""The high dose arm had the fewest events and the fewest dropouts" is two claims of one row, each checked by its
own programs (tools/verify_claim.py: conjuncts, both_parts); found as a new user, the programs checked
the first part only and supported it (High dose had the most dropouts)."""

from __future__ import annotations

import json

import pytest

from kb.tables import Table
from tests.fake_openai import Reply
from tests.test_table_program import is_columns, is_program, llm_for
from tests.test_tables_filter import BagOfWordsEmbedder
from tools.verify_claim import conjuncts
from tools.verify_claim import check_claim

ARMS = Table(name="trial", title="", columns=["Arm", "Participants", "Events", "Dropouts"], rows=[
    ["Placebo", "412", "61", "22"], ["Low dose", "405", "44", "31"], ["High dose", "398", "29", "47"]])


@pytest.mark.parametrize("claim, parts", [
    ("The high dose arm had the fewest events and the fewest dropouts.",
     ["The high dose arm had the fewest events.", "The high dose arm had the fewest dropouts."]),
    ("Kenya has the highest coverage, but also has the lowest deaths",
     ["Kenya has the highest coverage.", "Kenya has the lowest deaths."]),
    # one superlative, or one superlative of two measures, or a row chosen by one extreme: left whole
    ("The high dose arm had the fewest events.", []),
    ("Ghana had the most cases and deaths.", []),
    ("The region with the fewest hospitals has the highest occupancy.", []),
    # two comparisons with another row; found as a new user: "Mpox had more cases than Ebola but fewer deaths" was
    # checked on its cases alone
    ("Mpox had more cases than Ebola but fewer deaths.",
     ["Mpox had more cases than Ebola.", "Mpox had fewer deaths than Ebola."]),
    ("Site A had more patients than site B but fewer dropouts than site C.",
     ["Site A had more patients than site B.", "Site A had fewer dropouts than site C."]),
    # one comparison, a combined one, or a second part with no measure of its own: left whole
    ("Mpox had more cases than Ebola.", []),
    ("Mpox had more cases than Ebola and Zika combined.", []),
    ("Mpox had more cases than Ebola and fewer than Zika.", []),
])
def test_two_superlatives_or_comparisons_of_one_row_are_two_claims(claim, parts):
    assert conjuncts(claim) == parts


def _extreme(fn: str, column: str) -> dict:
    return {"filters": [], "fn": fn, "column": column, "answer_column": "arm",
            "check": {"op": "=", "against": "value", "value": "High dose"}}


def handler(req):
    """Programs per part: the request's claim says which measure it is about."""
    prompt = json.dumps(req.get("messages") or req.get("prompt"))
    column = "dropouts" if "dropouts." in prompt else "events"  # (the few-shot examples name neither)
    fn = "argmax" if "the most dropouts" in prompt else "argmin"
    if is_columns(req):
        return Reply(content=json.dumps({"columns": ["arm", column]}))
    if is_program(req):
        batch = [json.dumps(_extreme(fn, column))] * 5
        return Reply(content=batch[0], more_choices=batch[1:])
    raise AssertionError("unexpected request: " + prompt[:300])


@pytest.mark.parametrize("claim, label, part", [
    ("The high dose arm had the fewest events and the fewest dropouts.", "REFUTES",
     "The high dose arm had the fewest dropouts."),  # Placebo had the fewest (22)
    ("The high dose arm had the fewest events but the most dropouts.", "SUPPORTS", None),
])
async def test_the_claim_holds_when_both_parts_do(tmp_settings, fake_llm_server, claim, label, part):
    with fake_llm_server(handler) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), ARMS, claim, embedder=BagOfWordsEmbedder())
    assert check.label == label and check.claim == claim
    assert len([r for r in srv.requests if is_program(r)]) == 2  # one batch of programs per part
    if part:
        assert check.reason.startswith(f"Its part “{part}”") and (1, 4) in check.cells  # Placebo's 22 dropouts
    else:
        assert check.reason.count("Its part") == 2 and {(3, 3), (3, 4)} <= set(check.cells)
