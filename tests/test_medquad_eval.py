"""The MedQuAD evaluation (#78): ROUGE-L against hand-worked cases and a brute-force LCS, items split by focus with the
unanswerable half's pages hidden in a copy of the KB (never the user's), and the figures and baselines from records."""

from __future__ import annotations

import itertools
import random
from types import SimpleNamespace

import click
import pytest

from assistant.evals import medquad_eval as mq
from tools.contracts import EvidenceLedger


# -- ROUGE-L ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("candidate, reference, expected", [
    ("the cat sat on the mat", "the cat is on the mat", 2 * (5 / 6) * (5 / 6) / (5 / 6 + 5 / 6)),  # LCS 5 of 6 and 6
    ("Aspirin lowers fever.", "aspirin LOWERS fever", 1.0),  # case and punctuation do not count
    ("fever", "aspirin lowers fever in adults", 2 * 1.0 * 0.2 / 1.2),  # P 1/1, R 1/5
    ("", "anything", 0.0),
    ("unrelated words", "aspirin lowers fever", 0.0),
])
def test_rouge_l_hand_worked(candidate, reference, expected):
    assert mq.rouge_l(candidate, reference) == pytest.approx(expected)


def _lcs_brute(a: list[str], b: list[str]) -> int:
    for n in range(min(len(a), len(b)), 0, -1):
        subs = {tuple(c) for c in itertools.combinations(a, n)}
        if any(tuple(c) in subs for c in itertools.combinations(b, n)):
            return n
    return 0


def test_lcs_agrees_with_brute_force_and_is_symmetric():
    rng = random.Random(3)
    for _ in range(200):
        a = [rng.choice("abcd") for _ in range(rng.randint(0, 7))]
        b = [rng.choice("abcd") for _ in range(rng.randint(0, 7))]
        assert mq._lcs_length(a, b) == _lcs_brute(a, b) == mq._lcs_length(b, a)


# -- items -----------------------------------------------------------------------------------------------------
def _records(n_foci: int) -> list[dict]:
    recs = []
    for f in range(n_foci):
        for q in range(3):  # three questions (pages) per focus, in two collections
            recs.append({"collection": f"c{q % 2}", "file": f"{f:05d}_{q % 2}.xml", "qid": f"{f:05d}-{q}",
                         "focus": f"Disease {f}", "qtype": ["information", "symptoms", "treatment"][q],
                         "question": f"What are the {q} of Disease {f}?", "answer": f"Disease {f} answer {q}."})
    return recs


def test_items_are_fixed_split_by_focus_and_hide_every_page_of_a_hidden_focus():
    recs = _records(400)
    dev, dev_hidden = mq.choose_items(recs, "dev", per_half=20)
    test, test_hidden = mq.choose_items(recs, "test", per_half=20)
    assert (dev, dev_hidden) == mq.choose_items(recs, "dev", per_half=20)  # fixed
    assert mq.choose_items(recs, "dev", per_half=20, seed=5) != (dev, dev_hidden)  # the seed matters
    assert {it.focus for it in dev}.isdisjoint({it.focus for it in test})  # a focus is in one split only
    for items, hidden in ((dev, dev_hidden), (test, test_hidden)):
        answerable = [it for it in items if it.answerable]
        unanswerable = [it for it in items if not it.answerable]
        assert len(answerable) == len(unanswerable) == 20 and len({it.focus for it in items}) == 40
        assert not any(it.id in hidden for it in answerable)
        for it in unanswerable:  # every page on the focus is hidden, and only those
            pages = {mq.kb_doc_id(r) for r in recs if r["focus"] == it.focus}
            assert it.id in pages and pages <= hidden
        assert len(hidden) == 3 * 20
    with pytest.raises(click.ClickException, match="foci"):
        mq.choose_items(recs[:30], "dev", per_half=20)


def test_the_real_mirror_splits_by_focus():
    from assistant.settings import Settings
    from tests.shared_data import kb_mirror_dir

    mirror = kb_mirror_dir(Settings(_env_file=None))
    if not (mirror / "medquad").exists():
        pytest.skip("needs the shared KB mirror (EVIDENTIA_KB_MIRROR_DIR)")
    recs = mq.load_records(mirror)
    assert len(recs) == 16_407
    splits = {}
    for r in recs:
        splits.setdefault(mq.focus_key(r), set()).add(mq.split_of(mq.focus_key(r)))
    assert all(len(s) == 1 for s in splits.values())
    dev_share = sum(s == {"dev"} for s in splits.values()) / len(splits)
    assert 0.4 < dev_share < 0.6


# -- records and figures ---------------------------------------------------------------------------------------
def _result(cited: list[str], *, status="verified", abstained=False, answer=""):
    led = EvidenceLedger()
    led.add_sentence("Gout is a kind of arthritis.", source="Gout — NIAMS: What is gout?", doc_id="medquad:g#1")
    led.add_sentence("Gout attacks are treated with NSAIDs.", source="Gout — GARD: How to treat gout?",
                     doc_id="medquad:g#2")
    led.add_sentence("Lupus is an autoimmune disease.", source="Lupus — NIAMS: What is lupus?", doc_id="medquad:l#1")
    return SimpleNamespace(evidence=led.items(), cited=cited, status=status, abstained=abstained, answer=answer)


def _item(answerable=True):
    return mq.Item(id="medquad:g#1", question="What is gout?", focus="Gout", qtype="information",
                   answerable=answerable, gold_answer="Gout is a kind of arthritis that causes pain.")


