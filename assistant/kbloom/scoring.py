"""Stage 3 of K-Bloom (methods.md §5): semantic and fluency scores, the final score and the threshold.

- **Semantic score.** For each seed pair, the exact OT distance (``kb._ot.emd``, POT's ``ot.emd2``)
  between the initial prompt filled with the seed and filled with the candidate: contextual token
  embeddings of the packaged encoder, ground cost ``1 - cosine``, marginals the tokens' BM25 weights
  against all filled prompts of this harvest (so the template's words, present in every one, carry no
  mass and the entities are what is compared). methods.md §5 calls the semantic score "the sum of OT
  distances", yet adds it to the final score, where higher must be better; we therefore use
  ``sem = sum_seeds (1 - distance)``, a similarity in [-len(seeds), len(seeds)]. Summing distances
  instead would prefer candidates unlike every seed.
- **Fluency.** ``(1 / perplexity) * sum of IDF``: the perplexity of the filled first-weighted prompt's
  line from the model's token log-probabilities (already computed in stage 2), times the summed IDF
  (BM25's, positive form) of its words over the same corpus, which favours specific entities.
- **Final.** ``sigmoid(sem) * sem + sigmoid(flu) * flu``.
"""

from __future__ import annotations

import math

import numpy as np

from assistant.kbloom.text import fill_spans
from kb._bm25 import BM25Index, Vocabulary, simple_terms
from kb._ot import cosine_cost, emd, normalise


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def final_score(sem: float, flu: float) -> float:
    return sigmoid(sem) * sem + sigmoid(flu) * flu


def fluency(line_logprob: float, idf_sum: float) -> float:
    """``(1 / perplexity) * idf_sum`` where perplexity = exp(-mean log-probability of the line)."""
    return math.exp(line_logprob) * idf_sum


def bm25_token_weights(token_lists: list[list[str]]) -> list[np.ndarray]:
    """BM25 weight of every token of each text against the corpus of all the texts (IDF clipped at 0)."""
    vocab = Vocabulary()
    rows = [np.asarray(vocab.encode(toks), dtype=np.int64) for toks in token_lists]
    index = BM25Index.from_rows(rows, max(len(vocab.ids), 1))
    return [index.token_weights(r) for r in rows]


def ot_similarity(seed_bags: list[tuple[np.ndarray, np.ndarray]], cand: tuple[np.ndarray, np.ndarray]) -> float:
    """``sum over seeds of (1 - EMD)`` with cost 1 - cosine; bags are (token vectors (n, d), weights (n,))."""
    z_c, w_c = cand
    if len(z_c) == 0:
        return float("-inf")
    total = 0.0
    for z_s, w_s in seed_bags:
        total += 1.0 - emd(normalise(w_s), normalise(w_c), cosine_cost(z_s, z_c))
    return total


def idf_sums(lines: list[str]) -> list[float]:
    """Sum of the positive BM25 IDF of each line's words, against all ``lines``."""
    vocab = Vocabulary()
    rows = [np.asarray(vocab.encode(simple_terms(x)), dtype=np.int64) for x in lines]
    index = BM25Index.from_rows(rows, max(len(vocab.ids), 1), positive_idf=True)
    return [float(index.idf[r].sum()) if len(r) else 0.0 for r in rows]


def score_pairs(embedder, template: str, seeds: list[tuple[str, str]], pairs: list[tuple[str, str]],
                line_logprobs: list[float]) -> list[dict[str, float]]:
    """``{"semantic", "fluency", "final"}`` for every pair (module docstring)."""
    if not pairs:
        return []
    seed_texts = [fill_spans(template, *s)[0] for s in seeds]
    cand_texts = [fill_spans(template, *p)[0] for p in pairs]
    toks = embedder.token_embeddings(seed_texts + cand_texts)
    weights = bm25_token_weights([t for t, _ in toks])
    bags = [(z, w) for (_, z), w in zip(toks, weights)]
    seed_bags, cand_bags = bags[:len(seeds)], bags[len(seeds):]
    idf = idf_sums(seed_texts + cand_texts)[len(seeds):]
    out = []
    for bag, lp, idf_sum in zip(cand_bags, line_logprobs, idf):
        sem = ot_similarity(seed_bags, bag)
        flu = fluency(lp, idf_sum)
        out.append({"semantic": sem, "fluency": flu, "final": final_score(sem, flu)})
    return out
