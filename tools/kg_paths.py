"""Tool ``kg_paths``: knowledge-graph paths relevant to a question (UGAT-MedQA retrieval).

Steps (../shared/docs/methods.md §4, with issue 14's relation-aware facts first):

0. the asked relation (the intent's relation phrase, or the question without its entities) selects
   relation types (:mod:`tools._kg`); the one-hop facts of those types around the question's
   entities ("Apomorphine palliates Parkinson's disease") are registered first, as ``P<n>`` evidence
   with their license and provenance. The steps below follow only for a multi-hop question: one
   with options, with several linked entities, or whose asked relation gave no fact;
1. link KeyBERT keyphrases of the question, the answer options and the intent's entities to KG
   nodes (exact, fuzzy, embedding; :mod:`kb.linking`);
2. expand ``max_hops`` around the linked nodes within ``node_budget`` (:func:`tools._kg.expand`);
3. score the subgraph's nodes with a GAT trained for this question without labels
   (:mod:`tools._gat`) and keep the nodes above theta_0;
4. shortest paths from the kept nodes to each option's nodes (or, for an open question, from the
   question's concepts to the best-scored nodes);
5. verbalize each path with the relation templates and register it as evidence ``P<n>``.

``variant``: ``full`` (GAT + filtering), ``gcn`` (GCN instead of GAT), ``no-filter`` (no node
scoring: every subgraph node is a path source, nearest paths first) — the thesis's ablations — and
``cosine`` (no training: each node scored by the cosine of its name to the question, then the same
threshold and paths as ``full``), which measures what the GAT adds (#18; docs/bench/kg.md).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Literal

import numpy as np
from pydantic import BaseModel, Field

from kb.kg_harvest import edge_scores, extraction_note
from kb.kg_store import normalize_name
from tools._gat import cosine_scores, keep_threshold, train_scorer
from tools._kg import Fact, KGFact, Subgraph, bfs_parents, chain_text, everyday_readings, expand, facts_reply, \
    is_placeholder, joint_facts, joint_reply, local_adjacency, match_relations, one_hop_facts, others_of, path_steps, \
    path_to_root, relation_phrases, sentence_text, whole_names
# Public here for the app, which imports no private tool module: the asked slot types a fact's ends by these
# (assistant.answer.slots).
from tools._kg import kinds_asked  # noqa: F401
from tools.registry import ToolContext, ToolError, tool
from tools.intent import asked_kind, question_stem

Variant = Literal["full", "no-filter", "gcn", "cosine"]
OPTION_LABELS = "ABCDEFGHIJ"
# The step text the UI shows while paths are found. Measured (#18, docs/bench/kg_scoring.md): on MedQA the
# trained GAT reaches the same options as untrained cosine scores, so the step says so instead of implying more.
SCORING_STEP = {
    "full": "nodes scored by a GAT trained for this question (measured on MedQA: it reaches the same answers "
            "as plain cosine similarity)",
    "gcn": "nodes scored by a GCN trained for this question (measured on MedQA: it reaches the same answers "
           "as plain cosine similarity)",
    "cosine": "nodes scored by their cosine similarity to the question",
    "no-filter": "every node a path source (no node scoring)",
}


class Input(BaseModel):
    question: str = Field(description="The user's question, as asked.")
    options: list[str] = Field(default_factory=list, description="Answer options of a multiple-choice question.")
    entities: list[str] = Field(default_factory=list, description="Entities named in the question (drugs, diseases…).")
    relation: str = Field(default="", description="The asked relation as a short phrase, e.g. 'treats'.")
    kg: str | None = Field(default=None, description="Knowledge graph to search; empty: the best-linked loaded one.")
    max_hops: int = Field(default=3, ge=1, le=4, description="Hops to expand around the linked concepts (D_max).")
    node_budget: int = Field(default=2000, ge=10, le=50000, description="Most nodes in the subgraph.")
    variant: Variant = Field(default="full", description="full, no-filter, gcn or cosine (ablations).")
    max_paths: int = Field(default=8, ge=1, le=50, description="Most paths returned.")
    max_facts: int = Field(default=24, ge=0, le=100, description="Most one-hop facts of the asked relation.")
    list_reply: bool = Field(default=False, description="The question asks for the things in the relation: answer "
                                                        "with the one-hop facts themselves, each cited.")
    joint_reply: bool = Field(default=False, description="The question asks what joins its entities ('which of "
                                                         "those also treat asthma?'): answer with the facts of the "
                                                         "names joined to every one of them, each cited.")


class Linked(BaseModel):
    mention: str
    name: str
    rule: str = Field(description="How it was linked: exact, fuzzy or embedding.")
    score: float
    role: str = Field(description="question, entity, option A, …, or previous turn.")


class KGPath(BaseModel):
    id: str
    chain: str
    sentence: str
    triples: list[tuple[str, str, str]]
    score: float | None
    option: str | None = None
    length: int


class SelectedRelation(BaseModel):
    name: str
    template: str
    score: float = Field(description="Cosine of the asked relation to this type (its family shares the best's kinds).")


class Output(BaseModel):
    kg: str
    paths: list[KGPath]
    facts: list[KGFact] = Field(default_factory=list, description="One-hop facts of the asked relation, first.")
    relations: list[SelectedRelation] = Field(default_factory=list)
    linked: list[Linked]
    subgraph_nodes: int
    subgraph_edges: int
    kept_nodes: int
    timings_s: dict[str, float] = Field(default_factory=dict)
    message: str = ""
    answer: str = Field(default="", description="The reply composed from the facts (list_reply), else empty.")

    def reply(self) -> str | None:
        """The cited reply when the facts are the answer; None lets the model answer from the whole pool."""
        return self.answer or None


@dataclass
class RetrievalConfig:
    max_hops: int = 3
    node_budget: int = 2000
    variant: str = "full"
    theta: float | None = None  # None: mean + 1 std of this question's scores
    max_sources: int = 40
    max_path_len: int = 4
    per_option: int = 3
    max_paths: int = 8
    epochs: int | None = None
    seed: int = 0


@dataclass
class FoundPath:
    nodes: list[int]  # global node indices, source first
    steps: list
    score: float | None
    option: str | None

    @property
    def length(self) -> int:
        return len(self.steps)


@dataclass
class RetrievalResult:
    paths: list[FoundPath]
    sub: Subgraph
    scores: np.ndarray | None
    kept: list[int]
    timings: dict[str, float] = field(default_factory=dict)


def find_paths(graph, node_emb: np.ndarray, q_vec: np.ndarray, question_nodes: list[int],
               option_nodes: dict[str, list[int]], cfg: RetrievalConfig) -> RetrievalResult:
    """Subgraph build, node scoring and path extraction for one question (the timed core).

    Parameters
    ----------
    graph : kb.kg_store.KGGraph
    node_emb : ndarray (n_total, d), name embeddings of all nodes of ``graph``
    q_vec : ndarray (d,), question embedding
    question_nodes : global indices linked from the question (and entities)
    option_nodes : option label -> global indices linked from that option (empty: open question)
    """
    t0 = time.perf_counter()
    seeds = list(dict.fromkeys(question_nodes + [i for ids in option_nodes.values() for i in ids]))
    priority = node_emb @ q_vec
    sub = expand(graph, seeds, max_hops=cfg.max_hops, node_budget=cfg.node_budget, priority=priority)
    adj = local_adjacency(sub)
    t1 = time.perf_counter()
    scores = None
    if cfg.variant in ("full", "gcn"):
        kw = {"epochs": cfg.epochs} if cfg.epochs is not None else {}  # 0 epochs is a real setting
        _, scores = train_scorer(node_emb[sub.nodes], sub.edge_index, q_vec,
                                 conv="gcn" if cfg.variant == "gcn" else "gat", seed=cfg.seed, **kw)
    elif cfg.variant == "cosine":
        scores = cosine_scores(node_emb[sub.nodes], q_vec)
    elif cfg.variant != "no-filter":
        raise ValueError(f"unknown variant {cfg.variant!r}")
    t2 = time.perf_counter()
    q_local = [sub.local[i] for i in question_nodes if i in sub.local]
    if scores is not None:
        theta = keep_threshold(scores, cfg.theta)
        order = np.lexsort((np.arange(sub.size), -scores))
        kept = [int(i) for i in order if scores[i] >= theta][:cfg.max_sources]
        sources = list(dict.fromkeys(kept + q_local))
    else:
        kept = list(range(sub.size))
        sources = kept
    found: list[FoundPath] = []

    def make(nodes_local: list[int], edge_pos: list[int], option: str | None) -> FoundPath:
        score = float(np.mean(scores[nodes_local])) if scores is not None else None
        return FoundPath([int(sub.nodes[i]) for i in nodes_local], path_steps(graph, sub, nodes_local, edge_pos),
                         score, option)

    def rank(cands: list[FoundPath]) -> list[FoundPath]:
        if scores is None:  # no filtering: nearest paths first, in BFS (index) order
            return sorted(cands, key=lambda p: p.length)
        return sorted(cands, key=lambda p: (-(p.score or 0.0), p.length))

    targets_by_option = {lab: [sub.local[i] for i in ids if i in sub.local] for lab, ids in option_nodes.items()}
    targets_by_option = {lab: t for lab, t in targets_by_option.items() if t}
    if targets_by_option:
        for lab, targets in targets_by_option.items():
            parent = bfs_parents(adj, targets, cfg.max_path_len)
            tset = set(targets)
            cands = []
            for s in sources:
                if s in tset:
                    continue
                hit = path_to_root(parent, s)
                if hit and len(hit[1]) >= 1:
                    cands.append(make(hit[0], hit[1], lab))
            found.extend(_dedupe(rank(cands))[:cfg.per_option])
    elif q_local:
        parent = bfs_parents(adj, q_local, cfg.max_path_len)
        qset = set(q_local)
        if scores is not None:  # the top-scored nodes: kept ones first, then the next best
            ranked = [int(i) for i in np.lexsort((np.arange(sub.size), -scores))]
            targets = [s for s in dict.fromkeys(kept + ranked) if s not in qset][:max(cfg.max_paths * 2, 1)]
        else:
            targets = [i for i in range(sub.size) if i not in qset]
        cands = []
        for t in targets:
            hit = path_to_root(parent, t)
            if hit and len(hit[1]) >= 1:
                nodes, edges = hit[0][::-1], hit[1][::-1]  # question concept first
                cands.append(make(nodes, edges, None))
        found.extend(_dedupe(rank(cands)))
    found = found if targets_by_option else found[:cfg.max_paths]
    if targets_by_option and len(found) > cfg.max_paths:
        found = _round_robin(found, cfg.max_paths)
    t3 = time.perf_counter()
    return RetrievalResult(paths=found, sub=sub, scores=scores, kept=kept,
                           timings={"subgraph": t1 - t0, "scoring": t2 - t1, "paths": t3 - t2, "total": t3 - t0})


def _dedupe(paths: list[FoundPath]) -> list[FoundPath]:
    seen: set[tuple[int, ...]] = set()
    out = []
    for p in paths:
        key = tuple(sorted((p.nodes[0], p.nodes[-1]))) + tuple(sorted(p.nodes))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def _round_robin(paths: list[FoundPath], limit: int) -> list[FoundPath]:
    """Keep ``limit`` paths spread evenly over the options (best of each option first)."""
    by_opt: dict[str | None, list[FoundPath]] = {}
    for p in paths:
        by_opt.setdefault(p.option, []).append(p)
    out: list[FoundPath] = []
    while len(out) < limit and any(by_opt.values()):
        for lst in by_opt.values():
            if lst and len(out) < limit:
                out.append(lst.pop(0))
    return out


# -- linking for the tool and the evaluation -------------------------------------------------------
def get_linker(store, source: str, embedder):
    """One cached :class:`kb.linking.Linker` per (store, graph)."""
    from kb.linking import Linker

    cache = getattr(store, "_linkers", None)
    if cache is None:
        cache = store._linkers = {}
    key = (source, store.loaded_at(source))
    if key not in cache:
        cache[key] = Linker(store, source, embedder)
    return cache[key]


def link_question(linker, question: str, options: list[str], entities: list[str],
                  reread: Callable[[str, list], list] | None = None):
    """(question concepts, option label -> concepts, [(concept, role)]) for one question.

    ``reread(entity, concepts)``: the concepts an intent entity stands for, given its links (see
    :func:`everyday_readings`).
    """
    q_concepts = linker.link_text(question)
    roles = [(c, "question") for c in q_concepts]
    if reread is None:
        ent = linker.link_phrases(entities, rule_prefix="entity-") if entities else []
    else:
        # The intent sometimes splits one name in two ("peripheral nervous system neoplasm" -> "neoplasm",
        # "peripheral nervous system", seen on the kg-relations eval): an entity that is a part of a longer node
        # name the question holds exactly is that node.
        whole = sorted((c for c in q_concepts if c.rule == "exact" and " " in c.mention), key=lambda c: -len(c.mention))
        ent, seen = [], set()
        for entity in entities:
            part = f" {normalize_name(entity)} "
            covering = [c for c in whole if part.strip() and part in f" {c.mention} " and part.strip() != c.mention]
            concepts = covering[:1] or reread(entity, linker.link_phrases([entity], rule_prefix="entity-"))
            ent += [c for c in concepts if not (c.index in seen or seen.add(c.index))]
    roles += [(c, "entity") for c in ent]
    option_concepts = {}
    for lab, text in zip(OPTION_LABELS, options):
        cs = linker.link_phrases([text])
        if not cs and len(text.split()) > 3:  # a long option: its keyphrases
            cs = linker.link_text(text, top_n=4)
        option_concepts[lab] = cs
        roles += [(c, f"option {lab}") for c in cs]
    return q_concepts + ent, option_concepts, roles


def _choose_graph(store, requested: str | None, question: str, embedder, entities: list[str] | None = None,
                  relation: str = "") -> str:
    names = store.graph_names()
    if not names:
        raise ToolError("No knowledge graph is loaded. Load one first, e.g. `evidentia kb kg load hetionet`.")
    if requested:
        if requested not in names:
            raise ToolError(f"No knowledge graph named {requested!r}; loaded: {', '.join(names)}.")
        return requested
    if len(names) == 1:
        return names[0]
    # Cheap choice: the graph whose name index matches most n-grams of the question exactly (no
    # embeddings, so a large graph without cached name embeddings is never encoded just to compare).
    def exact_hits(name: str) -> int:
        linker = get_linker(store, name, embedder)
        return sum(1 for c in linker.candidates(question) if normalize_name(c) in linker.alias)

    def entity_nodes(name: str) -> list[int]:
        linker = get_linker(store, name, embedder)
        reread = everyday_readings(linker, embedder, relation, question)
        return [i for e in entities or []
                for i in linker.alias.get(normalize_name(e)) or [c.index for c in reread(e, [])]]

    def has_facts(name: str, nodes: list[int]) -> bool:
        """A one-hop fact of the asked relation touches an entity: the graph that can answer "What drugs treat
        alcohol dependence?" (Hetionet) beats one whose names merely match more of its words (ConceptNet's
        "treat", "alcohol")."""
        if not nodes or not relation.strip():
            return False
        graph = get_linker(store, name, embedder).graph
        selected = match_relations(graph, relation_phrases(relation, question, entities or []), embedder,
                                   node_kinds={graph.kinds[i] for i in nodes},
                                   asked=asked_kind(question))
        return bool(one_hop_facts(graph, nodes, selected, limit=1))

    nodes = {n: entity_nodes(n) for n in names}
    return max(names, key=lambda n: (has_facts(n, nodes[n]), bool(nodes[n]), exact_hits(n), n == "hetionet"))


@tool("kg_paths", cpu_bound=True)
def kg_paths(ctx: ToolContext, args: Input) -> Output:
    """Find knowledge-graph paths (drug-treats-disease-presents-symptom chains…) relevant to the question."""
    from kb.linking import node_embeddings

    if not args.question.strip():
        raise ToolError("The question is empty.")
    if len(args.options) > len(OPTION_LABELS):
        raise ToolError(f"At most {len(OPTION_LABELS)} options are supported.")
    store, embedder = ctx.deps.kg, ctx.deps.embedder
    # A multiple-choice message often lists its options after the question ("… A) wood B) copper"), and the chat
    # passes that rewrite: the options are linked as options, so the question is read without its list.
    question = question_stem(args.question) if args.options else args.question
    source = _choose_graph(store, args.kg, question, embedder, args.entities, args.relation)
    t0 = time.perf_counter()
    linker = get_linker(store, source, embedder)
    graph = linker.graph
    node_emb = node_embeddings(store, source, embedder)
    q_concepts, option_concepts, roles = link_question(
        linker, question, args.options, args.entities,
        reread=everyday_readings(linker, embedder, args.relation, question))
    previous = ctx.session.kg_linked.get(source, []) if ctx.session is not None else []
    if not q_concepts and previous:  # a follow-up ("which of those…") reuses the last turn's concepts
        q_concepts = previous
        roles += [(c, "previous turn") for c in previous]
    linked = [Linked(mention=c.mention, name=c.name, rule=c.rule, score=c.score, role=r) for c, r in roles]
    t_link = time.perf_counter() - t0
    if not q_concepts and not any(option_concepts.values()):
        return Output(kg=source, paths=[], linked=linked, subgraph_nodes=0, subgraph_edges=0, kept_nodes=0,
                      timings_s={"linking": round(t_link, 3)},
                      message=f"No concept of the question could be linked to {source}.")
    if ctx.session is not None and q_concepts:
        ctx.session.kg_linked[source] = q_concepts
    t1 = time.perf_counter()
    entity_nodes = [c.index for c, role in roles if role == "entity"]
    anchors = list(dict.fromkeys(entity_nodes or [c.index for c in q_concepts]))
    groups: dict[str, set[int]] = {}  # each asked entity's nodes: several readings of one name are one group
    for c, role in roles:
        if role == "entity":
            groups.setdefault(c.mention, set()).add(c.index)
    # Only entities that named a node leave the relation phrase: the intent sometimes lists the answer's kind as an
    # entity ("which genes are associated with it?" -> entities Crohn's, genes), and "genes" is the relation's half.
    mentions = {normalize_name(m) for m in groups}
    named = [e for e in args.entities if any(m and m in normalize_name(e) for m in mentions)]
    selected = match_relations(graph, relation_phrases(args.relation, question,
                                                       [c.mention for c, _ in roles] + named),
                               embedder, node_kinds={graph.kinds[i] for i in anchors},
                               asked=asked_kind(question))
    every_fact = one_hop_facts(graph, anchors, selected, limit=None)  # counted, so the reply can say how many
    facts = every_fact[:args.max_facts]
    out_facts = _register_facts(ctx, store, source, graph, facts)
    relations = [SelectedRelation(name=m.name, template=m.template, score=m.score) for m in selected]
    t_facts = time.perf_counter() - t1

    def facts_only(shown: list[KGFact], answer: str, facts_s: float) -> Output:
        """The facts as the tool's whole output: no GAT paths, which would only repeat them, more slowly."""
        return Output(kg=source, paths=[], facts=shown, relations=relations, linked=linked, subgraph_nodes=0,
                      subgraph_edges=0, kept_nodes=0, timings_s={"linking": round(t_link, 3),
                                                                 "facts": round(facts_s, 3)}, answer=answer)

    asked = len(groups) if groups else len(anchors)
    if out_facts and not args.options and asked < 2:  # a one-hop question, answered by its facts
        ctx.report(f"{len(out_facts)} facts of {', '.join(m.template for m in selected)} in {source}")
        return facts_only(out_facts, facts_reply(source, out_facts, len(every_fact), [graph.names[i] for i in anchors])
                          if args.list_reply else "", t_facts)
    if out_facts and not args.options and len(groups) >= 2 and (args.list_reply or args.joint_reply):
        joint = joint_facts(graph, every_fact, list(groups.values()))
        if joint:  # "Which drugs treat both COPD and asthma?": the names every asked entity shares, as the reply
            others = others_of(graph, joint, anchors)
            total = len(set(others))
            keep = whole_names(others, args.max_facts)  # never a name cut off from one of its facts
            shown = _register_facts(ctx, store, source, graph, joint[:keep])
            names = [graph.names[next(iter(nodes))] if len(nodes) == 1 else mention
                     for mention, nodes in groups.items()]
            ctx.report(f"{len(shown)} facts joining {' and '.join(names)} in {source}")
            return facts_only(shown, joint_reply(source, shown, names, others[:keep], total), time.perf_counter() - t1)
    q_vec = embedder.encode([" ".join([question] + args.options)])[0]
    ctx.report(f"finding paths in {source} from {len(q_concepts) + sum(map(len, option_concepts.values()))} "
               f"linked concepts; {SCORING_STEP[args.variant]}")
    cfg = RetrievalConfig(max_hops=args.max_hops, node_budget=args.node_budget, variant=args.variant,
                          max_paths=args.max_paths)
    res = find_paths(graph, node_emb, q_vec, [c.index for c in q_concepts],
                     {lab: [c.index for c in cs] for lab, cs in option_concepts.items()}, cfg)
    out_paths = []
    fact_ids = {f.id for f in out_facts}
    for p in res.paths:
        if any(is_placeholder(graph.names[n]) for n in p.nodes):
            continue  # through a template's blank ("something is at location of …"): joins anything, says nothing
        chain, sentence = chain_text(p.steps), sentence_text(p.steps)
        triples = [(s.head, s.template, s.tail) for s in p.steps]
        extracted = edge_scores(store, source, [(s.head, s.tail) for s in p.steps])
        notes = [extraction_note(x) for x in extracted if x is not None]
        if notes:  # harvested edges say so wherever the path is shown: UI, CLI and the answer prompt
            chain, sentence = f"{chain} [{'; '.join(notes)}]", f"{sentence} [{'; '.join(notes)}]"
        ev = ctx.evidence.add_path(chain, triples=triples, source=source,
                                   score=None if p.score is None else round(p.score, 4),
                                   sentence=sentence, option=p.option,
                                   relations=[s.relation for s in p.steps],
                                   **({"extracted_scores": extracted} if notes else {}))
        if ev.id in fact_ids:
            continue  # a one-edge path over a fact already registered: the ledger gave back the fact
        out_paths.append(KGPath(id=ev.id, chain=chain, sentence=sentence, triples=triples,
                                score=ev.score, option=p.option, length=p.length))
    timings = {"linking": round(t_link, 3), "facts": round(t_facts, 3),
               **{k: round(v, 3) for k, v in res.timings.items()}}
    msg = "" if out_paths or out_facts else "The linked concepts are not connected within the hop limit."
    return Output(kg=source, paths=out_paths, facts=out_facts, relations=relations, linked=linked,
                  subgraph_nodes=res.sub.size, subgraph_edges=int(res.sub.edges.size), kept_nodes=len(res.kept),
                  timings_s=timings, message=msg)