def test_a_record_says_whether_the_gold_page_or_its_focus_was_cited():
    rec = mq.record_of(_result(["S1"], answer="Gout is a kind of arthritis [S1]."), _item(), 2.0)
    assert rec["gold_cited"] and rec["focus_cited"] and not rec["abstained"] and mq.is_right(rec)
    assert rec["rouge_l"] > 0.5
    other = mq.record_of(_result(["S2"]), _item(), 2.0)  # same focus, another page
    assert not other["gold_cited"] and other["focus_cited"] and not mq.is_right(other)
    off = mq.record_of(_result(["S3"]), _item(), 2.0)
    assert not off["gold_cited"] and not off["focus_cited"]
    hidden = mq.record_of(_result([], status="no_evidence", abstained=True), _item(answerable=False), 2.0)
    assert hidden["abstained"] and mq.is_right(hidden)
    padded = mq.record_of(_result(["S3"]), _item(answerable=False), 2.0)  # answered with something else: wrong
    assert not mq.is_right(padded)


def test_the_figures_from_records():
    def rec(answerable, abstained, gold, rouge=0.0):
        return {"answerable": answerable, "abstained": abstained, "gold_cited": gold, "focus_cited": gold,
                "rouge_l": rouge, "status": "x", "seconds": 10.0}

    records = [rec(True, False, True, 0.5), rec(True, False, False, 0.1), rec(True, True, False),
               rec(False, True, False), rec(False, False, False)]
    figures = mq.summarise(records)
    assert figures["accuracy"] == pytest.approx(2 / 5)
    assert figures["gold_cited_answerable"] == pytest.approx(1 / 3)
    assert figures["rouge_l_answerable"] == pytest.approx(0.6 / 3)  # an abstention scores 0
    assert figures["abstain_rate_unanswerable"] == pytest.approx(1 / 2)
    assert figures["abstain_rate_answerable"] == pytest.approx(1 / 3)


def test_the_runs_kb_adds_gold_pages_and_hides_pages_in_a_copy_and_the_users_kb_is_unchanged(tmp_path):
    from assistant.settings import Settings
    from kb.embeddings import Embedder
    from kb.ingest import Document
    from kb.text_store import TextStore

    settings = Settings(_env_file=None, data_dir=tmp_path / "data")
    embedder = Embedder(settings.embedding_model)
    recs = _records(2)  # Disease 0 and Disease 1, three pages each
    ids = [mq.kb_doc_id(r) for r in recs]
    user_kb = TextStore(settings.kb_dir / "text", embedder=embedder)
    user_kb.add_documents([Document(doc_id=ids[0], text="Disease 0 answer 0.", source="Disease 0"),
                           Document(doc_id=ids[3], text="Disease 1 answer 0.", source="Disease 1")],
                          collection="medquad", show_progress=False)
    user_kb.close()
    gold = mq.Item(id=ids[1], question="q", focus="Disease 0", qtype="", answerable=True, gold_answer="")
    hidden_item = mq.Item(id=ids[4], question="q", focus="Disease 1", qtype="", answerable=False, gold_answer="")
    said: list[str] = []
    path = mq.eval_kb(settings, recs, [gold, hidden_item], set(ids[3:]), "dev", echo=said.append)
    assert mq.medquad_docs_in_kb(TextStore(path, embedder=embedder)) == {ids[0], ids[1]}  # gold added, focus 1 hidden
    again = TextStore(settings.kb_dir / "text", embedder=embedder)
    assert mq.medquad_docs_in_kb(again) == {ids[0], ids[3]}  # the user's KB as it was
    assert any("adding 1 gold pages, hiding every page on 1 foci" in s for s in said)
    said.clear()
    assert mq.eval_kb(settings, recs, [gold, hidden_item], set(ids[3:]), "dev", echo=said.append) == path
    assert not said  # made once
    mq.eval_kb(settings, recs, [gold], set(), "dev", echo=said.append)  # other items: made again
    assert mq.medquad_docs_in_kb(TextStore(path, embedder=embedder)) == {ids[0], ids[1], ids[3]}


def test_recompute_scores_the_published_records_again(tmp_path):
    from assistant.evals.recompute import MISMATCH, OK, recompute_medquad

    def rec(answerable, abstained, gold):
        return {"answerable": answerable, "abstained": abstained, "gold_cited": gold, "focus_cited": gold,
                "rouge_l": 0.3 if gold else 0.0, "status": "x", "seconds": 1.0}

    per_item = {"a": rec(True, False, True), "b": rec(True, False, False), "c": rec(False, True, False)}
    base = {"a": rec(True, False, False), "b": rec(True, False, True), "c": rec(False, False, False)}
    report = {"item_ids": ["a", "b", "c"], "per_item": per_item, "baseline_per_item": {"top-sentence baseline": base},
              "variants": {"default": mq.summarise(list(per_item.values())),
                           "top-sentence baseline": mq.summarise(list(base.values()))}}
    assert recompute_medquad("medquad", report).status == OK
    report["variants"]["default"]["accuracy"] = 0.9  # a typed-in figure is caught
    assert recompute_medquad("medquad", report).status == MISMATCH
    report["variants"]["default"]["accuracy"] = mq.summarise(list(per_item.values()))["accuracy"]
    report["variants"]["top-sentence baseline"]["abstain_rate_unanswerable"] = 1.0
    assert recompute_medquad("medquad", report).status == MISMATCH
