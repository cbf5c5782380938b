"""Real model, end to end: a medical multiple-choice question answered from KG paths, citing a path."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

TRIPLES = """head,relation,tail
levodopa,treats,Parkinson's disease
Parkinson's disease,presents,tremor
Parkinson's disease,presents,bradykinesia
metformin,treats,type 2 diabetes
type 2 diabetes,presents,polyuria
"""


@pytest.mark.real_model
def test_medical_question_answered_with_a_cited_path(real_settings, tmp_path, run_async):
    from assistant.deps import Deps
    from tools.contracts import EvidenceLedger
    from tools.contracts import Session
    from kb.kg_loaders import read_csv_triples
    from kb.kg_store import KGStore
    from tools._mc import choose_option
    from tools.registry import ToolContext
    from tools.kg_paths import Input, kg_paths

    csv_path = tmp_path / "med.csv"
    csv_path.write_text(TRIPLES)
    store = KGStore(tmp_path / "kg.db")
    store.replace_graph(read_csv_triples(csv_path, name="med"))
    deps = Deps(real_settings)
    deps.__dict__["kg"] = store
    ctx = ToolContext(deps=deps, evidence=EvidenceLedger(), session=Session("e2e"))
    question = "A 68-year-old man has a resting tremor and bradykinesia. Which drug treats his disease?"
    options = {"A": "levodopa", "B": "metformin"}
    out = kg_paths(ctx, Input(question=question, options=list(options.values())))
    assert any("levodopa" in p.chain and "Parkinson's disease" in p.chain for p in out.paths)

    async def answer():
        try:
            return await choose_option(deps.llm, question, options, ctx.evidence.citable(), chains=False)
        finally:
            await deps.aclose()

    result = run_async(answer())
    # The model's own output must decide: the word-overlap fallback and a code-chosen citation would also
    # land on "A" and P1 here, so they are failures, not passes.
    assert not result.judge_failed and result.decided_by == "model", "the judge's output was unusable"
    assert result.choice == "A"
    assert result.cited, "the answer must cite a path"
    assert all(c.startswith("P") and c in ctx.evidence for c in result.cited)
    # Who cited is not asserted, and said: measured 6 of 6 on 2026-12-06 (#75; in `make test` since session 8),
    # the 1.5B judge decides "A" itself but leaves its evidence list empty, so code picks the citation by
    # support (citation_by="code", cited_by_support, marked in the reply). Open in #18/#14: a grammar that makes
    # the judge cite a shown id. What is asserted is that the marks say which happened.
    assert result.citation_by in ("model", "code")
    assert result.cited_by_support == (result.citation_by == "code")
