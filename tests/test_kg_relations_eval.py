"""The kg-relations evaluation (issue 14): items, drug matching, scoring, resuming and --limit."""

from __future__ import annotations

import json

from assistant.evals import kg_relations_eval as ev
from kb.kg_loaders import read_hetionet
from kb.kg_store import KGStore
from tests.test_kg_relations import make_mirror


def mini_graph(tmp_settings, tmp_path):
    store = KGStore(tmp_settings.kb_dir / "kg.db")
    store.replace_graph(read_hetionet(make_mirror(tmp_path / "mirror")))
    return store.graph("hetionet")


def test_items_are_the_diseases_with_treats_or_palliates_edges(tmp_settings, tmp_path):
    graph = mini_graph(tmp_settings, tmp_path)
    items = ev.disease_items(graph)
    assert [(it["disease"], it["drugs"]) for it in items] == [  # in id order: DOID:14330, DOID:1826
        ("Parkinson's disease", ["Apomorphine", "L-DOPA", "Valproic Acid"]),
        ("epilepsy syndrome", ["Phenytoin", "Valproic Acid"])]
    assert ev.disease_items(graph, size=1) == ev.disease_items(graph, size=1)  # seeded: the same every run
    assert len(ev.disease_items(graph, size=1)) == 1


def test_drugs_named_are_whole_words_spelled_as_in_the_kg(tmp_settings, tmp_path):
    graph = mini_graph(tmp_settings, tmp_path)
    pattern = ev.compound_pattern(graph)
    canonical = {n.lower(): n for n, k in zip(graph.names, graph.kinds) if k == "Compound"}
    text = "Try apomorphine [P1] or valproic acid; not Citalopram-like drugs, nor l-dopamine."
    assert ev.drugs_named(text, pattern, canonical) == ["Apomorphine", "Valproic Acid"]


def test_score_counts_named_drugs_and_fact_citations():
    recs = [{"named": ["A", "B"], "named_gold": ["A"], "cited_fact": True, "facts_for_disease": 3,
             "status": "verified", "seconds": 10.0},
            {"named": [], "named_gold": [], "cited_fact": False, "facts_for_disease": 0, "status": "unverified",
             "seconds": 30.0}]
    row = ev.score(recs)
    assert row["precision"] == 0.5 and row["cited_rate"] == 0.5 and row["fact_retrieved_rate"] == 0.5
    assert row["named_none_rate"] == 0.5 and row["verified_rate"] == 0.5 and row["median_turn_s"] == 20.0


def test_run_resumes_and_honours_limit(tmp_settings, tmp_path, monkeypatch):
    mini_graph(tmp_settings, tmp_path)
    asked = []

    async def fake_ask(deps, item):
        asked.append(item["disease"])
        return {"answer": f"{item['drugs'][0]} [P1] and Phenytoin.", "status": "verified", "cited": ["P1"],
                "cited_fact": True, "facts_for_disease": len(item["drugs"]), "first_evidence": ["P1"],
                "seconds": 1.0}

    monkeypatch.setattr(ev, "_ask", fake_ask)
    docs = tmp_path / "docs"
    ev.run(1, settings=tmp_settings, docs_dir=docs)
    assert asked == ["Parkinson's disease"]
    ev.run(None, settings=tmp_settings, docs_dir=docs)  # resumes: only the item not yet answered
    assert asked == ["Parkinson's disease", "epilepsy syndrome"]
    report = json.loads((docs / "eval" / "kg-relations.json").read_text())
    row = report["variants"]["default"]
    assert report["benchmark"] == "kg-relations" and report["items"] == 2
    # Parkinson: Apomorphine (right) and Phenytoin (no edge to it); epilepsy: Phenytoin (right).
    assert row["precision"] == 2 / 3 and row["cited_rate"] == 1.0 and row["items_answered"] == 2
    assert report["majority_label"] == "Valproic Acid" and report["majority_baseline"] == 1.0
    assert (docs / "eval" / "kg-relations.md").exists() and (docs / "eval" / "kg-relations.png").exists()
