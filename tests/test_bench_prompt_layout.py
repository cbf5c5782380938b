"""The paired prompt-layout benchmark's arithmetic (tests/bench/bench_prompt_layout.py): the server counters it
reads (assistant.model.serving) and the per-claim ratio its gate takes."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from assistant.model.serving import parse_server_counters

_PATH = Path(__file__).resolve().parent / "bench" / "bench_prompt_layout.py"
_spec = importlib.util.spec_from_file_location("bench_prompt_layout", _PATH)
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

METRICS = """# HELP vllm:prompt_tokens_by_source_total Number of prompt tokens by source.
vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="local_compute"} 63943.0
vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="local_cache_hit"} 253824.0
vllm:prompt_tokens_by_source_total{engine="0",model_name="m",source="external_kv_transfer"} 0.0
vllm:generation_tokens_total{engine="0",model_name="m"} 1.9833e+04
vllm:num_requests_running{engine="0",model_name="m"} 7.0
"""


def test_the_server_counters_are_read_by_source():
    assert parse_server_counters(METRICS) == {"computed": 63943.0, "cached": 253824.0, "generated": 19833.0,
                                             "running": 7.0}


def test_a_server_without_the_counters_is_an_error_that_says_which():
    with pytest.raises(RuntimeError, match="no computed counter"):
        parse_server_counters(METRICS.replace('source="local_compute"', 'source="other"'))


def test_the_ratio_pairs_each_claim_s_two_checks_and_skips_unpaired_ones():
    rows = [{"id": "a", "layout": "table-first", "computed": 1000}, {"id": "a", "layout": "instructions-first",
                                                                     "computed": 400},
            {"id": "b", "layout": "instructions-first", "computed": 300}, {"id": "b", "layout": "table-first",
                                                                          "computed": 600},
            {"id": "c", "layout": "table-first", "computed": 900}]
    assert bench.paired_ratio(rows) == [0.4, 0.5]
