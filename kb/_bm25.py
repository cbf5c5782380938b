"""Okapi BM25 over integer term ids, as a sparse matrix so a query scores the whole corpus at once.

Same constants as methods.md §2: k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5)).
That IDF is negative for terms in more than half the documents; for ranking it is used as is
(Robertson's formula), for OT marginals :meth:`BM25Index.token_weights` clips it at zero.
"""

from __future__ import annotations

import re

import numpy as np
import scipy.sparse as sp

K1 = 1.2
B = 0.75


def idf(df: np.ndarray, n_docs: int) -> np.ndarray:
    """BM25 IDF per term, shape like ``df``."""
    df = np.asarray(df, dtype=np.float64)
    return np.log((n_docs - df + 0.5) / (df + 0.5))


class BM25Index:
    """BM25 statistics and scores for ``n_rows`` documents given as term-id arrays.

    Parameters
    ----------
    row_terms : list of int arrays, or (flat_terms, row_lengths)
        Terms of each document (repeats allowed).
    vocab_size : int
        Upper bound on term ids.
    live : bool array, shape (n_rows,), optional
        Rows that count (removed rows get no score and do not enter df, N, avgdl).
    term_map : int array, shape (vocab_size,), optional
        Term id -> the id it counts as (its stem class, :func:`kb._stems.stem_classes_for_vocab`). Applied to the
        documents here and to every query and text passed to the methods below, so callers keep raw ids.
    """

    def __init__(self, flat_terms: np.ndarray, row_lengths: np.ndarray, vocab_size: int,
                 live: np.ndarray | None = None, positive_idf: bool = False,
                 term_map: np.ndarray | None = None):
        row_lengths = np.asarray(row_lengths, dtype=np.int64)
        self.term_map = None if term_map is None else np.asarray(term_map, dtype=np.int64)
        flat_terms = self.term_classes(flat_terms)
        self.n_rows = len(row_lengths)
        self.vocab_size = int(vocab_size)
        self.live = np.ones(self.n_rows, bool) if live is None else np.asarray(live, bool)
        rows = np.repeat(np.arange(self.n_rows), row_lengths)
        keep = self.live[rows] if len(rows) else np.zeros(0, bool)
        counts = sp.csr_matrix((np.ones(int(keep.sum()), np.float32), (rows[keep], flat_terms[keep])),
                               shape=(self.n_rows, self.vocab_size))
        counts.sum_duplicates()
        self.doc_len = np.asarray(counts.sum(axis=1)).ravel()
        self.n_docs = int(self.live.sum())
        self.avgdl = float(self.doc_len[self.live].mean()) if self.n_docs else 1.0
        self.df = np.bincount(counts.indices, minlength=self.vocab_size)
        # positive_idf: Lucene's ln(1 + (N - n + 0.5) / (n + 0.5)), for tiny corpora (a few uploaded
        # sentences) where Robertson's IDF is zero or negative for almost every term.
        self.idf = np.log1p(np.exp(idf(self.df, max(self.n_docs, 1)))) if positive_idf else \
            idf(self.df, max(self.n_docs, 1))
        # Per (doc, term): idf * tf (k1+1) / (tf + k1 (1 - b + b dl/avgdl)); queries sum columns.
        norm = K1 * (1 - B + B * self.doc_len / max(self.avgdl, 1e-9))
        tf = counts.data
        row_of = np.repeat(np.arange(self.n_rows), np.diff(counts.indptr))
        weights = self.idf[counts.indices] * tf * (K1 + 1) / (tf + norm[row_of])
        # Column access (one column per query term) is what scoring needs: CSC.
        self.matrix = sp.csr_matrix((weights.astype(np.float32), counts.indices, counts.indptr),
                                    shape=(self.n_rows, self.vocab_size)).tocsc()

    @classmethod
    def from_rows(cls, row_terms: list[np.ndarray] | list[list[int]], vocab_size: int,
                  live: np.ndarray | None = None, positive_idf: bool = False,
                  term_map: np.ndarray | None = None) -> "BM25Index":
        lengths = np.array([len(r) for r in row_terms], dtype=np.int64)
        flat = np.concatenate([np.asarray(r, dtype=np.int64) for r in row_terms]) if len(row_terms) else \
            np.zeros(0, np.int64)
        return cls(flat, lengths, vocab_size, live, positive_idf, term_map)

    def term_classes(self, terms) -> np.ndarray:
        """``terms`` as int64, each in-vocabulary id replaced by its class (out-of-vocabulary ids kept)."""
        terms = np.asarray(terms, dtype=np.int64)
        if self.term_map is None or len(terms) == 0:
            return terms
        inside = (terms >= 0) & (terms < len(self.term_map))
        return np.where(inside, self.term_map[np.clip(terms, 0, len(self.term_map) - 1)], terms)

    def scores(self, query_terms: np.ndarray | list[int]) -> np.ndarray:
        """BM25 score of every row, shape (n_rows,); removed rows get -inf."""
        terms = self.term_classes(query_terms)
        terms = terms[(terms >= 0) & (terms < self.vocab_size)]
        if len(terms) == 0 or self.n_rows == 0:
            out = np.zeros(self.n_rows)
        else:
            uniq, qtf = np.unique(terms, return_counts=True)
            # Query term frequency counts once per occurrence, as in Robertson's sum over query terms.
            out = np.asarray(self.matrix[:, uniq] @ qtf.astype(np.float32)).ravel().astype(np.float64)
        out[~self.live] = -np.inf
        return out

    def top(self, query_terms, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, scores) of the ``k`` best live rows, best first; rows with no matching term are left out."""
        s = self.scores(query_terms)
        matched = np.flatnonzero(np.isfinite(s) & (s != 0))
        if len(matched) == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        k = min(k, len(matched))
        part = matched[np.argpartition(-s[matched], k - 1)[:k]]
        order = part[np.lexsort((part, -s[part]))]
        return order, s[order]

    def token_weights_flat(self, terms: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """:meth:`token_weights` for many texts at once: ``terms`` concatenated, ``lengths`` per text."""
        terms = self.term_classes(terms)
        lengths = np.asarray(lengths, dtype=np.int64)
        if len(terms) == 0:
            return np.zeros(0)
        text_of = np.repeat(np.arange(len(lengths)), lengths)
        _, inv, counts = np.unique(text_of * (self.vocab_size + 1) + np.minimum(terms, self.vocab_size),
                                   return_inverse=True, return_counts=True)
        tf = counts[inv].astype(np.float64)
        inside = terms < self.vocab_size
        term_idf = np.where(inside, self.idf[np.minimum(terms, self.vocab_size - 1)],
                            np.log((self.n_docs + 0.5) / 0.5))
        norm = K1 * (1 - B + B * lengths[text_of] / max(self.avgdl, 1e-9))
        return np.clip(term_idf, 0, None) * tf * (K1 + 1) / (tf + norm)

    def token_weights(self, terms: np.ndarray) -> np.ndarray:
        """BM25 weight of each token occurrence of one text against this corpus, shape (n_tokens,).

        The text is treated as a document of its own length; IDF is clipped at 0, so very common
        terms get no transport mass.
        """
        terms = self.term_classes(terms)
        if len(terms) == 0:
            return np.zeros(0)
        uniq, inv, tf = np.unique(terms, return_inverse=True, return_counts=True)
        inside = uniq < self.vocab_size
        term_idf = np.where(inside, self.idf[np.minimum(uniq, self.vocab_size - 1)],
                            np.log((self.n_docs + 0.5) / 0.5))  # unseen term: df = 0
        norm = K1 * (1 - B + B * len(terms) / max(self.avgdl, 1e-9))
        w = np.clip(term_idf, 0, None) * tf * (K1 + 1) / (tf + norm)
        return w[inv]


_WORD = re.compile(r"\w+", re.UNICODE)


def simple_terms(text: str) -> list[str]:
    """Lower-cased word tokens, for small ad-hoc corpora such as text uploaded in chat."""
    return _WORD.findall(text.lower())


class Vocabulary:
    """Maps strings to dense integer ids (for :class:`BM25Index` over words)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}

    def encode(self, words: list[str], grow: bool = True) -> list[int]:
        out = []
        for w in words:
            i = self.ids.get(w)
            if i is None:
                if not grow:
                    i = len(self.ids) + 10**9  # never matches
                else:
                    i = self.ids[w] = len(self.ids)
            out.append(i)
        return out
