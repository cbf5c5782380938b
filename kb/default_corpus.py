"""The default text corpus: five public sources, each with its license travelling with its sentences.

Sources are read from ``settings.kb_mirror_dir`` (e.g. ../shared/kb-data, described in its SOURCES.md).
The mirror is the first choice; a source whose mirror file is missing is downloaded once, as one file, into
``settings.data_dir / "kb-sources"``: OpenBookQA (release zip), PubMedQA (JSON), SciFact (tar.gz), and
WorldTree and MedQuAD as the GitHub archive zip of the pinned commit the mirror was made from (their
``data/tables/*.tsv`` and 11,000 XML files are read straight from the zip, not extracted).
Nothing is bundled in the repository.
"""

from __future__ import annotations

import csv
import gzip
import io
import itertools
import json
import tarfile
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from kb.ingest import Document, split_sentences

LICENSES = {
    "openbookqa": "unknown: OpenBookQA V1 release has no license file (HF card: unknown; AI2 code Apache-2.0)",
    "worldtree": "CC BY-SA 4.0 (WorldTree V2.1 Tablestore, cognitiveai.org/explanationbank)",
    "medquad": "CC BY 4.0 (MedQuAD, Ben Abacha & Demner-Fushman 2019; pages from NIH websites)",
    "pubmedqa": "MIT (PubMedQA repository); abstract text copyright its publishers/authors",
    "scifact": "ODC-By 1.0 (SciFact abstracts via S2ORC)",
}

# The commits the mirror's WorldTree and MedQuAD were copied from (SOURCES.md sections 4 and 5).
WORLDTREE_COMMIT = "1b20332af49948bcde148460c45b7764f76abbed"
MEDQUAD_COMMIT = "577bd37b96c02d1833b2c9eed2de9f96964e96cb"

UPSTREAM = {
    "openbookqa": "https://ai2-public-datasets.s3.amazonaws.com/open-book-qa/OpenBookQA-V1-Sep2018.zip",
    "pubmedqa": "https://raw.githubusercontent.com/pubmedqa/pubmedqa/master/data/ori_pqal.json",
    "scifact": "https://scifact.s3-us-west-2.amazonaws.com/release/latest/data.tar.gz",
    "worldtree": f"https://github.com/DeepBlueAI/TextGraphs-15/archive/{WORLDTREE_COMMIT}.zip",
    "medquad": f"https://github.com/abachaa/MedQuAD/archive/{MEDQUAD_COMMIT}.zip",
}

# File names of the downloads in the cache folder (as GitHub names its archives).
ARCHIVE_NAMES = {
    "worldtree": f"TextGraphs-15-{WORLDTREE_COMMIT}.zip",
    "medquad": f"MedQuAD-{MEDQUAD_COMMIT}.zip",
}

# Sentences per source for `kb build --default` when no limit is given. Embedding runs at roughly
# 240 short sentences/s on 2 idle cores, so the default (about 9k sentences) builds in under a
# minute; the build is incremental, so `--limit-per-source 0` later adds the rest without redoing it.
DEFAULT_LIMIT_PER_SOURCE = 2000


class SourceUnavailable(RuntimeError):
    pass


# Per source: its file (or folder) in the mirror, and its download's name in the cache folder. A source is to be
# had when either exists, or when its download succeeds.
SOURCE_FILES = {
    "openbookqa": (("openbookqa", "openbook.txt"), "OpenBookQA-V1-Sep2018.zip"),
    "worldtree": (("worldtree-v2.1-tablestore", "tables"), ARCHIVE_NAMES["worldtree"]),
    "medquad": (("medquad", "medquad_answered.jsonl.gz"), ARCHIVE_NAMES["medquad"]),
    "pubmedqa": (("pubmedqa", "ori_pqal.json"), "ori_pqal.json"),
    "scifact": (("scifact-subset", "corpus_subset.jsonl"), "scifact-data.tar.gz"),
}
# The knowledge graphs are read from the mirror only (kb/kg_loaders.py): these folders of it.
KG_MIRROR_FOLDERS = {"hetionet": "hetionet", "conceptnet": "conceptnet-cn100k"}
MIRROR_HINT = ("Set EVIDENTIA_KB_MIRROR_DIR to a folder that holds the sources (`make run` sets it to "
               "../shared/kb-data; its SOURCES.md says what goes where), then run again.")


