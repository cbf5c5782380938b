"""The focus check in a turn (#78), against the scripted fake OpenAI server: a reply citing only a related page
abstains and says what the knowledge base has pages on; the page on the focus, a page on a kind of what is named,
and a document that names no subject keep the answer; the flag off gives today's reply."""

from __future__ import annotations

import pytest

from tests.test_loop import Recorder, Router, SearchIn, SearchOut, _tool, frame, make_assistant, said
from tools.registry import REGISTRY

# (text, title, doc id): MedQuAD pages as the default KB titles them, and a WorldTree fact that names no subject.
PAGES = {
    "7q": [("Chromosome 7q deletion is a chromosome abnormality that occurs when a piece of chromosome 7 is missing.",
            "Chromosome 7q deletion — GARD: What is (are) Chromosome 7q deletion ?", "medquad:2_GARD_QA/1#1-1"),
           ("Chromosome 7q deletion can cause delayed growth and intellectual disability.",
            "Chromosome 7q deletion — GARD: What is (are) Chromosome 7q deletion ?", "medquad:2_GARD_QA/1#1-1")],
    "duplication": [("Chromosome 7q duplication is a chromosome abnormality in which a piece of chromosome 7 is "
                     "copied.", "Chromosome 7q duplication — GARD: What is (are) Chromosome 7q duplication ?",
                     "medquad:2_GARD_QA/2#2-1")],
    "bronchitis": [("Bronchitis is an inflammation of the bronchial tubes.",
                    "Acute Bronchitis — MPlusHealthTopics: What is (are) Acute Bronchitis ?",
                    "medquad:4_MPlus_Health_Topics_QA/3#3-1")],
    "chromosome": [("A chromosome contains genes.", "WorldTree KINDOF 1", "worldtree:1")],
}
QUESTION = "What is Chromosome 7q duplication?"


def medquad_search(ctx, args: SearchIn) -> SearchOut:
    low = args.query.lower()
    ids = []
    for key, sentences in PAGES.items():
        if key in low or (key == "7q" and "duplication" in low) or (key == "chromosome" and "chromosome" in low):
            for text, title, doc_id in sentences:
                ids.append(ctx.evidence.add_sentence(text, source=title, doc_id=doc_id).id)
    return SearchOut(ids=ids)


@pytest.fixture
def medquad_tools(monkeypatch):
    from tools.registry import load_all

    load_all()
    for name in list(REGISTRY):
        if name != "intent":
            monkeypatch.delitem(REGISTRY, name)
    monkeypatch.setitem(REGISTRY, "text_search", _tool("text_search", medquad_search, cpu_bound=True))
    return REGISTRY


def _ids(result) -> dict[str, str]:
    """Evidence id by its text's first words."""
    return {e.text.split(" is ")[0].split(" can ")[0]: e.id for e in result.evidence}


async def _ask(settings, server_factory, answer, question=QUESTION, entities=("Chromosome 7q duplication",)):
    router = Router(intents=[frame(entities=list(entities), rewrite=question)], answers=[answer])
    with server_factory(router) as srv:
        bot, _ = make_assistant(settings, srv)
        return await bot.run_turn(question, Recorder())


# The evidence ids, in the order medquad_search registers them for QUESTION: S1, S2 from the deletion page, S3 the
# duplication page, S4 the WorldTree fact.
DELETION = said(("Chromosome 7q deletion is a chromosome abnormality that occurs when a piece of chromosome 7 is "
                 "missing.", ["S1"]),
                ("Chromosome 7q deletion can cause delayed growth and intellectual disability.", ["S2"]))


async def test_a_reply_citing_only_a_related_page_abstains_and_says_what_the_kb_has(tmp_settings, fake_llm_server,
                                                                                    medquad_tools):
    result = await _ask(tmp_settings, fake_llm_server, DELETION)
    assert [e.source.split(" — ")[0] for e in result.evidence if e.id in ("S1", "S2", "S3")] == [
        "Chromosome 7q deletion", "Chromosome 7q deletion", "Chromosome 7q duplication"]
    assert result.status == "no_evidence" and result.abstained
    assert result.answer == ("The evidence I found does not answer this. The knowledge base has pages on "
                             "“Chromosome 7q deletion” [S1][S2], not on “Chromosome 7q duplication”.")
    assert result.cited == ["S1", "S2"] and result.off_focus == ["Chromosome 7q deletion"]


async def test_the_page_on_the_focus_keeps_the_answer(tmp_settings, fake_llm_server, medquad_tools):
    answer = said(("Chromosome 7q duplication is a chromosome abnormality in which a piece of chromosome 7 is copied.",
                   ["S3"]))
    result = await _ask(tmp_settings, fake_llm_server, answer)
    assert result.status == "verified" and not result.abstained and result.off_focus == []
    assert result.cited == ["S3"]


async def test_a_cited_document_that_names_no_subject_is_not_judged(tmp_settings, fake_llm_server, medquad_tools):
    answer = said(("Chromosome 7q deletion is a chromosome abnormality that occurs when a piece of chromosome 7 is "
                   "missing.", ["S1"]), ("A chromosome contains genes.", ["S4"]))
    result = await _ask(tmp_settings, fake_llm_server, answer)
    assert result.status == "verified" and result.off_focus == [] and set(result.cited) == {"S1", "S4"}


async def test_a_page_on_a_kind_of_what_is_named_keeps_the_answer(tmp_settings, fake_llm_server, medquad_tools):
    answer = said(("Bronchitis is an inflammation of the bronchial tubes.", ["S1"]))
    result = await _ask(tmp_settings, fake_llm_server, answer, question="What is bronchitis?", entities=("bronchitis",))
    assert result.status == "verified" and result.cited == ["S1"] and result.off_focus == []


async def test_with_the_check_off_the_related_page_answers_as_before(tmp_settings, fake_llm_server, medquad_tools):
    settings = tmp_settings.model_copy(update={"focus_check": False})
    result = await _ask(settings, fake_llm_server, DELETION)
    assert result.status == "verified" and not result.abstained and result.off_focus == []
    assert result.answer.startswith("Chromosome 7q deletion is a chromosome abnormality")
    assert result.cited == ["S1", "S2"]


async def test_without_the_fitted_check_the_answer_stands(tmp_settings, fake_llm_server, medquad_tools, monkeypatch,
                                                          tmp_path):
    from assistant.answer import focus_check

    monkeypatch.setattr(focus_check, "ARTEFACT", tmp_path / "absent.npz")
    focus_check._load.cache_clear()
    try:
        result = await _ask(tmp_settings, fake_llm_server, DELETION)
    finally:
        focus_check._load.cache_clear()
    assert result.status == "verified" and result.off_focus == []
