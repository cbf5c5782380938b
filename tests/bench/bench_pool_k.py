"""How many ranked pool items should reach the answer (``answer_evidence_k``), measured without the LLM (#14).

Dev questions: the PubMedQA questions whose abstract is in the default KB but which the ``pubmedqa``
evaluation does not ask (its 150 are drawn from the same abstracts with a fixed seed). For each, the chat's
planned evidence is gathered (``text_search`` with ``evidence_k`` sentences, ``kg_paths`` over the loaded
KGs, both with the rules intent frame), verbalised into one pool and ranked once; for each k:

- ``gold_recall@k``: the share of questions with at least one sentence of their own abstract in the top k;
- ``gold_share@k``: the share of the top k that comes from the question's own abstract (what can be cited
  correctly; the rest is noise the model may cite);
- the same two for equal quotas per source (k/2 text, k/2 KG, in each tool's order), QUASAR's comparison.

Run: ``.venv/bin/python tests/bench/bench_pool_k.py [--limit N]``; writes docs/bench/pool_k.{json,md,png}.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from assistant.deps import Deps  # noqa: E402
from assistant.evals.pubmedqa_eval import choose_items, load_questions, pmids_in_kb  # noqa: E402
from assistant.evals.report import write_bench  # noqa: E402
from tools.contracts import EvidenceLedger  # noqa: E402
from assistant.answer.pool import build_pool, rank_pool  # noqa: E402
from tools.contracts import Session  # noqa: E402
from assistant.settings import Settings  # noqa: E402

KS = [2, 4, 6, 8, 10, 12, 16]


def gather(deps: Deps, question: str):
    """The chat's planned evidence for ``question`` (text and KG), as the loop's answer step sees it."""
    from tools.registry import ToolContext, ToolError, load_all
    from tools.intent import contextualize, rules_frame
    from tools.kg_paths import Input as KGInput, kg_paths
    from tools.text_search import Input as TextInput, text_search

    load_all()
    frame = contextualize(rules_frame(question, False), question, [], has_table=False, source="rules")
    ctx = ToolContext(deps=deps, evidence=EvidenceLedger(), session=Session("bench-pool"))
    text_search(ctx, TextInput(query=frame.query(), k=deps.settings.evidence_k))
    try:
        kg_paths(ctx, KGInput(question=frame.rewrite, entities=frame.entities))
    except ToolError:
        pass
    return frame, ctx.evidence.citable()


def quota(pool, k):
    text = [c for c in pool if c.source_kind != "kg"]
    kg = [c for c in pool if c.source_kind == "kg"]
    take_kg = min(len(kg), k // 2)
    take_text = min(len(text), k - take_kg)
    take_kg = min(len(kg), k - take_text)
    return text[:take_text] + kg[:take_kg]


def main(limit: int | None) -> None:
    settings = Settings()
    deps = Deps(settings)
    store = deps.text_kb
    store.attach_embedder(deps.embedder)
    data = load_questions(settings.kb_mirror_dir)
    in_kb = pmids_in_kb(store)
    asked = {it["id"] for it in choose_items(data, in_kb) if it["answerable"]}
    dev = sorted(p for p in in_kb if p not in asked)[:limit]
    rows = {("ranked", k): [] for k in KS} | {("quota", k): [] for k in KS}
    t0 = time.perf_counter()
    for i, pmid in enumerate(dev, 1):
        frame, citable = gather(deps, data[pmid]["QUESTION"])
        pool = build_pool(citable)
        ranked = rank_pool(pool, frame.query(), len(pool), encoder=store.encode_texts, weights_index=store.bm25)
        order = ranked.top if len(pool) > 1 else pool
        gold = f"pubmed:{pmid}"
        for k in KS:
            for name, top in (("ranked", order[:k]), ("quota", quota(pool, k))):
                hits = sum(str(c.evidence.meta.get("doc_id", "")) == gold for c in top)
                rows[(name, k)].append((hits > 0, hits / max(len(top), 1)))
        print(f"[{i}/{len(dev)}] {pmid}: pool {ranked.summary()['pool']}", flush=True)
    n = len(dev)
    results = {}
    for (name, k), vals in rows.items():
        results[f"{name}_gold_recall@{k}"] = (sum(v[0] for v in vals) / n, "ratio")
        results[f"{name}_gold_share@{k}"] = (sum(v[1] for v in vals) / n, "ratio")
    results["dev_questions"] = (n, "count")
    results["seconds_per_question"] = ((time.perf_counter() - t0) / max(n, 1), "s")
    plot = {"x": KS, "xlabel": "k (pool items sent to the answer)", "ylabel": "share",
            "series": {f"{name} {metric}": [results[f"{name}_{metric}@{k}"][0] for k in KS]
                       for name in ("ranked", "quota") for metric in ("gold_recall", "gold_share")}}
    write_bench("pool_k", results, plot=plot, notes=(
        f"{n} PubMedQA dev questions (abstract in the default KB, not among the `pubmedqa` evaluation's 150). "
        f"Pool: text_search (k = {settings.evidence_k}) + kg_paths, rules intent frame, no LLM. `ranked`: the one "
        "fused ranking of the whole pool; `quota`: k/2 per source in each tool's own order. Choose the smallest k "
        "whose gold recall is near its maximum: a larger k adds noise (lower gold share) and prompt tokens."))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None)
    main(ap.parse_args().limit)
