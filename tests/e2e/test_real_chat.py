"""End to end with the real served model: a cited, follow-up-aware 3-turn conversation."""

from __future__ import annotations

import pytest

from assistant.deps import Deps
from tools.contracts import cited_ids
from assistant.answer.loop import Assistant
from tools.contracts import Session
from kb.ingest import Document

pytestmark = pytest.mark.real_model

DOCS = [
    Document(doc_id="wang", title="Wang Zhizhi", source="fixture", text=(
        "Wang Zhizhi is a Chinese basketball player. "
        "Wang Zhizhi joined the NBA in 2001, when he signed with the Dallas Mavericks. "
        "He was the first Chinese player to play in the NBA. "
        "In the NBA, Wang Zhizhi played for the Dallas Mavericks, the Los Angeles Clippers and the Miami Heat. "
        "Wang Zhizhi left the NBA in 2005 and returned to the Bayi Rockets in China.")),
    Document(doc_id="yao", title="Yao Ming", source="fixture", text=(
        "Yao Ming played for the Houston Rockets from 2002 to 2011. Yao Ming was born in Shanghai.")),
    Document(doc_id="moon", title="The Moon", source="fixture", text=(
        "The Moon orbits the Earth about once every 27 days. The Moon reflects light from the Sun.")),
]


@pytest.fixture
def small_kb_settings(real_settings, tmp_path):
    settings = real_settings.model_copy(update={"data_dir": tmp_path / "data", "evidence_k": 4})
    deps = Deps(settings)
    deps.text_kb.add_documents(DOCS, collection="fixture", show_progress=False)
    return settings


async def test_three_turn_conversation_with_elliptical_follow_ups(small_kb_settings):
    deps = Deps(small_kb_settings)
    bot = Assistant(deps, Session("e2e-chat"))
    turns = ["When did Wang Zhizhi join the NBA?", "Which teams?", "And when did he leave?"]
    results = []
    for message in turns:
        result = await bot.run_turn(message)
        results.append(result)
        ids = {e.id for e in result.evidence}
        cited = cited_ids(result.answer)
        print(f"\n> {message}\n  rewrite: {result.intent['rewrite']}\n  entities: {result.intent['entities']}"
              f"\n  [{result.status}] {result.answer}\n  timings: {result.timings}")
        assert result.status == "verified", result.answer
        assert cited and all(c in ids for c in cited), (cited, ids)
    # Turns 2 and 3 are elliptical: their rewrites must name the player.
    for r in results[1:]:
        assert "wang zhizhi" in r.intent["rewrite"].lower(), r.intent
        assert any("wang zhizhi" == e.lower() for e in r.intent["entities"])
    # The cited evidence of turn 2 is about teams, from the right document.
    cited_docs = {e.meta.get("doc_id") for e in results[1].cited_evidence}
    assert cited_docs & {"wang"}, cited_docs
    # Turn 3 asks about leaving: its rewrite keeps that, and the answer cites the sentence that says when.
    assert "leave" in results[2].intent["rewrite"].lower()
    assert any("2005" in e.text for e in results[2].cited_evidence), results[2].answer
    await deps.aclose()
