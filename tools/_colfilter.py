"""UCRET column filtering's kernels: tokens, Jaccard overlap, softmax and Jensen-Shannon distance, and the spherical
k-means that clusters the columns.

Each section below opens with a comment that says what it reads and the case it came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from kb.tables import _MARKUP, parse_number


# ======================================================================================================================
# Kernels for UCRET column filtering: tokens, Jaccard overlap, softmax and Jensen–Shannon distance.
#
# Kept free of models and I/O so they can be tested against hand-worked values.
# ======================================================================================================================

STOPWORDS = frozenset("""
a an the of in on at to for from by with and or but not no nor is are was were be been being am do does did
has have had this that these those it its as than then there their they them he she his her we our you your
i me my which who whom what when where why how all any both each more most other some such only own same so
too very can will just should would could may might must also into over under about between through during
before after above below up down out off again further once here s t
""".split())

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+", re.UNICODE)


def tokens(text: str) -> set[str]:
    """Normalised content tokens: lower-cased words and numbers, no stopwords, no markup.

    Numbers lose thousands separators and trailing zeros (``"1,234.50"`` -> ``"1234.5"``) so the
    claim's "1234.5" meets the cell's "1,234.50".
    """
    out = set()
    for tok in _TOKEN.findall(_MARKUP.sub(" ", text).lower()):
        if tok[0].isdigit():
            out.add(normalise_number_token(tok))
        elif tok not in STOPWORDS:
            out.add(tok)
    return out


def normalise_number_token(tok: str) -> str:
    if "," in tok and re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", tok):
        tok = tok.replace(",", "")
    if "." in tok:
        tok = tok.rstrip("0").rstrip(".") or "0"
    return tok


def jaccard(a: set[str], b: set[str]) -> float:
    """``|a ∩ b| / |a ∪ b|``; 0 for two empty sets."""
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def softmax(x: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """Row-wise softmax of ``x`` (..., d) / temperature."""
    z = np.asarray(x, dtype=np.float64) / temperature
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def js_distance(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Jensen–Shannon distance (square root of the base-2 divergence, in [0, 1]).

    Parameters
    ----------
    p : array (..., d)
        Probability vectors.
    q : array (..., d) or (d,)
        Probability vectors, broadcast against ``p``.

    Returns
    -------
    array (...)
        The distances.
    """
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    m = 0.5 * (p + q)

    def kl(a, b):
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(a > 0, a * np.log2(a / b), 0.0)
        return terms.sum(axis=-1)

    div = 0.5 * kl(p, m) + 0.5 * kl(q, m)
    return np.sqrt(np.clip(div, 0.0, 1.0))


def claim_numbers(claim: str) -> list[float]:
    """Numbers mentioned in a claim (years, counts, percentages…)."""
    out = []
    for tok in re.findall(r"[-−]?\d[\d,]*(?:\.\d+)?%?", claim):
        value = parse_number(tok)
        if value is not None:
            out.append(value)
    return out


def number_matches(value: float, wanted: float) -> bool:
    """A cell value equals a claimed number, allowing the claim's rounding (0.93 vs 0.9312)."""
    if value == wanted:
        return True
    text = repr(abs(wanted))
    decimals = len(text.split(".")[1]) if "." in text and not text.endswith(".0") else 0
    return round(value, decimals) == round(wanted, decimals) or round(abs(value), decimals) == round(abs(wanted), decimals)


# ======================================================================================================================
# Spherical k-means: clustering unit vectors by cosine similarity (UCRET's column clusters).
#
# Points and centroids live on the unit sphere; a point joins the centroid with the largest dot
# product, and a centroid is the normalised sum of its points (the mean direction). Seeding is
# k-means++ with the cosine distance ``1 - cos``; a cluster that loses all its points is re-seeded
# with the point worst served by its current centroid. Iteration stops when no assignment
# changes (or after ``max_iter``).
# ======================================================================================================================

@dataclass(frozen=True)
class KMeansResult:
    """``labels`` (n,) int cluster per point; ``centroids`` (k, d) unit rows; ``n_iter`` rounds run."""

    labels: np.ndarray
    centroids: np.ndarray
    n_iter: int
    converged: bool


def normalize_rows(x: np.ndarray, eps: float = 1e-12) -> np.ndarray:
    """Rows of ``x`` (n, d) scaled to unit L2 norm; zero rows stay zero."""
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, eps)


def _kmeanspp(x: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """k-means++ seeding with distance ``1 - cos``: indices (k,) of the chosen seed points."""
    n = x.shape[0]
    chosen = [int(rng.integers(n))]
    closest = 1.0 - x @ x[chosen[0]]
    for _ in range(1, k):
        weights = np.clip(closest, 0.0, None) ** 2
        total = weights.sum()
        if total <= 1e-15:  # every point sits on a seed already: pick any point not yet chosen
            rest = [i for i in range(n) if i not in chosen]
            nxt = int(rng.choice(rest)) if rest else int(rng.integers(n))
        else:
            nxt = int(rng.choice(n, p=weights / total))
        chosen.append(nxt)
        closest = np.minimum(closest, 1.0 - x @ x[nxt])
    return np.array(chosen)


def spherical_kmeans(x: np.ndarray, k: int = 2, *, seed: int = 0, max_iter: int = 100) -> KMeansResult:
    """Cluster the rows of ``x`` (n, d) into ``min(k, n)`` groups by cosine similarity.

    Parameters
    ----------
    x : array (n, d)
        Points; they are L2-normalised here (so any non-zero rows will do).
    k : int
        Requested number of clusters; ``min(k, n)`` are made.
    seed : int
        Seeds the k-means++ choice, so the result is deterministic.
    max_iter : int
        Safety bound; assignments normally stop changing within a few rounds.

    Returns
    -------
    KMeansResult
        ``labels`` (n,), ``centroids`` (k', d) with unit-norm rows, and whether it converged.
    """
    x = normalize_rows(x)
    n = x.shape[0]
    if n == 0:
        raise ValueError("spherical_kmeans needs at least one point")
    k = max(1, min(int(k), n))
    rng = np.random.default_rng(seed)
    centroids = x[_kmeanspp(x, k, rng)].copy()
    labels = np.full(n, -1, dtype=np.int64)
    for it in range(1, max_iter + 1):
        sims = x @ centroids.T  # (n, k)
        new_labels = np.argmax(sims, axis=1)
        # Re-seed empty clusters with the point least similar to its own centroid.
        for c in range(k):
            if not np.any(new_labels == c):
                own = sims[np.arange(n), new_labels]
                movable = [i for i in np.argsort(own) if np.sum(new_labels == new_labels[i]) > 1]
                if not movable:
                    continue
                worst = int(movable[0])
                new_labels[worst] = c
                centroids[c] = x[worst]
        if np.array_equal(new_labels, labels):
            return KMeansResult(labels=labels, centroids=centroids, n_iter=it, converged=True)
        labels = new_labels
        for c in range(k):
            members = x[labels == c]
            if len(members):
                total = members.sum(axis=0)
                norm = np.linalg.norm(total)
                # Opposite points can cancel out; keep the old direction then.
                if norm > 1e-12:
                    centroids[c] = total / norm
    return KMeansResult(labels=labels, centroids=centroids, n_iter=max_iter, converged=False)
