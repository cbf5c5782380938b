"""Everyday names of KG nodes (issue 14 §3): "lupus" for "systemic lupus erythematosus", "COPD" for the disease
its initials spell. Used by :func:`tools.kg_paths.link_question` for the intent's entities."""

from __future__ import annotations

from collections.abc import Callable

from kb.kg_store import normalize_name
from kb.linking import ABBREVIATION, LinkedConcept
from tools._kg_facts import match_relations, one_hop_facts, relation_phrases


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
