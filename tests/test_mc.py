"""choose_option against a scripted fake OpenAI server: chains, judge label, citation checks."""

from __future__ import annotations

import json

import pytest

from tools.contracts import EvidenceLedger
from assistant.llm import LLMClient
from tests.fake_openai import Reply
from tools._mc import choose_option, evidence_support


def _evidence():
    ledger = EvidenceLedger()
    ledger.add_sentence("A bee is a pollinating animal that visits flowers.", source="openbook")
    ledger.add_sentence("Rocks are made of minerals.", source="openbook")
    return ledger.items()


def _handler(judge_json: str):
    def handle(req):
        if "response_format" in req:
            return Reply(content=judge_json)
        label = req["messages"][-1]["content"].split("Candidate ", 1)[1][0]
        return Reply(content=f"Candidate {label} relates to [S1] and [S9].")
    return handle


async def test_choose_option_parses_label_and_rejects_invented_citations(tmp_settings, fake_llm_server):
    srv = fake_llm_server(_handler(json.dumps({"answer": "A", "evidence": ["S1", "S7"], "confidence": "high"})))
    with srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        result = await choose_option(llm, "What do bees visit?", {"A": "flowers", "B": "rocks"}, _evidence())
        await llm.aclose()
    assert result.choice == "A"
    assert result.cited == ["S1"] and not result.cited_by_support
    assert (result.decided_by, result.citation_by) == ("model", "model")
    assert "S7" in result.rejected_citations and "S9" in result.rejected_citations
    assert set(result.chains) == {"A", "B"}
    assert result.confidence == pytest.approx(0.85)
    # Two chains and one judge; the judge's schema only allows the option letters.
    posts = [r for r in srv.requests if "messages" in r]
    assert len(posts) == 3
    schema = [r for r in posts if "response_format" in r][0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["answer"]["enum"] == ["A", "B"]


async def test_choose_option_falls_back_to_support_when_judge_output_is_invalid(tmp_settings, fake_llm_server):
    srv = fake_llm_server(_handler('{"answer": "Z"}'))
    with srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        result = await choose_option(llm, "What are rocks made of?", {"A": "the moon", "B": "minerals"},
                                     _evidence(), chains=False)
        await llm.aclose()
    assert result.judge_failed and result.decided_by == "fallback"
    assert result.choice == "B"  # only "minerals" appears in the evidence
    assert result.chains == {}
    assert result.citation_by == "code"


async def test_http_4xx_from_the_judge_is_a_marked_fallback(tmp_settings, fake_llm_server):
    srv = fake_llm_server(lambda req: Reply(status=400) if "response_format" in req
                          else Reply(content="x"))
    with srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        result = await choose_option(llm, "What are rocks made of?", {"A": "the moon", "B": "minerals"},
                                     _evidence(), chains=False)
        await llm.aclose()
    assert result.judge_failed and result.decided_by == "fallback" and result.choice == "B"


def test_evidence_support_and_ties():
    ev = _evidence()
    support = evidence_support({"A": "flowers", "B": "minerals", "C": "the moon"}, ev)
    assert support == {"A": 1.0, "B": 1.0, "C": 0.0}


async def test_choose_option_reports_ties(tmp_settings, fake_llm_server):
    srv = fake_llm_server(_handler(json.dumps({"answer": "B", "evidence": [], "confidence": "low"})))
    with srv:
        llm = LLMClient(tmp_settings, base_url=srv.base_url, model="fake-model")
        result = await choose_option(llm, "q?", {"A": "flowers", "B": "minerals", "C": "moon"}, _evidence(),
                                     chains=False)
        await llm.aclose()
    assert result.choice == "B"
    assert result.tied == ["A", "B"]
    # The judge cited nothing: the evidence sharing words with "minerals" is cited instead, and flagged.
    assert result.cited == ["S2"] and result.cited_by_support
    assert (result.decided_by, result.citation_by) == ("model", "code")


async def test_choose_option_needs_options(tmp_settings):
    with pytest.raises(ValueError):
        await choose_option(None, "q", {}, [])
