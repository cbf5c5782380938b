"""OT-JSD kernels against POT's exact solver and hand-checkable invariants (seeded)."""

from __future__ import annotations

import math

import numpy as np
import ot
import pytest

from kb import _ot


def _bag(rng, n_texts, d=16, lo=1, hi=6, scale=3.0):
    zs = [rng.normal(size=(int(rng.integers(lo, hi + 1)), d)) * scale for _ in range(n_texts)]
    ws = [rng.uniform(0.1, 3.0, size=len(z)) for z in zs]
    return zs, ws, _ot.TokenBag.from_texts(zs, ws)


def _reference_jsd(p, q):
    m = 0.5 * (p + q)
    kl = lambda x, y: float(np.sum(np.where(x > 0, x * np.log(x / y), 0.0)))  # noqa: E731
    return 0.5 * kl(p, m) + 0.5 * kl(q, m)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_jsd_cost_matches_definition_bounded_and_symmetric(seed):
    rng = np.random.default_rng(seed)
    P = _ot.token_distributions(rng.normal(size=(5, 12)) * 4, rng.uniform(0.5, 2, 5))
    Q = _ot.token_distributions(rng.normal(size=(4, 12)) * 4)
    C = _ot.jsd_cost(P, Q)
    ref = np.array([[_reference_jsd(p, q) for q in Q] for p in P])
    np.testing.assert_allclose(C, ref, atol=1e-5)  # float32 pass
    assert C.min() >= 0 and C.max() <= math.log(2)
    np.testing.assert_allclose(_ot.jsd_cost(Q, P), C.T, atol=1e-6)
    assert np.allclose(np.diag(_ot.jsd_cost(P, P)), 0.0, atol=1e-6)
    # Disjoint supports reach the ln 2 bound.
    e = np.eye(3)
    assert _ot.jsd_cost(e[:1], e[1:2])[0, 0] == pytest.approx(math.log(2), abs=1e-6)


@pytest.mark.parametrize("seed", range(5))
def test_otjsd_scores_equal_pot_emd2_and_plan_respects_marginals(seed):
    rng = np.random.default_rng(seed)
    qz, qw, query = _bag(rng, 1)
    cz, cw, cands = _bag(rng, 12)
    scores = _ot.otjsd_scores(query, cands)
    for i in range(len(cands)):
        Pq = _ot.token_distributions(qz[0], qw[0])
        Pc = _ot.token_distributions(cz[i], cw[i])
        a, b = qw[0] / qw[0].sum(), cw[i] / cw[i].sum()
        C = _ot.jsd_cost(Pq, Pc)  # the same cost matrix ...
        assert scores[i] == pytest.approx(ot.emd2(a, b, C), abs=1e-6)  # ... gives POT's exact optimum
        C_ref = np.array([[_reference_jsd(p, q) for q in Pc] for p in Pq])  # float64 definition
        assert scores[i] == pytest.approx(ot.emd2(a, b, C_ref), abs=2e-5)
        plan = ot.emd(a, b, C)
        np.testing.assert_allclose(plan.sum(1), a, atol=1e-9)
        np.testing.assert_allclose(plan.sum(0), b, atol=1e-9)
        assert (plan >= -1e-12).all()


