"""The knowledge graph's evidence for a question: relation-aware one-hop facts, the everyday names of its nodes,
replies composed by code from those facts, and subgraph expansion, shortest paths and their wording (the graph
attention kernel stays apart in :mod:`tools._gat`).

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import re
import weakref
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from pydantic import BaseModel

from kb.kg_store import KGGraph, normalize_name
from kb.linking import ABBREVIATION, LinkedConcept
from tools.lang.lexicon import singular


# ======================================================================================================================
# Relation-aware KG retrieval (issue 14 §3): the asked relation selects relation types, whose one-hop
# facts around the question's entities are the first KG evidence.
#
# Selection, in code:
#
# 1. the intent's relation phrase (and the question with its entity mentions and question words removed)
#    is embedded and compared with each relation type's template and, for templates whose verb says
#    little to a user ("palliates", "presents"), a gloss; the best type must reach ``REL_FLOOR``;
# 2. the best type brings its family: every type that joins the same kinds of nodes (Compound -> Disease:
#    ``treats`` and ``palliates``), because the question asks for that kind of node whatever the verb.
#    Where a graph has no node kinds (CSV triples, ConceptNet, the MedQA DDB), the family is the types
#    scoring within ``REL_MARGIN`` of the best.
#
# Measured on Hetionet with MiniLM (docs in tests/test_kg_relations.py): a plain cosine threshold either
# missed ``palliates`` for "drugs treat" or took it for "symptoms of"; the best match alone was right for
# every phrasing tried, and the kinds carry it to the family.
# ======================================================================================================================

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


# ======================================================================================================================
# Everyday names of KG nodes (issue 14 §3): "lupus" for "systemic lupus erythematosus", "COPD" for the disease
# its initials spell. Used by :func:`tools.kg_paths.link_question` for the intent's entities.
# ======================================================================================================================

def _by_exact_name(concept, entity: str) -> bool:
    """Linked by the entity's whole name, not by a part of it ("heart" of "heart attack") nor by likeness."""
    return concept.rule.endswith("exact") and concept.mention == normalize_name(entity)


MAX_READINGS = 3  # "diabetes": type 1, type 2 and gestational diabetes; more is a list, not a reading


def everyday_readings(linker, embedder, relation: str, question: str) -> Callable[[str, list], list]:
    """``reread(entity, concepts)`` for :func:`link_question`: the nodes an everyday name stands for.

    "What are the symptoms of lupus?": no node is called "lupus", but one disease's name holds the word
    ("systemic lupus erythematosus"). "COPD" spells the initials of "chronic obstructive pulmonary disease",
    and "ALS" those of "amyotrophic lateral sclerosis", not its embedding's neighbour, the gene "ALS2".
    Readings: of the nodes whose name holds the entity's words (:meth:`kb.linking.Linker.containing`), or
    else whose initials it spells (:meth:`~kb.linking.Linker.by_initials`), those holding a fact of the
    asked relation (the disease presents symptoms; an anatomy term presents none), at most ``MAX_READINGS``.

    They replace the entity's links unless one is by its exact whole name, or (likeness links: fuzzy,
    embedding) one holds a fact of the asked relation; an abbreviation's likeness links always give way.
    No asked relation, or no reading: the links stay.
    """
    graph = linker.graph

    def with_facts(nodes: list[int], entity: str) -> list[int]:
        keep: list[int] = []
        for kind in dict.fromkeys(graph.kinds[i] for i in nodes):
            members = [i for i in nodes if graph.kinds[i] == kind]
            selected = match_relations(graph, relation_phrases(relation, question, [entity]), embedder,
                                       node_kinds={kind})
            touched = {end for f in one_hop_facts(graph, members, selected, limit=None) for end in (f.head, f.tail)}
            keep += [i for i in members if i in touched]
        return keep

    def readings(entity: str) -> list:
        for find, rule in ((linker.containing, "entity-name-part"), (linker.by_initials, "entity-initials")):
            keep = with_facts(find(entity), entity)
            if 0 < len(keep) <= MAX_READINGS:
                return [LinkedConcept(mention=entity, node_id=graph.ids[i], name=graph.names[i], rule=rule,
                                      score=1.0, index=i) for i in keep]
        return []

    def reread(entity: str, concepts: list) -> list:
        if any(_by_exact_name(c, entity) for c in concepts):
            return concepts
        likeness = [c for c in concepts if not c.rule.endswith("exact")]
        if likeness and not ABBREVIATION.match(entity.strip()) and with_facts([c.index for c in likeness], entity):
            return concepts
        return readings(entity) or concepts

    return reread


