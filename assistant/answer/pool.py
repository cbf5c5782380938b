"""One pool, one ranking (QUASAR, methods.md §1): the turn's evidence as one list of pseudo-sentences.

Every citable item the tools gathered (KB and uploaded-text sentences, KG facts and paths, table cells) is
verbalised into one candidate, the whole list is ranked against the intent's query by one ranker (the fused
cosine + OT-JSD + BM25 ranking of ``tools.text_search``), and the top ``k`` go to the answer. QUASAR found
one global ranking better than equal quotas per source. The pool's composition is reported per turn.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from tools.contracts import Evidence

SourceKind = str  # "text" | "upload" | "kg" | "table"


@dataclass
class Candidate:
    evidence: Evidence
    text: str  # the pseudo-sentence the ranker reads
    source_kind: SourceKind

    @property
    def id(self) -> str:
        return self.evidence.id


@dataclass
class RankedPool:
    top: list[Candidate]
    pool_size: int
    ranked: bool  # False: the pool fit in k, so every item went to the answer in the tools' order
    composition: dict[str, dict[str, int]] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)

    def summary(self) -> dict:
        """What the step shows: how many of each source were found and how many reached the answer."""
        return {"pool": self.composition.get("pool", {}), "sent_to_answer": self.composition.get("top", {}),
                "pool_size": self.pool_size, "k": len(self.top), "ranked": self.ranked,
                "method": "fused cosine + OT-JSD + BM25" if self.ranked else "none (the pool fits in k)",
                "order": [c.id for c in self.top]}


def source_kind(ev: Evidence) -> SourceKind:
    if ev.kind == "path":
        return "kg"
    if ev.kind == "cell":
        return "table"
    return "upload" if str(ev.meta.get("doc_id", "")).startswith("upload:") else "text"


def verbalise(ev: Evidence) -> str:
    """The evidence as one sentence: a path as its sentence form, a cell with its table, row and column."""
    if ev.kind == "path":
        return str(ev.meta.get("sentence") or ev.text)
    if ev.kind == "cell":
        parts = [ev.source]
        if ev.meta.get("row_label"):
            parts.append(f"row {ev.meta['row_label']}")
        header = ev.meta.get("header")
        parts.append(f"{header}: {ev.text}" if header else ev.text)
        return " / ".join(p for p in parts if p)
    return ev.text


def build_pool(citable: list[Evidence]) -> list[Candidate]:
    return [Candidate(evidence=e, text=verbalise(e), source_kind=source_kind(e)) for e in citable]


def _composition(pool: list[Candidate], top: list[Candidate]) -> dict[str, dict[str, int]]:
    return {"pool": dict(Counter(c.source_kind for c in pool)), "top": dict(Counter(c.source_kind for c in top))}


def rank_pool(pool: list[Candidate], query: str, k: int, encoder=None, weights_index=None) -> RankedPool:
    """The top ``k`` of ``pool`` for ``query``, best first.

    ``encoder(texts) -> [(vector, token vectors, token ids)]`` encodes texts (``TextStore.encode_texts``);
    it is only called when the pool holds more than ``k`` items (otherwise all of them are sent).
    """
    if len(pool) <= k or encoder is None:
        top = pool[:k]
        return RankedPool(top=top, pool_size=len(pool), ranked=False, composition=_composition(pool, top))
    from tools.text_search import EncodedText, rank_texts

    encoded = [EncodedText(*e) for e in encoder([query] + [c.text for c in pool])]
    order, fused = rank_texts(encoded[0], encoded[1:], weights_index)
    top = [pool[i] for i in order[:k]]
    return RankedPool(top=top, pool_size=len(pool), ranked=True, composition=_composition(pool, top),
                      scores={pool[i].id: round(float(fused[i]), 4) for i in order[:k]})
