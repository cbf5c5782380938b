"""BM25 against a hand-worked example and its invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kb._bm25 import B, K1, BM25Index, Vocabulary, idf, simple_terms


def _index(docs):
    vocab = Vocabulary()
    rows = [vocab.encode(simple_terms(d)) for d in docs]
    return vocab, BM25Index.from_rows(rows, vocab_size=len(vocab.ids))


def test_scores_match_hand_computed_formula():
    docs = ["bees pollinate flowers", "rocks are hard", "bees make honey honey", "the sun is a star"]
    vocab, index = _index(docs)
    q = vocab.encode(["honey"], grow=False)
    s = index.scores(q)
    n, df = 4, 1
    avgdl = (3 + 3 + 4 + 5) / 4
    expected = math.log((n - df + 0.5) / (df + 0.5)) * 2 * (K1 + 1) / (2 + K1 * (1 - B + B * 4 / avgdl))
    assert s[2] == pytest.approx(expected)
    assert s[0] == 0 and s[1] == 0


def test_idf_sign_and_top_ordering():
    assert idf(np.array([1]), 10)[0] > 0 > idf(np.array([9]), 10)[0]
    vocab, index = _index(["a cat sat", "a dog sat", "a cat and a cat", "birds fly", "fish swim", "a cow"])
    rows, scores = index.top(vocab.encode(["cat"], grow=False), 3)
    assert list(rows) == [2, 0]  # two occurrences beat one; non-matching rows are left out
    assert scores[0] > scores[1] > 0


def test_removed_rows_do_not_score_or_count():
    vocab = Vocabulary()
    rows = [vocab.encode(simple_terms(d)) for d in ["cat", "cat dog", "dog"]]
    live = np.array([True, False, True])
    index = BM25Index.from_rows(rows, vocab_size=len(vocab.ids), live=live)
    assert index.n_docs == 2 and index.df[vocab.ids["cat"]] == 1
    assert index.scores(vocab.encode(["cat"]))[1] == -np.inf


def test_token_weights_clip_common_terms_and_unknown_query_words():
    vocab, index = _index(["the cat", "the dog", "the bird", "a fish"])
    w = index.token_weights(np.array(vocab.encode(["the", "cat"], grow=False)))
    assert w[0] == 0.0 and w[1] > 0
    unseen = index.token_weights(np.array([10**6]))
    assert unseen[0] > w[1]  # an unseen word is rarer than any seen one


def test_positive_idf_for_tiny_corpora():
    vocab = Vocabulary()
    rows = [vocab.encode(simple_terms(d)) for d in ["iron filings in drawer", "lunch at noon"]]
    robertson = BM25Index.from_rows(rows, vocab_size=len(vocab.ids))
    lucene = BM25Index.from_rows(rows, vocab_size=len(vocab.ids), positive_idf=True)
    q = vocab.encode(["iron"], grow=False)
    assert robertson.scores(q)[0] == 0.0  # ln(1.5 / 1.5)
    assert lucene.idf[vocab.ids["iron"]] == pytest.approx(math.log(2.0))
    assert list(lucene.top(q, 2)[0]) == [0]


def test_flat_token_weights_equal_per_text_weights():
    vocab, index = _index(["a cat sat", "a dog sat", "cat cat dog", "birds fly", "fish swim"])
    texts = [vocab.encode(simple_terms(t), grow=False) for t in ["cat dog cat", "sat", "birds unknownword"]]
    flat = index.token_weights_flat(np.concatenate(texts), np.array([len(t) for t in texts]))
    per = np.concatenate([index.token_weights(np.array(t)) for t in texts])
    np.testing.assert_allclose(flat, per)


def test_term_map_counts_inflections_as_one_term():
    """A query term matches a document that has only another member of its class, and df counts the class."""
    docs = ["photosynthesis makes food for the plant", "stars make their own light", "rocks are hard",
            "bees pollinate flowers", "the moon orbits the earth"]
    vocab = Vocabulary()
    rows = [vocab.encode(simple_terms(d)) for d in docs]
    vocab.encode(["plants"])  # a query-only inflection, so it has an id of its own
    ids = vocab.ids
    term_map = np.arange(len(ids))
    term_map[ids["plants"]] = ids["plant"]
    term_map[ids["makes"]] = ids["make"]
    raw = BM25Index.from_rows(rows, vocab_size=len(ids))
    stemmed = BM25Index.from_rows(rows, vocab_size=len(ids), term_map=term_map)
    query = vocab.encode(["plants", "make"], grow=False)
    assert raw.top(query, 3)[0].tolist() == [1]  # only "make" matches, in the star sentence
    assert stemmed.top(query, 3)[0].tolist() == [0, 1]  # "plant" and "makes" now count for the first
    assert stemmed.df[ids["make"]] == 2 and stemmed.df[ids["makes"]] == 0
    # Weights are those of the class: "makes" in a text weighs as "make" does.
    assert stemmed.token_weights(np.array([ids["makes"]]))[0] == pytest.approx(
        stemmed.token_weights(np.array([ids["make"]]))[0])
    # Ids past the map (a query word no document has) stay unmatched rather than failing.
    assert stemmed.scores([len(ids) + 10**9]).tolist() == [0.0] * len(docs)
