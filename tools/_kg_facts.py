"""Relation-aware KG retrieval (issue 14 §3): the asked relation selects relation types, whose one-hop
facts around the question's entities are the first KG evidence.

Selection, in code:

1. the intent's relation phrase (and the question with its entity mentions and question words removed)
   is embedded and compared with each relation type's template and, for templates whose verb says
   little to a user ("palliates", "presents"), a gloss; the best type must reach ``REL_FLOOR``;
2. the best type brings its family: every type that joins the same kinds of nodes (Compound -> Disease:
   ``treats`` and ``palliates``), because the question asks for that kind of node whatever the verb.
   Where a graph has no node kinds (CSV triples, ConceptNet, the MedQA DDB), the family is the types
   scoring within ``REL_MARGIN`` of the best.

Measured on Hetionet with MiniLM (docs in tests/test_kg_relations.py): a plain cosine threshold either
missed ``palliates`` for "drugs treat" or took it for "symptoms of"; the best match alone was right for
every phrasing tried, and the kinds carry it to the family.
"""

from __future__ import annotations

import re
import weakref
from collections import Counter
from dataclasses import dataclass

import numpy as np

from kb.kg_store import KGGraph
from pydantic import BaseModel

from tools.lang.lexicon import singular

# Glosses in the words of Hetionet's definitions.json (CtD "a disease-modifying indication", CpD "a
# symptomatic indication ... treats a significant symptom of the Disease", DpS: the disease presents the
# symptom, DlA "affects or is related to the Anatomy"…). Each is compared on its own, beside the template.
TEMPLATE_GLOSSES = {
    # "Which drugs are used for glaucoma?" reads "drugs used", 0.37 from "is a treatment for" and under the floor
    # (seen as a new user: no fact was selected and the model wrote "Timolol, Betaxolol, and Timolol"). With MiniLM,
    # "is used to treat" gives it 0.55 and "is prescribed for" gives "medications prescribed" 0.75, while "drugs
    # cause", "drugs interact" and "drugs worsen" stay at 0.33 or less against both.
    "treats": ("is a treatment for", "is used to treat", "is prescribed for"),
    "palliates": ("is a treatment for the symptoms of",),
    "presents": ("has the symptom",),
    "localizes to": ("affects the body part",),
    "resembles": ("is similar to",),
    "associates with": ("is associated with the gene",),
    "binds": ("binds the protein",),
    "includes": ("is a drug class that includes",),
    "covaries with": ("evolves together with",),
    "upregulates": ("increases the expression of",),
    "downregulates": ("decreases the expression of",),
}
# Node kinds that say nothing about a relation (CSV triples, ConceptNet, the MedQA DDB).
_GENERIC_KINDS = {"entity", "concept", ""}
REL_FLOOR = 0.45  # the best relation type must match at least this well (cosine), or none is selected
REL_MARGIN = 0.1  # graphs without node kinds: the types within this of the best
_WH = re.compile(r"\b(what|which|who|whom|whose|how|are|is|the|of|for|a|an|do|does|can|could|should|"
                 r"tell me about|list|name)\b", re.I)


@dataclass
class RelationMatch:
    index: int  # into graph.relations
    name: str
    template: str
    score: float


@dataclass
class Fact:
    edge: int  # edge index in the graph
    head: int  # node indices
    tail: int
    relation: int
    score: float  # the relation's match score

    def triple(self, graph: KGGraph) -> tuple[str, str, str]:
        return graph.names[self.head], graph.relations[self.relation].template, graph.names[self.tail]


def relation_signatures(graph: KGGraph) -> list[tuple[str, str]]:
    """The (head kind, tail kind) most edges of each relation type join; ("", "") without kinds."""
    signatures = _SIGNATURES.get(graph)
    if signatures is None:
        signatures = _SIGNATURES[graph] = _count_signatures(graph)
    return signatures


def _count_signatures(graph: KGGraph) -> list[tuple[str, str]]:
    kinds: list[Counter] = [Counter() for _ in graph.relations]
    for h, t, r in zip(graph.edge_head.tolist(), graph.edge_tail.tolist(), graph.edge_rel.tolist()):
        kinds[r][(graph.kinds[h], graph.kinds[t])] += 1
    out = []
    for counts in kinds:
        head_kind, tail_kind = counts.most_common(1)[0][0] if counts else ("", "")
        generic = head_kind.lower() in _GENERIC_KINDS or tail_kind.lower() in _GENERIC_KINDS
        out.append(("", "") if generic else (head_kind, tail_kind))
    return out


