"""Replies composed by code from one-hop KG facts, each name cited by the fact that says it (issue 14 §1, §3):
the facts of one asked entity (:func:`facts_reply`), and the names joined to every asked entity
(:func:`joint_facts`, :func:`joint_reply`)."""

from __future__ import annotations

from tools._kg_facts import Fact, KGFact


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
