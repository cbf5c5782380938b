"""Spherical k-means: clustering unit vectors by cosine similarity (UCRET's column clusters).

Points and centroids live on the unit sphere; a point joins the centroid with the largest dot
product, and a centroid is the normalised sum of its points (the mean direction). Seeding is
k-means++ with the cosine distance ``1 - cos``; a cluster that loses all its points is re-seeded
with the point worst served by its current centroid. Iteration stops when no assignment
changes (or after ``max_iter``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
