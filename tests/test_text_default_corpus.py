"""The default corpus readers: every source yields documents carrying its license (no embedding here)."""

from __future__ import annotations

import shutil
import zipfile

import httpx
import pytest

import kb.default_corpus as dc
from kb.default_corpus import (
    ARCHIVE_NAMES,
    LICENSES,
    MEDQUAD_COMMIT,
    UPSTREAM,
    WORLDTREE_COMMIT,
    DefaultCorpus,
    SourceUnavailable,
    limited,
)
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


# -- upstream archives, without a mirror (synthetic zips with the upstream layout; nothing is downloaded) ----

WT_TOP = f"TextGraphs-15-{WORLDTREE_COMMIT}"
MQ_TOP = f"MedQuAD-{MEDQUAD_COMMIT}"
KINDOF = ("[FILL] a/the\tHYPONYM\t[FILL] is a kind of\tHYPERNYM\t[SKIP] COMMENTS\t[SKIP] UID\n"
          "a\tbee\tis a kind of\tinsect\t#12\tdd38-0001\n"
          "\t\t\t\t# only a comment\tdd38-0002\n"
          "\tgranite\tis a kind of\trock\t\tdd38-0003\n")
# CRLF line ends and no UID column: the ids fall back to <table>-<row>.
USEDFOR = "[SKIP] COMMENTS\tACTOR\tUSEDFOR\tFOR\r\n\ta thermometer\tis used for\tmeasuring temperature\r\n"


def _zip(path, files: dict[str, str]):
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


def _medquad_xml(doc_id, source, url, focus, pairs):
    qa = "".join(f'<QAPair pid="{i}"><Question qid="{doc_id}-{i}" qtype="information">{q}</Question>'
                 f"<Answer>{a}</Answer></QAPair>" for i, (q, a) in enumerate(pairs, 1))
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<Document id="{doc_id}" source="{source}" url="{url}">'
            f"<Focus>{focus}</Focus><QAPairs>{qa}</QAPairs></Document>")


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*a, **kw):
        raise httpx.ConnectError("no network in tests")
    monkeypatch.setattr(httpx, "stream", refuse)


def test_worldtree_reads_the_pinned_archive_without_a_mirror(tmp_path, no_network):
    _zip(tmp_path / ARCHIVE_NAMES["worldtree"], {  # where _download caches it: already there, so no download
        f"{WT_TOP}/data/README-Worldtree-V2.txt": "not a table",
        f"{WT_TOP}/data/tables/USEDFOR.tsv": USEDFOR, f"{WT_TOP}/data/tables/KINDOF.tsv": KINDOF})
    docs = list(DefaultCorpus(None, tmp_path).worldtree())
    assert [(d.doc_id, d.text, d.title) for d in docs] == [
        ("worldtree:dd38-0001", "A bee is a kind of insect.", "WorldTree KINDOF dd38-0001"),
        ("worldtree:dd38-0003", "Granite is a kind of rock.", "WorldTree KINDOF dd38-0003"),
        ("worldtree:USEDFOR-1", "A thermometer is used for measuring temperature.", "WorldTree USEDFOR USEDFOR-1")]
    assert all(d.source == "worldtree" and d.license == LICENSES["worldtree"]
               and d.url == "http://www.cognitiveai.org/explanationbank/" for d in docs)
    assert UPSTREAM["worldtree"].endswith(f"/archive/{WORLDTREE_COMMIT}.zip")


def test_worldtree_archive_and_mirror_folder_give_identical_documents(tmp_path, no_network):
    tables = tmp_path / "mirror" / "worldtree-v2.1-tablestore" / "tables"
    tables.mkdir(parents=True)
    for name, text in {"KINDOF": KINDOF, "USEDFOR": USEDFOR}.items():
        (tables / f"{name}.tsv").write_bytes(text.encode("utf-8"))
    cache = tmp_path / "cache"
    cache.mkdir()
    _zip(cache / ARCHIVE_NAMES["worldtree"], {f"{WT_TOP}/data/tables/KINDOF.tsv": KINDOF,
                                              f"{WT_TOP}/data/tables/USEDFOR.tsv": USEDFOR})
    from_mirror = list(DefaultCorpus(tmp_path / "mirror", cache).worldtree())
    from_zip = list(DefaultCorpus(None, cache).worldtree())
    assert len(from_mirror) == 3 and from_mirror == from_zip


