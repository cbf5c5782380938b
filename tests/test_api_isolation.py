"""Two users on a live UI server try to read each other's thread by id through Chainlit's API (#17)."""

from __future__ import annotations

from tests.reliability_probes import cross_user_reads


def test_two_users_cannot_read_each_others_threads(tmp_path):
    out = cross_user_reads(tmp_path / "data")
    assert out["own_reads_ok"] == 2 and out["own_threads_listed"] == 2, out  # the probe can see a thread: a refusal below is not a broken probe
    assert len(out["attempts"]) == 11
    assert out["cross_user_reads"] == 0, out["attempts"]
    assert all(a["status"] in (401, 403, 404) for a in out["attempts"] if a["kind"] in ("read", "element",
                                                                                         "rename", "delete"))
