"""The default corpus readers: every source yields documents carrying its license (no embedding here)."""

from __future__ import annotations

import pytest

from kb.default_corpus import LICENSES, DefaultCorpus, SourceUnavailable, limited
from kb.ingest import split_sentences
from tests.conftest import KB_DATA


@pytest.mark.skipif(not KB_DATA.exists(), reason="needs ../shared/kb-data")
@pytest.mark.parametrize("name", ["openbookqa", "worldtree", "medquad", "pubmedqa", "scifact"])
def test_each_source_reads_with_license_and_stable_ids(tmp_path, name):
    corpus = DefaultCorpus(KB_DATA, tmp_path)
    src = {s.name: s for s in corpus.sources()}[name]
    docs = list(limited(src.documents(), 40))
    again = list(limited(src.documents(), 40))
    assert docs and [d.doc_id for d in docs] == [d.doc_id for d in again]
    assert all(d.license == LICENSES[name] and d.source == name and d.text.strip() for d in docs)
    assert len({d.doc_id for d in docs}) == len(docs)
    total = sum(len(split_sentences(d.text)) for d in docs)
    assert total >= 40 or name in ("openbookqa", "worldtree") and total == len(docs)


def test_worldtree_rows_read_as_sentences(tmp_path):
    if not KB_DATA.exists():
        pytest.skip("needs ../shared/kb-data")
    docs = list(DefaultCorpus(KB_DATA, tmp_path).worldtree())
    kindof = [d.text for d in docs if "is a kind of" in d.text]
    assert kindof and all("[SKIP]" not in d.text and "#" not in d.text[:1] for d in docs)


def test_missing_mirror_needs_it_for_folder_sources(tmp_path):
    corpus = DefaultCorpus(None, tmp_path)
    with pytest.raises(SourceUnavailable, match="mirror"):
        next(corpus.worldtree())
    with pytest.raises(SourceUnavailable, match="mirror"):
        next(corpus.medquad())