def relation_texts(graph: KGGraph) -> tuple[list[str], list[int]]:
    """The texts each relation type is compared with (its template, and its gloss if any), and their owner."""
    texts, owner = [], []
    for i, rel in enumerate(graph.relations):
        for text in (rel.template, *TEMPLATE_GLOSSES.get(rel.template.lower(), ())):
            if text:
                texts.append(text)
                owner.append(i)
    return texts, owner


def relation_phrases(relation: str, question: str, mentions: list[str]) -> list[str]:
    """What is compared with the relation types: the intent's relation phrase and the question with its
    entity mentions and question words removed ("What drugs treat Parkinson's disease?" -> "drugs treat")."""
    stripped = question
    for m in sorted((m for m in mentions if m), key=len, reverse=True):
        stripped = re.sub(re.escape(m), " ", stripped, flags=re.I)
    stripped = " ".join(_WH.sub(" ", re.sub(r"[?!.,;:]", " ", stripped)).split())
    return [p for p in dict.fromkeys([relation.strip(), stripped]) if p]


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n == 0, 1.0, n)


# Per-embedder and per-graph caches, held weakly so a replaced graph or a test's encoder is not kept alive. A graph's
# relation texts and signatures are the same for every question, and one turn asks the same phrases again for each
# graph and each kind of node an everyday name may stand for. Measured on 2 cores: a call took 0.2 s, 0.11 s of it
# encoding Hetionet's 39 relation texts and 0.07 s counting the kinds each relation's edges join.
_VECTORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SIGNATURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_MAX_CACHED_TEXTS = 256


def _unit_vectors(texts: tuple[str, ...], embedder) -> np.ndarray:
    """Unit vectors of ``texts`` (read-only), encoded once per embedder."""
    cache = _VECTORS.setdefault(embedder, {})
    vecs = cache.get(texts)  # read once: another thread's clear() cannot lose it between a test and a read
    if vecs is None:
        if len(cache) >= _MAX_CACHED_TEXTS:
            cache.clear()
        vecs = _unit(embedder.encode(list(texts)))
        vecs.setflags(write=False)
        cache[texts] = vecs
    return vecs


# The nouns a question asks for ("Which genes …?") and the node kind each names, where the noun is not the kind's
# own name ("drug" for Compound).
_KIND_NOUNS = {"drug": "compound", "medication": "compound", "medicine": "compound", "treatment": "compound",
               "therapy": "compound", "protein": "gene", "condition": "disease", "disorder": "disease",
               "illness": "disease", "organ": "anatomy", "tissue": "anatomy", "sign": "symptom"}


def kinds_asked(noun: str, kinds: set[str]) -> set[str]:
    """The node kinds of ``kinds`` that the asked noun names ("genes" -> {"Gene"}); empty when it names none."""
    word = singular(noun.lower().strip())
    target = _KIND_NOUNS.get(word, word)
    return {k for k in kinds if k and k.lower() == target}


def match_relations(graph: KGGraph, phrases: list[str], embedder, *, node_kinds: set[str] | None = None,
                    asked: str = "", floor: float = REL_FLOOR, margin: float = REL_MARGIN) -> list[RelationMatch]:
    """Relation types of ``graph`` that ``phrases`` ask about, best first (empty: none is close enough).

    ``node_kinds``: the kinds of the question's linked nodes; a type joining none of them cannot give a
    fact about them (Compound ``resembles`` Compound for a disease). ``asked``: the noun the question asks for
    ("genes"); a type joining no kind it names (:func:`kinds_asked`) cannot name one. Seen as a new user: "Which genes
    are associated with breast cancer?" came with the intent's relation "treats" and was answered with 24 drugs.
    """
    if not phrases or not graph.relations:
        return []
    texts, owner = relation_texts(graph)
    rel_vecs, signatures = _unit_vectors(tuple(texts), embedder), relation_signatures(graph)
    sims = (_unit_vectors(tuple(phrases), embedder) @ rel_vecs.T).max(axis=0)  # (n_texts,): best phrase per text
    scores = np.full(len(graph.relations), -1.0, dtype=np.float32)
    np.maximum.at(scores, np.asarray(owner), sims)
    answer_kinds = kinds_asked(asked, set(graph.kinds)) if asked else set()
    for wanted in (node_kinds, answer_kinds):
        if wanted:
            for i, sig in enumerate(signatures):
                if sig != ("", "") and not wanted & set(sig):
                    scores[i] = -1.0
    best = int(np.argmax(scores))
    if scores[best] < floor:
        return []
    if signatures[best] != ("", ""):
        family = [i for i, sig in enumerate(signatures) if sig == signatures[best]]
    else:
        family = [i for i in range(len(scores)) if scores[i] >= scores[best] - margin]
    family.sort(key=lambda i: (i != best, -scores[i], i))
    return [RelationMatch(i, graph.relations[i].name, graph.relations[i].template, round(float(scores[i]), 4))
            for i in family]