# ======================================================================================================================
# Replies composed by code from one-hop KG facts, each name cited by the fact that says it (issue 14 §1, §3):
# the facts of one asked entity (:func:`facts_reply`), and the names joined to every asked entity
# (:func:`joint_facts`, :func:`joint_reply`).
# ======================================================================================================================

def facts_reply(source: str, facts: list[KGFact], total: int, anchors: list[str]) -> str:
    """The facts as the answer, grouped by relation and asked entity, each name cited by its fact.

    Composed by code, like a table verdict: each citation is the fact that says exactly that. The model is not
    asked: on "Which drugs are used for glaucoma?" it named two drugs that were shown but not cited, and the
    retry abstained although 23 facts answered the question. ``anchors``: the names of the nodes asked about
    (several for one everyday name: "diabetes" is type 1 and type 2 diabetes mellitus), so each fact is
    grouped under the end that was asked about, never under another reading's name.
    """
    groups: dict[str, list[str]] = {}
    for f in facts:
        head, template, tail = f.triple
        if tail in anchors and head not in anchors:
            groups.setdefault(f"{template} {tail}", []).append(f"{head} [{f.id}]")
        else:
            groups.setdefault(f"{head} {template}", []).append(f"{tail} [{f.id}]")
    lines = [f"- **{label}**: {', '.join(items)}" for label, items in groups.items()]
    n = len(facts)
    # The graph gives its facts no strength (Hetionet's edges here carry no score), so the reply does not
    # call its order a ranking: the facts shared by more of the asked entities, then by relation and name.
    head = (f"The knowledge graph {source} holds {n} fact{'s' if n != 1 else ''} of this relation:" if n >= total else
            f"The first {n} of the {total} facts of this relation in the knowledge graph {source} (it does not "
            f"rank them; listed by name):")
    return head + "\n" + "\n".join(lines)


def others_of(graph, facts: list[Fact], anchors: list[int]) -> list[str]:
    """Each fact's end that is not asked about, by name."""
    asked = set(anchors)
    return [graph.names[f.head if f.tail in asked else f.tail] for f in facts]


def joint_facts(graph, facts: list[Fact], groups: list[set[int]]) -> list[Fact]:
    """The facts whose other end is joined to every group of asked nodes (a group: one entity's readings), grouped
    by that end in the order of ``facts``. Prednisone treats COPD and treats asthma: both facts; a drug treating
    only one of them: none."""
    asked = set().union(*groups) if groups else set()
    facts = [f for f in facts if not (f.head in asked and f.tail in asked)]  # "X resembles Y" joins no third name
    reach: dict[int, set[int]] = {}
    for f in facts:
        end, other = (f.tail, f.head) if f.tail in asked else (f.head, f.tail)
        reach.setdefault(other, set()).update(g for g, nodes in enumerate(groups) if end in nodes)
    joined = [o for o in dict.fromkeys(f.head if f.tail in asked else f.tail for f in facts)
              if len(reach[o]) == len(groups)]
    by_other = {o: [f for f in facts if (f.head if f.tail in asked else f.tail) == o] for o in joined}
    return [f for o in joined for f in by_other[o]]


