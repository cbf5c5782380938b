"""The MedQA evaluation pipeline on a tiny KG with a scripted fake LLM (no real model, no DDB)."""

from __future__ import annotations

import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from assistant.settings import Settings  # noqa: E402
from kb.kg_loaders import read_csv_triples  # noqa: E402
from kb.kg_store import KGStore  # noqa: E402
from tests.fake_openai import Reply  # noqa: E402

TRIPLES = """head,relation,tail
levodopa,may_treat,Parkinson's disease
Parkinson's disease,may_cause,tremor
metformin,may_treat,type 2 diabetes
type 2 diabetes,may_cause,polyuria
"""
ITEMS = [
    {"id": "q1", "question": "A man has a resting tremor from Parkinson's disease. Which drug treats it?",
     "options": {"A": "levodopa", "B": "metformin"}, "answer": "A"},
    {"id": "q2", "question": "A woman with type 2 diabetes has polyuria. Which drug treats her disease?",
     "options": {"A": "levodopa", "B": "metformin"}, "answer": "B"},
    {"id": "q3", "question": "Which volcano erupted in 1883?", "options": {"A": "Krakatoa", "B": "Etna"},
     "answer": "A"},
]


import pytest  # noqa: E402


def _medqa_settings(tmp_path, base_url: str, timeout_s: float = 60) -> Settings:
    """Settings over a three-question MedQA file and the small disease KG, both in ``tmp_path``."""
    eval_dir = tmp_path / "eval-data"
    (eval_dir / "medqa").mkdir(parents=True, exist_ok=True)
    (eval_dir / "medqa" / "medqa_us_4opt_test.mirage.jsonl").write_text(
        "\n".join(json.dumps(i) for i in ITEMS) + "\n")
    settings = Settings(_env_file=None, data_dir=tmp_path / "data", llm_base_url=base_url, llm_model="fake-model",
                        llm_max_retries=0, llm_timeout_s=timeout_s, eval_data_dir=eval_dir)
    csv_path = tmp_path / "ddb.csv"
    csv_path.write_text(TRIPLES)
    KGStore(settings.kb_dir / "kg.db").replace_graph(read_csv_triples(csv_path, name="medqa-ddb"))
    return settings


def test_medqa_timeout_is_left_for_the_next_run(tmp_path, fake_llm_server):
    from assistant.evals.kg_eval import run_medical

    slow = {"first": True}

    def judge(request):
        if slow["first"]:
            slow["first"] = False
            return Reply(content="{}", delay_s=2.5)  # outlives the 1 s timeout
        return Reply(content=json.dumps({"answer": "A", "evidence": [], "confidence": "high"}))

    with fake_llm_server(judge) as srv:
        settings = _medqa_settings(tmp_path, srv.base_url, timeout_s=1)
        run = dict(limit=3, variants=["no-retrieval"], subset=400, chains=False, rates=False, settings=settings,
                   docs_dir=tmp_path / "docs")
        first = json.loads(run_medical("medqa", **run).read_text())
        assert first["variants"]["no-retrieval"]["llm_items"] == 2  # the timed-out one is not counted wrong
        again = json.loads(run_medical("medqa", **run).read_text())
    assert again["variants"]["no-retrieval"]["llm_items"] == 3 and again["variants"]["no-retrieval"]["accuracy"] == 2 / 3


