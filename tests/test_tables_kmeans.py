"""Spherical k-means invariants and a hand-worked case; the JSD and Jaccard kernels."""

from __future__ import annotations

import numpy as np
import pytest

from tools._colfilter import jaccard, js_distance, normalize_rows, softmax, spherical_kmeans, tokens


def _points(seed=0, n=40, d=8):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d))


@pytest.mark.parametrize("seed", [0, 1, 7])
@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_centroids_are_unit_norm_and_labels_are_argmax_cosine(seed, k):
    x = _points(seed)
    res = spherical_kmeans(x, k, seed=seed)
    assert res.converged
    assert res.centroids.shape == (k, x.shape[1])
    np.testing.assert_allclose(np.linalg.norm(res.centroids, axis=1), 1.0, atol=1e-9)
    sims = normalize_rows(x) @ res.centroids.T
    np.testing.assert_array_equal(res.labels, np.argmax(sims, axis=1))
    # every centroid is the mean direction of its members
    xn = normalize_rows(x)
    for c in range(k):
        members = xn[res.labels == c]
        assert len(members) > 0
        mean = members.sum(0) / np.linalg.norm(members.sum(0))
        np.testing.assert_allclose(res.centroids[c], mean, atol=1e-9)


def test_deterministic_under_a_seed():
    x = _points(3)
    a, b = spherical_kmeans(x, 3, seed=42), spherical_kmeans(x, 3, seed=42)
    np.testing.assert_array_equal(a.labels, b.labels)
    np.testing.assert_array_equal(a.centroids, b.centroids)


def test_scale_invariance():
    x = _points(5)
    scaled = x * np.random.default_rng(0).uniform(0.1, 10, size=(x.shape[0], 1))
    np.testing.assert_array_equal(spherical_kmeans(x, 2, seed=1).labels, spherical_kmeans(scaled, 2, seed=1).labels)


def test_hand_worked_two_clusters():
    # Two tight groups around the x axis and the y axis in 3-d.
    x = np.array([[1.0, 0.1, 0.0], [1.0, -0.1, 0.0], [0.9, 0.0, 0.1],
                  [0.0, 1.0, 0.1], [0.1, 1.0, 0.0], [-0.1, 0.9, 0.0]])
    res = spherical_kmeans(x, 2, seed=0)
    assert len(set(res.labels[:3])) == 1 and len(set(res.labels[3:])) == 1 and res.labels[0] != res.labels[3]
    first = res.centroids[res.labels[0]]
    # By hand: the normalised sum of the three normalised x-group points.
    xn = normalize_rows(x[:3])
    expected = xn.sum(0) / np.linalg.norm(xn.sum(0))
    np.testing.assert_allclose(first, expected, atol=1e-12)
    assert first[0] > 0.99


def test_k_capped_at_n_and_identical_points():
    res = spherical_kmeans(np.array([[1.0, 0.0]]), 2)
    assert res.centroids.shape == (1, 2) and res.labels.tolist() == [0]
    same = np.tile([[0.0, 1.0]], (4, 1))
    res2 = spherical_kmeans(same, 2, seed=0)
    assert set(res2.labels.tolist()) == {0, 1}  # the empty cluster was re-seeded
    np.testing.assert_allclose(np.linalg.norm(res2.centroids, axis=1), 1.0)


def test_jaccard_and_tokens():
    a = tokens("In 2011, Quebec had 678 measles cases.")
    assert a == {"2011", "quebec", "678", "measles", "cases"}
    assert tokens("[BOLD] 1,234.50") == {"1234.5"}
    assert jaccard({"a", "b"}, {"b", "c"}) == pytest.approx(1 / 3)
    assert jaccard(set(), set()) == 0.0


def test_js_distance_reference_values():
    p = np.array([1.0, 0.0])
    q = np.array([0.0, 1.0])
    assert js_distance(p, q) == pytest.approx(1.0)  # disjoint support: maximal distance in base 2
    assert js_distance(p, p) == pytest.approx(0.0)
    # Hand-worked: p=(.5,.5), q=(1,0): m=(.75,.25); KL(p||m)=.5log2(.5/.75)+.5log2(.5/.25); KL(q||m)=log2(1/.75)
    p2, q2 = np.array([0.5, 0.5]), np.array([1.0, 0.0])
    kl_p = 0.5 * np.log2(0.5 / 0.75) + 0.5 * np.log2(0.5 / 0.25)
    kl_q = np.log2(1 / 0.75)
    assert js_distance(p2, q2) == pytest.approx(np.sqrt(0.5 * kl_p + 0.5 * kl_q))
    s = softmax(np.array([[1.0, 2.0, 3.0]]), temperature=0.5)
    np.testing.assert_allclose(s.sum(), 1.0)
    np.testing.assert_allclose(s[0], np.exp([2, 4, 6]) / np.exp([2, 4, 6]).sum())
