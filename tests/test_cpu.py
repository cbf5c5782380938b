"""The CPU's instruction set is named wherever a speed is (#80): benchmarks, `evidentia model status`, start-up."""

from __future__ import annotations

import json

import pytest

from assistant.model import serving
from assistant.settings import Settings
from kb import cpu


@pytest.mark.parametrize("flags, machine, expected", [
    ({"avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni"}, "x86_64", "AVX-512 with bf16, VNNI; no AMX"),
    ({"avx2", "fma", "avx512f", "amx_tile", "amx_bf16", "avx512_vnni"}, "x86_64", "AVX-512 with bf16, VNNI, AMX"),
    ({"avx2", "fma"}, "x86_64", "AVX2; no bf16"),  # an AMD desktop or a 2021+ Intel laptop
    ({"avx2", "avx_vnni"}, "x86_64", "AVX2 with VNNI; no bf16"),
    ({"asimd", "bf16"}, "aarch64", "NEON with bf16"),
    (set(), "arm64", "NEON; no bf16"),  # macOS: no /proc/cpuinfo, the machine name says ARM
    ({"sse4_2"}, "x86_64", "none known; no bf16"),
])
def test_instruction_set_summary(flags, machine, expected):
    assert cpu.instruction_set_summary(frozenset(flags), machine) == expected


def test_describe_cpu_names_cores_and_instruction_set(monkeypatch):
    monkeypatch.setattr(cpu, "_cpuinfo", lambda: "model name\t: AMD EPYC 7B13\nflags\t\t: fpu avx2 fma\n")
    monkeypatch.setattr(cpu.os, "cpu_count", lambda: 2)
    assert cpu.describe_cpu() == "2 cores AMD EPYC 7B13 (AVX2; no bf16)"
    assert not cpu.cpu_has_bf16()


def test_compute_plan_says_float32_where_bf16_is_emulated(monkeypatch):
    monkeypatch.setattr(serving, "cpu_has_bf16", lambda: False)
    plan = serving.compute_plan(Settings(_env_file=None, model_format="bf16"), cuda=False)
    assert plan.startswith("bf16 weights, float32 activations") and "no native bfloat16" in plan
    monkeypatch.setattr(serving, "cpu_has_bf16", lambda: True)
    assert serving.compute_plan(Settings(_env_file=None, model_format="bf16"), cuda=False) == \
        "bf16 weights, bfloat16 activations"
    assert serving.compute_plan(Settings(_env_file=None, model_format="w4a16"), cuda=False).startswith("w4a16 weights")


def test_measured_speed_only_from_a_cpu_of_the_same_kind(tmp_path):
    bench = tmp_path / "bench"
    bench.mkdir()
    (bench / "serving.json").write_text(json.dumps({
        "machine": "2 cores Intel Xeon (AVX-512 with bf16, VNNI, AMX), 24 GiB RAM",
        "results": {"tokens_per_s_1": {"value": 10.31, "unit": "tokens/s"}}}))
    (bench / "llm.json").write_text(json.dumps({
        "machine": "2 cores AMD EPYC (AVX2; no bf16), 24 GiB RAM",
        "results": {"tokens_per_s_1": {"value": 3.56, "unit": "tokens/s"}}}))
    assert serving.measured_speed(tmp_path, "AVX2; no bf16").startswith("3.6 tokens/s, one stream (docs/bench/llm.json")
    assert serving.measured_speed(tmp_path, "AVX-512 with bf16, VNNI, AMX").startswith("10.3 tokens/s")
    other = serving.measured_speed(tmp_path, "NEON with bf16")
    assert other.startswith("not measured on a CPU like this one (NEON with bf16)")
    assert serving.measured_speed(tmp_path / "missing", "AVX2; no bf16").startswith("not measured")


def test_measured_speed_is_the_engines_own(tmp_path):
    (tmp_path / "bench" / "runs").mkdir(parents=True)
    machine = "2 cores AMD EPYC (AVX-512 with bf16, VNNI; no AMX), 24 GiB RAM"
    (tmp_path / "bench" / "serving.json").write_text(json.dumps({
        "machine": machine, "results": {"tokens_per_s_1": {"value": 8.9, "unit": "tokens/s"}}}))
    (tmp_path / "bench" / "runs" / "kernels-samples.json").write_text(json.dumps({
        "machine": machine, "results": {"decode_tokens_per_s__llama-server-q4km": {"value": 33.75, "unit": "tokens/s"},
                                        "decode_tokens_per_s__vllm-w4a16": {"value": 8.9, "unit": "tokens/s"}}}))
    summary = "AVX-512 with bf16, VNNI; no AMX"
    assert serving.measured_speed(tmp_path, summary).startswith("8.9 tokens/s, one stream (docs/bench/serving.json")
    assert serving.measured_speed(tmp_path, summary, "llamacpp").startswith(
        "33.8 tokens/s, one stream (docs/bench/runs/kernels-samples.json")
    assert "bench_kernels.py" in serving.measured_speed(tmp_path, "AVX2; no bf16", "llamacpp")
