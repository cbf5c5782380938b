"""Serving configurations side by side (#15): one fresh vLLM server per configuration, the same prompts.

Run on demand (not part of the test suite)::

    .venv/bin/python tests/bench/bench_serving.py                          # every configuration
    .venv/bin/python tests/bench/bench_serving.py --configs bf16-eager,w8a8-eager --prompts 2
    .venv/bin/python tests/bench/bench_serving.py --list                   # the configurations and their flags

Each configuration is started in turn on ``--port`` (default 8018, never the app's port), measured and
stopped before the next one starts; a server already running elsewhere (the app's, on 8008) is left alone.
A quantized configuration needs its folder (``evidentia model install --format w8a8|w4a16``); one that is
missing is skipped with a note, as is one that would start with too little free RAM.

For each configuration:

- ``server_startup_s``: process start until ``GET /v1/models`` answers;
- ``ttft_s``: median time to the first streamed token (short prompt, after one warm-up);
- ``tokens_per_s_1``: one stream, the same prompts in turn, ``--gen-tokens`` each (``ignore_eos``, greedy):
  generated tokens / wall time;
- ``tokens_per_s_4``: the aggregate of 4 concurrent streams;
- ``peak_rss_gb``: the server's process tree, sampled every 0.5 s;
- ``cpu_s_per_token``: CPU time (user + system) the server's process tree spent during the single-stream
  phase per generated token, and its ratio to the baseline's. On a shared machine wall-clock speeds fall
  with the load beside the server; CPU time per token falls much less, so the ratio is the load-robust
  comparison (it still counts OpenMP spin-waiting, which grows with contention: an approximation);
- the mean 1-minute load average during each phase.

``docs/bench/serving.json`` (shared format): ``tokens_per_s_1`` for the configuration ``make run`` uses
(the settings' defaults: W4A16, ``--enforce-eager``), ``tokens_per_s_1_baseline`` (bf16 + ``--enforce-eager``,
the flags of before #15),
and ``tokens_per_s_4``, ``ttft_s``, ``server_startup_s``, ``peak_rss_gb`` for that configuration; plus, per
configuration, ``<metric>__<config>``; ``tokens_per_s_1_llamacpp`` with ``--llamacpp-python`` and
``--llamacpp-gguf`` (llama.cpp on the same GGUF, the yardstick). The ``.md`` lists every configuration tried.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

from bench_llm import RssSampler, ttft  # noqa: E402

from assistant.evals.report import DOCS_DIR, write_bench  # noqa: E402
from assistant.model.serving import LocalServer, ServingError, build_command, installed_formats  # noqa: E402
from assistant.settings import Settings  # noqa: E402

BASELINE = "bf16-eager"
# name -> Settings overrides of the defaults (W4A16, --enforce-eager since #15); the baseline is the flags of
# before #15: bf16 with --enforce-eager.
BF16 = {"model_format": "bf16"}
CONFIGS: dict[str, dict] = {
    "bf16-eager": BF16,
    "bf16-compiled": {**BF16, "vllm_enforce_eager": False},
    "bf16-eager-prefix-on": {**BF16, "vllm_prefix_caching": True},
    "bf16-eager-prefix-off": {**BF16, "vllm_prefix_caching": False},
    "bf16-eager-ngram": {**BF16, "vllm_ngram_speculation": True},
    "bf16-eager-compact-json": {**BF16, "vllm_json_layout": "compact"},
    "bf16-eager-one-line-json": {**BF16, "vllm_json_layout": "one-line"},
    "w8a8-eager": {"model_format": "w8a8"},
    "w4a16-eager": {"model_format": "w4a16"},
    "w4a16-compiled": {"model_format": "w4a16", "vllm_enforce_eager": False},
    "w4a16-eager-ngram": {"model_format": "w4a16", "vllm_ngram_speculation": True},
}
LLAMACPP = "llama.cpp (yardstick)"
# The same for every configuration: prose, a JSON frame that copies the prompt (n-gram drafts), a list.
PROMPTS = [
    "Write a short paragraph about why the sky is blue.",
    'Return a JSON object {"task": ..., "entities": [...], "rewrite": ...} for the question: '
    '"Which drugs treat Parkinson\'s disease, and which of them are dopamine agonists?"',
    "List five common side effects of metformin, one per line, each with a one-sentence explanation.",
    "Explain in three sentences what a knowledge graph is and how it differs from a table.",
]
TTFT_PROMPT = "Say hello."


@dataclass
class Measured:
    name: str
    flags: list[str]
    skipped: str | None = None
    startup_s: float = float("nan")
    ttft_s: float = float("nan")
    tps1: float = float("nan")
    tps4: float = float("nan")
    per4: float = float("nan")
    peak_rss_gb: float = float("nan")
    cpu_s_per_token: float = float("nan")
    tokens1: int = 0
    load: dict[str, float] = field(default_factory=dict)


class LoadAverage:
    """Samples the 1-minute load average; ``mark(phase)`` / ``mean(phase)``."""

    def __init__(self, every_s: float = 1.0):
        self.every_s, self.samples = every_s, []
        self.phases: dict[str, tuple[float, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.perf_counter(), os.getloadavg()[0]))
            self._stop.wait(self.every_s)

    def mean(self, start: float, end: float) -> float:
        inside = [la for t, la in self.samples if start <= t <= end]
        return statistics.mean(inside) if inside else os.getloadavg()[0]

    def __enter__(self) -> "LoadAverage":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its live descendants."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return float("nan")
    total = 0.0
    for p in procs:
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except psutil.NoSuchProcess:
            pass
    return total


async def _ttft(client: httpx.AsyncClient, base: str, model: str) -> float:
    return await ttft(client, base, model, TTFT_PROMPT)


async def _generate(client: httpx.AsyncClient, base: str, model: str, prompt: str, n: int) -> int:
    body = {"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": n,
            "temperature": 0, "ignore_eos": True}
    resp = await client.post(f"{base}/chat/completions", json=body)
    resp.raise_for_status()
    return resp.json()["usage"]["completion_tokens"]


async def measure(server: LocalServer, model: str, prompts: list[str], gen: int, load: LoadAverage,
                  ttft_n: int) -> dict:
    base, out = server.base_url, {}
    async with httpx.AsyncClient(timeout=1800) as client:
        await _ttft(client, base, model)  # warm-up (first request compiles / allocates)
        t0 = time.perf_counter()
        out["ttft_s"] = statistics.median([await _ttft(client, base, model) for _ in range(ttft_n)])
        out["load_ttft"] = load.mean(t0, time.perf_counter())

        await _generate(client, base, model, prompts[0], 8)  # warm-up of the generate path
        cpu0, t0 = tree_cpu_s(server.pid), time.perf_counter()
        tokens = 0
        for p in prompts:
            tokens += await _generate(client, base, model, p, gen)
        wall, cpu = time.perf_counter() - t0, tree_cpu_s(server.pid) - cpu0
        out.update(tps1=tokens / wall, tokens1=tokens, cpu_s_per_token=cpu / max(tokens, 1),
                   load_tps1=load.mean(t0, t0 + wall))

        t0, per = time.perf_counter(), []

        async def one(p: str) -> int:
            s = time.perf_counter()
            n = await _generate(client, base, model, p, gen)
            per.append(n / (time.perf_counter() - s))
            return n

        counts = await asyncio.gather(*(one(prompts[i % len(prompts)]) for i in range(4)))
        wall = time.perf_counter() - t0
        out.update(tps4=sum(counts) / wall, per4=statistics.mean(per), load_tps4=load.mean(t0, t0 + wall))
    return out


def run_config(name: str, settings: Settings, args, load: LoadAverage) -> Measured:
    flags = build_command_or_reason(settings, args.port)
    if isinstance(flags, str):
        return Measured(name, [], skipped=flags)
    m = Measured(name, flags)
    free_gb = psutil.virtual_memory().available / 1e9
    if free_gb < args.min_free_gb:
        m.skipped = f"only {free_gb:.1f} GB RAM free (< --min-free-gb {args.min_free_gb})"
        return m
    if not run_server(m, LocalServer(settings, port=args.port, cuda=False, progress=True), settings.llm_model,
                      args, load):
        return m
    print(f"== {name}: startup {m.startup_s:.0f} s, TTFT {m.ttft_s:.2f} s, 1 stream {m.tps1:.2f} tok/s, "
          f"4 streams {m.tps4:.2f} tok/s, {m.cpu_s_per_token:.3f} CPU s/token, RSS {m.peak_rss_gb:.1f} GB, "
          f"load {m.load.get('tps1', float('nan')):.2f}", flush=True)
    return m


def run_server(m: Measured, server, model: str, args, load: LoadAverage) -> bool:
    """Start ``server`` (vLLM's or llama.cpp's), measure it into ``m`` and stop it; False if it failed."""
    server.start()
    try:
        with RssSampler(server.pid) as rss:
            t0 = time.perf_counter()
            m.startup_s = server.wait_ready()
            m.load["startup"] = load.mean(t0, time.perf_counter())
            r = asyncio.run(measure(server, model, PROMPTS[:args.prompts], args.gen_tokens, load, args.ttft_n))
        m.peak_rss_gb = rss.peak / 1e9
    except (ServingError, httpx.HTTPError, RuntimeError) as exc:
        m.skipped = f"failed: {str(exc).splitlines()[0][:200]}"
        return False
    finally:
        server.stop()
    m.ttft_s, m.tps1, m.tps4, m.per4 = r["ttft_s"], r["tps1"], r["tps4"], r["per4"]
    m.cpu_s_per_token, m.tokens1 = r["cpu_s_per_token"], r["tokens1"]
    m.load.update(ttft=r["load_ttft"], tps1=r["load_tps1"], tps4=r["load_tps4"])
    return True


class LlamaCppServer:
    """llama-cpp-python's OpenAI-compatible server on the packaged GGUF: the yardstick, not the product's engine.

    It needs a venv with ``llama-cpp-python[server]`` built without AMX (../shared/docs/environment.md has the
    flags) and the assembled GGUF (the 22 parts concatenated, sha256 as in MODEL_INFO.json).
    """

    def __init__(self, python: str, gguf: str, port: int, model: str, threads: int, log: Path):
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.cmd = [python, "-m", "llama_cpp.server", "--model", gguf, "--model_alias", model, "--host",
                    "127.0.0.1", "--port", str(port), "--n_threads", str(threads), "--n_ctx", "4096"]
        self.log, self.proc, self.t0 = log, None, 0.0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def start(self) -> None:
        import subprocess

        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(self.cmd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT)

    def wait_ready(self, timeout_s: float = 300) -> float:
        while time.perf_counter() - self.t0 < timeout_s:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama.cpp server exited ({self.proc.returncode}); see {self.log}")
            try:
                if httpx.get(self.base_url + "/models", timeout=2).is_success:
                    return time.perf_counter() - self.t0
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        raise RuntimeError(f"llama.cpp server not ready in {timeout_s:.0f} s; see {self.log}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except Exception:
                self.proc.kill()


def run_llamacpp(args, model: str, load: LoadAverage) -> Measured:
    m = Measured(LLAMACPP, [f"llama-cpp-python server, {Path(args.llamacpp_gguf).name}, "
                            f"{psutil.cpu_count()} threads"])
    server = LlamaCppServer(args.llamacpp_python, args.llamacpp_gguf, args.port, model, psutil.cpu_count() or 1,
                            Path("/tmp/bench-llamacpp.log"))
    if not run_server(m, server, model, args, load):
        return m
    print(f"== {LLAMACPP}: startup {m.startup_s:.0f} s, 1 stream {m.tps1:.2f} tok/s ({m.tokens1} tokens), "
          f"4 streams {m.tps4:.2f} tok/s", flush=True)
    return m


def build_command_or_reason(settings: Settings, port: int) -> list[str] | str:
    try:
        cmd = build_command(settings, Path("python"), cuda=False, port=port)
    except ServingError as exc:
        return f"not available: {str(exc).splitlines()[0][:160]}"
    # the flags that differ between configurations (the model folder, then everything after --model-len)
    return [a for a in cmd[3:] if a not in ("--host", settings.vllm_host, "--port", str(port))]


CONFIG_KEYS = ("model_format", "vllm_enforce_eager", "vllm_prefix_caching", "vllm_ngram_speculation",
               "vllm_json_layout")


def config_settings(base: Settings, name: str, kvcache_gb: int) -> Settings:
    """The base settings with every configuration knob at its default, then this configuration's overrides."""
    defaults = {k: Settings.model_fields[k].default for k in CONFIG_KEYS}
    return base.model_copy(update={**defaults, **CONFIGS[name], "vllm_cpu_kvcache_gb": kvcache_gb})