@pytest.mark.parametrize("concurrency", [1, 3])
def test_medqa_eval_end_to_end_with_fake_llm(tmp_path, fake_llm_server, concurrency):
    from assistant.evals.kg_eval import THESIS, run_medical

    def judge(request):  # always answers A and cites the first path it was shown, if any
        prompt = request["messages"][-1]["content"]
        cite = ["P1"] if "P1" in prompt else []
        return Reply(content=json.dumps({"answer": "A", "evidence": cite, "confidence": "high"}))

    with fake_llm_server(judge) as srv:  # the server only serves inside the with block
        settings = _medqa_settings(tmp_path, srv.base_url)

        path = run_medical("medqa", limit=3, variants=["full", "no-filter", "gcn", "cosine", "no-retrieval"], subset=400,
                           chains=False, rates=True, settings=settings, docs_dir=tmp_path / "docs",
                           concurrency=concurrency)
        report = json.loads(path.read_text())
        assert report["items"] == 3
        variants = report["variants"]
        assert set(variants) == {"full", "no-filter", "gcn", "cosine", "no-retrieval"}
        for name, row in variants.items():
            assert row["accuracy"] == 2 / 3  # the fake always says A: right on q1 and q3
            assert row["llm_items"] == 3
            assert row.get("thesis_accuracy_qwen2.5_72b") == (THESIS["medqa"][name] / 100 if name != "cosine" else None)
        # the untrained cosine scoring is compared with the GAT's kept nodes on the linked questions
        assert 1 <= variants["cosine"]["kept_overlap_items"] <= 2  # q1, q2 (if the GAT kept any node)
        assert 0 <= variants["cosine"]["kept_jaccard_with_full"] <= variants["cosine"]["kept_overlap_with_full"] <= 1
        assert "kept_overlap_with_full" not in variants["full"]
        # q1 and q2 link (levodopa/metformin/diseases), the volcano question links nothing
        assert variants["full"]["linked_rate"] == 2 / 3
        assert variants["full"]["path_rate"] == 2 / 3
        assert variants["no-retrieval"]["path_rate"] == 0.0
        assert variants["full"]["mean_path_length"] >= 1
        # the paths alone: q1's and q2's options are both drug nodes the question's disease connects to
        assert variants["full"]["kg_only_items"] == 3 and 0 <= variants["full"]["kg_only_accuracy"] <= 1
        assert variants["no-filter"]["gold_reached_rate"] == 2 / 3  # both linked questions reach their gold drug
        assert (tmp_path / "docs" / "eval" / "medqa.png").exists()
        # the judge always worked here: no fallback, so both accuracies agree; baselines from the gold labels
        assert variants["full"]["judge_failed_rate"] == 0.0 and variants["full"]["accuracy_with_fallback"] == 2 / 3
        assert report["majority_baseline"] == 2 / 3 and report["majority_label"] == "A"
        assert report["first_option_baseline"] == 2 / 3 and report["baseline_items"] == 3
        # a later rates-only run (--limit 0) keeps the logged accuracy and asks the model nothing
        n_requests = len(srv.requests)
        again = json.loads(run_medical("medqa", limit=0, variants=["full", "no-filter", "gcn", "cosine", "no-retrieval"],
                                       subset=400, chains=False, rates=True, settings=settings,
                                       docs_dir=tmp_path / "docs").read_text())
        assert len(srv.requests) == n_requests and again["variants"]["full"]["accuracy"] == 2 / 3
        assert again["llm_items"] == 3 and set(again["paired"]) == {"full vs no-filter", "full vs gcn",
                                                                     "full vs cosine", "full vs no-retrieval"}
        # the judge saw the paths as numbered evidence in the retrieval variants only
        prompts = [r["messages"][-1]["content"] for r in srv.requests]
        assert sum("P1" in p for p in prompts) >= 2


def test_kg_only_choice_prefers_the_best_scored_path_then_the_shortest():
    from assistant.evals.kg_eval import kg_only_choice

    labels = ["A", "B", "C", "D"]
    scored = {"A": {"paths": 2, "best": 0.4, "shortest": 1}, "C": {"paths": 1, "best": 0.7, "shortest": 3}}
    assert kg_only_choice(scored, labels) == ["C"]
    unscored = {"A": {"paths": 2, "best": None, "shortest": 2}, "B": {"paths": 1, "best": None, "shortest": 1},
                "D": {"paths": 1, "best": None, "shortest": 1}}
    assert kg_only_choice(unscored, labels) == ["B", "D"]  # a tie stays a tie
    assert kg_only_choice({}, labels) == labels  # no path: nothing is favoured
    assert kg_only_choice({"A": {"paths": 0, "best": None, "shortest": None}}, labels) == labels


def test_kg_only_summary_counts_reached_options_and_expected_accuracy():
    from assistant.evals.kg_eval import kg_only_summary

    items = {"q1": {"options": {"A": "a", "B": "b"}, "answer": "A"},
             "q2": {"options": {"A": "a", "B": "b"}, "answer": "B"},
             "q3": {"options": {"A": "a", "B": "b"}, "answer": "A"}}
    records = [
        {"id": "q1", "options": {"A": {"paths": 1, "best": 0.9, "shortest": 1}}},  # right
        {"id": "q2", "options": {"A": {"paths": 1, "best": 0.9, "shortest": 1},
                                 "B": {"paths": 1, "best": 0.2, "shortest": 1}}},  # wrong
        {"id": "q3", "options": {}},  # no path: a coin toss, 0.5 expected
        {"id": "q9", "options": {}},  # not in the subset
        {"id": "q1", "paths": 3},  # an old record without per-option fields is left out
    ]
    out = kg_only_summary(records, items)
    assert out["kg_only_items"] == 3
    assert out["kg_only_accuracy"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert out["gold_reached_rate"] == pytest.approx(2 / 3)
    assert out["distractor_reached_rate"] == pytest.approx(1 / 3)  # q2's A, of three distractors
    assert kg_only_summary([], items) == {}


def test_kept_overlap_compares_with_the_gats_kept_nodes():
    from assistant.evals.kg_eval import kept_overlap

    full = [{"id": "q1", "kept": [1, 2, 3, 4]}, {"id": "q2", "kept": [5, 6]}, {"id": "q3", "kept": []}]
    cos = [{"id": "q1", "kept": [1, 2, 9]}, {"id": "q2", "kept": [5, 6]}, {"id": "q3", "kept": [7]},
           {"id": "q4", "kept": [1]}, {"id": "q1-old"}]
    out = kept_overlap(cos, full)
    assert out["kept_overlap_items"] == 2  # q3: full kept nothing; q4: no full record; old record: no field
    assert out["kept_overlap_with_full"] == pytest.approx((2 / 4 + 1) / 2)
    assert out["kept_jaccard_with_full"] == pytest.approx((2 / 5 + 1) / 2)
    assert kept_overlap([], full) == {}
