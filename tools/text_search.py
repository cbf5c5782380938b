"""``text_search``: find evidence sentences in the knowledge base (and in text uploaded in chat).

Two stages (methods.md §2): a candidate pool of R sentences from FAISS (dense cosine), then exact
OT-JSD re-ranking over contextual token embeddings. ``method`` picks the scorer:

- ``otjsd``  — exact EMD with Jensen–Shannon ground cost over softmaxed, BM25-scaled token vectors;
- ``wmd``    — exact EMD with Euclidean ground cost over the raw token vectors (word mover's);
- ``bm25``   — Okapi BM25 over the whole KB (no dense stage);
- ``cosine`` — the dense stage alone;
- ``fused``  — weighted reciprocal-rank fusion of cosine (3), otjsd (2) and bm25 (0.25) over the union
  of the dense and BM25 pools (the default; numbers in docs/eval/obqa-retrieval.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from kb._bm25 import BM25Index, Vocabulary, simple_terms
from kb._ot import DEFAULT_TEMPERATURE, TokenBag, otjsd_scores, otjsd_top_k, wmd_scores
from kb.ingest import split_sentences
from kb.instructions import instruction_cue
from tools.intent import without_regarding_note
from tools.registry import ToolContext, ToolError, tool

Method = Literal["fused", "otjsd", "bm25", "cosine", "wmd"]
DEFAULT_METHOD: Method = "fused"
DEFAULT_POOL = 200
# Reciprocal-rank fusion: score = sum_m weight_m / (RRF_K + rank_m). Constant and weights chosen by a
# grid search on the OpenBookQA *dev* questions (recall@5 of the gold fact, R = 200): cosine 0.846,
# otjsd 0.848, this fusion 0.866; the test-set numbers are in docs/eval/obqa-retrieval.md.
RRF_K = 5
EMPTY_KB_MESSAGE = ("The text knowledge base is empty. Build the default corpus with "
                    "`evidentia kb build --default` or add files with `evidentia kb add PATH`.")


class Input(BaseModel):
    query: str = Field(description="What to look for: a question or a claim, in plain words.")
    k: int = Field(default=8, ge=1, le=50, description="How many sentences to return.")
    method: Method = Field(default=DEFAULT_METHOD, description="Ranking method; the default is best.")
    pool: int = Field(default=DEFAULT_POOL, ge=1, le=20000, description="Candidate pool size R for re-ranking.")


class Item(BaseModel):
    id: str = Field(description="Evidence id to cite, e.g. S3.")
    text: str
    source: str = Field(description="Document title or uploaded file name.")
    score: float = Field(description="Ranking score, higher is better (OT and WMD: minus the distance).")
    distance: float | None = Field(default=None, description="Exact OT distance, for otjsd and wmd.")
    doc_id: str = ""
    url: str = ""
    license: str = ""


class Withheld(BaseModel):
    text: str
    source: str
    cue: str = Field(description="The words that make it read as instructions to an AI system.")


class Output(BaseModel):
    items: list[Item] = Field(default_factory=list)
    method: str = DEFAULT_METHOD
    note: str = ""
    withheld: list[Withheld] = Field(default_factory=list, description="Matching sentences not used as evidence: "
                                     "they address an AI system with instructions (kb.instructions).")


@dataclass
class Ranked:
    rows: np.ndarray      # store rows, best first
    scores: np.ndarray    # higher is better
    distances: np.ndarray | None = None


def candidate_bag(store, rows: np.ndarray, scaling: OTScaling = "unit") -> TokenBag:
    """The candidates' token distributions and marginals: the store's precomputed roots where it has them."""
    if scaling == "unit" and OT_TEMPERATURE == DEFAULT_TEMPERATURE:
        stored = store.token_roots_flat(rows)
        if stored is not None:
            return TokenBag.from_roots(*stored)
    z, w, offsets = store.token_data_flat(rows)
    scales = w if scaling == "bm25" else OT_TEMPERATURE / np.maximum(np.linalg.norm(z, axis=1), 1e-12)
    return TokenBag.from_flat(z, w, offsets, scales)


def _rank_desc(values: np.ndarray) -> np.ndarray:
    """1-based rank of each value, highest first, ties by position."""
    order = np.lexsort((np.arange(len(values)), -values))
    ranks = np.empty(len(values), np.int64)
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


# Token distributions: P = softmax(OT_TEMPERATURE * z / |z|); the measurements behind the value are at
# kb._ot.DEFAULT_TEMPERATURE, which the store's precomputed roots use.
OT_TEMPERATURE = DEFAULT_TEMPERATURE
FUSION_WEIGHTS = {"cosine": 3.0, "otjsd": 2.0, "bm25": 0.25}
OTScaling = Literal["unit", "bm25"]


def ot_scales(zs: list[np.ndarray], weights: list[np.ndarray], scaling: OTScaling = "unit") -> list[np.ndarray]:
    """Per-token factors applied before the softmax: temperature / norm, or the BM25 weight (thesis)."""
    if scaling == "bm25":
        return weights
    return [OT_TEMPERATURE / np.maximum(np.linalg.norm(z, axis=1), 1e-12) for z in zs]


def rank_kb(store, query: str, k: int = 8, method: Method = DEFAULT_METHOD, pool: int = DEFAULT_POOL,
            encoded=None, scaling: OTScaling = "unit") -> Ranked:
    """Rank the store's sentences for ``query``; returns the best ``k`` rows (model-free past encoding).

    ``encoded`` optionally passes a precomputed ``(vector, token vectors, token ids)`` for the query.
    """
    store._load()
    if method == "bm25":
        terms = store.encode_query(query)[2] if encoded is None else encoded[2]
        rows, scores = store.bm25.top(terms, k)
        return Ranked(rows, scores)
    vec, z, ids = store.encode_query(query) if encoded is None else encoded
    w = store.bm25.token_weights(ids)
    cand, sims = store.dense_search(vec, max(pool, k) if method != "cosine" else k)
    if method == "cosine":
        return Ranked(cand, sims)
    if method == "fused":
        bm_rows, _ = store.bm25.top(ids, pool)
        cand = np.unique(np.concatenate([cand, bm_rows]))
    if len(cand) == 0:
        return Ranked(np.zeros(0, np.int64), np.zeros(0))
    if method == "wmd":
        zs, ws = store.token_data(cand)
        dist = wmd_scores(z, w, zs, ws)
        order = np.lexsort((np.arange(len(cand)), dist))[:k]
        order = order[np.isfinite(dist[order])]
        return Ranked(cand[order], -dist[order], dist[order])
    query_bag = TokenBag.from_texts([z], [w], ot_scales([z], [w], scaling))
    cands = candidate_bag(store, cand, scaling)
    if method == "otjsd":
        idx, dist, _ = otjsd_top_k(query_bag, cands, k)
        return Ranked(cand[idx], -dist, dist)
    # fused: reciprocal-rank fusion over the pool
    dist = otjsd_scores(query_bag, cands)
    cos = np.asarray(store.index.reconstruct_batch(cand) if hasattr(store.index, "reconstruct_batch")
                     else np.stack([store.index.reconstruct(int(r)) for r in cand])) @ vec
    bm = store.bm25.scores(ids)[cand]
    fused = fuse_signals(dist, cos, bm)
    order = np.lexsort((np.arange(len(cand)), -fused))[:k]
    return Ranked(cand[order], fused[order], dist[order])


def fuse_signals(otjsd_distance: np.ndarray, cosine: np.ndarray, bm25: np.ndarray) -> np.ndarray:
    """Weighted reciprocal-rank fusion of the three signals, shape (n,); higher is better."""
    signals = {"otjsd": -np.nan_to_num(otjsd_distance, posinf=1e9), "cosine": cosine, "bm25": bm25}
    return sum(FUSION_WEIGHTS[name] / (RRF_K + _rank_desc(s)) for name, s in signals.items())


@dataclass
class EncodedText:
    """One text as the fused ranking reads it: pooled vector (d,), content-token vectors (n, d), word-piece ids (n,)."""

    vector: np.ndarray
    tokens: np.ndarray
    ids: np.ndarray


def rank_texts(query: EncodedText, candidates: list[EncodedText], weights_index: BM25Index | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """The fused ranking (cosine, OT-JSD, BM25) of arbitrary candidate texts for ``query``, best first.

    The same fusion as :func:`rank_kb`'s default, over texts that need not be in the store: the evidence pool
    of one turn (sentences, verbalised KG facts, table rows). BM25 is computed over the candidates themselves
    (positive IDF: a pool is tiny); the OT marginals use ``weights_index`` (the KB's corpus statistics) when
    given, else that pool index.

    Returns
    -------
    order : int array (n,), candidate indices best first (ties by position)
    fused : float array (n,), the fused score of each candidate (higher is better), in input order
    """
    n = len(candidates)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    # Word-piece ids -> a compact vocabulary of this pool, so the index is as small as the pool.
    all_ids = np.concatenate([c.ids for c in candidates] + [query.ids]).astype(np.int64)
    if weights_index is not None:  # count word pieces by stem, as the KB's own BM25 does
        all_ids = weights_index.term_classes(all_ids)
    vocab, inverse = np.unique(all_ids, return_inverse=True)
    lengths = [len(c.ids) for c in candidates]
    rows = np.split(inverse[:sum(lengths)], np.cumsum(lengths)[:-1]) if n > 1 else [inverse[:lengths[0]]]
    pool_index = BM25Index.from_rows(rows, vocab_size=max(len(vocab), 1), positive_idf=True)
    query_terms = inverse[sum(lengths):]
    bm = pool_index.scores(query_terms)
    if weights_index is not None:
        wq = weights_index.token_weights(query.ids)
        wc = [weights_index.token_weights(c.ids) for c in candidates]
    else:
        wq = pool_index.token_weights(query_terms)
        wc = [pool_index.token_weights(r) for r in rows]
    zs = [c.tokens for c in candidates]
    if query.tokens.shape[0] and any(len(z) for z in zs):
        query_bag = TokenBag.from_texts([query.tokens], [wq], ot_scales([query.tokens], [wq]))
        present = [i for i, z in enumerate(zs) if len(z)]
        cands = TokenBag.from_texts([zs[i] for i in present], [wc[i] for i in present],
                                    ot_scales([zs[i] for i in present], [wc[i] for i in present]))
        dist = np.full(n, np.inf)
        dist[present] = otjsd_scores(query_bag, cands)
    else:
        dist = np.full(n, np.inf)
    cos = np.array([float(c.vector @ query.vector) for c in candidates])
    fused = fuse_signals(dist, cos, bm)
    return np.lexsort((np.arange(n), -fused)), fused


def bm25_top(texts: list[str], query: str, k: int) -> list[tuple[int, float]]:
    """(index into ``texts``, score) of the ``k`` best BM25 matches for ``query``, best first; matches only."""
    if not texts:
        return []
    vocab = Vocabulary()
    rows = [vocab.encode(simple_terms(t)) for t in texts]
    index = BM25Index.from_rows(rows, vocab_size=max(len(vocab.ids), 1), positive_idf=True)
    top, scores = index.top(vocab.encode(simple_terms(query), grow=False), k)
    return [(int(r), float(sc)) for r, sc in zip(top, scores) if sc > 0]


def search_uploaded(texts: list[tuple[str, str]], query: str, k: int) -> list[tuple[str, str, int, int, float]]:
    """BM25 over the sentences of text uploaded in chat -> (name, sentence, start, end, score), best first."""
    sents = [(name, s) for name, text in texts for s in split_sentences(text)]
    return [(sents[r][0], sents[r][1].text, sents[r][1].start, sents[r][1].end, sc)
            for r, sc in bm25_top([s.text for _, s in sents], query, k)]


# A document sentence's paragraph goes with it into the evidence panel up to this size (a page of a long paragraph
# would bury the sentence).
PARAGRAPH_CHARS = 1500

# A follow-up's words (without the "regarding" note of carried entities) searched in the documents the last answer
# cited: at most this many of its sentences join the results, ahead of the KB's.
FOLLOWED_K = 3


def search_followed(store, doc_ids: list[str], query: str, k: int = FOLLOWED_K) -> list:
    """The sentences of the followed documents that best match ``query`` (BM25), best first, scored."""
    hits = store.document_hits(doc_ids)
    return [replace(hits[i], score=sc) for i, sc in bm25_top([h.text for h in hits], query, k)]


@tool("text_search", cpu_bound=True)
def text_search(ctx: ToolContext, args: Input) -> Output:
    """Search the knowledge base's sentences (and uploaded text) for evidence; returns citable sentence ids."""
    if not args.query.strip():
        raise ToolError("The search query is empty; say what to look for.")
    store = ctx.deps.text_kb
    store.attach_embedder(ctx.deps.embedder)
    uploaded = search_uploaded(list(ctx.session.texts), args.query, args.k) if ctx.session.texts else []
    kb_empty = store.is_empty
    if kb_empty and not uploaded:
        if ctx.session.texts:
            return Output(method=args.method, note="Nothing in the uploaded text matches; " + EMPTY_KB_MESSAGE)
        raise ToolError(EMPTY_KB_MESSAGE)

    items: list[Item] = []
    withheld: list[Withheld] = []

    def instructs(text: str, source: str) -> bool:
        """Withhold a sentence written as instructions to an AI system: never evidence, never citable."""
        cue = instruction_cue(text)
        if cue:
            withheld.append(Withheld(text=text, source=source, cue=cue))
        return cue is not None

    for name, text, start, end, score in uploaded:
        if instructs(text, name):
            continue
        # A PDF's or DOCX's sentence is cited with its page (or section): "paper.pdf, page 5".
        stored = ctx.session.documents.get(name)
        where = stored.where(start, end) if stored is not None else ""
        source = f"{name}, {where}" if where else name
        span = stored.document.span_at(start) if stored is not None else None
        place = {"page": span.page, "section": span.heading} if span is not None else {}
        if stored is not None:  # the side panel shows the sentence in its paragraph
            p_start, p_end = stored.document.paragraph_bounds(start, end)
            if p_end - p_start <= PARAGRAPH_CHARS and (p_start, p_end) != (start, end):
                place["paragraph"] = stored.document.text[p_start:p_end]
                place["in_paragraph"] = [start - p_start, end - p_start]
        ev = ctx.evidence.add_sentence(text, source=source, doc_id=f"upload:{name}", sent_key=f"{name}:{start}",
                                       score=score, offsets=[start, end], license="user upload", url="",
                                       upload=name, **place)
        items.append(Item(id=ev.id, text=text, source=source, score=score, doc_id=f"upload:{name}",
                          license="user upload"))
    if not kb_empty:
        ctx.report(f"searching {len(store):,} sentences ({args.method})")
        ranked = rank_kb(store, args.query, args.k, args.method, args.pool)
        hits = store.hits(ranked.rows, ranked.scores)
        dist = dict(zip(ranked.rows.tolist(), ranked.distances.tolist())) if ranked.distances is not None else {}
        followed = []
        if ctx.session.followed_documents:
            # A follow-up is about what the last answer cited: its documents' best matches come first, then the
            # KB's (seen as a new user: "And how many clinics took part?" after three questions about one trial
            # searched the whole KB with "regarding principal investigator, pharmacists, …" and cited another study).
            followed = search_followed(store, ctx.session.followed_documents, without_regarding_note(args.query))
        seen = {h.sent_id for h in followed}
        kb_items = []
        for h in followed + [h for h in hits if h.sent_id not in seen]:
            if instructs(h.text, h.title or h.source):
                continue
            ev = ctx.evidence.add_kb_sentence(h, score=h.score, chunk=h.chunk, method=args.method)
            kb_items.append(Item(id=ev.id, text=h.text, source=h.title or h.source, score=h.score,
                                 distance=dist.get(h.row), doc_id=h.doc_id, url=h.url, license=h.license))
        # Uploaded text first (the user pointed at it), then the KB; at most k in all.
        merged, ui, ki = [], 0, 0
        while len(merged) < args.k and (ui < len(items) or ki < len(kb_items)):
            if ui < len(items):
                merged.append(items[ui])
                ui += 1
            if ki < len(kb_items) and len(merged) < args.k:
                merged.append(kb_items[ki])
                ki += 1
        items = merged
    note = "" if items else "No matching sentences were found."
    if kb_empty:
        note = "Only uploaded text was searched. " + EMPTY_KB_MESSAGE
    if withheld:
        note = (withheld_notice(withheld) + " " + note).strip()
    return Output(items=items[:args.k], method=args.method, note=note, withheld=withheld)


def withheld_notice(withheld: list[Withheld]) -> str:
    """One line for the user: which matching sentences were not used, and why."""
    first = withheld[0]
    more = f" (and {len(withheld) - 1} more)" if len(withheld) > 1 else ""
    return (f"Not used as evidence: a sentence of “{first.source}”{more} is written as instructions to an AI "
            f"system (“{first.cue}”), not as a statement of fact.")