def whole_names(others: list[str], limit: int) -> int:
    """How many of the leading facts to show: at most ``limit``, ending where a name's facts end (at least one
    name's)."""
    keep = 0
    for i, other in enumerate(others):
        if i + 1 == len(others) or others[i + 1] != other:  # the last fact of this name
            if i + 1 > limit and keep:
                break
            keep = i + 1
    return keep


def joint_reply(source: str, facts: list[KGFact], names: list[str], others: list[str], total: int) -> str:
    """The joint facts as the answer: each shared name, with the facts that join it to each asked entity cited.
    Each fact is said in full, its own relation included ("treats", "palliates"), since the asked relation may
    cover several types."""
    lines: dict[str, list[str]] = {}
    for f, other in zip(facts, others):
        lines.setdefault(other, []).append(f"{f.sentence.rstrip('.')} [{f.id}]")
    n = len(lines)
    asked = " and ".join(names) if len(names) == 2 else ", ".join(names[:-1]) + f" and {names[-1]}"
    both = "both" if len(names) == 2 else "each of"
    head = (f"In the knowledge graph {source}, {n} name{'s are' if n != 1 else ' is'} joined to {both} {asked}:"
            if n >= total else
            f"In the knowledge graph {source}, {total} names are joined to {both} {asked}; the first {n}:")
    return head + "\n" + "\n".join(f"- **{other}**: {'; '.join(items)}" for other, items in lines.items())


# ======================================================================================================================
# Subgraph expansion, shortest paths and path verbalization over a :class:`kb.kg_store.KGGraph`.
#
# Everything here is deterministic: ties are broken by node index.
# ======================================================================================================================

@dataclass
class Subgraph:
    """Nodes within ``max_hops`` of the seeds, as local indices.

    Attributes
    ----------
    nodes : ndarray (k,) int, global node indices; ``nodes[i]`` is local node ``i``
    hops : ndarray (k,) int, hop distance from the nearest seed
    edges : ndarray (e,) int, global edge ids with both ends in the subgraph
    edge_index : ndarray (2, e) int, (head, tail) in local indices
    """

    nodes: np.ndarray
    hops: np.ndarray
    edges: np.ndarray
    edge_index: np.ndarray
    local: dict[int, int] = field(default_factory=dict)
    truncated: bool = False

    @property
    def size(self) -> int:
        return len(self.nodes)


def expand(graph: KGGraph, seeds: list[int], *, max_hops: int = 3, node_budget: int = 2000,
           priority: np.ndarray | None = None) -> Subgraph:
    """Breadth-first expansion around ``seeds`` up to ``max_hops``, at most ``node_budget`` nodes.

    When a hop would overflow the budget, the new nodes with the highest ``priority`` (e.g. the
    cosine of their name to the question; shape (n_total,)) are kept, ties to the lower index.
    """
    seeds = list(dict.fromkeys(int(s) for s in seeds))[:node_budget]
    n_total = graph.num_nodes
    in_sub = np.zeros(n_total, dtype=bool)
    in_sub[seeds] = True
    order = list(seeds)
    hops = [0] * len(seeds)
    frontier = np.asarray(seeds, dtype=np.int64)
    truncated = False
    for hop in range(1, max_hops + 1):
        if frontier.size == 0 or len(order) >= node_budget:
            break
        parts = [graph.adj_nodes[graph.indptr[i]:graph.indptr[i + 1]] for i in frontier]
        if not parts:
            break
        cand = np.unique(np.concatenate(parts))
        cand = cand[~in_sub[cand]]
        room = node_budget - len(order)
        if cand.size > room:
            truncated = True
            if priority is not None:
                pick = np.lexsort((cand, -priority[cand]))[:room]
            else:
                pick = np.arange(room)
            cand = np.sort(cand[pick])
        in_sub[cand] = True
        order.extend(cand.tolist())
        hops.extend([hop] * cand.size)
        frontier = cand
    nodes = np.asarray(order, dtype=np.int64)
    local = np.full(n_total, -1, dtype=np.int64)
    local[nodes] = np.arange(len(nodes))
    emask = in_sub[graph.edge_head] & in_sub[graph.edge_tail]
    edges = np.nonzero(emask)[0]
    edge_index = np.stack([local[graph.edge_head[edges]], local[graph.edge_tail[edges]]]) if edges.size \
        else np.zeros((2, 0), dtype=np.int64)
    return Subgraph(nodes=nodes, hops=np.asarray(hops, dtype=np.int64), edges=edges,
                    edge_index=edge_index.astype(np.int64),
                    local={int(g): i for i, g in enumerate(nodes)}, truncated=truncated)


