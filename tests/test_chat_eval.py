"""The gold-scored chat bench (#75): replies checked by code against gold strings, halves fixed by seed."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from assistant.evals import chat_eval as ev
from assistant.evals.recompute import recompute_chat

Q = ev.Question("q1", "c1", "Where are most chloroplasts found in a plant?", ("leaves", "leaf"), "OpenBookQA fact")
NONE = ev.Question("q2", "c2", "How many moons does Mars have?", (), "no KB sentence names Mars's moons")


@pytest.mark.parametrize("answer, named", [
    ("Most chloroplasts are found in the **leaves** of a plant [S3].", True),
    ("In the leaf [S1:2].", True),
    ("They are found in leaflets [S3].", False),  # a whole phrase, not a part of a word
    ("In the stems [S2].", False),
])
def test_a_gold_answer_is_named_as_a_whole_phrase(answer, named):
    assert ev.names_answer(answer, Q.answers) is named


def test_right_means_grounded_and_naming_or_abstaining_where_the_kb_has_nothing():
    assert ev.score_reply(Q, "verified", "In the leaves [S1].")
    assert ev.score_reply(Q, "cited_by_code", "leaves [P1]")
    assert not ev.score_reply(Q, "unverified", "In the leaves.")  # named, but not grounded
    assert not ev.score_reply(Q, "no_evidence", "The knowledge base does not say.")
    assert ev.score_reply(NONE, "no_evidence", "The knowledge base does not say.")
    assert not ev.score_reply(NONE, "verified", "Mars has two moons [S4].")  # nothing in the KB can ground that


def test_the_gold_file_has_enough_questions_of_both_kinds_and_halves_fixed_by_seed():
    questions = ev.load_questions()
    assert len(questions) >= 60 and len({q.id for q in questions}) == len(questions)
    assert sum(not q.answerable for q in questions) >= 12 and all(q.why for q in questions)
    test, dev = ev.split_questions(questions, "test"), ev.split_questions(questions, "dev")
    assert len(test) + len(dev) == len(questions) and not {q.id for q in test} & {q.id for q in dev}
    assert not {q.conversation for q in test} & {q.conversation for q in dev}  # follow-ups stay with their turn
    assert ev.split_questions(questions, "test") == test and sum(not q.answerable for q in test) >= 6


def test_the_figures_and_the_baseline():
    rows = [{"answerable": True, "status": "verified", "right": True, "citations_valid": True, "seconds": 10},
            {"answerable": True, "status": "no_evidence", "right": False, "citations_valid": True, "seconds": 20},
            {"answerable": False, "status": "no_evidence", "right": True, "citations_valid": True, "seconds": 30},
            {"answerable": False, "status": "verified", "right": False, "citations_valid": False, "seconds": 40}]
    s = ev.summarize(rows)
    assert (s["accuracy"], s["answered_right"], s["abstention_recall"], s["abstention_precision"]) == (0.5, 0.5, 0.5,
                                                                                                        0.5)
    assert s["citation_valid"] == 0.75 and s["median_turn_s"] == 25

    class Store:
        def hits(self, rows):
            return [SimpleNamespace(text="most chloroplasts are found in the leaves of a plant")]

    import tools.text_search

    ranked = SimpleNamespace(rows=np.array([3]))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tools.text_search, "rank_kb", lambda store, q, k: ranked)
        base = ev.baseline_rows([Q, NONE], Store())
    assert [r["right"] for r in base] == [True, False]  # the top sentence never abstains


def test_recompute_scores_the_logged_replies_again():
    gold = next(q for q in ev.load_questions() if q.answerable)
    logged = {"status": "verified", "answer": f"It is {gold.answers[0]} [S1].", "citations_valid": True, "seconds": 1.0}
    figures = ev.summarize([{"answerable": True, "status": "verified", "right": True, "citations_valid": True,
                             "seconds": 1.0}])
    report = {"variants": {"default": {k: v for k, v in figures.items() if v is not None}},
              "per_item": {gold.id: logged}}
    assert recompute_chat("chat", report).status == "ok"
    report["per_item"][gold.id] = {**logged, "answer": "Something else entirely [S1]."}  # a reply that is wrong now
    result = recompute_chat("chat", report)
    assert result.status == "mismatch" and "accuracy" in {r.metric for r in result.mismatches()}