def _register_facts(ctx: ToolContext, store, source: str, graph, facts: list[Fact]) -> list[KGFact]:
    """Each fact as a one-triple path ``P<n>`` (the ledger then folds a GAT path over the same edge into it)."""
    details = store.edge_details(source, [(graph.ids[f.head], graph.relations[f.relation].name,
                                           graph.ids[f.tail]) for f in facts])
    triples = [f.triple(graph) for f in facts]
    extracted = edge_scores(store, source, [(h, t) for h, _, t in triples])
    out = []
    for f, (head, template, tail), score in zip(facts, triples, extracted):
        info = details.get((graph.ids[f.head], graph.relations[f.relation].name, graph.ids[f.tail]), {})
        chain, sentence = f"{head} {template} {tail}", f"{head} {template} {tail}."
        if score is not None:  # a harvested fact says so, as a harvested path does
            note = extraction_note(score)
            chain, sentence = f"{chain} [{note}]", f"{head} {template} {tail} [{note}]."
        ev = ctx.evidence.add_path(chain, triples=[(head, template, tail)], source=source,
                                   score=f.score, sentence=sentence, fact=True,
                                   relations=[graph.relations[f.relation].name], license=info.get("license", ""),
                                   kinds=[graph.kinds[f.head], graph.kinds[f.tail]],
                                   provenance=info.get("provenance", ""),
                                   **({"extracted_scores": [score]} if score is not None else {}))
        out.append(KGFact(id=ev.id, sentence=sentence, triple=(head, template, tail),
                          relation=graph.relations[f.relation].name, license=info.get("license", ""),
                          provenance=info.get("provenance", "")))
    return out
