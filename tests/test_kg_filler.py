"""ConceptNet's template blanks (#78): CN-100K was cut from Open Mind Common Sense sentences written into templates
("You are likely to find something in a barn", "This is a bicycle"), and the blank became a node ("something",
"someone", "this", "you"). A fact or path through one joins any two names and says nothing: never evidence."""

from __future__ import annotations

import pytest

from tools._kg import is_placeholder


def test_a_templates_blank_is_no_concept():
    for blank in ("something", "Someone", "this", "you", "something you find underwater", "this picture"):
        assert is_placeholder(blank), blank
    for name in ("gold", "person", "mountain", "thing theory", "thistle"):
        assert not is_placeholder(name), name


FILLER_GRAPH = dict(
    nodes=[(n, n, "concept", "") for n in ("gold", "something", "mountain", "metal", "ring", "this picture")],
    edges=[("something", "AtLocation", "gold", ""), ("something", "AtLocation", "mountain", ""),
           ("gold", "IsA", "metal", ""), ("ring", "MadeOf", "gold", ""), ("this picture", "AtLocation", "gold", "")],
    relations=[("AtLocation", "is at location of"), ("IsA", "is a kind of"), ("MadeOf", "is made of")])


@pytest.fixture
def filler_store(tmp_path):
    from kb.kg_store import GraphData, KGStore, Relation

    store = KGStore(tmp_path / "kg.db")
    store.replace_graph(GraphData(source="words", license="CC BY-SA", description="ConceptNet-like",
                                  nodes=FILLER_GRAPH["nodes"], edges=FILLER_GRAPH["edges"],
                                  relations=[Relation(n, t) for n, t in FILLER_GRAPH["relations"]]))
    return store


def test_a_fact_whose_other_end_is_a_templates_blank_is_no_fact(filler_store):
    from tools._kg import RelationMatch, one_hop_facts

    graph = filler_store.graph("words")
    at = next(i for i, r in enumerate(graph.relations) if r.name == "AtLocation")
    gold = graph.names.index("gold")
    # Two AtLocation edges touch gold, both from a blank ("something", "this picture"): neither is a fact of gold.
    assert one_hop_facts(graph, [gold], [RelationMatch(at, "AtLocation", "is at location of", 0.9)], limit=None) == []
    made = next(i for i, r in enumerate(graph.relations) if r.name == "MadeOf")
    facts = one_hop_facts(graph, [gold], [RelationMatch(made, "MadeOf", "is made of", 0.9)], limit=None)
    assert [f.triple(graph) for f in facts] == [("ring", "is made of", "gold")]


def test_kg_paths_registers_no_path_through_a_blank(filler_store, tmp_settings):
    from tests.test_kg_relations import run_kg_paths

    out, ledger = run_kg_paths(filler_store, tmp_settings, question="Where can gold be found?", entities=["gold"],
                               variant="no-filter")
    texts = [e.text for e in ledger.items()]
    assert texts and not any("something" in t or "this picture" in t for t in texts)
    assert any("metal" in t for t in texts)  # the path to a concept is kept



def test_a_fact_carries_its_ends_node_kinds(tmp_path, tmp_settings):
    """The asked slot types a fact's ends by them ("Which drugs …?" needs a Compound; assistant.answer.slots)."""
    from kb.kg_loaders import read_hetionet
    from kb.kg_store import KGStore
    from tests.test_kg_relations import make_mirror, run_kg_paths

    store = KGStore(tmp_path / "kb" / "kg.db")
    store.replace_graph(read_hetionet(make_mirror(tmp_path / "mirror")))
    out, ledger = run_kg_paths(store, tmp_settings, question="What are the symptoms of Parkinson's disease?",
                               entities=["Parkinson's disease"], relation="symptoms")
    assert out.facts and all(ledger.get(f.id).meta["kinds"] == ["Disease", "Symptom"] for f in out.facts)