# ConceptNet's crowd-sourced sentences (Open Mind Common Sense) were cut into triples from fill-in templates ("You
# are likely to find something in a barn", "Something you find underwater is a fish", "This is a bicycle"), so the
# blank the template left became a node: CN-100K holds 791 edges with the node "something", 858 with "someone", 1,445
# with "this" and 673 with "you". Such a node names nothing: a fact or path through it ("something is at location of
# gold. something is at location of mountain.") joins any two concepts and says nothing about either (seen as a new
# user, cited as the answer to a question on a physical quantity). It is never evidence.
PLACEHOLDER_NAMES = frozenset({
    "something", "someone", "somebody", "anything", "anyone", "anybody", "everything", "everyone", "everybody",
    "nothing", "nobody", "thing", "stuff", "this", "that", "it", "you", "i", "we", "they", "he", "she", "there",
    "some person", "a person", "some people"})
# Template openings whose rest is the blank's description ("something you find upstairs", "this picture").
_PLACEHOLDER_OPENING = re.compile(r"^(?:something|someone|somebody|this|that)\s", re.I)


def is_placeholder(name: str) -> bool:
    """Whether a node name is a template's blank rather than a concept (see ``PLACEHOLDER_NAMES``)."""
    low = " ".join(name.lower().split())
    return low in PLACEHOLDER_NAMES or bool(_PLACEHOLDER_OPENING.match(low))


def one_hop_facts(graph: KGGraph, nodes: list[int], relations: list[RelationMatch], *,
                  limit: int | None) -> list[Fact]:
    """Edges of the selected relation types that touch one of ``nodes``, at most ``limit`` (all when None); none
    with an end that is a template's blank (:func:`is_placeholder`).

    Order: facts whose other end touches more of ``nodes`` first (for "a drug for X and Y", those that
    join both), then the best relation type, then the other end's name (a stable order).
    """
    if not nodes or not relations or (limit is not None and limit <= 0):
        return []
    node_set = np.zeros(graph.num_nodes, dtype=bool)
    node_set[nodes] = True
    rank = {m.index: r for r, m in enumerate(relations)}
    score = {m.index: m.score for m in relations}
    rel_ok = np.isin(graph.edge_rel, list(rank))
    hit = np.flatnonzero(rel_ok & (node_set[graph.edge_head] | node_set[graph.edge_tail]))
    facts = [Fact(int(e), int(graph.edge_head[e]), int(graph.edge_tail[e]), int(graph.edge_rel[e]),
                  score[int(graph.edge_rel[e])]) for e in hit]
    facts = [f for f in facts if not (is_placeholder(graph.names[f.head]) or is_placeholder(graph.names[f.tail]))]

    def other_end(f: Fact) -> int:
        return f.head if node_set[f.tail] else f.tail

    reaches: dict[int, set[int]] = {}
    for f in facts:
        reaches.setdefault(other_end(f), set()).add(f.tail if node_set[f.tail] else f.head)
    facts.sort(key=lambda f: (-len(reaches[other_end(f)]), rank[f.relation], graph.names[other_end(f)].lower(),
                              f.edge))
    return facts[:limit]


class KGFact(BaseModel):
    """A one-hop fact as the kg_paths tool returns it: its evidence id, its sentence and its triple."""

    id: str
    sentence: str
    triple: tuple[str, str, str]
    relation: str
    license: str = ""
    provenance: str = ""