def default_config_name(base: Settings) -> str | None:
    """The configuration ``make run`` uses with these settings; None if they match none of CONFIGS."""
    keys = CONFIG_KEYS
    defaults = {k: Settings.model_fields[k].default for k in keys}
    for name, over in CONFIGS.items():
        want = {**defaults, **over}
        if all(getattr(base, k) == want[k] for k in keys):
            return name
    return None


def report(results: list[Measured], base: Settings, args, started: str) -> None:
    done = {m.name: m for m in results if not m.skipped}
    chosen = default_config_name(base) or BASELINE  # custom settings: report against the baseline
    if BASELINE not in done or chosen not in done:
        raise SystemExit(f"the baseline ({BASELINE}) and the default configuration ({chosen}) must both be measured")
    c, b = done[chosen], done[BASELINE]
    metrics: dict[str, tuple[float, str]] = {
        "tokens_per_s_1": (c.tps1, "tokens/s"),
        "tokens_per_s_1_baseline": (b.tps1, "tokens/s"),
        "tokens_per_s_4": (c.tps4, "tokens/s"),
        "ttft_s": (c.ttft_s, "s"),
        "server_startup_s": (c.startup_s, "s"),
        "peak_rss_gb": (c.peak_rss_gb, "GB"),
        "load_avg_1m": (statistics.mean(v for m in done.values() for v in m.load.values()), "load"),
    }
    if LLAMACPP in done:
        metrics["tokens_per_s_1_llamacpp"] = (done[LLAMACPP].tps1, "tokens/s")
    for name, m in done.items():
        if name == LLAMACPP:
            continue  # in the table below: its flags and start-up are not vLLM's
        metrics[f"tokens_per_s_1__{name}"] = (m.tps1, "tokens/s")
        metrics[f"tokens_per_s_4__{name}"] = (m.tps4, "tokens/s")
        metrics[f"ttft_s__{name}"] = (m.ttft_s, "s")
        metrics[f"server_startup_s__{name}"] = (m.startup_s, "s")
        metrics[f"peak_rss_gb__{name}"] = (m.peak_rss_gb, "GB")
        metrics[f"cpu_s_per_token__{name}"] = (m.cpu_s_per_token, "CPU s/token")
        metrics[f"cpu_time_ratio__{name}"] = (m.cpu_s_per_token / b.cpu_s_per_token, "x baseline")
        metrics[f"load_avg_1m__{name}"] = (m.load.get("tps1", float("nan")), "load")

    rows = ["| configuration | flags beyond the baseline | start-up s | TTFT s | 1 stream tok/s | 4 streams tok/s "
            "| peak RSS GB | CPU s / token | CPU time vs baseline | load avg (startup / 1 stream / 4 streams) |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    base_flags = set(b.flags)
    for m in results:
        if m.skipped:
            rows.append(f"| {m.name} | – | skipped: {m.skipped} | | | | | | | |")
            continue
        extra = " ".join(("--model …" + f[-24:] if f.startswith("/") else f) for f in m.flags
                         if f not in base_flags) or "–"
        gone = " ".join(f for f in b.flags if f not in set(m.flags) and f.startswith("--"))
        if m.name == LLAMACPP:
            extra, gone = m.flags[0], ""  # another engine: vLLM's flags do not apply
        if gone:
            extra += f" (without {gone})"
        ld = " / ".join(f"{m.load.get(k, float('nan')):.1f}" for k in ("startup", "tps1", "tps4"))
        rows.append(f"| {m.name} | `{extra}` | {m.startup_s:.0f} | {m.ttft_s:.2f} | {m.tps1:.2f} | {m.tps4:.2f} | "
                    f"{m.peak_rss_gb:.1f} | {m.cpu_s_per_token:.3f} | {m.cpu_s_per_token / b.cpu_s_per_token:.2f}x "
                    f"| {ld} |")
    cores = psutil.cpu_count() or 1
    notes = [
        f"Run started {started} UTC; configurations measured one after another on port {args.port}, "
        f"{args.prompts} prompts x {args.gen_tokens} generated tokens (ignore_eos, greedy) per phase, KV cache "
        f"{args.kvcache_gb} GB. `make run`'s configuration: **{chosen}**; baseline: {BASELINE}.",
        "",
        *rows,
        "",
        f"- **Shared machine.** {cores} cores; the 1-minute load average during the measurements is in the table "
        f"(mean {metrics['load_avg_1m'][0]:.1f}). Wall-clock speeds (tok/s, TTFT, start-up) fall with the load "
        "beside the server and vary between configurations measured minutes apart; compare configurations by "
        "'CPU time vs baseline' (CPU seconds the server's process tree spent per generated token in the "
        "single-stream phase). It still counts OpenMP spin-waiting, which grows with contention, so it is an "
        "approximation too.",
        *[f"- {n}" for n in args.note],
        "- Quality is not measured here. W4A16 became the default after its quality gate against bf16 on the "
        "PubHealthTab eval (dev) split and the 20-question chat benchmark (docs/bench/w4a16_g32_gate.md).",
        *([f"- {LLAMACPP}: llama-cpp-python's server on the same Q4_K_M GGUF our bf16 weights come from, "
           "the same prompts. Its requests do not honour `ignore_eos`, so a reply may stop early (the tokens "
           "counted are the ones generated), and it serves one request at a time, so its 4-stream figure is "
           "sequential. A yardstick for the hardware, not the product's engine."] if LLAMACPP in done else []),
    ]
    write_bench(args.area, metrics, notes="\n".join(notes))
    _chart(DOCS_DIR / "bench" / f"{args.area}.png", results, b)


def _chart(path: Path, results: list[Measured], baseline: Measured) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    done = [m for m in results if not m.skipped]
    names = [m.name for m in done]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(max(7, 2.2 * len(done) + 3), 3.8))
    x = range(len(done))
    w = 0.4
    b1 = a1.bar([i - w / 2 for i in x], [m.tps1 for m in done], w, label="1 stream")
    b4 = a1.bar([i + w / 2 for i in x], [m.tps4 for m in done], w, label="4 streams (aggregate)")
    a1.bar_label(b1, fmt="%.2f", fontsize=8)
    a1.bar_label(b4, fmt="%.2f", fontsize=8)
    a1.set_xticks(list(x), names, rotation=20, ha="right")
    a1.set_ylabel("generated tokens/s (wall clock, shared machine)")
    a1.legend(fontsize=8)
    ratios = [m.cpu_s_per_token / baseline.cpu_s_per_token for m in done]
    br = a2.bar(list(x), ratios, color="#DD8452")
    a2.bar_label(br, fmt="%.2fx", fontsize=8)
    a2.axhline(1.0, color="grey", lw=0.8)
    a2.set_xticks(list(x), names, rotation=20, ha="right")
    a2.set_ylabel("server CPU s per token vs baseline")
    fig.suptitle("vLLM-CPU serving configurations")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default=",".join(CONFIGS),
                    help=f"comma-separated, from: {', '.join(CONFIGS)} (the baseline {BASELINE} is always added)")
    ap.add_argument("--port", type=int, default=8018, help="port for the servers this benchmark starts")
    ap.add_argument("--prompts", type=int, default=len(PROMPTS), help=f"how many of the {len(PROMPTS)} prompts")
    ap.add_argument("--gen-tokens", type=int, default=64, help="tokens generated per request")
    ap.add_argument("--ttft-n", type=int, default=3, help="streamed requests for the TTFT median")
    ap.add_argument("--kvcache-gb", type=int, default=1, help="KV cache of each server (GB)")
    ap.add_argument("--min-free-gb", type=float, default=6.0, help="RAM needed to start a configuration")
    ap.add_argument("--note", action="append", default=[], help="extra note for the report (repeatable)")
    ap.add_argument("--area", default="serving",
                    help="results name under docs/bench/ (another name keeps a subset run from replacing serving.*)")
    ap.add_argument("--llamacpp-python", default=None,
                    help="python of a venv with llama-cpp-python[server]: also measure llama.cpp as the yardstick")
    ap.add_argument("--llamacpp-gguf", default=None, help="the packaged model's assembled GGUF (with --llamacpp-python)")
    ap.add_argument("--list", action="store_true", help="print the configurations and their commands; start nothing")
    args = ap.parse_args()

    base = Settings()
    if args.port == base.vllm_port:
        raise SystemExit(f"--port {args.port} is the app's server port; pick a spare one")
    names = [n.strip() for n in args.configs.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        raise SystemExit(f"unknown configuration(s): {', '.join(unknown)}")
    names = list(dict.fromkeys([BASELINE, *names]))
    if args.list:
        print(f"installed formats: {', '.join(installed_formats(base)) or 'none'}; make run uses "
              f"{default_config_name(base)}")
        for n in names:
            flags = build_command_or_reason(config_settings(base, n, args.kvcache_gb), args.port)
            print(f"{n:26s} {flags if isinstance(flags, str) else ' '.join(flags)}")
        return
    started = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    results = []
    with LoadAverage() as load:
        for n in names:
            print(f"== {n} …", flush=True)
            results.append(run_config(n, config_settings(base, n, args.kvcache_gb), args, load))
            if results[-1].skipped:
                print(f"== {n}: skipped ({results[-1].skipped})", flush=True)
        if args.llamacpp_python and args.llamacpp_gguf:
            print(f"== {LLAMACPP} …", flush=True)
            results.append(run_llamacpp(args, base.llm_model, load))
    report(results, base, args, started)


if __name__ == "__main__":
    main()