def test_medquad_reads_the_pinned_archive_without_a_mirror(tmp_path, monkeypatch):
    fixture = _zip(tmp_path / "fixture.zip", {
        f"{MQ_TOP}/readme.txt": "MedQuAD",
        f"{MQ_TOP}/1_CancerGov_QA/0000001_1.xml": _medquad_xml(
            "0000001_1", "CancerGov", "https://www.cancer.gov/all", "Adult ALL",
            [("What is (are) Adult ALL ?", "\n  ALL is a cancer.  "), ("What causes Adult ALL ?", "Genes &amp; age.")]),
        f"{MQ_TOP}/3_GHR_QA/0000001.xml": _medquad_xml(
            "0000001", "GHR", "https://ghr.nlm.nih.gov/aarskog", "Aarskog-Scott syndrome",
            [("What is (are) Aarskog-Scott syndrome ?", "It&apos;s a genetic disorder."),
             ("How many people are affected by Aarskog-Scott syndrome ?", "  ")]),  # answer removed upstream
        f"{MQ_TOP}/3_GHR_QA/0000002.xml": "<Document id='0000002'><QAPairs><QAPair>",  # malformed
    })
    calls = []

    def fake_download(url, dest):
        calls.append((url, dest))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(fixture, dest)
        return dest

    monkeypatch.setattr(dc, "_download", fake_download)
    corpus = DefaultCorpus(None, tmp_path / "cache")
    docs = list(corpus.medquad())
    assert calls == [(UPSTREAM["medquad"], tmp_path / "cache" / ARCHIVE_NAMES["medquad"])]
    # round-robin over the collections; the empty answer and the malformed file are skipped
    assert [(d.doc_id, d.text, d.title, d.url) for d in docs] == [
        ("medquad:1_CancerGov_QA/0000001_1#0000001_1-1", "ALL is a cancer.", "Adult ALL — CancerGov: What is (are) Adult ALL ?",
         "https://www.cancer.gov/all"),
        ("medquad:3_GHR_QA/0000001#0000001-1", "It's a genetic disorder.",
         "Aarskog-Scott syndrome — GHR: What is (are) Aarskog-Scott syndrome ?", "https://ghr.nlm.nih.gov/aarskog"),
        ("medquad:1_CancerGov_QA/0000001_1#0000001_1-2", "Genes & age.", "Adult ALL — CancerGov: What causes Adult ALL ?",
         "https://www.cancer.gov/all")]
    assert all(d.source == "medquad" and d.license == LICENSES["medquad"] for d in docs)
    assert corpus.skipped["medquad"] == [f"{MQ_TOP}/3_GHR_QA/0000002.xml"]


@pytest.mark.parametrize("name", ["worldtree", "medquad"])
def test_failed_download_names_the_mirror_setting(tmp_path, no_network, name):
    corpus = DefaultCorpus(None, tmp_path)
    with pytest.raises(SourceUnavailable, match="EVIDENTIA_KB_MIRROR_DIR") as err:
        next(getattr(corpus, name)())
    assert UPSTREAM[name] in str(err.value)
    assert not (tmp_path / ARCHIVE_NAMES[name]).exists()
    (tmp_path / ARCHIVE_NAMES[name]).write_text("<html>not a zip</html>")  # a bad cached file: one clear error
    with pytest.raises(SourceUnavailable, match="not a zip archive"):
        next(getattr(corpus, name)())


@pytest.mark.skipif(not (KB_DATA / "medquad" / "medquad_answered.jsonl.gz").exists(), reason="needs ../shared/kb-data")
def test_medquad_ids_are_unique_across_collections(tmp_path):
    """qids restart in every NIH collection; a shared id would give two answers one title and URL."""
    docs = list(DefaultCorpus(KB_DATA, tmp_path).medquad())
    assert len({d.doc_id for d in docs}) == len(docs) > 16_000