def local_adjacency(sub: Subgraph) -> list[list[tuple[int, int]]]:
    """Undirected adjacency in local indices: adj[u] = [(v, subgraph edge position), ...], sorted."""
    adj: list[list[tuple[int, int]]] = [[] for _ in range(sub.size)]
    for pos, (h, t) in enumerate(sub.edge_index.T.tolist()):
        if h == t:
            continue
        adj[h].append((t, pos))
        adj[t].append((h, pos))
    for lst in adj:
        lst.sort()
    return adj


def bfs_parents(adj: list[list[tuple[int, int]]], roots: list[int], max_depth: int) -> dict[int, tuple[int, int]]:
    """Multi-source BFS from ``roots``: node -> (parent, edge position); roots map to (-1, -1)."""
    parent: dict[int, tuple[int, int]] = {r: (-1, -1) for r in roots}
    depth = {r: 0 for r in roots}
    queue = deque(roots)
    while queue:
        u = queue.popleft()
        if depth[u] >= max_depth:
            continue
        for v, pos in adj[u]:
            if v not in parent:
                parent[v] = (u, pos)
                depth[v] = depth[u] + 1
                queue.append(v)
    return parent


def path_to_root(parent: dict[int, tuple[int, int]], start: int) -> tuple[list[int], list[int]] | None:
    """Follow BFS parents from ``start`` to its root: (nodes start..root, edge positions)."""
    if start not in parent:
        return None
    nodes, edges = [start], []
    u = start
    while parent[u][0] != -1:
        u, pos = parent[u]
        edges.append(pos)
        nodes.append(u)
    return nodes, edges


def shortest_path(adj: list[list[tuple[int, int]]], source: int, target: int,
                  max_depth: int = 6) -> tuple[list[int], list[int]] | None:
    """One shortest undirected path source -> target: (nodes, edge positions), or None."""
    parent = bfs_parents(adj, [target], max_depth)
    return path_to_root(parent, source)


@dataclass
class PathStep:
    head: str
    relation: str
    template: str
    tail: str
    forward: bool  # True when the path walks the edge from head to tail


def path_steps(graph: KGGraph, sub: Subgraph, nodes: list[int], edge_pos: list[int]) -> list[PathStep]:
    """Turn a local path into the KG triples it walks, keeping each edge's true direction."""
    steps = []
    for i, pos in enumerate(edge_pos):
        e = int(sub.edges[pos])
        h, t = int(graph.edge_head[e]), int(graph.edge_tail[e])
        rel = graph.relations[graph.edge_rel[e]]
        walked_from = int(sub.nodes[nodes[i]])
        steps.append(PathStep(graph.names[h], rel.name, rel.template, graph.names[t], forward=walked_from == h))
    return steps


def chain_text(steps: list[PathStep]) -> str:
    """``levodopa —treats→ Parkinson's disease —presents→ tremor`` (reverse edges as ``←rel—``)."""
    if not steps:
        return ""
    first = steps[0]
    parts = [first.head if first.forward else first.tail]
    for s in steps:
        if s.forward:
            parts.append(f"—{s.template}→ {s.tail}")
        else:
            parts.append(f"←{s.template}— {s.head}")
    return " ".join(parts)


def sentence_text(steps: list[PathStep]) -> str:
    """The same path as plain sentences: ``levodopa treats Parkinson's disease. ...``."""
    return " ".join(f"{s.head} {s.template} {s.tail}." for s in steps)