def missing_default_sources(settings, *, only: Iterable[str] | None = None, text: bool = True,
                            kgs: bool = False) -> dict[str, str]:
    """Which default sources cannot be had, and why: ``{name: reason}``, empty when all can.

    With ``text``, the text sources: each is had from the mirror, from an earlier download, or by downloading it now
    (the build downloads it anyway, so nothing is fetched twice). With ``kgs``, the graphs' mirror folders. Checked
    before anything is built, so a machine with neither network nor mirror builds nothing half-way.
    """
    corpus = DefaultCorpus(settings.kb_mirror_dir, settings.data_dir / "kb-sources")
    missing: dict[str, str] = {}
    for name in (SOURCE_FILES if text else ()):
        if (only and name not in only) or corpus.mirrored(name) is not None \
                or (corpus.cache / SOURCE_FILES[name][1]).exists():  # downloaded earlier
            continue
        try:
            corpus.fetched(name)
        except SourceUnavailable:
            missing[name] = f"no local copy, and {UPSTREAM[name]} could not be downloaded"
    for name, folder in (KG_MIRROR_FOLDERS.items() if kgs else ()):
        if corpus._mirror_file(folder) is None:
            missing[name] = "read only from the mirror, which has no " + folder + "/"
    return missing


def missing_sources_message(missing: dict[str, str]) -> str:
    """One message for the sources that cannot be had: which, why, and what to set."""
    listed = "; ".join(f"{name}: {why}" for name, why in missing.items())
    return f"The default knowledge base cannot be built ({listed}). Nothing was built. {MIRROR_HINT}"


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
                fh.writelines(r.iter_bytes())
            tmp.replace(dest)
    except Exception as exc:  # network trouble becomes one clear sentence
        raise SourceUnavailable(f"Could not download {url} ({exc}); set EVIDENTIA_KB_MIRROR_DIR to a local copy.") \
            from exc
    return dest


def _open_zip(path: Path) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except zipfile.BadZipFile as exc:
        raise SourceUnavailable(f"{path} is not a zip archive ({exc}); delete it to download it again, "
                                "or set EVIDENTIA_KB_MIRROR_DIR to a local copy.") from exc


