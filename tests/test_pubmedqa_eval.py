"""The PubMedQA evaluation's item choice and metrics (#14), on hand-made records (no model)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from assistant.evals.pubmedqa_eval import HALF, choose_items, limited, record_of, summarise
from tools.contracts import EvidenceLedger


def _data(n: int) -> dict:
    return {str(1000 + i): {"QUESTION": f"Does drug {i} work?", "final_decision": ["yes", "no", "maybe"][i % 3]}
            for i in range(n)}


def test_the_items_are_fixed_seeded_and_split_by_kb_membership():
    data = _data(600)
    in_kb = {str(1000 + i) for i in range(200)}
    items = choose_items(data, in_kb)
    assert items == choose_items(data, in_kb)  # fixed
    answerable = [it for it in items if it["answerable"]]
    unanswerable = [it for it in items if not it["answerable"]]
    assert len(answerable) == len(unanswerable) == HALF
    assert all(it["id"] in in_kb for it in answerable) and not any(it["id"] in in_kb for it in unanswerable)
    assert len({it["id"] for it in items}) == 2 * HALF
    assert choose_items(data, in_kb, seed=1) != items  # the seed matters
    few = limited(items, 3)
    assert [it["answerable"] for it in few] == [True] * 3 + [False] * 3 and few[0] == answerable[0]


def test_too_few_abstracts_in_the_kb_is_a_clear_error():
    import click

    with pytest.raises(click.ClickException, match="kb build --default"):
        choose_items(_data(400), {"1000"})


def _result(*, verdict, cited, status="verified", abstained=False, model_verdict=None, required_answer=False,
            unnamed=(), rule_verdict=None, reading=None):
    led = EvidenceLedger()
    led.add_sentence("Own abstract sentence.", source="PubMed 1", doc_id="pubmed:1")
    led.add_sentence("Other abstract.", source="PubMed 2", doc_id="pubmed:2")
    led.add_path("A —treats→ B", triples=[("A", "treats", "B")], source="hetionet")
    return SimpleNamespace(evidence=led.items(), cited=cited, verdict=verdict, status=status, abstained=abstained,
                           model_verdict=model_verdict, required_answer=required_answer, support_flagged=0,
                           regenerated=False, guard_fired=False, first_try_valid=True,
                           pool={"pool": {"text": 2, "kg": 1}}, answer="", unnamed_subjects=list(unnamed),
                           rule_verdict=rule_verdict, reading=reading)


def test_a_record_counts_cited_sentences_from_the_gold_abstract_only():
    item = {"id": "1", "gold": "yes", "answerable": True}
    rec = record_of(_result(verdict="yes", cited=["S1", "S2", "P1"]), item, 3.0)
    assert (rec["cited_sentences"], rec["cited_from_gold"], rec["correct"], rec["abstained"]) == (2, 1, True, False)
    assert rec["retrieved_gold"]
    dna = record_of(_result(verdict=None, cited=["S2"], status="no_evidence", abstained=True), item, 1.0)
    assert dna["abstained"] and not dna["correct"] and not dna["correct_model"]
    off = record_of(_result(verdict=None, cited=["S2"], status="no_evidence", abstained=True, unnamed=["gout"]),
                    item, 1.0)
    assert off["unnamed_subjects"] == ["gout"] and rec["unnamed_subjects"] == []
    m = summarise([rec, off, {**off, "answerable": False}])
    assert (m["subject_check_fired_rate_answerable"], m["subject_check_fired_rate_unanswerable"]) == (0.5, 1.0)


def test_a_record_keeps_the_code_verdict_and_the_model_slot_apart():
    item = {"id": "1", "gold": "no", "answerable": True}
    rec = record_of(_result(verdict="no", model_verdict="yes", cited=["S1"], required_answer=True), item, 2.0)
    assert (rec["pred"], rec["correct"], rec["pred_model"], rec["correct_model"]) == ("no", True, "yes", False)
    assert rec["required_answer"]
    both = [rec, {**rec, "correct": False, "correct_model": True, "required_answer": False}]
    assert summarise(both)["accuracy"] == summarise(both, correct_key="correct_model")["accuracy"] == 0.5
    assert summarise([rec], correct_key="correct_model")["accuracy"] == 0.0
    assert summarise(both)["required_answer_rate_answerable"] == 0.5


def test_a_record_keeps_the_rules_verdict_before_the_models_reading():
    item = {"id": "1", "gold": "no", "answerable": True}
    turned = record_of(_result(verdict="no", rule_verdict="yes", reading={"yes": -0.9, "no": -1.5}, cited=["S1"]),
                       item, 2.0)
    assert (turned["correct"], turned["pred_rule"], turned["correct_rule"]) == (True, "yes", False)
    assert turned["reading"] == {"yes": -0.9, "no": -1.5}
    kept = record_of(_result(verdict="no", rule_verdict="no", cited=["S1"]), item, 2.0)
    assert summarise([turned, kept], correct_key="correct_rule")["accuracy"] == 0.5
    assert summarise([turned, kept])["accuracy"] == 1.0


def test_the_summary_metrics_on_hand_made_records():
    def rec(answerable, correct, abstained, cited=0, gold_cited=0, status="verified"):
        return {"answerable": answerable, "correct": correct, "abstained": abstained, "cited_sentences": cited,
                "cited_from_gold": gold_cited, "retrieved_gold": True, "status": status, "support_flagged": 0,
                "seconds": 10.0}

    records = [rec(True, True, False, 2, 2), rec(True, False, False, 2, 0), rec(True, False, True, 1, 1, "no_evidence"),
               rec(False, False, True, 1, 0, "no_evidence"), rec(False, False, False, 2, 0)]
    m = summarise(records)
    assert m["accuracy"] == pytest.approx(1 / 3)
    assert m["accuracy_when_answered"] == pytest.approx(1 / 2)
    assert m["citation_precision"] == pytest.approx(3 / 5)
    assert m["abstain_rate_answerable"] == pytest.approx(1 / 3)
    assert m["abstain_rate_unanswerable"] == pytest.approx(1 / 2)
    # right: answered answerable (2) + abstained unanswerable (1) = 3 of 5
    assert m["refrain_accuracy"] == pytest.approx(3 / 5)


def test_the_dev_items_never_overlap_the_test_items():
    from assistant.evals.pubmedqa_eval import dev_items

    data = _data(600)
    in_kb = {str(1000 + i) for i in range(170)}
    dev = dev_items(data, in_kb)
    test = {it["id"] for it in choose_items(data, in_kb)}
    assert not test & {it["id"] for it in dev}
    assert sum(it["answerable"] for it in dev) == 20 == sum(not it["answerable"] for it in dev)
    assert dev == dev_items(data, in_kb)
