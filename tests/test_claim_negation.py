"""A claim whose main verb is negated is checked as its positive form, the verdict turned round
(tools/verify_claim.py: positive_form, negated); found as a new user over a JSON of outbreaks: "Yemen did not
have the most deaths" was refuted by the fallback judge, quoting Yemen's 112 deaths as higher than Nigeria's 596."""

from __future__ import annotations

import json

import pytest

from kb.tables import Table
from tests.fake_openai import Reply
from tests.test_table_program import is_columns, is_program, llm_for
from tests.test_tables_filter import BagOfWordsEmbedder
from tools.verify_claim import conjuncts, positive_form, turned_round
from tools.verify_claim import check_claim

OUTBREAKS = Table(name="outbreaks", title="", columns=["Country", "Disease", "Cases", "Deaths"], rows=[
    ["Chad", "Measles", "8342", "61"], ["Nigeria", "Diphtheria", "14210", "596"],
    ["Yemen", "Cholera", "35790", "112"], ["Pakistan", "Measles", "12003", "38"]])


@pytest.mark.parametrize("claim, positive", [
    ("Yemen did not have the most deaths.", "Yemen did have the most deaths."),
    ("Yemen's cholera outbreak didn't have the most deaths.", "Yemen's cholera outbreak did have the most deaths."),
    ("Chad is not the country with the fewest cases", "Chad is the country with the fewest cases"),
    ("Chad did not have more cases than Pakistan.", "Chad did have more cases than Pakistan."),
    ("MRSA resistance has not fallen since 2019.", "MRSA resistance has fallen since 2019."),
    # a negation that is not the main verb's, or not the only one: left whole
    ("Sweden and Canada are the only countries on the table that do not receive a medal.", None),
    ("The jazz have 2 players named Dawkins but their time on the team does not overlap.", None),
    ("No country did not report cases.", None),
    ("Chad did not report cases and Yemen did not either.", None),
    ("'Thriller' was not the best seller.", None),
    ("Chad had more cases.", None),
])
def test_the_positive_form_drops_the_one_negation_of_the_main_verb(claim, positive):
    assert positive_form(claim) == positive


def test_a_negation_inside_a_cell_is_a_name_not_a_negation():
    """PubHealthTab's tuning split: "I don't like Mondays had a higher rating than It's all the rage." (a song)."""
    claim = "I don't like Mondays had a higher rating than It's all the rage."
    assert positive_form(claim, ["I Don't Like Mondays", "9.4"]) is None
    assert positive_form(claim) is not None  # only the table's cells tell


def test_the_verdict_is_turned_round_but_not_enough_info_stays():
    assert [turned_round(x) for x in ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")] == [
        "REFUTES", "SUPPORTS", "NOT ENOUGH INFO"]


def test_a_negated_second_superlative_is_a_negated_part():
    assert conjuncts("Yemen's cholera outbreak had the most cases but not the most deaths.") == [
        "Yemen's cholera outbreak had the most cases.", "Yemen's cholera outbreak had not the most deaths."]


def handler(req):
    """Programs that check the positive claim: the country with the most of the measure the claim names."""
    prompt = json.dumps(req.get("messages") or req.get("prompt"))
    column = "deaths" if "most deaths" in prompt else "cases"
    if is_columns(req):
        return Reply(content=json.dumps({"columns": ["country", column]}))
    if is_program(req):
        program = {"filters": [], "fn": "argmax", "column": column, "answer_column": "country",
                   "check": {"op": "=", "against": "value", "value": "Yemen"}}
        batch = [json.dumps(program)] * 5
        return Reply(content=batch[0], more_choices=batch[1:])
    raise AssertionError("unexpected request: " + prompt[:300])


@pytest.mark.parametrize("claim, label", [
    ("Yemen did not have the most deaths.", "SUPPORTS"),  # Nigeria had (596)
    ("Yemen did not have the most cases.", "REFUTES"),  # it had (35,790)
    ("Yemen had the most cases but not the most deaths.", "SUPPORTS"),
])
async def test_the_negated_claim_is_checked_as_its_positive_form(tmp_settings, fake_llm_server, claim, label):
    with fake_llm_server(handler) as srv:
        check = await check_claim(llm_for(tmp_settings, srv), OUTBREAKS, claim, embedder=BagOfWordsEmbedder())
    assert check.label == label and check.claim == claim
    assert check.negated is ("but not" not in claim)  # a negated part leaves the whole claim positive
    assert "Read without its “not”" in check.reason
    # the programs were asked about the positive claim, which the model can write a check for
    assert all("did not" not in json.dumps(r.get("messages")) for r in srv.requests if is_program(r))


def test_the_reply_says_the_vote_is_the_positive_forms():
    """The vote shown ("votes REFUTES: 3") is of the claim without its "not", under a verdict of Supported."""
    from tools.verify_claim import Output

    out = Output(verdict="SUPPORTS", claim="Yemen did not have the most deaths.", table="outbreaks", table_id="T1",
                 cells=["T1:R2C4"], reason="Read without its “not”, …", explanations={}, decided_by="program",
                 confidence=0.6, program="all rows → Country of the row with the largest Deaths",
                 vote="votes REFUTES: 3", negated=True)
    assert "Computed from the table for the claim without its “not”: all rows" in out.reply()
    assert "Computed from the table: all rows" in out.model_copy(update={"negated": False}).reply()
