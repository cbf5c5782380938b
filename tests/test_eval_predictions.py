"""Per-item predictions of the MedQA, OBQA and PubMedQA reports (#75): the runners publish them, and
``evidentia eval recompute`` gives every accuracy and baseline figure again from them and the benchmark's gold."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from assistant.evals.kg_eval import load_benchmark, mc_predictions  # noqa: E402
from assistant.evals.pubmedqa_eval import ABSTAINED, load_questions, per_item, summarise  # noqa: E402
from assistant.evals.recompute import MISMATCH, NO_LOG, OK, recompute_report  # noqa: E402
from assistant.evals.report import DOCS_DIR, fallback_scores, label_baselines  # noqa: E402
from assistant.evals.retrieval_eval import MC_FILES, load_mc  # noqa: E402
from tests.fake_openai import Reply  # noqa: E402
from tests.shared_data import EVAL_DATA, KB_DATA  # noqa: E402

needs_eval_data = pytest.mark.skipif(not EVAL_DATA.exists(), reason=f"benchmark data not found at {EVAL_DATA}")
needs_kb_data = pytest.mark.skipif(not (KB_DATA / "pubmedqa" / "ori_pqal.json").exists(),
                                   reason=f"PubMedQA not found under {KB_DATA}")


def write_report(tmp_path: Path, name: str, report: dict) -> Path:
    path = tmp_path / "eval" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report))
    return path


def changed(path: Path, change) -> Path:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    return path


def wrong_letter(item: dict) -> str:
    return next(lab for lab in item["options"] if lab != item["answer"])


def mc_report(items: list[dict], count_key: str, tmp_path: Path, name: str) -> Path:
    """A report as the multiple-choice runners write it, for log records made up over real items: variant "x" right
    on all but the last two (one of them a right fallback), "y" always the first option."""
    records = {
        "x": [{"id": it["id"], "pred": it["answer"] if k < len(items) - 2 or k == len(items) - 1 else
               wrong_letter(it), "judge_failed": k == len(items) - 1} for k, it in enumerate(items)],
        "y": [{"id": it["id"], "pred": next(iter(it["options"])), "judge_failed": False} for it in items],
    }
    gold = {it["id"]: it["answer"] for it in items}
    for recs in records.values():
        for r in recs:
            r["correct"] = r["pred"] == gold[r["id"]]
    variants = {v: {**fallback_scores(recs), count_key: len(recs)} for v, recs in records.items()}
    report = {"benchmark": name, "items": len(items), "variants": variants, "item_ids": [it["id"] for it in items],
              **label_baselines([it["answer"] for it in items], [next(iter(it["options"])) for it in items]),
              **mc_predictions(records)}
    if count_key == "llm_items":
        report["llm_items"] = len(items)
    return write_report(tmp_path, name, report)


def flip_a_right_one(path: Path, items: list[dict], variant: str = "x") -> str:
    """Makes one right prediction of ``variant`` wrong; returns its item id."""
    right = next(it for it in items if json.loads(path.read_text())["predictions"][variant][it["id"]] == it["answer"])
    changed(path, lambda d: d["predictions"][variant].__setitem__(right["id"], wrong_letter(right)))
    return right["id"]


@needs_eval_data
def test_a_medqa_report_recomputes_from_its_letters_and_a_flipped_letter_is_a_mismatch(tmp_path):
    items = load_benchmark(EVAL_DATA, "medqa")[100:108]
    path = mc_report(items, "llm_items", tmp_path, "medqa")
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert result.status == OK, result.mismatches()
    checked = {(r.variant, r.metric) for r in result.rows if r.ok}
    assert {("x", "accuracy"), ("x", "accuracy_with_fallback"), ("x", "judge_failed_rate"), ("x", "llm_items"),
            ("y", "accuracy"), ("", "majority_baseline"), ("", "first_option_baseline"), ("", "llm_items")} <= checked

    flip_a_right_one(path, items)
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert result.status == MISMATCH
    assert {(r.variant, r.metric) for r in result.mismatches()} == {("x", "accuracy"), ("x", "accuracy_with_fallback")}


@needs_eval_data
def test_a_fallback_left_out_of_the_obqa_report_is_a_mismatch_of_accuracy_only(tmp_path):
    items = load_mc(EVAL_DATA / MC_FILES["obqa"])[:7]
    path = mc_report(items, "n", tmp_path, "obqa")
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert result.status == OK, result.mismatches()
    assert {("x", "n"), ("y", "accuracy"), ("", "constant_label_baselines[A]")} <= {
        (r.variant, r.metric) for r in result.rows if r.ok}

    changed(path, lambda d: d["fallback_item_ids"].pop("x"))  # the fallback's right letter now counts as the model's
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert {(r.variant, r.metric) for r in result.mismatches()} == {("x", "accuracy"), ("x", "judge_failed_rate")}

    path = mc_report(items, "n", tmp_path, "obqa")
    flip_a_right_one(path, items, "y")
    assert {(r.variant, r.metric) for r in recompute_report(path, EVAL_DATA, KB_DATA).mismatches()} == {
        ("y", "accuracy"), ("y", "accuracy_with_fallback")}


@needs_eval_data
def test_a_prediction_outside_the_item_ids_or_a_changed_baseline_is_a_mismatch(tmp_path):
    items = load_mc(EVAL_DATA / MC_FILES["obqa"])[:7]
    path = mc_report(items, "n", tmp_path, "obqa")
    changed(path, lambda d: d.__setitem__("item_ids", d["item_ids"][:-1]))  # the baselines' items lose one
    wrong = {r.metric for r in recompute_report(path, EVAL_DATA, KB_DATA).mismatches()}
    assert "predictions outside item_ids" in wrong and "baseline_items" in wrong

    path = mc_report(items, "n", tmp_path, "obqa")
    changed(path, lambda d: d["item_ids"].__setitem__(0, "no-such-question"))
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert result.status == MISMATCH and result.rows[0].metric == "item_ids in the benchmark data"


def pubmedqa_records(data: dict[str, dict], ids: list[str], answerable: int) -> list[dict]:
    """Made-up turns over real PubMedQA ids: the first ``answerable`` have their abstract in the KB."""
    records = []
    for k, pmid in enumerate(ids):
        gold = data[pmid]["final_decision"]
        other = "no" if gold == "yes" else "yes"
        abstained = k in (2, answerable + 1)  # one abstention in each half
        pred = None if abstained else (gold if k % 2 == 0 else other)
        records.append({"id": pmid, "answerable": k < answerable, "gold": gold, "pred": pred, "abstained": abstained,
                        "correct": pred == gold and not abstained, "pred_model": gold,
                        "correct_model": not abstained, "cited_sentences": 1, "cited_from_gold": 1,
                        "retrieved_gold": True, "status": "verified", "support_flagged": 0, "seconds": 1.0})
    return records


def pubmedqa_report(records: list[dict], tmp_path: Path) -> Path:
    """The report as run_pubmedqa writes it, from those records."""
    items = [{"id": r["id"], "answerable": r["answerable"]} for r in records]
    golds = [r["gold"] for r in records if r["answerable"]]
    variants = {"default": summarise(records), "model-verdict-slot": summarise(records, correct_key="correct_model")}
    report = {"benchmark": "pubmedqa", "items": len(records), "variants": variants, **label_baselines(golds),
              "yes_baseline": sum(g == "yes" for g in golds) / len(golds), **per_item(records, items, list(variants))}
    return write_report(tmp_path, "pubmedqa", report)


@needs_kb_data
def test_a_pubmedqa_report_recomputes_from_its_verdicts_and_a_flipped_one_is_a_mismatch(tmp_path):
    data = load_questions(KB_DATA)
    ids = random.Random(0).sample(sorted(data), 10)
    path = pubmedqa_report(pubmedqa_records(data, ids, answerable=6), tmp_path)
    report = json.loads(path.read_text())
    assert report["predictions"]["default"][ids[2]] == ABSTAINED and len(report["item_ids"]) == 6
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert result.status == OK, result.mismatches()
    assert {("default", "accuracy"), ("default", "refrain_accuracy"), ("default", "abstain_rate_unanswerable"),
            ("model-verdict-slot", "accuracy"), ("model-verdict-slot", "accuracy_when_answered"),
            ("", "majority_baseline"), ("", "yes_baseline"), ("", "items")} <= {
        (r.variant, r.metric) for r in result.rows if r.ok}

    right = next(i for i in report["item_ids"] if report["predictions"]["default"][i] == data[i]["final_decision"])
    changed(path, lambda d: d["predictions"]["default"].__setitem__(right, "maybe" if d["predictions"]["default"][right]
                                                                     != "maybe" else "yes"))
    result = recompute_report(path, EVAL_DATA, KB_DATA)
    assert result.status == MISMATCH
    assert {(r.variant, r.metric) for r in result.mismatches()} == {("default", "accuracy"),
                                                                    ("default", "accuracy_when_answered")}

    path = pubmedqa_report(pubmedqa_records(data, ids, answerable=6), tmp_path)
    changed(path, lambda d: d["unanswerable_predictions"].__setitem__(ids[7], "yes"))  # abstained there, said not to
    assert {r.metric for r in recompute_report(path, EVAL_DATA, KB_DATA).mismatches()} == {
        "abstain_rate_unanswerable", "refrain_accuracy"}


@pytest.mark.parametrize("name", ["medqa", "obqa", "pubmedqa"])
def test_the_committed_reports_without_predictions_still_have_no_per_item_log(name, tmp_path):
    result = recompute_report(DOCS_DIR / "eval" / f"{name}.json", tmp_path, tmp_path)  # no data read
    assert result.status == NO_LOG and "predictions" in result.missing


# -- the runners publish them -----------------------------------------------------------------------------------
def test_the_medqa_runner_publishes_the_letters_its_accuracy_counts(tmp_path, fake_llm_server):
    from assistant.evals.kg_eval import run_medical
    from tests.test_kg_eval import _medqa_settings

    def judge(request):  # the Parkinson question gets unusable output (the fallback picks), the rest "A"
        if "Parkinson" in request["messages"][-1]["content"]:
            return Reply(content="not an answer")
        return Reply(content=json.dumps({"answer": "A", "evidence": [], "confidence": "high"}))

    with fake_llm_server(judge) as srv:
        settings = _medqa_settings(tmp_path, srv.base_url)
        path = run_medical("medqa", limit=3, variants=["no-retrieval"], subset=400, chains=False, rates=False,
                           settings=settings, docs_dir=tmp_path / "docs")
    report = json.loads(path.read_text())
    assert report["item_ids"] == ["q1", "q2", "q3"]
    assert report["predictions"] == {"no-retrieval": {"q1": "A", "q2": "A", "q3": "A"}}
    assert report["fallback_item_ids"] == {"no-retrieval": ["q1"]}
    row = report["variants"]["no-retrieval"]
    assert (row["accuracy"], row["accuracy_with_fallback"]) == (1 / 3, 2 / 3)
    result = recompute_report(path, settings.eval_data_dir, tmp_path)
    assert result.status == OK, result.mismatches()
    assert {("no-retrieval", "accuracy"), ("", "first_option_baseline")} <= {(r.variant, r.metric)
                                                                             for r in result.rows if r.ok}


def obqa_data(tmp_path: Path) -> Path:
    data = tmp_path / "eval-data" / "openbookqa"
    data.mkdir(parents=True)
    (data / "openbook.txt").write_text('"A bee is a pollinating animal."\n"Metals conduct electricity."\n')
    qs = [("q1", "Which animal pollinates flowers?", "A"), ("q2", "What conducts electricity?", "B"),
          ("q3", "What is a bee?", "A"), ("q4", "What is not a metal?", "B")]
    (data / "test.jsonl").write_text("\n".join(json.dumps(
        {"id": i, "question": {"stem": q, "choices": [{"label": "A", "text": "a bee"}, {"label": "B", "text": "metal"}]},
         "answerKey": a}) for i, q, a in qs) + "\n")
    return tmp_path / "eval-data"


def test_the_obqa_runner_publishes_its_letters_and_keeps_an_earlier_variant_marked(tmp_path, fake_llm_server):
    from assistant.evals.retrieval_eval import run_answer_eval
    from assistant.settings import Settings

    docs = tmp_path / "docs"
    (docs / "eval").mkdir(parents=True)
    shutil.copy(DOCS_DIR / "eval" / "obqa.json", docs / "eval" / "obqa.json")  # published without predictions

    def judge(request):  # always "A"
        return Reply(content=json.dumps({"answer": "A", "evidence": [], "confidence": "high"}))

    eval_dir = obqa_data(tmp_path)
    with fake_llm_server(judge) as srv:
        settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_base_url=srv.base_url,
                            llm_model="fake-model", llm_max_retries=0, llm_timeout_s=60, eval_data_dir=eval_dir,
                            mc_decider="judge")
        run_answer_eval(settings, "obqa", retrievers=["bm25"], limit=3, chains=False, docs_dir=docs)
    report = json.loads((docs / "eval" / "obqa.json").read_text())
    assert report["item_ids"] == ["q1", "q2", "q3"] and report["baseline_items"] == 3
    assert report["predictions"] == {"bm25": {"q1": "A", "q2": "A", "q3": "A"}}
    assert report["variants"]["bm25"]["accuracy"] == 2 / 3 and "from_earlier_run" not in report["variants"]["bm25"]
    assert report["variants"]["fused"]["from_earlier_run"]  # kept from the committed report, without predictions
    result = recompute_report(docs / "eval" / "obqa.json", eval_dir, tmp_path)
    assert result.status == OK, result.mismatches()
    assert ("bm25", "accuracy") in {(r.variant, r.metric) for r in result.rows if r.ok}
    assert all(r.ok is None for r in result.rows if r.variant == "fused")

    # A later run on other items keeps bm25's predictions, and the baselines cover their items too.
    with fake_llm_server(judge) as srv:
        settings = settings.model_copy(update={"llm_base_url": srv.base_url})
        run_answer_eval(settings, "obqa", retrievers=["cosine"], limit=1, chains=False, docs_dir=docs)
    report = json.loads((docs / "eval" / "obqa.json").read_text())
    assert report["item_ids"] == ["q1", "q2", "q3"] and report["predictions"]["cosine"] == {"q1": "A"}
    assert report["predictions"]["bm25"] == {"q1": "A", "q2": "A", "q3": "A"}
    assert recompute_report(docs / "eval" / "obqa.json", eval_dir, tmp_path).status == OK


def test_the_pubmedqa_runner_publishes_the_verdicts_its_accuracy_counts(tmp_path, monkeypatch):
    """The report from logged turns (a turn runs the whole chat loop: too many scripted replies to fake here, so
    the log holds them already and nothing is asked)."""
    from assistant.evals import pubmedqa_eval
    from assistant.evals.report import ResultsLog
    from assistant.settings import Settings
    from kb.text_store import TextStore

    mirror = tmp_path / "kb-data"
    (mirror / "pubmedqa").mkdir(parents=True)
    data = {str(1000 + i): {"QUESTION": f"Does drug {i} work?", "final_decision": ["yes", "no", "maybe"][i % 3],
                            "CONTEXTS": ["An abstract."]} for i in range(400)}
    (mirror / "pubmedqa" / "ori_pqal.json").write_text(json.dumps(data))
    in_kb = {str(1000 + i) for i in range(200)}
    monkeypatch.setattr(pubmedqa_eval, "pmids_in_kb", lambda store: in_kb)
    monkeypatch.setattr(TextStore, "is_empty", property(lambda self: False))
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_base_url="http://127.0.0.1:9/v1",
                        llm_model="fake-model", kb_mirror_dir=mirror)
    items = pubmedqa_eval.limited(pubmedqa_eval.choose_items(data, in_kb), 3)
    log = ResultsLog(settings.data_dir / "eval" / "pubmedqa-answers.jsonl")
    for k, item in enumerate(items):
        abstained = k in (1, 4)
        pred = None if abstained else (item["gold"] if k != 2 else "maybe" if item["gold"] != "maybe" else "no")
        log.add("default", item["id"], **{**pubmedqa_records(data, [item["id"]], 1)[0],
                                          "answerable": item["answerable"], "pred": pred, "abstained": abstained,
                                          "correct": pred == item["gold"], "correct_model": not abstained,
                                          "pred_rule": "yes",
                                          "correct_rule": item["gold"] == "yes" and not abstained})

    pubmedqa_eval.run_pubmedqa(settings, limit=3, docs_dir=tmp_path / "docs")
    path = tmp_path / "docs" / "eval" / "pubmedqa.json"
    report = json.loads(path.read_text())
    answerable = [it["id"] for it in items if it["answerable"]]
    assert report["item_ids"] == answerable
    assert report["unanswerable_item_ids"] == [it["id"] for it in items if not it["answerable"]]
    assert set(report["predictions"]) == {"default", "rule-only", "model-verdict-slot"}
    assert report["predictions"]["default"][answerable[1]] == ABSTAINED
    assert set(report["predictions"]["rule-only"].values()) <= {"yes", ABSTAINED}
    assert "Does drug" not in json.dumps({k: report[k] for k in ("predictions", "unanswerable_predictions")})
    result = recompute_report(path, tmp_path, mirror)
    assert result.status == OK, result.mismatches()
    assert {("default", "accuracy"), ("rule-only", "accuracy"), ("default", "refrain_accuracy"),
            ("", "yes_baseline")} <= {(r.variant, r.metric) for r in result.rows if r.ok}
