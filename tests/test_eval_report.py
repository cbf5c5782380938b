"""Shared evaluation plumbing: bounded concurrency keeps its bound, runs everything, and fails loudly."""

from __future__ import annotations

import asyncio

import pytest

from assistant.evals.report import bounded_map


def test_bounded_map_runs_every_item_with_at_most_n_in_flight():
    in_flight, peak, done = 0, 0, []

    async def work(i):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.01 * (i % 3))
        done.append(i)
        in_flight -= 1

    asyncio.run(bounded_map(work, range(10), 3))
    assert sorted(done) == list(range(10))
    assert peak == 3


def test_bounded_map_raises_the_first_error_and_cancels_the_rest():
    started = []

    async def work(i):
        started.append(i)
        if i == 1:
            raise RuntimeError("server down")
        await asyncio.sleep(10)

    with pytest.raises(RuntimeError, match="server down"):
        asyncio.run(asyncio.wait_for(bounded_map(work, range(6), 2), timeout=5))
    assert 5 not in started  # the queue behind the failure never started