def _worldtree_documents(stem: str, data: bytes) -> Iterator[Document]:
    """One WorldTree table (TSV bytes) as sentences: the non-``[SKIP]`` cells of a row, joined.

    Shared by the mirror folder and the upstream zip, so both give identical documents. The bytes are
    decoded like ``Path.read_text`` (UTF-8 with replacement, universal newlines).
    """
    text = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace").read()
    rows = list(csv.reader(io.StringIO(text), delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        return
    header = rows[0]
    keep = [i for i, h in enumerate(header) if not h.startswith("[SKIP]")]
    uid_col = next((i for i, h in enumerate(header) if h.strip() == "[SKIP] UID"), None)
    for n, row in enumerate(rows[1:], 1):
        words = " ".join(row[i].strip() for i in keep if i < len(row) and row[i].strip())
        if not words:
            continue
        uid = row[uid_col].strip() if uid_col is not None and uid_col < len(row) else f"{stem}-{n}"
        yield Document(doc_id=f"worldtree:{uid}", text=words[0].upper() + words[1:] + ".",
                       title=f"WorldTree {stem} {uid}", source="worldtree",
                       url="http://www.cognitiveai.org/explanationbank/", license=LICENSES["worldtree"])


def _medquad_records(data: bytes, collection: str, file: str) -> list[dict]:
    """The answered QA pairs of one MedQuAD XML file, as the mirror's JSONL records (ET.ParseError if malformed)."""
    root = ET.fromstring(data)

    def clean(value: str | None) -> str | None:
        return value.strip() if isinstance(value, str) else value

    doc_id = root.get("id", "")
    base = {"collection": collection, "doc_id": doc_id, "source": root.get("source", ""),
            "url": root.get("url", ""), "focus": (root.findtext("Focus") or "").strip(),
            "umls_cuis": [c.text.strip() for c in root.iterfind("FocusAnnotations/UMLS/CUIs/CUI") if c.text],
            "semantic_group": clean(root.findtext("FocusAnnotations/UMLS/SemanticGroup")),
            "focus_category": clean(root.findtext("FocusAnnotations/Category"))}
    out = []
    for pair in root.iterfind("QAPairs/QAPair"):
        q, a = pair.find("Question"), pair.find("Answer")
        answer = "".join(a.itertext()).strip() if a is not None else ""
        if not answer:  # collections 10-12 have their answers removed upstream
            continue
        qid = (q.get("qid") if q is not None else None) or f"{doc_id}-{pair.get('pid', len(out) + 1)}"
        out.append({**base, "qid": qid, "qtype": q.get("qtype", "") if q is not None else "",
                    "question": "".join(q.itertext()).strip() if q is not None else "",
                    "answer": answer, "file": file})
    return out


# A MedQuAD page's title: "<focus> — <site>: <question>" (the focus is the disease, drug or test it is about).
FOCUS_SEPARATOR = " — "


def medquad_documents(records: Iterable[dict]) -> Iterator[Document]:
    """MedQuAD records as documents, round-robin over the NIH collections (so a size limit still covers all)."""
    by_collection: dict[str, list[dict]] = {}
    for rec in records:
        by_collection.setdefault(rec.get("collection", ""), []).append(rec)
    for rec in (r for group in itertools.zip_longest(*by_collection.values()) for r in group if r):
        title = (f"{rec.get('focus') or 'MedQuAD'}{FOCUS_SEPARATOR}{rec.get('source', '')}: "
                 f"{rec.get('question', '')}").strip()
        # qids are not unique (0000001-1 occurs in 7 collections; CancerGov reuses a document id across its
        # files 0000013_2.xml, 0000013_2_1.xml, ...): the XML file makes the id unique, so each answer keeps
        # its own title and URL for citation.
        where = (rec.get("file") or "").removesuffix(".xml") or rec.get("collection", "")
        yield Document(doc_id=f"medquad:{where}#{rec['qid']}", text=rec["answer"], title=title[:200], source="medquad",
                       url=rec.get("url") or "", license=LICENSES["medquad"])


def page_focus(doc_id: str, title: str) -> str:
    """What a KB page names as its subject in its title: the focus of a MedQuAD page ("Noonan syndrome 6" of
    "Noonan syndrome 6 — GHR: What is (are) Noonan syndrome 6 ?"); "" for any other document, whose title names
    no subject (an abstract's is its question, a WorldTree or OpenBookQA fact's a number)."""
    if not doc_id.startswith("medquad:") or FOCUS_SEPARATOR not in title:
        return ""
    focus = title.split(FOCUS_SEPARATOR, 1)[0].strip()
    return "" if focus == "MedQuAD" else focus


class DefaultCorpus:
    """The five sources, read lazily from the mirror, else from one downloaded upstream file each."""

    def __init__(self, mirror: Path | None, cache_dir: Path):
        self.mirror = Path(mirror) if mirror else None
        self.cache = Path(cache_dir)
        # Per source, the upstream files that could not be read and were skipped (e.g. malformed XML).
        self.skipped: dict[str, list[str]] = {}

    def _mirror_file(self, *parts: str) -> Path | None:
        if self.mirror is None:
            return None
        p = self.mirror.joinpath(*parts)
        return p if p.exists() else None

    def mirrored(self, name: str) -> Path | None:
        """A source's file (or folder) in the mirror, if the mirror holds it."""
        return self._mirror_file(*SOURCE_FILES[name][0])

    def fetched(self, name: str) -> Path:
        """A source's upstream file, downloaded once into the cache folder (SourceUnavailable if it cannot be)."""
        return _download(UPSTREAM[name], self.cache / SOURCE_FILES[name][1])

    # -- sources ----------------------------------------------------------------------------------
    def openbookqa(self) -> Iterator[Document]:
        path = self.mirrored("openbookqa")
        if path is not None:
            lines = path.read_text(encoding="utf-8").splitlines()
        else:
            z = zipfile.ZipFile(self.fetched("openbookqa"))
            name = next(n for n in z.namelist() if n.endswith("openbook.txt"))
            lines = z.read(name).decode("utf-8").splitlines()
        for i, line in enumerate(lines, 1):
            fact = line.strip().strip('"').strip()
            if fact:
                yield Document(doc_id=f"openbookqa:{i}", text=fact, title=f"OpenBookQA fact {i}",
                               source="openbookqa", url=UPSTREAM["openbookqa"], license=LICENSES["openbookqa"])

    def worldtree(self) -> Iterator[Document]:
        folder = self.mirrored("worldtree")
        if folder is not None:
            for table in sorted(folder.glob("*.tsv")):
                yield from _worldtree_documents(table.stem, table.read_bytes())
            return
        z = _open_zip(self.fetched("worldtree"))
        with z:
            # <repo>-<sha>/data/tables/NAME.tsv, in file-name order like the mirror folder
            tables = sorted((name.split("/")[-1], name) for name in z.namelist()
                            if name.split("/")[1:3] == ["data", "tables"] and name.count("/") == 3
                            and name.endswith(".tsv"))
            if not tables:
                raise SourceUnavailable(f"No data/tables/*.tsv in {z.filename} (upstream: {UPSTREAM['worldtree']}).")
            for base, name in tables:
                yield from _worldtree_documents(base[:-len(".tsv")], z.read(name))

    def medquad(self) -> Iterator[Document]:
        path = self.mirrored("medquad")
        if path is not None:
            with gzip.open(path, "rt", encoding="utf-8") as fh:
                records = [json.loads(line) for line in fh]
        else:
            records = self._medquad_upstream_records()
        yield from medquad_documents(records)

    def _medquad_upstream_records(self) -> list[dict]:
        """Every answered QA pair in the upstream archive: <repo>-<sha>/<collection>/<file>.xml, in path order."""
        z = _open_zip(self.fetched("medquad"))
        records: list[dict] = []
        skipped = self.skipped.setdefault("medquad", [])
        skipped.clear()
        with z:
            names = sorted(n for n in z.namelist() if n.count("/") == 2 and n.lower().endswith(".xml"))
            if not names:
                raise SourceUnavailable(f"No <collection>/*.xml in {z.filename} (upstream: {UPSTREAM['medquad']}).")
            for name in names:
                _, collection, _ = name.split("/")
                try:
                    records.extend(_medquad_records(z.read(name), collection, name.split("/", 1)[1]))
                except ET.ParseError:
                    skipped.append(name)
        return records

    def pubmedqa(self) -> Iterator[Document]:
        path = self.mirrored("pubmedqa") or self.fetched("pubmedqa")
        data = json.loads(path.read_text(encoding="utf-8"))
        for pmid, rec in data.items():
            text = " ".join(rec.get("CONTEXTS", []) + ([rec["LONG_ANSWER"]] if rec.get("LONG_ANSWER") else []))
            yield Document(doc_id=f"pubmed:{pmid}", text=text, title=f"PubMed {pmid}: {rec.get('QUESTION', '')}"[:200],
                           source="pubmedqa", url=f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/",
                           license=LICENSES["pubmedqa"])

    def scifact(self) -> Iterator[Document]:
        path = self.mirrored("scifact")
        if path is not None:
            lines = path.read_text(encoding="utf-8").splitlines()
        else:
            with tarfile.open(self.fetched("scifact")) as tar:
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
    missing = missing_default_sources(settings, only=only)
    if missing:  # all or nothing: a KB built from some of the sources would answer as if it were whole
        raise SourceUnavailable(missing_sources_message(missing))
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
        if corpus.skipped.get(src.name):
            echo(f"{src.name}: skipped {len(corpus.skipped[src.name]):,} unreadable upstream files "
                 f"(first: {corpus.skipped[src.name][0]})")
        if src.name == "medquad":
            _drop_legacy_medquad(store, echo)
        results[src.name] = store.add_documents(docs, collection=src.name, show_progress=show_progress,
                                                desc=src.name)
    return results


def _drop_legacy_medquad(store, echo) -> None:
    """Stores built before 2026-11-22 keyed MedQuAD answers by qid alone, which collides across files, so
    answers shared one title and URL. Those documents are removed here and re-added under unique ids."""
    legacy = [r[0] for r in store.db.execute(
        "SELECT doc_id FROM documents WHERE collection = 'medquad' AND doc_id NOT LIKE '%#%'").fetchall()]
    if legacy:
        echo(f"medquad: replacing {len(legacy):,} documents stored under old, colliding ids")
        store.remove_documents(legacy)
