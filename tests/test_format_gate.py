"""The quality gate is fixed before the run (#75): the whole dev split in both arms, a point limit, a paired test."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from assistant.evals.report import mcnemar

_PATH = Path(__file__).resolve().parent / "bench" / "bench_format_gate.py"
_spec = importlib.util.spec_from_file_location("bench_format_gate", _PATH)
gate = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gate)


def test_an_arm_short_of_the_split_gets_no_verdict():
    split = {"a", "b", "c"}
    assert gate.incomplete_arms({"a": 1, "b": 1, "c": 1}, {"a": 1, "b": 1, "c": 1}, split) == ""
    assert gate.incomplete_arms({"a": 1}, {"a": 1, "b": 1, "c": 1}, split) == "the base arm lacks 2 of its 3 claims"


@pytest.mark.parametrize("cand_right, base_right, drops, passes", [
    (50, 50, {"acc": 0.0}, True),
    (50, 50, {"acc": 2.5}, False),  # over the point limit
    (0, 12, {"acc": 1.0}, False),  # within the points, but 12 claims lost and none won: p < 0.05
    (3, 5, {"acc": 1.5}, True),  # a small, non-significant loss
])
def test_the_gate_needs_both_the_point_limit_and_no_significant_paired_loss(cand_right, base_right, drops, passes):
    ids = [f"c{i}" for i in range(cand_right + base_right)]
    cand = {i: n < cand_right for n, i in enumerate(ids)}
    base = {i: not cand[i] for i in ids}
    assert gate.gate_passes(drops, mcnemar(cand, base)) is passes


def test_the_gate_is_fixed_to_the_whole_table_disjoint_dev_split():
    from tests.shared_data import EVAL_DATA

    if not (EVAL_DATA / "pubhealthtab").exists():
        pytest.skip("eval data not mirrored")
    assert len(gate.dev_split_ids(EVAL_DATA)) == 108