def test_identical_text_scores_about_zero():
    rng = np.random.default_rng(7)
    z = rng.normal(size=(6, 16))
    w = rng.uniform(0.5, 2, 6)
    bag = _ot.TokenBag.from_texts([z], [w])
    assert _ot.otjsd_scores(bag, bag)[0] == pytest.approx(0.0, abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_lower_bound_never_exceeds_exact_score(seed):
    rng = np.random.default_rng(100 + seed)
    _, _, query = _bag(rng, 1, scale=rng.uniform(0.2, 6))
    _, _, cands = _bag(rng, 40, scale=rng.uniform(0.2, 6))
    exact = _ot.otjsd_scores(query, cands)
    bounds = _ot.jsd_lower_bounds(query, cands)
    assert (bounds <= exact + 1e-12).all()
    # and the per-pair bound is below the JSD itself
    L = _ot.jsd_lower_bound(np.sqrt(cands.P), np.sqrt(query.P))
    assert (L <= _ot.jsd_cost(cands.P, query.P)).all()


@pytest.mark.parametrize("seed", range(6))
def test_pruned_top_k_equals_exhaustive_top_k(seed):
    rng = np.random.default_rng(200 + seed)
    _, _, query = _bag(rng, 1)
    _, _, cands = _bag(rng, 80)
    exact = _ot.otjsd_scores(query, cands)
    idx, scores, info = _ot.otjsd_top_k(query, cands, k=5, batch=7)
    expected = np.lexsort((np.arange(len(exact)), exact))[:5]
    assert list(idx) == list(expected)
    np.testing.assert_allclose(scores, exact[expected], atol=0)
    assert info["solved"] <= len(cands)


def test_wmd_matches_pot_with_euclidean_cost():
    rng = np.random.default_rng(3)
    qz, qw = rng.normal(size=(4, 8)), rng.uniform(0.1, 1, 4)
    cz = [rng.normal(size=(3, 8)), rng.normal(size=(5, 8))]
    cw = [rng.uniform(0.1, 1, 3), rng.uniform(0.1, 1, 5)]
    got = _ot.wmd_scores(qz, qw, cz, cw)
    for i in range(2):
        C = ot.dist(qz, cz[i], metric="euclidean")
        assert got[i] == pytest.approx(ot.emd2(qw / qw.sum(), cw[i] / cw[i].sum(), C), abs=1e-6)


def test_empty_candidate_scores_infinite():
    rng = np.random.default_rng(4)
    _, _, query = _bag(rng, 1)
    cands = _ot.TokenBag.from_texts([np.zeros((0, 16)), rng.normal(size=(2, 16))], [np.zeros(0), np.ones(2)])
    scores = _ot.otjsd_scores(query, cands)
    assert math.isinf(scores[0]) and math.isfinite(scores[1])
    idx, _, _ = _ot.otjsd_top_k(query, cands, k=2)
    assert list(idx) == [1]


def test_from_flat_equals_from_texts():
    rng = np.random.default_rng(9)
    zs, ws, bag = _bag(rng, 7)
    zs.append(np.zeros((0, 16)))
    ws.append(np.zeros(0))
    ws[0] = np.zeros(len(ws[0]))  # all-zero weights fall back to a uniform marginal
    bag = _ot.TokenBag.from_texts(zs, ws)
    flat = _ot.TokenBag.from_flat(np.concatenate(zs), np.concatenate(ws), bag.offsets)
    np.testing.assert_allclose(flat.P, bag.P, rtol=1e-6)
    np.testing.assert_allclose(flat.w, bag.w)


def test_threaded_softmax_equals_serial(monkeypatch):
    rng = np.random.default_rng(11)
    z, w = rng.normal(size=(3000, 64)).astype(np.float32), rng.uniform(0.5, 2, 3000)
    serial = _ot.token_distributions(z, w, dtype=np.float32)
    monkeypatch.setattr(_ot, "_PARALLEL_ELEMENTS", 1000)
    monkeypatch.setattr(_ot, "_WORKERS", 2)
    np.testing.assert_array_equal(_ot.token_distributions(z, w, dtype=np.float32), serial)


def _roots_bag(rng, n_texts, d=16, temperature=20.0):
    zs = [rng.normal(size=(int(rng.integers(1, 7)), d)) for _ in range(n_texts)]
    ws = [rng.uniform(0.1, 3.0, size=len(z)) for z in zs]
    z = np.concatenate(zs)
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in zs])])
    roots16 = _ot.token_roots(z, temperature).astype(np.float16)  # as stored on disk
    # a shuffled source: the bag must follow roots_idx, not assume contiguous rows
    perm = rng.permutation(len(z))
    src = np.empty_like(roots16)
    src[perm] = roots16
    return zs, ws, _ot.TokenBag.from_roots(src, perm, np.concatenate(ws), offsets)


def test_token_roots_are_sqrt_of_the_unit_scaled_softmax():
    rng = np.random.default_rng(21)
    z = rng.normal(size=(9, 32))
    roots = _ot.token_roots(z, 20.0)
    scales = 20.0 / np.linalg.norm(z, axis=1)
    np.testing.assert_allclose(roots**2, _ot.token_distributions(z, scales), rtol=1e-4, atol=1e-9)
    np.testing.assert_allclose((roots**2).sum(axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize("seed", [0, 1])
def test_roots_bag_scores_equal_pot_on_its_own_costs(seed):
    rng = np.random.default_rng(seed)
    _, _, cands = _roots_bag(rng, 12)
    zq = rng.normal(size=(4, 16))
    query = _ot.TokenBag.from_texts([zq], [rng.uniform(0.5, 2, 4)], [20.0 / np.linalg.norm(zq, axis=1)])
    scores = _ot.otjsd_scores(query, cands)
    for i in range(len(cands)):
        P = cands.dists(cands.text(i))
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-5)  # marginals of each token distribution
        C = _ot.jsd_cost(P, query.P).T
        assert scores[i] == pytest.approx(ot.emd2(query.w, cands.w[cands.text(i)], C), abs=1e-6)
    # the pruned top-k is the exhaustive top-k, with identical scores
    idx, top, info = _ot.otjsd_top_k(query, cands, k=4, batch=2)
    order = np.lexsort((np.arange(len(scores)), scores))[:4]
    assert list(idx) == list(order)
    np.testing.assert_array_equal(top, scores[order])
    # the streamed bound never exceeds an exact score
    assert np.all(_ot.jsd_lower_bounds(query, cands) <= scores + 1e-9)


def test_roots_bag_streams_in_chunks_like_one_pass():
    rng = np.random.default_rng(5)
    _, _, cands = _roots_bag(rng, 30)
    whole = np.concatenate([r for _, r in cands.root_chunks(chunk=10**6)])
    parts = np.concatenate([r for _, r in cands.root_chunks(chunk=7)])
    np.testing.assert_array_equal(parts, whole)
    np.testing.assert_allclose(whole**2, cands.dists(slice(None)), rtol=1e-5, atol=1e-9)
