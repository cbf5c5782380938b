"""The default text corpus: five public sources, each with its license travelling with its sentences.

Sources are read from ``settings.kb_mirror_dir`` (e.g. ../shared/kb-data, described in its SOURCES.md).
Without a mirror, the sources that have a single upstream file are downloaded into
``settings.data_dir / "kb-sources"`` (OpenBookQA, PubMedQA, SciFact); WorldTree and MedQuAD need the
mirror (their upstreams are many files: a table folder and 11,000 XML files).
Nothing is bundled in the repository.
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import json
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kb.ingest import Document, split_sentences

LICENSES = {
    "openbookqa": "unknown: OpenBookQA V1 release has no license file (HF card: unknown; AI2 code Apache-2.0)",
    "worldtree": "CC BY-SA 4.0 (WorldTree V2.1 Tablestore, cognitiveai.org/explanationbank)",
    "medquad": "CC BY 4.0 (MedQuAD, Ben Abacha & Demner-Fushman 2019; pages from NIH websites)",
    "pubmedqa": "MIT (PubMedQA repository); abstract text copyright its publishers/authors",
    "scifact": "ODC-By 1.0 (SciFact abstracts via S2ORC)",
}

UPSTREAM = {
    "openbookqa": "https://ai2-public-datasets.s3.amazonaws.com/open-book-qa/OpenBookQA-V1-Sep2018.zip",
    "pubmedqa": "https://raw.githubusercontent.com/pubmedqa/pubmedqa/master/data/ori_pqal.json",
    "scifact": "https://scifact.s3-us-west-2.amazonaws.com/release/latest/data.tar.gz",
    "worldtree": "https://github.com/DeepBlueAI/TextGraphs-15/tree/main/data/tables (folder; needs the mirror)",
    "medquad": "https://github.com/abachaa/MedQuAD (11,000 XML files; needs the mirror)",
}

# Sentences per source for `kb build --default` when no limit is given. Embedding runs at roughly
# 240 short sentences/s on 2 idle cores, so the default (about 9k sentences) builds in under a
# minute; the build is incremental, so `--limit-per-source 0` later adds the rest without redoing it.
DEFAULT_LIMIT_PER_SOURCE = 2000


class SourceUnavailable(RuntimeError):
    pass


@dataclass
class Source:
    name: str
    documents: Callable[[], Iterator[Document]]


def _download(url: str, dest: Path) -> Path:
    import httpx

    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists():
        return dest
    try:
        with httpx.stream("GET", url, follow_redirects=True, timeout=60) as r:
            r.raise_for_status()
            tmp = dest.with_suffix(dest.suffix + ".part")
            with open(tmp, "wb") as fh:
                for chunk in r.iter_bytes():
                    fh.write(chunk)
            tmp.replace(dest)
    except Exception as exc:  # noqa: BLE001 - network trouble becomes one clear sentence
        raise SourceUnavailable(f"Could not download {url} ({exc}); set EVIDENTIA_KB_MIRROR_DIR to a local copy.") \
            from exc
    return dest


class DefaultCorpus:
    """The five sources, read lazily from the mirror (or upstream where that is one file)."""

    def __init__(self, mirror: Path | None, cache_dir: Path):
        self.mirror = Path(mirror) if mirror else None
        self.cache = Path(cache_dir)

    def _mirror_file(self, *parts: str) -> Path | None:
        if self.mirror is None:
            return None
        p = self.mirror.joinpath(*parts)
        return p if p.exists() else None

    # -- sources ----------------------------------------------------------------------------------
    def openbookqa(self) -> Iterator[Document]:
        path = self._mirror_file("openbookqa", "openbook.txt")
        if path is not None:
            lines = path.read_text(encoding="utf-8").splitlines()
        else:
            z = zipfile.ZipFile(_download(UPSTREAM["openbookqa"], self.cache / "OpenBookQA-V1-Sep2018.zip"))
            name = next(n for n in z.namelist() if n.endswith("openbook.txt"))
            lines = z.read(name).decode("utf-8").splitlines()
        for i, line in enumerate(lines, 1):
            fact = line.strip().strip('"').strip()
            if fact:
                yield Document(doc_id=f"openbookqa:{i}", text=fact, title=f"OpenBookQA fact {i}",
                               source="openbookqa", url=UPSTREAM["openbookqa"], license=LICENSES["openbookqa"])

    def worldtree(self) -> Iterator[Document]:
        folder = self._mirror_file("worldtree-v2.1-tablestore", "tables")
        if folder is None:
            raise SourceUnavailable("WorldTree needs the mirror folder worldtree-v2.1-tablestore/tables "
                                    f"(upstream: {UPSTREAM['worldtree']}).")
        for table in sorted(folder.glob("*.tsv")):
            rows = list(csv.reader(io.StringIO(table.read_text(encoding="utf-8", errors="replace")),
                                   delimiter="\t", quoting=csv.QUOTE_NONE))
            if not rows:
                continue
            header = rows[0]
            keep = [i for i, h in enumerate(header) if not h.startswith("[SKIP]")]
            uid_col = next((i for i, h in enumerate(header) if h.strip() == "[SKIP] UID"), None)
            for n, row in enumerate(rows[1:], 1):
                words = " ".join(row[i].strip() for i in keep if i < len(row) and row[i].strip())
                if not words:
                    continue
                uid = row[uid_col].strip() if uid_col is not None and uid_col < len(row) else f"{table.stem}-{n}"
                yield Document(doc_id=f"worldtree:{uid}", text=words[0].upper() + words[1:] + ".",
                               title=f"WorldTree {table.stem} {uid}", source="worldtree",
                               url="http://www.cognitiveai.org/explanationbank/", license=LICENSES["worldtree"])

    def medquad(self) -> Iterator[Document]:
        path = self._mirror_file("medquad", "medquad_answered.jsonl.gz")
        if path is None:
            raise SourceUnavailable(f"MedQuAD needs the mirror file medquad/medquad_answered.jsonl.gz "
                                    f"(upstream: {UPSTREAM['medquad']}).")
        by_collection: dict[str, list[dict]] = {}
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                rec = json.loads(line)
                by_collection.setdefault(rec.get("collection", ""), []).append(rec)
        # Round-robin over the NIH collections, so a size limit still covers all of them.
        for rec in (r for group in itertools.zip_longest(*by_collection.values()) for r in group if r):
            title = f"{rec.get('focus') or 'MedQuAD'} — {rec.get('source', '')}: {rec.get('question', '')}".strip()
            yield Document(doc_id=f"medquad:{rec['qid']}", text=rec["answer"], title=title[:200], source="medquad",
                           url=rec.get("url") or "", license=LICENSES["medquad"])

    def pubmedqa(self) -> Iterator[Document]:
        path = self._mirror_file("pubmedqa", "ori_pqal.json") or _download(UPSTREAM["pubmedqa"],
                                                                          self.cache / "ori_pqal.json")
        data = json.loads(path.read_text(encoding="utf-8"))
        for pmid, rec in data.items():
            text = " ".join(rec.get("CONTEXTS", []) + ([rec["LONG_ANSWER"]] if rec.get("LONG_ANSWER") else []))
            yield Document(doc_id=f"pubmed:{pmid}", text=text, title=f"PubMed {pmid}: {rec.get('QUESTION', '')}"[:200],
                           source="pubmedqa", url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
                           license=LICENSES["pubmedqa"])

    def scifact(self) -> Iterator[Document]:
        path = self._mirror_file("scifact-subset", "corpus_subset.jsonl")
        if path is not None:
            lines = path.read_text(encoding="utf-8").splitlines()
        else:
            tar = tarfile.open(_download(UPSTREAM["scifact"], self.cache / "scifact-data.tar.gz"))
            member = next(m for m in tar.getmembers() if m.name.endswith("corpus.jsonl"))
            lines = tar.extractfile(member).read().decode("utf-8").splitlines()
        for line in lines:
            if not line.strip():
                continue
            rec = json.loads(line)
            text = rec.get("text") or " ".join(rec.get("abstract", []))
            title = rec.get("title") or f"SciFact abstract {rec['doc_id']}"
            yield Document(doc_id=f"scifact:{rec['doc_id']}", text=text, title=title, source="scifact",
                           url=f"https://api.semanticscholar.org/CorpusID:{rec['doc_id']}", license=LICENSES["scifact"])

    def sources(self) -> list[Source]:
        return [Source("openbookqa", self.openbookqa), Source("worldtree", self.worldtree),
                Source("medquad", self.medquad), Source("pubmedqa", self.pubmedqa), Source("scifact", self.scifact)]


def limited(docs: Iterator[Document], max_sentences: int | None) -> Iterator[Document]:
    """Documents until about ``max_sentences`` sentences (by the splitter) are reached; None/0: all."""
    if not max_sentences:
        yield from docs
        return
    total = 0
    for doc in docs:
        if total >= max_sentences:
            return
        total += max(1, len(split_sentences(doc.text)))
        yield doc


def build_default(store, settings, *, limit_per_source: int | None = DEFAULT_LIMIT_PER_SOURCE,
                  only: list[str] | None = None, echo=print, show_progress: bool = True) -> dict[str, dict]:
    """Add the default sources to ``store`` (incremental: existing sentences are skipped)."""
    corpus = DefaultCorpus(settings.kb_mirror_dir, settings.data_dir / "kb-sources")
    results: dict[str, dict] = {}
    for src in corpus.sources():
        if only and src.name not in only:
            continue
        try:
            docs = list(limited(src.documents(), limit_per_source))
        except SourceUnavailable as exc:
            echo(f"skipped {src.name}: {exc}")
            results[src.name] = {"error": str(exc)}
            continue
        echo(f"{src.name}: {len(docs):,} documents ({LICENSES[src.name].split(' (')[0]})")
        results[src.name] = store.add_documents(docs, collection=src.name, show_progress=show_progress,
                                                desc=src.name)
    return results
